"""Union-find over axes and the dimension analysis: kinds, tile sizes, ragged tiles."""

from __future__ import annotations

import pytest

from nkigym_graph import GRAYSKULL, TRN2, TilingError
from nkigym_graph.ir.ops import NC_MATMUL, NC_TRANSPOSE, TENSOR_REDUCE, TENSOR_TENSOR
from nkigym_graph.ir.statement import make_attrs
from nkigym_graph.tiling import AxisUnion, Trace, analyze
from nkigym_graph.tiling.dimensions import PARALLEL, REDUCTION, split


def test_union_find_joins_and_keeps_size() -> None:
    axes = AxisUnion()
    x, y, z = axes.add("x", 8), axes.add("y", 8), axes.add("z", 8)
    assert not axes.same(x, z)
    axes.union(y, z, "op")
    axes.union(x, z, "op")
    assert axes.same(x, y) and axes.find(z) == x
    assert axes.classes() == {x: (x, y, z)}
    assert axes.size(z) == 8 and axes.name(z) == "z"


def test_union_find_rejects_different_sizes() -> None:
    axes = AxisUnion()
    x, y = axes.add("a[axis 0]", 128), axes.add("b[axis 0]", 96)
    with pytest.raises(
        TilingError,
        match=r"nc_matmul: size mismatch, a\[axis 0\] has size 128 "
        r"but b\[axis 0\] has size 96",
    ):
        axes.union(x, y, "nc_matmul")
    assert not axes.same(x, y)


@pytest.mark.parametrize(
    ("size", "tile", "expected"),
    [
        (128, 128, ((0, 128),)),
        (1000, 128, tuple((s, min(s + 128, 1000)) for s in range(0, 1000, 128))),
        (40, 32, ((0, 32), (32, 40))),
        (1, 128, ((0, 1),)),
    ],
)
def test_split(size: int, tile: int, expected) -> None:
    assert split(size, tile) == expected
    assert split(size, tile)[-1][1] - split(size, tile)[-1][0] == size - tile * (len(expected) - 1)


def test_matmul_joins_k_and_keeps_m_n_parallel() -> None:
    trace = Trace()
    a, b = trace.param("a", (1000, 200)), trace.param("b", (1000, 384))
    out = trace.record(NC_MATMUL, (a, b), ())
    dims = analyze(trace, out, TRN2)
    k, m, n = (dims.dimension(axis) for axis in (a.axes[0], a.axes[1], b.axes[1]))
    assert dims.dimension(b.axes[0]) is k
    assert (k.kind, m.kind, n.kind) == (REDUCTION, PARALLEL, PARALLEL)
    assert k.roles == {"K", "partition"} and m.roles >= {"M"} and n.roles >= {"N"}
    assert k.tiles[-1] == (896, 1000) and len(k.tiles) == 8
    assert len(dims) == 3 and set(dims.params) == {"a", "b"}


def test_transpose_swaps_and_reduce_adds_a_unit_axis() -> None:
    trace = Trace()
    x = trace.param("x", (64, 300))
    t = trace.record(NC_TRANSPOSE, (x,), ())
    assert t.axes == (x.axes[1], x.axes[0]) and t.shape == (300, 64)
    r = trace.record(TENSOR_REDUCE, (t,), make_attrs(op="sum"))
    assert r.shape == (300, 1) and r.axes[0] == x.axes[1]
    dims = analyze(trace, r, TRN2)
    assert dims.dimension(x.axes[0]).kind == REDUCTION
    assert dims.dimension(r.axes[1]).tiles == ((0, 1),)


def test_elementwise_joins_every_axis() -> None:
    trace = Trace()
    x, y = trace.param("x", (128, 256)), trace.param("y", (128, 256))
    trace.record(TENSOR_TENSOR, (x, y), make_attrs(op="add"))
    assert trace.axes.same(x.axes[0], y.axes[0]) and trace.axes.same(x.axes[1], y.axes[1])
    assert not trace.axes.same(x.axes[0], x.axes[1])


def test_tile_size_comes_from_the_target() -> None:
    trace = Trace()
    a, b = trace.param("a", (100, 100)), trace.param("b", (100, 100))
    out = trace.record(NC_MATMUL, (a, b), ())
    assert {d.tile for d in analyze(trace, out, GRAYSKULL)} == {32}
    assert {d.tile for d in analyze(trace, out, TRN2)} == {128}
