"""The trn2 cost model estimates a derived program from its parent's run: the reports are
those of a full estimate of the same program, bit for bit."""

from __future__ import annotations

import dataclasses
import gc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transforms.test_transforms_properties import TRANSFORMS, tiled_cases

import nkigym_graph as ng
import nkigym_graph_plugins.trn2_cost.tasks as tasks
from nkigym_graph.cost import CostReport, critical_path, get_cost_model
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.synthetic import tiled_matmul, tiled_matmul_statements
from nkigym_graph.ir.variables import Param
from nkigym_graph.plugin.transforms import matches_of
from nkigym_graph.rewriting.rewrite import select_non_conflicting
from nkigym_graph.search.derive import derive

Trn2CostModel = type(get_cost_model("trn2"))


def fields_of(report: CostReport) -> tuple:
    """Every field of ``report``, the order of the busy engines included."""
    values = [getattr(report, f.name) for f in dataclasses.fields(report) if f.name != "engine_seconds"]
    return (*values, tuple(report.engine_seconds.items()))


def assert_as_full(model: Trn2CostModel, program: Program) -> None:
    """``model`` estimates ``program`` as a fresh model does the same program built in full."""
    assert fields_of(model.estimate(program)) == fields_of(Trn2CostModel().estimate(program.replace()))


@st.composite
def mixed_matmuls(draw: st.DrawFn) -> Program:
    """Tiled matmuls whose operands may differ in dtype (matmul results are fp32)."""
    sizes = st.sampled_from([128, 200, 256, 384])
    m, k, n = draw(sizes), draw(sizes), draw(sizes)
    dtype = draw(st.sampled_from(["bfloat16", "float32"]))
    tail = draw(st.sampled_from([None, "tanh"]))
    params, statements = tiled_matmul_statements(m, k, n, tail=tail, dtype=dtype)
    other = draw(st.sampled_from(["bfloat16", "float32"]))
    params = [Param(p.name, p.shape, other if p.name == "b" else p.dtype) for p in params]
    return Program("mixed", params, statements, "output")


programs = st.one_of(tiled_cases().map(lambda case: case[0]), mixed_matmuls())
steps = st.lists(
    st.tuples(
        st.sampled_from(TRANSFORMS),
        st.sampled_from(["single", "batch"]),
        st.integers(0, 10**6),
        st.booleans(),
    ),
    max_size=12,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, steps, st.sampled_from([tasks.LOOP_BELOW, 0]))
def test_estimates_along_random_rewrites_equal_full_estimates(program, steps, loop_below) -> None:
    """Schedules run by the loop (small graphs) or solved with array operations."""
    saved = tasks.LOOP_BELOW
    tasks.LOOP_BELOW = loop_below
    try:
        _estimates_along(program, steps)
    finally:
        tasks.LOOP_BELOW = saved


def _estimates_along(program: Program, steps: list) -> None:
    model = Trn2CostModel()
    assert_as_full(model, program)
    for name, mode, pick, estimated in steps:
        transform = ng.get_transform(name)
        matches = matches_of(program, transform)
        if not matches:
            continue
        if mode == "single":
            program = ng.apply(program, transform, matches[pick % len(matches)])
        else:
            program, _ = derive(program, transform, tuple(select_non_conflicting(matches)))
        if estimated:  # else the next program's parent has no run: estimated in full
            assert_as_full(model, program)
    assert_as_full(model, program)


def _walk(program: Program, steps: int) -> list[Program]:
    """``program`` and the programs of single data_reuse / operand_merge rewrites from it."""
    out = [program]
    for step in range(steps):
        for name in ("operand_merge", "data_reuse") if step % 2 else ("data_reuse", "operand_merge"):
            transform = ng.get_transform(name)
            matches = matches_of(out[-1], transform)
            if matches:
                out.append(ng.apply(out[-1], transform, matches[(7 * step) % len(matches)]))
                break
    return out


def test_a_derived_program_is_not_estimated_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    walk = _walk(tiled_matmul(512, 512, 512, dtype="bfloat16"), 6)
    model = Trn2CostModel()
    model.estimate(walk[0])

    def refuse(program: Program) -> None:
        raise AssertionError("estimated in full")

    monkeypatch.setattr(model, "_full", refuse)
    for program in walk[1:]:
        assert program.derivation is not None and program.derivation.parent() is not None
        model.estimate(program)
    monkeypatch.undo()
    for program in walk[1:]:
        assert_as_full(model, program)


