"""Attention kernels: transposes of one tile share a PSUM tile and one eviction, the
list-scheduled order keeps PSUM within its banks, and the kernels -- two-pass and online,
program order and reordered, fp32 and bf16, small and ragged sizes -- simulate equal to
numpy."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from workload_functions import attention, attention_reference

import nkigym_graph as ng
from nkigym_graph.nki_sim.timing.constants import TRN2_TIMING
from nkigym_graph_plugins.nki_backend.engines import GPSIMD, SCALAR, TENSOR, VECTOR, EngineLoads
from nkigym_graph_plugins.nki_backend.fusion import plan_fusions
from nkigym_graph_plugins.nki_backend.pipeline import pipelined_order


def _shapes(d: int, queries: int, keys: int) -> dict[str, tuple[int, int]]:
    return {"q_t": (d, queries), "k_t": (d, keys), "v": (keys, d)}


def _inputs(shapes: dict[str, tuple[int, int]], dtype: object) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes.values()]


def _relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


SIZES = [(128, 256, 1024), (64, 200, 300), (32, 130, 700)]
"""(d, queries, keys): whole tiles, and ragged edges of rows and columns."""


@pytest.mark.parametrize("d,queries,keys", SIZES)
@pytest.mark.parametrize("online", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def testattention_kernels_equal_numpy(d: int, queries: int, keys: int, online: bool, dtype: str) -> None:
    shapes = _shapes(d, queries, keys)
    storage = np.float32 if dtype == "float32" else ml_dtypes.bfloat16
    arrays = _inputs(shapes, storage)
    want = attention_reference(*(a.astype(np.float64) for a in arrays))
    tolerance = 2e-5 if dtype == "float32" else 2e-2
    program = ng.saturate(ng.tile(attention, shapes, dtype=dtype, online=online))
    for reorder in (False, True):
        out = ng.nki_sim.simulate(ng.emit(program, backend="nki", reorder=reorder), *arrays)
        assert _relative_error(out, want) < tolerance, (reorder, online)


def test_transposes_of_one_tile_share_a_psum_tile_and_one_copy() -> None:
    shapes = _shapes(128, 128, 1024)
    program = ng.saturate(ng.tile(attention, shapes, dtype="bfloat16"))
    text = ng.emit(program, backend="nki", roll_loops=False)
    transposes = re.findall(r"nisa\.nc_transpose\(dst=(\w+)\[0:128, (\d+):\d+\]", text)
    assert len(transposes) == 8  # 1024 keys: 8 blocks of 128
    groups = {tile for tile, _ in transposes}
    assert len(groups) == 2  # two exp tiles of 512 columns, four transposes each
    for tile in groups:
        assert sorted(int(c) for t, c in transposes if t == tile) == [0, 128, 256, 384]
        assert re.search(rf"{tile} = nl\.ndarray\(\(128, 512\), dtype=nl\.bfloat16, buffer=nl\.psum\)", text)
        assert len(re.findall(rf"nisa\.tensor_copy\(dst=\w+, src={tile}\b", text)) == 1


def test_a_group_holds_at_most_a_psum_bank() -> None:
    shapes = _shapes(128, 128, 1024)
    program = ng.saturate(ng.tile(attention, shapes, dtype="bfloat16"))
    order = list(program.ids)
    transposes = [n for n in order if program[n].op.name == "nc_transpose"]
    by_bank = plan_fusions(program, order, lambda stmt: 256)  # two 128-row results per tile
    assert sorted(len(g) for g in by_bank.transposes_of.values()) == [2, 2, 2, 2]
    grouped = {n for group in by_bank.transposes_of.values() for n in group}
    assert grouped == set(transposes)
    assert plan_fusions(program, order).transposes_of == {}  # without a bank size: no groups


def test_a_group_takes_blocks_of_several_tiles_written_before_it_runs() -> None:
    """Once a row's exponentials are both written, its eight transposes share one bank."""
    program = ng.saturate(ng.tile(attention, _shapes(128, 128, 1024), dtype="bfloat16"))
    transposes = [n for n in program.ids if program[n].op.name == "nc_transpose"]
    exps = [n for n in program.ids if program[n].op.name.startswith("activation")]
    after = set(transposes)  # statements with a transpose among their inputs, transitively
    for n in program.ids:
        if any(p in after for p in program.predecessors(n)):
            after.add(n)
    before = [n for n in program.ids if n not in after]
    order = before + transposes + [n for n in program.ids if n in after and n not in transposes]
    assert max(order.index(e) for e in exps if program[e].attr("op") == "exp") < order.index(transposes[0])
    fusions = plan_fusions(program, order, lambda stmt: 1024)  # one bank of bf16 columns
    assert list(fusions.transposes_of.values()) == [tuple(transposes)]
    sources = {program[n].operands[0].var for n in transposes}
    assert len(sources) == 2
    # in program order the second exponential comes after the first transposes: two groups
    in_order = plan_fusions(program, list(program.ids), lambda stmt: 1024)
    assert sorted(len(g) for g in in_order.transposes_of.values()) == [4, 4]


