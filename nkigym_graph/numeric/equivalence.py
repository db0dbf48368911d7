"""Numeric verification of search states against the root program.

Inputs are float64 standard-normal arrays drawn once per search from its seed. A
*sampled* check compares a fixed set of random output elements (drawn from the same
seed), evaluating only the statements those elements depend on; a *full* check
compares every output element (evaluating, when the outputs are HBM tensors, only the
elements whose last writers differ from the root's by node key:
``nkigym_graph.numeric.owners``). Both run through one memoized ``Evaluator``, so a
state recomputes only the statements whose canonical node key is new; a sampled check
also finds the statements writing sample points by node key (``Verifier._jobs_by_key``)
and keeps the values they wrote there by node key: a statement whose key was seen
before (it computes the same, from the same ancestry) is not evaluated again, so a
state evaluates only the part of the sampled outputs its rewrite changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from typing import NamedTuple

import numpy as np

from nkigym_graph.errors import ResourceLimitError
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Statement
from nkigym_graph.ir.variables import INTERMEDIATE
from nkigym_graph.numeric.compare import errors, magnitude
from nkigym_graph.numeric.evaluate import Evaluator
from nkigym_graph.numeric.memo import ByteLRU
from nkigym_graph.numeric.memory_limit import DEFAULT_MAX_BYTES
from nkigym_graph.numeric.owners import final_owners, writers_owning

JOB_CACHE_LIMIT = 500_000
"""Node keys whose sample jobs (and sampled values) a verifier keeps (cleared past this)."""
DEFAULT_SAMPLES = 16
"""Output elements per returned tensor in a sampled check."""
DEFAULT_MEMO_BYTES = 256 * 2**20
RTOL = 1e-9
"""Relative tolerance: rewrites may regroup float64 sums, never change them."""


@dataclass(frozen=True)
class VerifySettings:
    """How states are checked: the seed of inputs and sample points, and the memo size."""

    seed: int = 0
    samples: int = DEFAULT_SAMPLES
    memo_bytes: int = DEFAULT_MEMO_BYTES


def compared_outputs(program: Program) -> tuple[str, ...]:
    """The tensors a program computes: what it returns, or every output of a fragment."""
    if program.returns:
        return program.returns
    return tuple(sorted(o.name for o in program.outputs))


class Job(NamedTuple):
    """A statement writing sample points: the output, which samples, where in its region."""

    var: str
    inside: np.ndarray
    """Which of the output's samples the statement writes."""
    local: tuple[np.ndarray, ...]
    """Their coordinates within the region it writes."""


_UNSEEN = Job("", np.zeros(0, dtype=bool), ())
"""Marks a node key not seen yet."""


def interface_change(root: Program, program: Program) -> str | None:
    """What ``program`` changes of ``root``'s interface, or None: its parameters (names,
    shapes, dtypes), which the root's inputs then do not feed, or its target, whose
    limits its statements were verified against instead of the root's."""
    if program.params != root.params:
        names_differ = [p.name for p in program.params] != [p.name for p in root.params]
        return (
            f"it changes the program's parameters ({_signature(root, names_differ)} -> "
            f"{_signature(program, names_differ)})"
        )
    if program.target is not root.target:
        return f"it moves the program from target {root.target.name} to {program.target.name}"
    return None


def _signature(program: Program, names_only: bool) -> str:
    """The parameters of ``program``: their names, or each with its shape and dtype."""
    if names_only:
        return ", ".join(p.name for p in program.params)
    return ", ".join(f"{p.name} {list(p.shape)} {p.dtype}" for p in program.params)


def _check_size(root: Program) -> None:
    """Refuse a root whose float64 inputs and outputs exceed ``DEFAULT_MAX_BYTES``."""
    tensors = [*(p.shape for p in root.params), *(root.variables[v].shape for v in compared_outputs(root))]
    need = 8 * sum(math.prod(shape) for shape in tensors)
    if need > DEFAULT_MAX_BYTES:
        raise ResourceLimitError(
            f"verification needs {need} bytes of float64 inputs and outputs for {root.name!r} "
            f"> the limit of {DEFAULT_MAX_BYTES} bytes (nkigym_graph.numeric.memory_limit.DEFAULT_MAX_BYTES)"
        )


