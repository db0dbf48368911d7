"""Transforms written with patterns: a few lines each, safe in batches, exact, and their
analyses updated along derivations equal to analyses done in full."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from transforms.test_transforms_properties import SIZES, tiled_cases

import nkigym_graph as ng
from nkigym_graph.errors import TransformError
from nkigym_graph.plugin.transforms import matches_of
from nkigym_graph.rewriting.analysis_cache import analysis_of
from nkigym_graph.rewriting.patterns import (
    EqualPattern,
    Pattern,
    PatternTransform,
    SetPattern,
    dedupe,
    forward,
    merge_run,
    remove,
)
from nkigym_graph.rewriting.rewrite import apply_edits, select_non_conflicting


class FoldRelu(PatternTransform):
    name = "test_fold_relu"
    pattern = Pattern("activation", Pattern("activation", op="relu"), op="relu", capture="outer")

    def edit(self, program, found):
        return forward(program, found["outer"])


class MergeAdds(PatternTransform):
    name = "test_merge_adds"
    pattern = SetPattern("tensor_tensor", axis="free", op="add")

    def edit(self, program, found):
        return merge_run(program, found.nodes, found.axis)


class ShareValues(PatternTransform):
    name = "test_share_values"
    pattern = EqualPattern()

    def edit(self, program, found):
        return dedupe(program, *found.nodes)


def relus(depth: int):
    def chain(a, b):
        x = ng.nc_matmul(a, b)
        for _ in range(depth):
            x = ng.activation(x, op="relu")
        return x

    return chain


def add(a, b):
    return ng.tensor_tensor(a, b, op="add")


def exps_twice(a):
    return ng.tensor_tensor(ng.activation(a, op="exp"), ng.activation(a, op="exp"), op="add")


def relu_add(a, b):
    return ng.activation(ng.activation(ng.tensor_tensor(a, b, op="add"), op="relu"), op="relu")


@st.composite
def pattern_cases(draw: st.DrawFn) -> ng.Program:
    """Programs with relu chains and adds, ragged sizes, or one of the property tests' cases."""
    k, n = draw(SIZES), draw(SIZES)
    choice = draw(st.sampled_from(["relus", "relu_add", "twice", "other"]))
    if choice == "twice":
        return ng.tile(exps_twice, {"a": (k, n)}, dtype=np.float64)
    if choice == "relus":
        return ng.tile(relus(draw(st.integers(2, 4))), {"a": (k, draw(SIZES)), "b": (k, n)}, dtype=np.float64)
    if choice == "relu_add":
        program = ng.tile(relu_add, {"a": (k, n), "b": (k, n)}, dtype=np.float64)
        return ng.saturate(program, ["free_dim_merge"]) if draw(st.booleans()) else program
    return draw(tiled_cases())[0]


RNG = np.random.default_rng(3)
A, B = RNG.standard_normal((128, 128)), RNG.standard_normal((128, 256))


@pytest.mark.parametrize("transform", [FoldRelu, MergeAdds, ShareValues])
def test_a_pattern_transform_is_at_most_15_lines(transform) -> None:
    assert len(inspect.getsource(transform).splitlines()) <= 15


