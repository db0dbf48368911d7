"""Programs are immutable values with indexes and a query API."""

from __future__ import annotations

import pickle

import networkx as nx
import pytest
from support import seed_text

from nkigym_graph import VerificationError, parse_program
from nkigym_graph.ir.synthetic import tiled_matmul


@pytest.fixture
def program():
    return parse_program(seed_text("001_program_before"))


def test_snapshot_cannot_be_mutated(program) -> None:
    with pytest.raises(AttributeError, match="immutable"):
        program.name = "other"
    with pytest.raises(AttributeError, match="immutable"):
        del program.statements
    with pytest.raises(nx.NetworkXError, match=r"[Ff]rozen"):
        program.graph.add_node(99)
    with pytest.raises(TypeError):
        program.variables["x"] = None  # type: ignore[index]
    with pytest.raises(AttributeError):
        program.statements[0].op = None  # type: ignore[misc]


def test_graph_attributes_are_read_only_and_copies_are_mutable(program) -> None:
    graph = program.graph
    with pytest.raises(TypeError):
        graph.nodes[3]["stmt"] = program.statements[1]
    with pytest.raises(TypeError):
        graph.edges[1, 3]["uses"] = ()
    with pytest.raises(TypeError):
        graph.graph["name"] = "other"
    assert program.graph.nodes[3]["stmt"] is program.statements[3]
    assert program.graph.edges[1, 3]["uses"]
    for copy in (nx.DiGraph(graph), graph.copy()):
        copy.nodes[3]["stmt"] = None
        copy.edges[1, 3]["uses"] = ()
        copy.add_node(99)
        assert graph.nodes[3]["stmt"] is program.statements[3] and 99 not in graph


def test_graph_nodes_carry_statements_and_edges_carry_uses(program) -> None:
    graph = program.graph
    assert nx.is_directed_acyclic_graph(graph)
    assert graph.nodes[3]["stmt"] is program.statements[3]
    (use,) = graph.edges[1, 3]["uses"]
    assert (use.var, use.position) == ("tensor_0", 0)
    assert graph.edges[0, 4]["order"] == ("output",)  # alloc before the store


def test_indexes_and_queries(program) -> None:
    assert program.statements_of("load") == (1, 2, 5, 6)
    assert program.loads_of("b") == (2, 6)
    assert program.consumers_of("tensor_1") == ((3, 1),)
    assert program.writers_of("output") == (0, 4, 8)
    assert program.definition_of("tensor_5") == 7
    assert sorted(program.producers(3)) == [(1, 0), (2, 1)]
    assert program.reaches(1, 4) and not program.reaches(1, 8) and not program.reaches(4, 1)


def test_replace_returns_a_new_verified_snapshot(program) -> None:
    other = program.replace(name="renamed")
    assert other is not program and other.name == "renamed" and program.name == "tiled_matmul"
    assert other == program  # canonical equality ignores the name
    with pytest.raises(VerificationError, match="no field"):
        program.replace(colour="red")


def test_programs_pickle_by_value() -> None:
    program = tiled_matmul(256, 256, 256)
    again = pickle.loads(pickle.dumps(program))
    assert again.canonical_hash == program.canonical_hash
    assert again.statements[3].op is program.statements[3].op


def test_the_incoming_edge_tables_are_read_only() -> None:
    """``Program.incoming`` hands out the snapshot's own tables: writing through them
    would change what every query of the snapshot answers."""
    import nkigym_graph as ng

    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 256)})
    node = program.statements_of("nc_matmul")[0]
    data, order = program.incoming
    with pytest.raises(TypeError):
        data[node] = ()  # type: ignore[index]
    with pytest.raises(TypeError):
        order[node] = ()  # type: ignore[index]
    assert program.producers(node)


def _accumulation_with_a_dead_last_statement():  # type: ignore[no-untyped-def]
    """A 384 x 128 x 128 matmul (three accumulated products) and a dead statement last."""
    import nkigym_graph as ng

    text = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (384, 128), "b": (384, 128)}).to_source()
    body, tail = text.rsplit("    return", 1)
    return ng.parse_program(body + '    dead = nkigym.activation(tensor_0, op="exp")\n    return' + tail)


def test_a_copied_program_never_reuses_the_id_of_a_removed_statement() -> None:
    """Removing the last statement leaves ids 0 .. n-1 with a higher id used; a pickle or
    copy dropped that, and its derivations reused the removed statement's id."""
    import copy
    import pickle

    import nkigym_graph as ng

    program = _accumulation_with_a_dead_last_statement()
    trimmed = ng.saturate(program, ["dead_code"])
    assert trimmed.ids == tuple(range(len(trimmed)))
    removed = set(program.ids) - set(trimmed.ids)
    expected = ng.replay(trimmed, [("rfactor", 0)]).ids
    for twin in (pickle.loads(pickle.dumps(trimmed)), copy.deepcopy(trimmed), copy.copy(trimmed)):
        assert twin == trimmed
        derived = ng.replay(twin, [("rfactor", 0)])
        assert derived.ids == expected and not removed & set(derived.ids)