class Verifier:
    """Checks programs against ``root`` (see the module docstring)."""

    def __init__(self, root: Program, settings: VerifySettings = VerifySettings()) -> None:
        _check_size(root)
        rng = np.random.default_rng(settings.seed)
        inputs = {}
        for param in root.params:
            data = rng.standard_normal(tuple(param.shape))
            data.flags.writeable = False
            inputs[param.name] = data
        self.root = root
        self.outputs = compared_outputs(root)
        self.shapes = {var: root.variables[var].shape for var in self.outputs}
        # at most one point per element: more (drawn with replacement) check nothing more,
        # and samples=10**9 allocated gigabytes of coordinates
        self.points = {
            var: tuple(rng.integers(0, n, size=min(settings.samples, math.prod(shape))) for n in shape)
            for var, shape in self.shapes.items()
        }
        self.evaluator = Evaluator(inputs, ByteLRU(settings.memo_bytes))
        self._job_of: dict[str, Job | None] = {}
        self._samples_of: dict[str, np.ndarray] = {}
        """The values a statement (by node key) writes at its job's sample points."""
        self._passed: set[tuple[str, ...]] = set()
        """The node keys, in program order, of the statements writing sample points in
        programs whose sampled check passed (``_sampled_check``)."""
        self._sampled = self.sampled(root)
        self._sampled_scale = _scales(self._sampled)
        self._full: dict[str, np.ndarray] | None = None
        self._full_scale: dict[str, float] = {}
        self._key_ids: dict[str, int] = {}
        """Node keys of output writers, numbered (``final_owners``)."""
        self._root_owners: dict[str, np.ndarray] | None = None
        self._agreed: dict[str, bool] = {}
        """Structure hashes found to agree (value: checked on every element): programs
        with the same statements compute the same, whatever their schedule."""

    # -- evaluation -------------------------------------------------------------------
    def _writers(self, program: Program) -> dict[int, str]:
        """The statements writing the compared outputs (a scan: cheaper than the index)."""
        wanted = set(self.outputs)
        return {node: stmt.dst.var for node, stmt in program.items() if stmt.dst.var in wanted}

    def _job(self, stmt: Statement) -> Job | None:
        """Where ``stmt`` writes sample points of a compared output, if it does."""
        var = stmt.dst.var
        points = self.points.get(var)
        if points is None:
            return None
        region = stmt.dst.slices
        inside = np.ones(len(points[0]), dtype=bool)
        for (start, stop), coords in zip(region, points, strict=True):
            inside &= (coords >= start) & (coords < stop)
        if not inside.any():
            return None
        local = tuple(coords[inside] - start for coords, (start, _) in zip(points, region, strict=True))
        return Job(var, inside, local)

    def _on_chip(self, program: Program) -> bool:
        """Whether ``program`` returns an on-chip tile (whose writers' keys do not fix the
        region they write)."""
        variables = program.variables
        return any(var in variables and variables[var].kind == INTERMEDIATE for var in self.outputs)

    def _jobs(self, program: Program) -> tuple[dict[int, Job], bool]:
        """The statements writing sample points, by node, and whether they were found by
        node key (then a statement's key fixes the values it writes there)."""
        if self._on_chip(program):
            found = [self._job(stmt) for stmt in program.statements]  # returns an on-chip tile
            return dict(zip(compress(program.ids, found), filter(None, found), strict=True)), False
        return self._jobs_by_key(program), True

    def _jobs_by_key(self, program: Program) -> dict[int, Job]:
        """The jobs of the statements writing the compared outputs, kept by node key: a
        statement writing an HBM tensor names it in its key, and its key fixes the region
        it writes."""
        job_of, keys = self._job_of, program.node_keys
        out: dict[int, Job] = {}
        for var in self.outputs:
            for node in program.writers_of(var):
                key = keys[node]
                job = job_of.get(key, _UNSEEN)
                if job is _UNSEEN:
                    if len(job_of) > JOB_CACHE_LIMIT:
                        job_of.clear()
                    job = job_of[key] = self._job(program[node])
                if job is not None:
                    out[node] = job
        return out

    def sampled(self, program: Program) -> dict[str, np.ndarray]:
        """The values of ``program``'s outputs at the sample points."""
        return self._sampled_by_jobs(program, *self._jobs(program))

    def _sampled_check(self, program: Program) -> str | None:
        """A sampled check. The statements writing sample points, found by node key, fix
        the samples (each key fixes the points and values its statement writes there, and
        their program order which write wins): a program whose writers have the keys, in
        order, of one that passed holds its samples, and passes."""
        jobs, by_key = self._jobs(program)
        writers = None
        if by_key:
            keys = program.node_keys
            writers = tuple([keys[node] for node in program.in_order(jobs)])
            if writers in self._passed:
                return None
        sampled = self._sampled_by_jobs(program, jobs, by_key)
        problem = _compare(sampled, self._sampled, self.points, self._sampled_scale)
        if problem is None and writers is not None:
            if len(self._passed) > JOB_CACHE_LIMIT:
                self._passed.clear()
            self._passed.add(writers)
        return problem

    def _sampled_by_jobs(self, program: Program, jobs: dict[int, Job], by_key: bool) -> dict[str, np.ndarray]:
        """``sampled`` from ``program``'s jobs (``_jobs``)."""
        written: dict[int, np.ndarray] = {}
        todo: list[int] = list(jobs)
        if by_key:  # statements seen before (by node key) wrote what they wrote then
            keys, samples_of = program.node_keys, self._samples_of
            if len(samples_of) > JOB_CACHE_LIMIT:
                samples_of.clear()
            todo = []
            for node in jobs:
                known = samples_of.get(keys[node])
                if known is None:
                    todo.append(node)
                else:
                    written[node] = known

        def sink(node: int, value: np.ndarray) -> None:
            got = written[node] = value[jobs[node].local]
            if by_key:
                got.flags.writeable = False
                self._samples_of[keys[node]] = got

        self.evaluator.run(program, program.in_order(todo), sink)
        out = {var: np.zeros(len(self.points[var][0])) for var in self.outputs}
        for node in program.in_order(jobs):  # program order: later writes win
            var, inside, _ = jobs[node]
            out[var][inside] = written[node]
        return out

    def full(self, program: Program) -> dict[str, np.ndarray]:
        """Every output of ``program``, whole."""
        return self._left_by(program, self._writers(program), self.outputs)

    def _left_by(
        self, program: Program, owner: Mapping[int, str], outputs: Iterable[str]
    ) -> dict[str, np.ndarray]:
        """Per output of ``outputs``, what the statements ``owner`` maps to it write there,
        in program order (zeros where none of them writes)."""
        out = {var: np.zeros(self.shapes[var]) for var in outputs}

        def sink(node: int, value: np.ndarray) -> None:
            region = program[node].dst.slices
            out[owner[node]][tuple(slice(s, e) for s, e in region)] = value

        self.evaluator.run(program, program.in_order(owner), sink)
        return out

    def _written(
        self, program: Program, owners: Mapping[str, np.ndarray], differ: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """Per output in ``differ``, the values left by its writers that own (``owners``)
        an element ``differ`` marks (zeros where none of them writes)."""
        owner = {
            node: var
            for var, mask in differ.items()
            for node in writers_owning(program, var, owners[var], mask, self._key_ids)
        }
        return self._left_by(program, owner, differ)

    def _full_by_key(self, program: Program) -> str | None:
        """A full check of ``program`` (returning HBM tensors, as the root does): the
        elements whose last writers have the root's node keys hold the root's values; the
        others are evaluated in both and compared, to within ``RTOL`` of their largest
        value in the root (where they differ: in output coordinates)."""
        ids = self._key_ids
        if self._root_owners is None or len(ids) > JOB_CACHE_LIMIT:
            ids.clear()
            self._root_owners = {
                var: final_owners(self.root, var, self.shapes[var], ids) for var in self.outputs
            }
        theirs = self._root_owners
        mine = {var: final_owners(program, var, self.shapes[var], ids) for var in self.outputs}
        differ = {var: mask for var in self.outputs if (mask := mine[var] != theirs[var]).any()}
        if not differ:
            return None
        want = self._written(self.root, theirs, differ)
        got = self._written(program, mine, differ)
        expected = {var: want[var][mask] for var, mask in differ.items()}
        actual = {var: got[var][mask] for var, mask in differ.items()}
        if _compare(actual, expected, None) is None:
            return None
        return _compare(actual, expected, {var: np.nonzero(mask) for var, mask in differ.items()})

    # -- checking ---------------------------------------------------------------------
    def check(self, program: Program, full: bool = False) -> str | None:
        """None if ``program`` agrees with the root, else what differs (a program with the
        statements of one that agreed agrees: only its schedule differs). A program with
        other parameters or on another target differs (``interface_change``)."""
        changed = interface_change(self.root, program)
        if changed is not None:
            return changed
        structure = program.structure_hash
        agreed = self._agreed.get(structure)
        if agreed is not None and (agreed or not full):
            return None
        problem = self._check(program, full)
        if problem is None:
            self._agreed[structure] = full or bool(agreed)
        return problem

    def _check(self, program: Program, full: bool) -> str | None:
        missing = [v for v in self.outputs if v not in program.variables]
        if missing:
            return f"it does not compute {missing}"
        wrong_shape = [v for v in self.outputs if program.variables[v].shape != self.shapes[v]]
        if wrong_shape:
            return f"output {wrong_shape[0]!r} has shape {program.variables[wrong_shape[0]].shape}"
        if full and not (self._on_chip(self.root) or self._on_chip(program)):
            return self._full_by_key(program)
        if full:
            if self._full is None:
                self._full = self.full(self.root)
                self._full_scale = _scales(self._full)
            return _compare(self.full(program), self._full, None, self._full_scale)
        return self._sampled_check(program)


def _scales(expected: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Per output, the largest error ``_compare`` lets pass: ``RTOL`` of its finite
    magnitude (at least 1)."""
    return {var: RTOL * max(1.0, magnitude(want)) for var, want in expected.items()}


def _compare(
    actual: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    points: Mapping[str, tuple[np.ndarray, ...]] | None,
    scales: Mapping[str, float] | None = None,
) -> str | None:
    """None if every output agrees within ``RTOL`` of its finite magnitude; infinities
    and nans agree when they match by position and sign (``nkigym_graph.numeric.compare``).
    ``scales``: ``_scales(expected)``, when known."""
    tolerances = _scales(expected) if scales is None else scales
    for var, want in expected.items():
        got = actual[var]
        tolerance = tolerances[var]
        with np.errstate(invalid="ignore", over="ignore"):
            if np.abs(got - want).max(initial=0.0) <= tolerance:
                continue  # all finite and close (a nan or inf anywhere takes the long way)
        error = errors(got, want)
        if np.all(error <= tolerance):
            continue
        flat = int(np.argmax(error))
        if points is None:
            where = tuple(int(i) for i in np.unravel_index(flat, want.shape))
        else:
            where = tuple(int(coords[flat]) for coords in points[var])
        return (
            f"{var}{list(where)} is {got.flat[flat]:.6g}, the root gives {want.flat[flat]:.6g} "
            f"(max abs error {float(error.flat[flat]):.3g})"
        )
    return None