def test_a_five_deep_relu_chain_folds_in_one_batch_and_equals_numpy() -> None:
    program = ng.tile(relus(5), {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
    assert len(program.statements_of("activation")) == 5 * 2  # two tiles of 128 columns
    steps = list(ng.saturate_steps(program, [FoldRelu()]))
    assert len(steps) == 1
    folded = steps[0][1]
    assert len(folded.statements_of("activation")) == 2
    np.testing.assert_allclose(ng.interpret(folded, a=A, b=B), np.maximum(A.T @ B, 0.0), rtol=1e-12)
    assert ng.saturate(program, [FoldRelu()], check=True) == folded


def test_five_adjacent_adds_merge_in_one_batch_and_equal_numpy() -> None:
    program = ng.tile(add, {"a": (128, 640), "b": (128, 640)}, dtype=np.float64)
    program = ng.saturate(program, ["free_dim_merge"])  # the adds now read slices of two tiles
    assert len(program.statements_of("tensor_tensor")) == 5
    steps = list(ng.saturate_steps(program, [MergeAdds()]))
    assert len(steps) == 1
    merged = steps[0][1]
    assert len(merged.statements_of("tensor_tensor")) == 1
    a, b = RNG.standard_normal((128, 640)), RNG.standard_normal((128, 640))
    np.testing.assert_allclose(ng.interpret(merged, a=a, b=b), a + b, rtol=1e-12)


def test_equal_values_are_computed_once_and_equal_numpy() -> None:
    program = ng.tile(exps_twice, {"a": (256, 384)}, dtype=np.float64)
    assert len(program.statements_of("activation")) == 2 * 6  # two exps of each of six tiles
    steps = list(ng.saturate_steps(program, [ShareValues()]))
    assert len(steps) == 1
    shared = steps[0][1]
    assert len(shared.statements_of("activation")) == 6
    assert ng.saturate(program, [ShareValues()], check=True) == shared
    a = RNG.standard_normal((256, 384))
    np.testing.assert_allclose(ng.interpret(shared, a=a), 2 * np.exp(a), rtol=1e-12)


def test_equal_patterns_pair_each_statement_with_the_previous_equal_one() -> None:
    program = ng.tile(exps_twice, {"a": (128, 256)}, dtype=np.float64)
    exps = program.statements_of("activation")
    assert [found.nodes for found in EqualPattern("activation").pairs(program)] == [exps[:2], exps[2:]]
    matmul = ng.tile(ng.nc_matmul, {"lhs": (128, 384), "rhs": (128, 384)}, dtype=np.float64)
    loads_of_lhs = matmul.loads_of("lhs")
    groups = {tuple(f.nodes) for f in EqualPattern("load").runs(matmul)}
    assert len(groups) == 3 + 3  # each lhs block loaded once per rhs block, and each rhs block
    assert {node for group in groups for node in group} >= set(loads_of_lhs)
    pairs = [f.nodes for f in EqualPattern("load").pairs(matmul)]
    assert all(a < b for a, b in pairs) and len(pairs) == sum(len(g) - 1 for g in groups)


def test_dedupe_refuses_statements_that_differ() -> None:
    program = ng.tile(exps_twice, {"a": (128, 256)}, dtype=np.float64)
    exps = program.statements_of("activation")
    assert dedupe(program, exps[0], exps[2]) is None  # columns 0:128 and 128:256
    assert dedupe(program, exps[0], exps[1]) is not None
    assert dedupe(program, exps[1], exps[0]) is None  # the keeper comes first
    assert dedupe(program, exps[0]) is None  # nothing to absorb
    adds = program.statements_of("tensor_tensor")
    assert dedupe(program, adds[0], adds[1]) is None  # different operands


def test_a_set_pattern_without_op_or_axis_is_operand_merge() -> None:
    program = ng.tile(relu_add, {"a": (256, 384), "b": (256, 384)}, dtype=np.float64)
    found = [(f.nodes, f.axis) for f in SetPattern().pairs(program)]
    matches = ng.analyze(program, "operand_merge")
    assert found and [(m.nodes, m.detail.split()[1]) for m in matches] == found


def test_set_patterns_give_pairs_to_search_and_runs_to_saturation() -> None:
    program = ng.saturate(ng.tile(add, {"a": (128, 640), "b": (128, 640)}), ["free_dim_merge"])
    adds = program.statements_of("tensor_tensor")
    assert [m.nodes[:2] for m in MergeAdds().analyze(program)] == list(itertools.pairwise(adds))
    (run,) = MergeAdds().analyze_batch(program)
    assert run.nodes == adds


def test_matches_carry_their_footprint_so_any_non_conflicting_batch_is_valid() -> None:
    program = ng.tile(relus(3), {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
    matches = FoldRelu().analyze(program)
    assert len(matches) == 4
    for match in matches:
        inner = next(node for node in match.nodes if node not in match.changes)
        assert inner in match.reads and match.program_hash == program.canonical_hash
    batch = select_non_conflicting(matches)
    assert len(batch) == 2  # one fold per tile: the second of each chain reads what the first removes
    result = apply_edits(program, [m.edit for m in batch])
    np.testing.assert_allclose(ng.interpret(result, a=A, b=B), np.maximum(A.T @ B, 0.0), rtol=1e-12)


def test_forwards_compose_across_relu_and_other_ops() -> None:
    def mixed(a, b):
        x = ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu")
        for op in ("exp", "relu", "relu", "relu"):
            x = ng.activation(x, op=op)
        return x

    program = ng.tile(mixed, {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
    folded = ng.saturate(program, [FoldRelu()], check=True)
    ops = [folded[n].attr("op") for n in folded.statements_of("activation")]
    assert ops == ["relu", "exp", "relu"] * 2
    np.testing.assert_allclose(ng.interpret(folded, a=A, b=B), mixed(A, B), rtol=1e-12)


def test_helpers_refuse_what_would_be_wrong() -> None:
    program = ng.tile(relus(2), {"a": (128, 128), "b": (128, 128)}, dtype=np.float64)
    first, second = program.statements_of("activation")
    store = program.statements_of("store")[0] if program.statements_of("store") else len(program) - 1
    assert forward(program, second) is not None
    assert remove(program, first) is None  # the second relu reads it
    assert remove(program, second) is None  # the store reads it
    assert remove(program, store) is None  # it writes the output
    assert forward(program, store) is None  # an output is not forwarded
    assert merge_run(program, [first], "free") is None


def test_pattern_constraints_and_captures() -> None:
    program = ng.tile(relus(2), {"a": (128, 128), "b": (128, 128)}, dtype=np.float64)
    matmul = program.statements_of("nc_matmul")[0]
    deep = Pattern("activation", Pattern("activation", Pattern("nc_matmul", capture="mm"), capture="mid"))
    (found,) = deep.find(program)
    assert found["mm"] == matmul and found.nodes == (found.root, found["mid"], matmul)
    assert Pattern("activation", op=lambda op: op != "relu").find(program) == []
    assert len(Pattern("activation", where=lambda p, n: n > found["mid"]).find(program)) == 1
    with pytest.raises(TransformError, match="captured no statement named 'x'"):
        found["x"]


def test_bad_patterns_and_edits_are_named() -> None:
    program = ng.tile(relus(2), {"a": (128, 128), "b": (128, 128)})

    class NoPattern(PatternTransform):
        name = "test_no_pattern"

    class BadEdit(PatternTransform):
        name = "test_bad_edit"
        pattern = Pattern("activation")

        def edit(self, program, found):
            return "remove it"

    with pytest.raises(TransformError, match="pattern must be a Pattern, a SetPattern or an EqualPattern"):
        NoPattern().analyze(program)
    with pytest.raises(TransformError, match="edit must return an Edit or None, got str"):
        BadEdit().analyze(program)
    with pytest.raises(TransformError, match="cannot be adjacent along 'K'"):
        SetPattern("activation", axis="K").runs(program)
    with pytest.raises(TransformError, match="operand pattern must be a Pattern or None"):
        Pattern("activation", "relu")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Pattern("activaton"), r"Pattern\('activaton'\): unknown op; known ops: activation, "),
        (lambda: SetPattern("nope"), r"SetPattern\('nope'\): unknown op"),
        (lambda: EqualPattern("nope"), r"EqualPattern\('nope'\): unknown op"),
        (lambda: Pattern("activation", opp="relu"), "activation has no attribute 'opp' \\(its attributes: "),
        (lambda: SetPattern("activation", opp="relu"), "has no attribute 'opp'"),
        (lambda: Pattern("activation", op="rleu"), "op='rleu' is not one of \\["),
        (
            lambda: Pattern("activation", None, None, None),
            "3 operand patterns, but activation reads at most 2",
        ),
        (
            lambda: Pattern("activation", Pattern("activation", capture="x"), capture="x"),
            "capture names used twice: x",
        ),
        (lambda: Pattern(3), "the op must be an op name or None, got 3"),  # type: ignore[arg-type]
        (lambda: Pattern("activation", capture=3), r"capture must be a name \(a str\), got 3"),  # type: ignore[arg-type]
        (lambda: Pattern("activation", where=True), r"where must be a function .*, got True"),  # type: ignore[arg-type]
    ],
)
def test_a_pattern_that_could_never_match_is_refused_when_built(build, message: str) -> None:
    """A misspelt op, attribute or choice, more operand patterns than the op reads, or a
    capture name used twice would match nothing (or lose a capture), silently."""
    with pytest.raises(TransformError, match=message):
        build()


def test_predicates_and_any_op_patterns_are_not_checked_against_an_op() -> None:
    assert Pattern(None, op="anything").op is None
    assert Pattern("activation", op=lambda op: op in ("relu", "exp")).attrs["op"]("exp")


STEPS = ["data_reuse", "operand_merge", "free_dim_merge", "dead_code", FoldRelu(), MergeAdds(), ShareValues()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pattern_cases(),
    st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 10**6)), min_size=1, max_size=9),
)
def test_updated_pattern_analyses_equal_full_ones(program, steps) -> None:
    watched = [FoldRelu(), MergeAdds(), ShareValues()]
    for transform in watched:
        analysis_of(program, transform)
    for transform, pick in steps:
        matches = matches_of(program, transform)
        if not matches:
            continue
        program = ng.apply(program, transform, matches[pick % len(matches)])
        for watched_transform in watched:
            expected = watched_transform.analyze(program)
            event(f"{watched_transform.name} matches: {'some' if expected else 'none'}")
            assert list(matches_of(program, watched_transform)) == expected