def test_a_parent_without_a_run_is_estimated_from_its_ancestors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs derived from one never estimated (e.g. rebuilt by a search) are estimated
    from the first kept run up their ancestry, their ancestors on the way, not in full."""
    module = __import__(Trn2CostModel.__module__, fromlist=["_"])
    walk = _walk(tiled_matmul(512, 512, 512, dtype="bfloat16"), 1 + module.ANCESTORS)
    assert len(walk) == 2 + module.ANCESTORS
    model = Trn2CostModel()
    model.estimate(walk[0])

    def refuse(program: Program) -> None:
        raise AssertionError("estimated in full")

    monkeypatch.setattr(model, "_full", refuse)
    model.estimate(walk[-1])
    assert all(model._runs.get(program) is not None for program in walk)
    monkeypatch.undo()
    for program in walk:
        assert_as_full(model, program)
    beyond = Trn2CostModel()
    beyond.estimate(walk[0])
    beyond.estimate(_walk(walk[-1], 1)[-1])  # one ancestor too many: in full
    assert all(beyond._runs.get(program) is None for program in walk[1:])


def _walk_refusing(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> tuple[Trn2CostModel, list]:
    """A model's estimates along a walk, ``owner.name`` refusing to run after the first
    derived program (whose parent's task layout is built then); undone after."""
    walk = _walk(tiled_matmul(512, 512, 1024, dtype="bfloat16", tail="exp"), 8)
    model = Trn2CostModel()
    model.estimate(walk[0])
    model.estimate(walk[1])

    def refuse(*args: object) -> None:
        raise AssertionError(f"{name} ran")

    monkeypatch.setattr(owner, name, refuse)
    for program in walk[2:]:
        model.estimate(program)
    monkeypatch.undo()
    return model, walk


def test_a_derived_schedule_is_solved_from_its_parents_critical_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The schedule is solved with array operations from the parent's hints: no loop runs."""
    monkeypatch.setattr(tasks, "LOOP_BELOW", 0)
    model, walk = _walk_refusing(monkeypatch, critical_path, "run")
    for program in walk:
        assert_as_full(model, program)


@pytest.mark.parametrize("loop_below", [tasks.LOOP_BELOW, 0])
def test_a_derived_layout_overwrites_its_parents_columns(
    monkeypatch: pytest.MonkeyPatch, loop_below: int
) -> None:
    """Along single rewrites, each rewritten statement keeps its tasks' queues: a
    derived program's task layout is its parent's with columns overwritten and the
    removed statements' tasks left as ghosts (laid out afresh only for the root)."""
    monkeypatch.setattr(tasks, "LOOP_BELOW", loop_below)
    model, walk = _walk_refusing(monkeypatch, tasks, "_merged")
    run = model._runs.get(walk[-1])
    assert run is not None and run.layout is not None and run.layout.live is not None
    assert not run.layout.live.all()  # ghosts
    for program in walk:
        assert_as_full(model, program)


def test_an_estimate_is_kept_per_program_object() -> None:
    model = Trn2CostModel()
    program = tiled_matmul(256, 256, 256)
    report = model.estimate(program)
    assert model.estimate(program) is report
    twin = program.replace()  # equal (same canonical hash), another object: priced afresh
    assert twin == program and model.estimate(twin) is not report
    assert fields_of(model.estimate(twin)) == fields_of(report)


def test_runs_are_dropped_with_their_programs_and_past_the_budget() -> None:
    model = Trn2CostModel()
    programs = _walk(tiled_matmul(256, 256, 512), 4)
    for program in programs:
        model.estimate(program)
    assert len(model._runs) == len(programs)
    del programs[1:], program
    gc.collect()
    assert len(model._runs) == 1
    small = Trn2CostModel()
    small._runs.budget = 3 * len(programs[0])
    walk = _walk(programs[0], 6)
    for program in walk:
        small.estimate(program)
    assert len(small._runs) <= 3 and small._runs.get(walk[-1]) is not None
    assert_as_full(small, walk[-1])


def test_an_infeasible_derived_program_reports_as_a_full_estimate() -> None:
    # reused, every tile of the 2048 x 4096 fp32 operand b lives until the last row block
    program = tiled_matmul(256, 2048, 4096)
    model = Trn2CostModel()
    model.estimate(program)
    reuse = ng.get_transform("data_reuse")
    for _ in range(2):
        program, _ = derive(program, reuse, tuple(select_non_conflicting(reuse.analyze_batch(program))))
        assert_as_full(model, program)
    assert not model.estimate(program).feasible
    merge = ng.get_transform("operand_merge")
    for match in list(matches_of(program, merge))[:3]:
        assert_as_full(model, ng.apply(program, merge, match))


@pytest.mark.parametrize(
    "disabled", ["derived_rows", "_same_dtypes", "_same_placement", "derived_ends", "solve", "_in_place"]
)
def test_each_shortcut_has_a_fallback_with_the_same_reports(
    monkeypatch: pytest.MonkeyPatch, disabled: str
) -> None:
    """With one of the checks refusing, estimates fall back (prices by node key from the
    first change, the schedule's loop, a task layout merged afresh, or a full estimate)
    and agree all the same."""
    module = __import__(Trn2CostModel.__module__, fromlist=["_"])
    monkeypatch.setattr(tasks, "LOOP_BELOW", 0)
    if disabled == "solve":
        monkeypatch.setattr(critical_path, "REPAIRS", 0)
    elif disabled == "_in_place":
        monkeypatch.setattr(tasks, "_in_place", lambda *args: None)
    elif disabled == "derived_rows":
        monkeypatch.setattr(module.PriceTable, "derived_rows", lambda *args: None)
    else:
        monkeypatch.setattr(module, disabled, lambda *args: None if disabled == "derived_ends" else False)
    walk = _walk(tiled_matmul(384, 512, 384, tail="exp"), 8)
    model = Trn2CostModel()
    for program in walk:
        assert_as_full(model, program)
