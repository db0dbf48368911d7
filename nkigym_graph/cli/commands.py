"""The commands of ``nkigym-graph``: each takes parsed arguments and returns an exit code."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import nkigym_graph as ng
from nkigym_graph.buda.rules import rules_table
from nkigym_graph.buda.severity import at_least
from nkigym_graph.cli.inputs import (
    UsageError,
    existing_file,
    load_function,
    netlist_file,
    parse_shapes,
    transform_names,
    write_text,
)
from nkigym_graph.cli.kernel_process import run_kernel
from nkigym_graph.cli.kernel_signature import shapes_for_kernel
from nkigym_graph.cli.listing import op_lines
from nkigym_graph.errors import OptionError
from nkigym_graph.ir.dtypes import resolve_dtype
from nkigym_graph.nki_sim.dtypes import to_dtype
from nkigym_graph.plugin.manager import plugin_sources
from nkigym_graph.search.confirm import KERNEL_DTYPE_FOR, KernelReference, check_output, kernel_reference
from nkigym_graph.text import dumps_program, read_program, write_program


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def _read(path_text: str) -> ng.Program:
    return read_program(existing_file(path_text))


def _output_program(program: ng.Program, output: str | None) -> None:
    if output:
        write_program(program, output)
        _say(f"wrote {output}: {len(program)} statements, hash {program.canonical_hash[:12]}")
    else:
        sys.stdout.write(dumps_program(program))


def tile(args: argparse.Namespace) -> int:
    dtype = resolve_dtype(args.dtype, "--dtype")
    shapes = parse_shapes(args.shape)
    func = load_function(args.function)
    program = ng.tile(
        func, shapes, dtype=dtype, target=args.target, max_statements=args.max_statements, online=args.online
    )
    _output_program(program, args.output)
    return 0


def ops(args: argparse.Namespace) -> int:
    for line in op_lines():
        print(line)
    return 0


def transforms(args: argparse.Namespace) -> int:
    for name, transform in sorted(ng.transforms().items()):
        print(f"{name:18} {_summary(transform)}")
    return 0


def _summary(transform: ng.Transform) -> str:
    """The first sentence of the transform's class docstring."""
    doc = type(transform).__doc__ or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.])\s", paragraph, maxsplit=1)[0]
    return sentence or "(no description)"


def saturate(args: argparse.Namespace) -> int:
    program = _read(args.program)
    result = ng.saturate(program, transform_names("--transforms", args.transforms))
    _say(f"saturated: {len(program)} -> {len(result)} statements")
    _output_program(result, args.output)
    return 0


def search(args: argparse.Namespace) -> int:
    program = _read(args.program)
    options = {"strategy": args.strategy, "budget": args.budget, "seed": args.seed}
    if args.workers:
        options["workers"] = args.workers
    if args.seconds is not None:
        options["seconds"] = args.seconds
    if args.progress is not None:
        options["progress"] = args.progress
    names = transform_names("--transforms", args.transforms)
    if names is not None:
        options["transforms"] = names
    try:
        result = ng.search(program, confirm=args.confirm, **options)
    except ng.SearchError as err:
        if err.result is None:
            raise
        raise ng.SearchError(f"{err} (on the command line: search --no-confirm)") from err
    _say(f"search ({args.strategy}): {result.stats}")
    _say(f"best: {len(result.best)} statements after {len(result.path)} rewrites; {result.cost}")
    _output_program(result.best, args.output)
    return 0


EMIT_FLAGS = {"--arch": "arch", "--df": "df", "--dtype": "dtype"}
"""``emit``'s backend flags and the option each passes to the backend."""
BACKEND_FLAGS = {"buda": ("--arch", "--df"), "nki": ("--dtype",)}
"""The flags each built-in backend takes (a plugin backend is passed every one given)."""


def _flags(flags: Sequence[str]) -> str:
    return " and ".join(flags) if len(flags) < 3 else f"{', '.join(flags[:-1])} and {flags[-1]}"


def emit(args: argparse.Namespace) -> int:
    given = [flag for flag, option in EMIT_FLAGS.items() if getattr(args, option)]
    takes = BACKEND_FLAGS.get(args.backend, tuple(EMIT_FLAGS))
    other = [flag for flag in given if flag not in takes]
    if other:
        verb = "is not an option" if len(other) == 1 else "are not options"
        raise UsageError(
            f"{_flags(other)} {verb} of the {args.backend} backend; "
            f"the {args.backend} backend takes {_flags(takes)}"
        )
    program = _read(args.program)
    options = {EMIT_FLAGS[flag]: getattr(args, EMIT_FLAGS[flag]) for flag in given}
    try:
        artifact = ng.emit_artifact(program, backend=args.backend, **options)
    except OptionError as err:  # name the flag the value came from, not the keyword
        flag = next((flag for flag in given if EMIT_FLAGS[flag] == err.option), None)
        if flag is None:
            raise
        raise UsageError(f"{flag} {err.problem}") from err
    if args.output:
        write_text(args.output, artifact.text)
        facts = ", ".join(f"{k}={v}" for k, v in artifact.facts.items())
        _say(f"wrote {args.output} ({args.backend}){': ' + facts if facts else ''}")
    else:
        sys.stdout.write(artifact.text)
    return 0