@pytest.mark.parametrize("priority", ["start", "chain"])
def test_the_pipelined_order_keeps_held_psum_within_its_room(priority: str) -> None:
    """Two rows of 1024 keys: each row's scores take two banks and its P @ V one; with room
    for three banks the order never holds more, and frees an accumulator at its last read."""
    shapes = _shapes(128, 256, 1024)
    program = ng.saturate(ng.tile(attention, shapes, dtype="bfloat16"))
    held = {
        stmt.dst.var
        for stmt in program.statements
        if stmt.op.name == "nc_matmul" and program.variables[stmt.dst.var].shape[1] <= 512
    }
    order = pipelined_order(
        program, TRN2_TIMING, lambda s: s.op.name == "load", 3 * 2048, held.__contains__, priority=priority
    )
    assert sorted(order) == list(program.ids)
    position = {node: i for i, node in enumerate(order)}
    live = 0
    events = []
    for var in held:
        writers = program.writers_of(var)
        readers = [node for node, _ in program.consumers_of(var)]
        events.append((min(position[w] for w in writers), 1))
        events.append((max(position[n] for n in (*writers, *readers)) + 0.5, -1))
    peak = 0
    for _, delta in sorted(events):
        live += delta
        peak = max(peak, live)
    assert peak <= 3


def test_a_result_from_another_engine_arrives_after_the_semaphore() -> None:
    loads = EngineLoads(TRN2_TIMING, "finish")
    end = loads.run(SCALAR, 512, 1, [], 1)
    same = loads._finish(SCALAR, 512, 1, [1])
    other = loads._finish(VECTOR, 512, 1, [1])
    assert same == end + loads.time_ns(SCALAR, 512, 1)
    assert other == end + TRN2_TIMING.engine_sync_ns + loads.time_ns(VECTOR, 512, 1)


def test_the_ahead_policy_leaves_a_copy_to_the_engine_with_less_work_to_come() -> None:
    loads = EngineLoads(TRN2_TIMING, "ahead")
    loads.ahead.update({VECTOR: 40_000.0, SCALAR: 1_000.0})  # many maxima still to come
    assert loads.choose([VECTOR, SCALAR], 512, 1, [], 1) == SCALAR
    loads.ahead.update({VECTOR: 0.0, SCALAR: 40_000.0})  # now the exponentials
    assert loads.choose([VECTOR, SCALAR], 512, 1, [], 2) == VECTOR
    assert loads.ahead == {VECTOR: 0.0, SCALAR: 40_000.0, GPSIMD: 0.0, TENSOR: 0.0}  # copies are not counted
    loads.run(SCALAR, 512, 1, [], 3)  # work only the Scalar Engine can do, done
    assert loads.ahead[SCALAR] == 40_000.0 - loads.time_ns(SCALAR, 512, 1)


def test_the_chain_priority_is_rejected_unless_known() -> None:
    program = ng.saturate(ng.tile(attention, _shapes(128, 128, 512), dtype="bfloat16"))
    with pytest.raises(ValueError, match="unknown priority"):
        pipelined_order(program, TRN2_TIMING, lambda s: False, 16384, priority="fastest")


def test_search_finds_anattention_program_that_emits() -> None:
    """The cost model counts PSUM tiles in whole banks, as the emitter does: the greedy
    search does not stop at a program whose row of score tiles needs more banks than PSUM has."""
    shapes = _shapes(128, 128, 2048)
    program = ng.tile(attention, shapes, dtype="bfloat16")
    assert not ng.estimate(program).feasible  # sixteen [128, 128] score tiles: sixteen banks
    best = ng.search(program, strategy="greedy", seed=0, confirm=False).best
    assert ng.estimate(best).feasible
    arrays = _inputs(shapes, ml_dtypes.bfloat16)
    out = ng.nki_sim.simulate(ng.emit(best, backend="nki", reorder=True), *arrays)
    assert _relative_error(out, attention_reference(*(a.astype(np.float64) for a in arrays))) < 2e-2


@pytest.mark.parametrize("shape", [(4, 4), (128, 200), (200, 96)])
@pytest.mark.parametrize("saturate", [False, True])
def test_a_transpose_of_a_transpose_is_not_grouped_with_it(shape: tuple[int, int], saturate: bool) -> None:
    """A group of transposes runs where its first member does, so a transpose reading the
    first member's result starts a group of its own (it used to join it and read its
    input before it was written)."""

    def f(x):  # type: ignore[no-untyped-def]
        return ng.nc_matmul(x, ng.nc_transpose(ng.nc_transpose(x)))

    program = ng.tile(f, {"x": shape})
    if saturate:
        program = ng.saturate(program)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out = ng.nki_sim.simulate(ng.emit(program, backend="nki"), x)
    np.testing.assert_allclose(out, x.T.astype(np.float64) @ x, rtol=1e-4, atol=1e-4)
