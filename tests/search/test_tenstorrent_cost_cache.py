"""The ``tenstorrent`` cost model prices one netlist per ``Emitter.key``: the programs a
search derives from one another mostly lower to the same netlist, and each of them gets
the report it gets priced on its own."""

from __future__ import annotations

from typing import Any

import pytest

import nkigym_graph as ng
from nkigym_graph.ir.program import Program
from nkigym_graph_plugins.buda_backend import emit
from nkigym_graph_plugins.buda_backend.arch import get_arch
from nkigym_graph_plugins.buda_backend.errors import BudaEmitError
from nkigym_graph_plugins.tenstorrent_cost import TenstorrentCostModel


def mlp(x_t: Any, w1: Any, b1: Any, w2: Any) -> Any:
    return ng.nc_matmul(ng.activation(ng.nc_matmul(w1, x_t), op="gelu", bias=b1), w2)


SHAPES = {"x_t": (64, 96), "w1": (64, 128), "b1": (128, 1), "w2": (128, 64)}


class _Recording(TenstorrentCostModel):
    """Keeps every program it prices."""

    def __init__(self) -> None:
        super().__init__()
        self.programs: list[Program] = []

    def _estimate(self, program: Program) -> Any:
        self.programs.append(program)
        return super()._estimate(program)


@pytest.fixture(scope="module")
def searched() -> list[Program]:
    """The distinct programs a greedy search prices (a small MLP on Wormhole B0)."""
    model = _Recording()
    program = ng.tile(mlp, SHAPES, target=ng.WORMHOLE_B0)
    ng.search(program, seed=0, progress=False, confirm=False, cost_model=model)
    return model.programs


def _documents(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the netlists planned, placed and checked (``Emitter.document`` calls)."""
    calls: list[int] = []
    document = emit.Emitter.document

    def counted(self: emit.Emitter) -> Any:
        calls.append(1)
        return document(self)

    monkeypatch.setattr(emit.Emitter, "document", counted)
    return calls


def test_each_netlist_is_priced_once_and_every_program_gets_its_own_report(
    searched: list[Program], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = {emit.Emitter(p, get_arch(p.target)).key for p in searched}
    assert len(searched) > 2 * len(keys)  # the search's programs share few netlists
    documents = _documents(monkeypatch)
    shared = TenstorrentCostModel()
    reports = [shared.estimate(p) for p in searched]
    assert len(documents) == len(keys)
    alone = [TenstorrentCostModel().estimate(p) for p in searched]  # a fresh model each
    assert reports == alone
    assert len(documents) == len(keys) + len(searched)


def test_a_refused_netlist_is_refused_again_for_a_program_with_the_same_key(
    searched: list[Program], monkeypatch: pytest.MonkeyPatch
) -> None:
    arch = get_arch(ng.WORMHOLE_B0)
    first = searched[0]
    same = [p for p in searched[1:] if emit.Emitter(p, arch).key == emit.Emitter(first, arch).key]
    assert same and all(p.canonical_hash != first.canonical_hash for p in same)
    calls: list[int] = []

    def refused(self: emit.Emitter) -> Any:
        calls.append(1)
        raise BudaEmitError("refused for the test")

    monkeypatch.setattr(emit.Emitter, "document", refused)
    model = TenstorrentCostModel()
    reports = [model.estimate(p) for p in (first, same[0])]
    assert calls == [1]
    assert [r.feasible for r in reports] == [False, False]
    assert reports[0].reason == reports[1].reason == "the buda backend cannot emit it: refused for the test"
    with pytest.raises(BudaEmitError, match="refused for the test"):
        model.price(same[-1])
    assert calls == [1]


def test_the_key_holds_the_program_name_and_the_data_format(searched: list[Program]) -> None:
    program = searched[0]
    arch = get_arch(program.target)
    key = emit.Emitter(program, arch).key
    assert emit.Emitter(program, arch).key == key
    assert emit.Emitter(program.replace(name="other"), arch).key != key  # the error names the program
    assert emit.Emitter(program, get_arch(program.target, df="Bfp8_b")).key != key