def test_a_relu_fold_updates_its_analysis_instead_of_matching_again() -> None:
    program = ng.tile(relus(3), {"a": (128, 128), "b": (128, 512)}, dtype=np.float64)
    calls = []

    class Counting(FoldRelu):
        def analysis(self, program):
            calls.append(program)
            return super().analysis(program)

    counting = Counting()
    analysis_of(program, counting)
    child = ng.apply(program, counting, counting.analyze(program)[0])
    calls.clear()
    assert list(matches_of(child, counting)) == FoldRelu().analyze(child)
    assert calls == []  # the child's analysis came from the parent's


def test_a_set_pattern_updates_its_analysis_along_derivations() -> None:
    program = ng.tile(relu_add, {"a": (128, 512), "b": (128, 512)}, dtype=np.float64)
    calls = []

    class Counting(MergeAdds):
        def analysis(self, program):
            calls.append(program)
            return super().analysis(program)

    counting = Counting()
    analysis_of(program, counting)
    path = [program]  # the snapshots along the way stay alive, as in a search
    for _ in range(3):
        path.append(ng.apply(path[-1], "free_dim_merge", ng.analyze(path[-1], "free_dim_merge")[0]))
    program = path[-1]
    calls.clear()
    assert list(matches_of(program, counting)) == MergeAdds().analyze(program)
    assert calls == []  # updated from the root's through the three derivations


