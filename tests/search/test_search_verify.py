"""Numeric verification: memoized evaluation agrees with the interpreter and numpy, a
state recomputes only what changed, and a deliberately wrong transform is caught."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.numeric.memo import ByteLRU
from nkigym_graph.numeric.owners import final_owners
from nkigym_graph.rewriting.transform import Edit, Match, Rename, Transform
from nkigym_graph.search import SearchError, Verifier, VerifySettings, search
from nkigym_graph.tiling import (
    activation,
    nc_matmul,
    nc_transpose,
    tensor_reduce,
    tensor_scalar,
    tensor_tensor,
    tile,
)


def _tail(a, b, c):
    return tensor_tensor(activation(nc_matmul(a, b), op="tanh"), c, op="add")


def _reduce(a, b):
    return tensor_reduce(tensor_scalar(nc_matmul(a, b), 0.5, op="multiply"), op="max")


def _transpose(a):
    return nc_transpose(activation(a, op="exp"))


PROGRAMS: dict[str, tuple[ng.Program, Callable[..., np.ndarray]]] = {
    "tail": (
        tile(_tail, {"a": (256, 200), "b": (256, 300), "c": (200, 300)}),
        lambda a, b, c: np.tanh(a.T @ b) + c,
    ),
    "reduce": (
        tile(_reduce, {"a": (256, 256), "b": (256, 384)}),
        lambda a, b: (0.5 * a.T @ b).max(1, keepdims=True),
    ),
    "transpose": (tile(_transpose, {"a": (256, 200)}), lambda a: np.exp(a).T),
    "matmul": (tiled_matmul(384, 256, 300, tail="relu"), lambda a, b: np.maximum(a.T @ b, 0)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_memoized_evaluation_agrees_with_numpy_and_the_interpreter(name: str) -> None:
    program, reference = PROGRAMS[name]
    for variant in (program, ng.saturate(program)):
        verifier = Verifier(variant, VerifySettings(seed=11))
        inputs = verifier.evaluator.inputs
        (var,) = variant.returns
        got = verifier.full(variant)[var]
        np.testing.assert_allclose(got, reference(**inputs), rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(got, ng.interpret(variant, dtype=np.float64, **inputs))
        assert verifier.check(variant, full=True) is None and verifier.check(variant) is None


def test_a_rewritten_state_recomputes_only_changed_statements() -> None:
    root = tiled_matmul(512, 512, 512)
    verifier = Verifier(root)
    computed = verifier.evaluator.computed
    assert verifier.check(root, full=True) is None
    assert verifier.evaluator.computed == computed  # the root's own writers: nothing to compare
    verifier.full(root)  # every statement of the root in the memo
    before = verifier.evaluator.computed
    reused = ng.apply(root, "data_reuse", ng.analyze(root, "data_reuse")[0])
    assert verifier.check(reused, full=True) is None
    assert verifier.evaluator.computed == before  # same node keys: nothing to recompute
    deduplicated = ng.saturate(root, ["data_reuse"])
    assert verifier.check(deduplicated, full=True) is None
    assert verifier.evaluator.computed == before
    merge = next(m for m in ng.analyze(deduplicated, "operand_merge") if "load" in m.detail)
    merged = ng.apply(deduplicated, "operand_merge", merge)
    assert verifier.check(merged, full=True) is None
    recomputed = verifier.evaluator.computed - before  # the matmuls reading the merged tile, and after
    assert 0 < recomputed <= len(root.statements_of("nc_matmul")) // 2


def test_a_full_check_evaluates_only_the_tiles_whose_last_writers_changed() -> None:
    root = tiled_matmul(512, 512, 512)
    deduplicated = ng.saturate(root, ["data_reuse"])
    merge = next(m for m in ng.analyze(deduplicated, "operand_merge") if "load" in m.detail)
    merged = ng.apply(deduplicated, "operand_merge", merge)
    verifier = Verifier(root)
    before = verifier.evaluator.computed
    assert verifier.check(merged, full=True) is None
    by_key = verifier.evaluator.computed - before
    whole = Verifier(root)
    before = whole.evaluator.computed
    np.testing.assert_array_equal(whole.full(merged)["output"], whole.full(root)["output"])
    assert 0 < by_key < whole.evaluator.computed - before


def test_a_full_check_reports_an_element_where_the_outputs_differ() -> None:
    root = tiled_matmul(256, 256, 512)
    node = root.statements_of("load")[-1]
    rows, (start, stop) = root[node].operands[0].slices
    assert start > 0
    moved = root[node].with_operand(0, ng.Operand("b", (rows, (0, stop - start))))  # not the last tile
    wrong = root.replace(statements=[moved if i == node else s for i, s in enumerate(root.statements)])
    verifier = Verifier(root)
    message = verifier.check(wrong, full=True)
    assert message is not None
    where = tuple(int(i) for i in message[len("output[") : message.index("]")].split(","))
    got, want = verifier.full(wrong)["output"], verifier.full(root)["output"]
    assert got[where] != want[where]


def test_later_writes_own_the_elements_they_overwrite() -> None:
    root = tiled_matmul(256, 256, 256)
    store = root[root.writers_of("output")[2]]  # rows 0-128, columns 128-256
    again = store.with_operand(1, ng.Operand("output", ((64, 192), (0, 128))))
    program = root.replace(statements=[*root.statements, again])
    ids: dict[str, int] = {}
    owner = final_owners(program, "output", (256, 256), ids)
    last = ids[program.node_keys[program.writers_of("output")[-1]]]
    assert (owner[64:192, :128] == last).all() and not (owner[:64] == last).any()
    message = Verifier(root).check(program, full=True)
    assert message is not None
    row, column = (int(i) for i in message[len("output[") : message.index("]")].split(","))
    assert 64 <= row < 192 and column < 128


def test_the_memo_is_bounded_by_bytes() -> None:
    memo = ByteLRU(capacity=3 * 8 * 100)
    for i in range(10):
        memo.put(str(i), np.full(100, float(i)))
    assert len(memo) == 3 and memo.nbytes <= memo.capacity
    assert "9" in memo and "0" not in memo
    value = memo.get("9")
    assert value is not None and not value.flags.writeable


def test_a_wrong_program_is_reported_with_the_differing_element() -> None:
    root = tiled_matmul(256, 256, 256)
    node = root.statements_of("load")[0]
    stmt = root[node]
    moved = stmt.with_operand(0, ng.Operand("a", ((128, 256), (0, 128))))
    wrong = root.replace(statements=[moved if i == node else s for i, s in enumerate(root.statements)])
    verifier = Verifier(root, VerifySettings(seed=0, samples=400))
    assert verifier.check(wrong, full=True) == verifier.check(wrong, full=True)
    message = verifier.check(wrong, full=True)
    assert message is not None and message.startswith("output[") and "the root gives" in message
    assert verifier.check(wrong) is not None  # 400 samples hit the wrong tile


class BadReuse(Transform):
    """A deliberately wrong ``data_reuse``: loads of the same *shape* count as duplicates
    (loads reading column ``avoid`` are left alone)."""

    name = "bad_reuse"
    avoid: int | None = None

    def analyze(self, program: ng.Program) -> list[Match]:
        matches = []
        for source in sorted(program.index.loads_by_source):
            first: dict[tuple, int] = {}
            for node in program.loads_of(source):
                dst = program[node].dst
                (_, _), (start, stop) = program[node].operands[0].slices
                if self.avoid is not None and start <= self.avoid < stop:
                    continue
                keeper = first.setdefault(tuple(e - s for s, e in dst.slices), node)
                if keeper != node and program[keeper].operands[0] != program[node].operands[0]:
                    keep_var = program[keeper].dst.var
                    edit = Edit(absorb={node: keeper}, renames={dst.var: Rename(keep_var)})
                    matches.append(
                        Match(
                            self.name,
                            (keeper, node),
                            edit,
                            frozenset({keeper}),
                            program_hash=program.canonical_hash,
                        )
                    )
        return matches


class WrongPlugin:
    @ng.hookimpl
    def nkigym_graph_register_transforms(self) -> list[type[Transform]]:
        return [BadReuse]


@pytest.fixture
def bad_reuse() -> Iterator[str]:
    plugin = WrongPlugin()
    ng.register_plugin(plugin, name="wrong_transform")
    try:
        yield "bad_reuse"
    finally:
        ng.unregister_plugin(plugin)


@pytest.mark.parametrize("strategy", ["greedy", "random", "exhaustive"])
def test_a_wrong_transform_is_caught_and_named(bad_reuse: str, strategy: str) -> None:
    root = tiled_matmul(256, 256, 256)
    with pytest.raises(
        SearchError, match=r"transform 'bad_reuse' produced a program that differs from the root: state"
    ):
        search(root, ("data_reuse", bad_reuse), strategy=strategy, verify="all", budget=40)


def test_a_wrong_state_missed_by_the_samples_is_caught_by_the_full_check_of_the_best() -> None:
    root = tiled_matmul(256, 256, 256)
    settings = VerifySettings(seed=3, samples=1)
    _, column = (int(coords[0]) for coords in Verifier(root, settings).points["output"])

    class Unseen(BadReuse):
        avoid = column  # the wrong reuse stays out of the sampled output column

    sampled_only = Verifier(root, settings)
    wrong = ng.saturate(root, [Unseen()])
    assert sampled_only.check(wrong) is None and sampled_only.check(wrong, full=True) is not None
    with pytest.raises(
        SearchError, match=r"'bad_reuse' .* \(found by the full check of the best state\): step 1"
    ):
        search(root, (Unseen(),), strategy="greedy", samples=1, seed=3)


def test_verification_inputs_and_samples_follow_the_seed() -> None:
    root = tiled_matmul(256, 256, 256)
    one, same, other = (Verifier(root, VerifySettings(seed=s)) for s in (4, 4, 5))
    assert np.array_equal(one.evaluator.inputs["a"], same.evaluator.inputs["a"])
    assert not np.array_equal(one.evaluator.inputs["a"], other.evaluator.inputs["a"])
    assert all(np.array_equal(x, y) for x, y in zip(one.points["output"], same.points["output"], strict=True))


def test_sampled_checks_of_states_agree_with_a_fresh_verifier() -> None:
    # the verifier keeps, per node key, which sample points a statement writes
    root = tiled_matmul(512, 256, 384)
    shared = Verifier(root, VerifySettings(seed=2, samples=64))
    program = root
    for name in ("data_reuse", "operand_merge", "data_reuse", "dead_code", "operand_merge"):
        matches = ng.analyze(program, name)
        if matches:
            program = ng.apply(program, name, matches[len(matches) // 2])
        fresh = Verifier(root, VerifySettings(seed=2, samples=64))
        got, expected = shared.sampled(program), fresh.sampled(program)
        assert all(np.array_equal(got[var], expected[var]) for var in expected)
        assert np.array_equal(got["output"], fresh.full(program)["output"][fresh.points["output"]])
        assert shared.check(program) is None


def test_a_sampled_check_reuses_the_verdict_of_programs_with_the_same_sample_writers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the statements writing sample points, by node key and in order, fix the samples
    import nkigym_graph.numeric.equivalence as equivalence

    root = tiled_matmul(512, 256, 384)
    verifier = Verifier(root, VerifySettings(seed=2, samples=64))
    compared = []
    compare = equivalence._compare
    monkeypatch.setattr(equivalence, "_compare", lambda *args: compared.append(1) or compare(*args))
    assert verifier.check(root) is None and len(compared) == 1
    reused = ng.apply(root, "data_reuse", ng.analyze(root, "data_reuse")[0])  # same writers' keys
    assert reused.structure_hash != root.structure_hash
    assert verifier.check(reused) is None and len(compared) == 1
    merge = next(m for m in ng.analyze(reused, "operand_merge") if "load" in m.detail)
    merged = ng.apply(reused, "operand_merge", merge)
    assert verifier.check(merged) is None and len(compared) == 2
    node = root.statements_of("load")[0]
    moved = root[node].with_operand(0, ng.Operand("a", ((128, 256), (0, 128))))
    wrong = root.replace(statements=[moved if i == node else s for i, s in enumerate(root.statements)])
    fresh = Verifier(root, VerifySettings(seed=2, samples=64))
    assert verifier.check(wrong) == fresh.check(wrong) is not None
