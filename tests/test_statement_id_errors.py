"""A query by an id that names no statement raises ``UnknownStatementError``: an
``NkigymError`` naming the id and the range of the program's ids (also a ``KeyError``
and an ``IndexError``, which the queries raised before)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import nkigym_graph as ng
from nkigym_graph import UnknownStatementError
from nkigym_graph.ir.synthetic import tiled_matmul

PROGRAM = tiled_matmul(128, 128, 256)
LAST = len(PROGRAM) - 1

QUERIES: dict[str, Callable[[ng.Program], Any]] = {
    "reaches_from": lambda p: p.reaches(9999, 0),
    "reaches_to": lambda p: p.reaches(0, 9999),
    "reaches_names": lambda p: p.reaches("a", "b"),
    "order_key": lambda p: p.order_key(9999),
    "in_order": lambda p: p.in_order([0, 9999]),
    "pred_of": lambda p: p.pred_of(9999),
    "predecessors": lambda p: p.predecessors(9999),
    "successors": lambda p: p.successors(9999),
    "producers": lambda p: p.producers(9999),
    "uses": lambda p: p.uses(0, 9999),
    "getitem": lambda p: p[9999],
    "position": lambda p: p.position(9999),
}


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_an_unknown_id_is_a_project_error_naming_it_and_the_ids(query: Callable[[ng.Program], Any]) -> None:
    with pytest.raises(UnknownStatementError) as caught:
        query(PROGRAM)
    err = caught.value
    assert isinstance(err, ng.NkigymError) and isinstance(err, KeyError) and isinstance(err, IndexError)
    assert "no statement with id " in str(err)
    assert f"in program 'tiled_matmul' (its statement ids lie between 0 and {LAST})" in str(err)


def test_the_message_names_the_id() -> None:
    with pytest.raises(ng.NkigymError, match="no statement with id 'a' in program"):
        PROGRAM.reaches("a", "b")


def test_a_derived_program_names_its_own_ids() -> None:
    derived = ng.saturate(PROGRAM)
    with pytest.raises(ng.NkigymError, match=f"ids lie between {min(derived.ids)} and {max(derived.ids)}"):
        derived[9999]


def test_known_ids_still_answer() -> None:
    first, last = PROGRAM.ids[0], PROGRAM.ids[-1]
    assert PROGRAM.reaches(first, last) in (True, False)
    assert PROGRAM.in_order([last, first]) == [first, last]
    assert PROGRAM.order_key(first) < PROGRAM.order_key(last)
    assert PROGRAM.position(last) == LAST and PROGRAM[first] is PROGRAM.statements[0]


def test_a_query_of_an_unknown_id_or_parameter_never_answers() -> None:
    """``reaches(x, x)`` and ``uses`` with an unknown source answered (True, ``()``) for ids
    the program does not have; ``parameter`` raised a bare KeyError."""
    import nkigym_graph as ng
    from nkigym_graph.ir.program import UnknownParameterError

    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 256)})
    node = program.statements_of("nc_matmul")[0]
    assert program.reaches(node, node)
    with pytest.raises(UnknownStatementError, match="no statement with id 999"):
        program.reaches(999, 999)
    with pytest.raises(UnknownStatementError, match="no statement with id 999"):
        program.uses(999, node)
    with pytest.raises(UnknownParameterError, match=r"has no parameter 'zz' \(its parameters: a, b\)"):
        program.parameter("zz")