def simulate(args: argparse.Namespace) -> int:
    kernel = existing_file(args.kernel)
    program = _read(args.program) if args.program else None
    shapes = parse_shapes(args.shape)
    if program is not None:
        shapes = {p.name: tuple(p.shape) for p in program.params} | shapes
    if not shapes:
        raise UsageError("give the kernel's input shapes with --shape NAME=DIMxDIM, or --program FILE")
    shapes = shapes_for_kernel(kernel, shapes)
    rng = np.random.default_rng(args.seed)
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    job: dict[str, object] = {
        "mode": "simulate",
        "target": program.target.name if program is not None else "trn2",
    }
    if program is not None:  # the kernel reads each parameter in its dtype, as search's check does
        kernel_dtypes = {p.name: KERNEL_DTYPE_FOR.get(p.dtype, p.dtype) for p in program.params}
        job["dtypes"] = [kernel_dtypes.get(name, "float32") for name in inputs]
        inputs = {name: _rounded(array, kernel_dtypes.get(name, "float32")) for name, array in inputs.items()}
    run = run_kernel(kernel, inputs, cpu_seconds=args.cpu_seconds, memory_mb=args.memory_mb, job=job)
    described = ", ".join(f"{tuple(r.shape)} {d}" for r, d in zip(run.outputs, run.dtypes, strict=True))
    print(f"simulated {kernel}: output{'s' if len(run.outputs) > 1 else ''} {described}; {run.report}")
    if program is None:
        finite = all(bool(np.isfinite(np.asarray(r, dtype=np.float64)).all()) for r in run.outputs)
        print("no reference program given (--program): checked only that every output is finite:", finite)
        return 0 if finite else 1
    return 0 if _agrees_with(program, inputs, run.outputs, run.dtypes) else 1


def _agrees_with(
    program: ng.Program, inputs: dict[str, np.ndarray], outputs: Sequence[np.ndarray], dtypes: Sequence[str]
) -> bool:
    """Whether a kernel's ``outputs`` (in ``dtypes``) agree with ``program``'s on ``inputs``
    element by element, as search's confirmation compares them; prints each output's verdict."""
    names = program.returns
    if len(outputs) != len(names):
        print(f"MISMATCH: the kernel returned {len(outputs)} output(s), the program {len(names)}")
        return False
    given = {name: np.asarray(array, dtype=np.float64) for name, array in inputs.items()}
    references: dict[str, KernelReference] = {}
    agree = True
    for index, (result, name, dtype) in enumerate(zip(outputs, names, dtypes, strict=True)):
        which = f"output {index}: " if len(names) > 1 else ""
        got_shape, want_shape = tuple(result.shape), tuple(program.variables[name].shape)
        if got_shape != want_shape:
            print(f"MISMATCH: {which}the kernel returned shape {got_shape}, the program {want_shape}")
            agree = False
            continue
        if dtype not in references:
            references[dtype] = kernel_reference(program, given, dtype)
        check = check_output(index, result, references[dtype])
        verdict = "ok" if check.ok else f"MISMATCH: {check}"
        print(f"{which}max |simulated - interpreted| = {check.largest_error:.3e} ({verdict})")
        agree = agree and check.ok
    return agree


def _rounded(array: np.ndarray, dtype: str) -> np.ndarray:
    """``array`` (float32) rounded to ``dtype`` and held as float32 again: the values the
    kernel reads (the child casts them back to ``dtype``, exactly)."""
    storage = to_dtype(dtype)
    return array if storage is None else array.astype(storage).astype(np.float32)


def check_netlist(args: argparse.Namespace) -> int:
    if args.rules:
        print(rules_table(details=True))
        return 0
    if args.netlist is None:
        raise UsageError("check-netlist needs a NETLIST.yaml (or --rules to list the rules)")
    path = netlist_file(args.netlist)
    found = ng.check_netlist(path=path, arch=args.arch, min_severity="info")
    threshold = args.min_severity or "warning"
    for v in found:
        if at_least(v.severity, threshold):
            print(f"{v.severity}: {v.rule}: {v.message}")
    failing = [v for v in found if v.severity == "error" or (args.strict and v.severity == "warning")]
    counts = ", ".join(f"{sum(v.severity == s for v in found)} {s}(s)" for s in ("error", "warning", "info"))
    verdict = "fails" if failing else "passes"
    mode = "; --strict" if args.strict else ""
    print(f"{path}: no violations" if not found else f"{path}: {verdict} ({counts}{mode})")
    return 1 if failing else 0


def dot(args: argparse.Namespace) -> int:
    program = _read(args.program)
    output = args.output or str(Path(args.program).with_suffix(".dot"))
    collapse = not args.expand
    if args.diff:
        ng.write_dot(ng.to_dot_diff(program, _read(args.diff), args.fold, collapse=collapse), output)
    else:
        ng.write_dot(program, output, args.fold, collapse=collapse)
    _say(f"wrote {output}")
    return 0


def plugins(args: argparse.Namespace) -> int:
    for name, where in plugin_sources():
        print(f"{name:18} {where}")
    return 0