@pytest.mark.parametrize(
    ("returned", "got"), [(["a"], "a list holding str 'a'"), (3, "int 3"), (None, "NoneType")]
)
def test_an_analysis_that_returns_no_matches_is_named(returned, got: str) -> None:
    from nkigym_graph.rewriting.transform import Transform

    class ReturnsJunk(Transform):
        name = "test_returns_junk"

        def analyze(self, program):  # type: ignore[no-untyped-def]
            return returned

    program = ng.tile(relus(1), {"a": (128, 128), "b": (128, 128)})
    with pytest.raises(
        TransformError, match=f"'test_returns_junk' .*analyze must return a list of Match, got {got}"
    ):
        ng.saturate(program, [ReturnsJunk()])


def _scaled_relus(a, b):
    x = ng.activation(ng.nc_matmul(a, b), op="relu")
    return ng.activation(ng.activation(x, op="relu"), op="relu", scale=2.0, bias=-1.0)


def test_an_attribute_left_at_its_default_matches_its_default_value() -> None:
    """A statement holds only the attributes that differ from their defaults: a constraint
    on ``scale`` or ``bias`` sees 1.0 and 0.0 where they are left out, so ``scale=1.0``
    tells a plain relu from a scaled one (and a predicate is never given None)."""
    program = ng.tile(_scaled_relus, {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
    plain = Pattern("activation", op="relu", scale=1.0, bias=0.0)
    assert len(plain.find(program)) == 4  # two plain relus per 128-column tile
    assert len(Pattern("activation", op="relu", scale=lambda s: s > 1).find(program)) == 2
    assert len(SetPattern("activation", op="relu", bias=0.0).sections(program)[0][2]) == 4
    assert len(EqualPattern("activation", scale=1.0).runs(ng.tile(exps_twice, {"a": (128, 128)}))) == 1

    class SafeFold(PatternTransform):
        name = "test_safe_fold"
        pattern = Pattern(
            "activation", Pattern("activation", op="relu"), op="relu", scale=1.0, bias=0, capture="o"
        )

        def edit(self, program, found):
            return forward(program, found["o"])

    folded = ng.saturate(program, [SafeFold()], check=True)  # the scaled outer relu stays
    assert len(folded.statements_of("activation")) == 4
    want = np.maximum(2.0 * np.maximum(A.T @ B, 0.0) - 1.0, 0.0)
    np.testing.assert_allclose(ng.interpret(folded, a=A, b=B), want, rtol=1e-12)


def test_a_found_is_a_mapping_and_a_misspelt_capture_names_the_transform_and_line() -> None:
    program = ng.tile(relus(2), {"a": (128, 128), "b": (128, 128)}, dtype=np.float64)
    (found,) = FoldRelu.pattern.find(program)
    assert "outer" in found and "inner" not in found and found.get("inner") is None
    with pytest.raises(KeyError):
        found["inner"]

    class Misspelt(PatternTransform):
        name = "test_misspelt_capture"
        pattern = FoldRelu.pattern

        def edit(self, program, found):
            return forward(program, found["outr"])  # the misspelt line

    named = r"test_misspelt_capture: the pattern captured no statement named 'outr' \(captured: \['outer'\]\)"
    with pytest.raises(TransformError, match=named + r" \(at .*test_patterns.py:\d+: `return forward"):
        ng.saturate(program, [Misspelt()])


def test_a_set_pattern_along_an_axis_no_statement_has_is_refused_when_built() -> None:
    refused = (
        r"SetPattern\('tensor_tensor', axis='M'\): tensor_tensor statements cannot be adjacent along 'M'"
    )
    with pytest.raises(TransformError, match=refused + "; its axes: free, partition"):
        SetPattern("tensor_tensor", axis="M")
    with pytest.raises(TransformError, match="no op's statements can be adjacent along 'fre'"):
        SetPattern(axis="fre")
    assert SetPattern(axis="N").axis == "N" and SetPattern("load", axis="free").op == "load"


class MergeAddsUpTo256(PatternTransform):
    name = "test_merge_adds_up_to_256"
    pattern = SetPattern("tensor_tensor", axis="free", op="add")

    def edit(self, program, found):
        if sum(program.variables[program[n].dst.var].shape[1] for n in found.nodes) > 256:
            return None
        return merge_run(program, found.nodes, found.axis)


class ShareTwoAtOnce(PatternTransform):
    name = "test_share_two_at_once"
    pattern = EqualPattern("activation")

    def edit(self, program, found):
        return dedupe(program, *found.nodes) if len(found.nodes) == 2 else None


def exps_thrice(a):
    two = ng.tensor_tensor(ng.activation(a, op="exp"), ng.activation(a, op="exp"), op="add")
    return ng.tensor_tensor(two, ng.activation(a, op="exp"), op="add")


def test_saturation_takes_the_pairs_of_a_run_its_edit_refuses_whole() -> None:
    """An edit that refuses a whole run (wider than it allows, more than two equal
    statements) still gets the pairs ``analyze`` offers: saturation ends where
    ``analyze`` finds nothing, not where the first runs were refused."""
    program = ng.saturate(
        ng.tile(add, {"a": (128, 1024), "b": (128, 1024)}, dtype=np.float64), ["free_dim_merge"]
    )
    assert len(ng.analyze(program, MergeAddsUpTo256())) == 7
    merged = ng.saturate(program, [MergeAddsUpTo256()], check=True)
    assert len(merged.statements_of("tensor_tensor")) == 4 and ng.analyze(merged, MergeAddsUpTo256()) == []
    a, b = RNG.standard_normal((128, 1024)), RNG.standard_normal((128, 1024))
    np.testing.assert_allclose(ng.interpret(merged, a=a, b=b), a + b, rtol=1e-12)

    thrice = ng.tile(exps_thrice, {"a": (128, 128)}, dtype=np.float64)
    shared = ng.saturate(thrice, [ShareTwoAtOnce()], check=True)
    assert len(shared.statements_of("activation")) == 1 and ng.analyze(shared, ShareTwoAtOnce()) == []


def _twice_scaled_relus(a, b):
    return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu", scale=2.0)


class ScaleAwareFold(PatternTransform):
    """``FoldRelu`` that leaves relus reading a matmul alone (its edit refuses them)."""

    name = "test_scale_aware_fold"
    pattern = Pattern(
        "activation", Pattern("activation", op="relu", capture="inner"), op="relu", capture="outer"
    )

    def edit(self, program, found):
        inner_reads = program[found["inner"]].reads[0].var
        if any(program[w].op.name == "nc_matmul" for w in program.writers_of(inner_reads)):
            return None
        return forward(program, found["outer"])


def test_explain_of_a_tree_pattern_says_which_constraint_fails() -> None:
    """``explain`` of a pattern transform said only "statements [n] do not form a match",
    even for the root of a match (a match's nodes are every statement it matched)."""
    program = ng.tile(relus(2), {"a": (128, 128), "b": (128, 128)})
    inner, outer = program.statements_of("activation")
    matmul = program.statements_of("nc_matmul")[0]
    assert ng.explain(program, FoldRelu(), outer).startswith("match: ")
    assert ng.explain(program, FoldRelu(), inner, outer).startswith("match: ")
    said = ng.explain(program, FoldRelu(), inner)
    assert f"statement {inner}" in said and "operand 0" in said and "nc_matmul" in said
    said = ng.explain(program, FoldRelu(), matmul)
    assert "is a nc_matmul" in said and "activation" in said
    refused = ng.explain(program, ScaleAwareFold(), outer)
    assert "matches" in refused and "edit returned None" in refused and f"outer={outer}" in refused
    scaled = ng.tile(_twice_scaled_relus, {"a": (128, 128), "b": (128, 128)})
    strict = Pattern("activation", Pattern("activation", op="relu"), op="relu", scale=1.0, capture="outer")
    fold = type("StrictFold", (FoldRelu,), {"name": "test_strict_fold", "pattern": strict})()
    said = ng.explain(scaled, fold, scaled.statements_of("activation")[1])
    assert "scale is 2.0" in said and "wants 1.0" in said


def test_explain_of_a_set_pattern_says_why_a_pair_does_not_merge() -> None:
    tiled = ng.tile(add, {"a": (128, 256), "b": (128, 256)})
    apart = tiled.statements_of("tensor_tensor")
    said = ng.explain(tiled, MergeAdds(), *apart)  # each add reads its own loads
    assert "free: they differ in more than their free ranges" in said
    program = ng.saturate(tiled, ["free_dim_merge"])
    first, second = program.statements_of("tensor_tensor")
    assert ng.explain(program, MergeAdds(), first, second).startswith("match: ")
    assert "one statement" in ng.explain(program, MergeAdds(), first)
    load = program.statements_of("load")[0]
    assert "is a load" in ng.explain(program, MergeAdds(), first, load)
    narrow = ng.Target(**{**_fields(ng.TRN2), "name": "narrow_free", "op_limits": _free_limit(128)})
    capped = ng.saturate(ng.tile(add, {"a": (128, 256), "b": (128, 256)}, target=narrow), ["free_dim_merge"])
    said = ng.explain(capped, MergeAdds(), *capped.statements_of("tensor_tensor"))
    assert "free would be 256 > 128 on narrow_free" in said


def _fields(target: ng.Target) -> dict:
    import dataclasses

    return {f.name: getattr(target, f.name) for f in dataclasses.fields(target)}


def _free_limit(size: int) -> dict:
    limits = {op: dict(dims) for op, dims in ng.TRN2.op_limits.items()}
    limits["tensor_tensor"] = {**limits["tensor_tensor"], "free": size}
    return limits


def test_explain_of_an_equal_pattern_says_why_values_differ() -> None:
    program = ng.tile(exps_twice, {"a": (128, 128)})
    first, second = program.statements_of("activation")
    assert ng.explain(program, ShareValues(), first, second).startswith("match: ")
    adding = program.statements_of("tensor_tensor")[0]
    said = ng.explain(program, ShareValues(), first, adding)
    assert "compute different values" in said
