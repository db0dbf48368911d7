"""The registered transforms by name, and the rewriting driver's entry points that take
names (``analyze``, ``apply``, ``explain``, ``matches_of``, ``saturate``): each finds
the transform in the registry, runs the driver of ``nkigym_graph.rewriting`` and fires
the ``nkigym_graph_program_rewritten`` hook after every rewrite.

``saturate`` applies the named transforms (default: data_reuse, operand_merge,
dead_code) to a fixpoint (``nkigym_graph.rewriting.driver``).

>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> p = saturate(tiled_matmul(256, 128, 256), ["data_reuse", "operand_merge"])
>>> len(p.statements_of("nc_matmul"))
2
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from nkigym_graph.errors import PluginError, TransformError
from nkigym_graph.ir.arguments import require_int, require_type
from nkigym_graph.ir.program import Program
from nkigym_graph.plugin.manager import notify_rewritten
from nkigym_graph.plugin.registry import lookup, registered_transforms
from nkigym_graph.rewriting.analysis_cache import analysis_of
from nkigym_graph.rewriting.driver import (
    Batch,
    apply_match,
    check_nodes,
    check_program,
    checked,
    last_program,
    saturation,
    verifier,
)
from nkigym_graph.rewriting.transform import Match, Transform

DEFAULT_PIPELINE = ("data_reuse", "operand_merge", "reduction_merge", "scale_after_matmul", "dead_code")


def transforms() -> Mapping[str, Transform]:
    """Every registered transform (built-in and third-party), by name."""
    return registered_transforms()


def get_transform(name: str | Transform) -> Transform:
    """A transform by name (or pass an instance through)."""
    if isinstance(name, str):
        return lookup("transform", transforms(), name)
    found: Transform = require_type(
        name, Transform, "transform", PluginError, "a transform name or a Transform instance"
    )
    return found


def analyze(program: Program, transform: str | Transform) -> list[Match]:
    """The matches ``transform`` (a name or a Transform) finds in ``program``."""
    return get_transform(transform).analyze(check_program(program, "analyze"))


def matches_of(program: Program, transform: str | Transform) -> Sequence[Match]:
    """``transform.analyze(program)``, cached per snapshot and updated along derivations
    (``nkigym_graph.rewriting.analysis_cache``); ``transform`` is a Transform or a
    registered transform's name, as for ``analyze``."""
    return analysis_of(check_program(program, "matches_of"), get_transform(transform)).matches


def apply(program: Program, transform: str | Transform, match: Match) -> Program:
    """Apply one match; returns a new verified snapshot."""
    require_type(program, Program, "program", TransformError, "a Program")
    chosen = get_transform(transform)
    result = apply_match(program, chosen, match)
    notify_rewritten(chosen.name, program, result)
    return result


def explain(program: Program, transform: str | Transform, *nodes: int) -> str:
    """Why statements ``nodes`` do or do not form a match of ``transform``."""
    check_program(program, "explain")
    check_nodes(program, nodes)
    return get_transform(transform).explain(program, *nodes)


def saturate_steps(
    program: Program, names: Sequence[str | Transform] | None = None
) -> Iterator[tuple[Batch, Program]]:
    """Saturation one batch at a time: each batch and the program after it. The
    arguments are checked when it is called, before the first batch."""
    check_program(program, "saturate")
    if names is not None:
        require_type(names, (list, tuple), "saturate: names", TransformError, "a list of transform names")
    chosen = [get_transform(n) for n in (names if names is not None else DEFAULT_PIPELINE)]
    choices = [t.name for t in chosen if not t.saturates]
    if choices:
        raise TransformError(
            f"saturate: {', '.join(choices)} offer(s) alternatives, not rewrites to apply until none is "
            "left; choose among them with search(..., strategy='schedule')"
        )
    return _notified(program, saturation(program, chosen))


def _notified(program: Program, steps: Iterator[tuple[Batch, Program]]) -> Iterator[tuple[Batch, Program]]:
    for step, after in steps:
        notify_rewritten(step.transform, program, after)
        program = after
        yield step, after


def saturate(
    program: Program, names: Sequence[str | Transform] | None = None, *, check: bool = False, seed: int = 0
) -> Program:
    """Apply the transforms (default: ``DEFAULT_PIPELINE``: data_reuse, operand_merge,
    reduction_merge, scale_after_matmul, dead_code) to a fixpoint.

    ``check=True`` also runs every batch's program on random inputs (drawn from ``seed``)
    and compares it with ``program``, as search does (``nkigym_graph.numeric.equivalence``):
    sampled outputs after each batch, every output of the result. A difference raises
    ``TransformError`` naming the first batch that introduced it.
    """
    require_type(check, bool, "saturate: check", TransformError, "True or False")
    require_int(seed, "saturate: seed", TransformError)
    if not check:
        return last_program(program, saturate_steps(program, names))
    checker = verifier(program, seed)
    return checked(program, checker, saturate_steps(program, names))
