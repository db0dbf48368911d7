"""A snapshot derived from its parent by an edit equals the same program built in full.

Statements keep their ids across derivations, so a derived snapshot is compared with
a full build twice: with a fresh build (ids ``0 .. n-1``) after mapping ids by
position, and with a full build under the derived snapshot's own ids, exactly.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transforms.test_transforms_properties import TRANSFORMS, tiled_cases

import nkigym_graph as ng
from nkigym_graph import Program
from nkigym_graph.errors import TransformError
from nkigym_graph.ir import overlay, positions
from nkigym_graph.ir.positions import ShiftedPositions
from nkigym_graph.ir.statement import Operand
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.rewriting.rewrite import apply_edits, select_non_conflicting
from nkigym_graph.rewriting.transform import Edit


def full_build(program: Program) -> Program:
    return program.replace()


def _mapped(to: dict[int, int], edges: tuple[tuple[int, object], ...]) -> list[tuple[int, object]]:
    return sorted(((to[src], what) for src, what in edges), key=repr)


def assert_same_snapshot(derived: Program, built: Program) -> None:
    """``derived`` equals ``built`` once its ids are mapped to ``built``'s by position."""
    assert derived.statements == built.statements
    assert len(derived.ids) == len(set(derived.ids)) == len(built.ids)
    to = dict(zip(derived.ids, built.ids, strict=True))
    for at, node in enumerate(derived.ids):
        assert derived.position(node) == at and derived[node] is derived.statements[at]
    assert derived.in_order(reversed(derived.ids)) == list(derived.ids)
    assert {
        name: info._replace(defined_by=None if info.defined_by is None else to[info.defined_by])
        for name, info in derived.variables.items()
    } == dict(built.variables)
    for node in derived.ids:
        assert _mapped(to, derived._data_in[node]) == _mapped(
            {n: n for n in built.ids}, built._data_in[to[node]]
        )
        assert _mapped(to, derived._order_in[node]) == _mapped(
            {n: n for n in built.ids}, built._order_in[to[node]]
        )
        assert [to[n] for n in derived.pred_of(node)] == list(built.pred_of(to[node]))
    assert {to[n]: key for n, key in derived.node_keys.items()} == dict(built.node_keys)
    assert derived.canonical_hash == built.canonical_hash
    index, other = derived.index, built.index
    for lookup, expected in (
        (index.by_op, other.by_op),
        (index.writers, other.writers),
        (index.loads_by_source, other.loads_by_source),
    ):
        assert {key: [to[n] for n in nodes] for key, nodes in lookup.items()} == {
            key: list(nodes) for key, nodes in expected.items()
        }
        assert len(lookup) == len(expected) and list(lookup) == list(lookup)  # keys kept once listed
    assert {v: sorted((to[n], p) for n, p in c) for v, c in index.consumers.items()} == {
        v: sorted(c) for v, c in other.consumers.items()
    }
    assert list(derived.graph.nodes) == list(derived.ids)
    assert sorted((to[u], to[v], repr(d)) for u, v, d in derived.graph.edges(data=True)) == sorted(
        (u, v, repr(d)) for u, v, d in built.graph.edges(data=True)
    )


def _renamed_in(stmt, match) -> bool:
    return any(operand.var in match.renamed for operand in stmt.operands)


def assert_derived_correctly(child: Program, parent: Program) -> None:
    """``child`` (derived from ``parent``) equals its full builds, and every statement it
    kept or edited keeps its parent's id."""
    derivation = child.derivation
    assert derivation is not None and derivation.parent() is parent
    assert_same_snapshot(child, full_build(child))
    assert_same_snapshot(child, child.rebuilt(child.statements, child.ids))
    assert child.rebuilt(child.statements, child.ids).ids == child.ids
    assert set(parent.ids) - set(child.ids) == derivation.removed
    assert not any(node in child or child._positions().get(node) is not None for node in derivation.removed)
    assert set(child.ids) <= set(parent.ids)  # edits create no statements
    for node in child.ids:
        if node not in derivation.changed:
            assert child[node] == parent[node], node


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases(), st.lists(st.tuples(st.sampled_from(TRANSFORMS), st.integers(0, 10**6)), max_size=10))
def test_derived_snapshots_equal_full_builds(case, steps) -> None:
    program = case[0]
    for transform, pick in steps:
        matches = ng.analyze(program, transform)
        if not matches:
            continue
        if pick % 3 == 0:
            assert program.canonical_hash  # the parent's keys known: the child's are derived from them
        match = matches[pick % len(matches)]
        child = ng.apply(program, transform, match)
        kept = [
            node
            for node in program.ids
            if node not in match.changes and not _renamed_in(program[node], match)
        ]
        assert {node: child[node] for node in kept if node in child} == {
            node: program[node] for node in kept if node in child
        }  # kept statements keep their ids, derived or built in full
        assert set(child.ids) <= set(program.ids)
        if child.derivation is not None:
            assert_derived_correctly(child, program)
        program = child


def test_batches_of_edits_derive_too() -> None:
    program = tiled_matmul(512, 256, 512)
    assert program.canonical_hash
    for name in ("data_reuse", "operand_merge", "dead_code"):
        transform = ng.get_transform(name)
        matches = select_non_conflicting(transform.analyze_batch(program))
        if not matches:  # dead_code: nothing dead here
            continue
        child = apply_edits(program, [m.edit for m in matches], transform=name)
        assert_derived_correctly(child, program)
        program = child


def test_an_invalid_edit_is_refused_naming_the_rule_and_statement() -> None:
    program = tiled_matmul(256, 128, 256)
    load = program.statements_of("load")[0]
    stmt = program.statements[load]
    src, dst = stmt.operands
    outside = stmt._replace(operands=(Operand(src.var, ((0, 128), (4096, 4224))), dst))
    with pytest.raises(TransformError, match=r"\[bounds\]") as err:
        apply_edits(program, [Edit(replace={load: outside})])
    assert src.var in str(err.value)


def test_reading_a_removed_tile_is_refused() -> None:
    program = tiled_matmul(256, 128, 256)
    load = program.statements_of("load")[0]
    with pytest.raises(TransformError, match=r"\[unknown_variable\] .*tensor_0.* is not defined"):
        apply_edits(program, [Edit(remove=frozenset({load}))])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases(), st.lists(st.tuples(st.sampled_from(TRANSFORMS), st.integers(0, 10**6)), max_size=8))
def test_ids_are_stable_along_random_rewrites_and_replays(case, steps) -> None:
    """Along a random rewrite sequence a statement keeps its id until an edit changes or
    removes it, removed ids never come back, and replaying the path gives the same ids."""
    root = program = case[0]
    assert program.ids == tuple(range(len(program)))
    first_seen = dict(program.items())  # id -> its statement when last unchanged
    ever: set[int] = set(program.ids)
    path = []
    for transform, pick in steps:
        matches = ng.analyze(program, transform)
        if not matches:
            continue
        match = matches[pick % len(matches)]
        child = ng.apply(program, transform, match)
        path.append((transform, pick % len(matches)))
        gone = set(program.ids) - set(child.ids)
        assert not (set(child.ids) - ever), "an edit reused or invented an id"
        for node, stmt in child.items():
            if node not in match.changes and not _renamed_in(first_seen[node], match):
                assert first_seen[node] == stmt
            first_seen[node] = stmt
        for node in gone:
            first_seen.pop(node)
        program = child
    assert ng.replay(root, path).ids == program.ids


def test_a_full_build_under_ids_keeps_them_and_counts_on() -> None:
    program = tiled_matmul(256, 128, 256)
    reordered = program.rebuilt(program.statements, [10 * node for node in program.ids])
    assert reordered.ids == tuple(10 * node for node in program.ids)
    assert reordered.canonical_hash == program.canonical_hash
    grown = reordered.rebuilt(reordered.statements, [*reordered.ids[:-1], -1])
    assert grown.ids[-1] == 10 * (len(program) - 1) + 1  # a new statement gets a fresh id
    assert grown[grown.ids[-1]] == program.statements[-1]
    with pytest.raises(ng.NkigymError, match="one distinct id per statement"):
        program.rebuilt(program.statements, [0] * len(program))


@pytest.mark.parametrize(("lookups", "most_removed"), [(40, 1024), (10**9, 1024), (10**9, 5)])
def test_a_derived_snapshot_reads_positions_through_its_parents_until_it_builds_its_own(
    monkeypatch: pytest.MonkeyPatch, lookups: int, most_removed: int
) -> None:
    """A table answers ``LOOKUPS`` lookups shifted, then is a dict; it shifts an
    ancestor's dict by at most ``MOST_REMOVED`` removed statements (here on a small
    program: ``SMALLEST`` set to 0)."""
    monkeypatch.setattr(positions, "LOOKUPS", lookups)
    monkeypatch.setattr(positions, "MOST_REMOVED", most_removed)
    monkeypatch.setattr(positions, "SMALLEST", 0)
    lineage = [tiled_matmul(512, 256, 512)]
    built_any = False
    for step in range(12):
        transform = ng.get_transform(("data_reuse", "operand_merge")[step % 2])
        matches = ng.analyze(lineage[-1], transform)
        if not matches:
            break
        child = ng.apply(lineage[-1], transform, matches[len(matches) // 2])
        table = child._positions()
        if isinstance(table, ShiftedPositions):
            assert len(table.removed) <= most_removed and table.removed >= child.derivation.removed
        else:
            built_any = True
            assert most_removed < 1024  # only past the bound
        assert [child.position(node) for node in child.ids] == list(range(len(child)))
        assert [child[node] for node in child.ids] == list(full_build(child).statements)
        assert not any(node in child for node in child.derivation.removed)
        shifted = isinstance(table, ShiftedPositions)
        assert isinstance(child._at, dict) == (not shifted or len(child) > lookups)
        lineage.append(child)
    assert len(lineage) == 13
    assert built_any == (most_removed < 1024)


@pytest.mark.parametrize("flatten_min", [1024, 4])
def test_derived_snapshots_sharing_their_parents_tables_equal_full_builds(
    monkeypatch: pytest.MonkeyPatch, flatten_min: int
) -> None:
    """Edges and node keys shared with the parent through overlays (here on a small
    program: ``SHARED_FROM`` set to 0; with ``FLATTEN_MIN`` 4 they are flattened now
    and then) read as a full build's."""
    monkeypatch.setattr(overlay, "SHARED_FROM", 0)
    monkeypatch.setattr(overlay, "FLATTEN_MIN", flatten_min)
    program = tiled_matmul(512, 256, 512)
    assert program.canonical_hash
    kinds = set()
    for step in range(12):
        transform = ng.get_transform(("data_reuse", "operand_merge", "dead_code")[step % 3])
        matches = ng.analyze(program, transform)
        if not matches:
            continue
        child = ng.apply(program, transform, matches[len(matches) // 2])
        assert_derived_correctly(child, program)
        kinds |= {type(table).__name__ for table in (child._data_in, child._order_in, child._keys)}
        program = child
    assert kinds == ({"Overlay"} if flatten_min == 1024 else {"Overlay", "dict"})


class SplitScaledExp(ng.PatternTransform):
    """``exp(x * s)`` becomes ``t = x * s`` inserted before a plain ``exp(t)``."""

    name = "test_split_scaled_exp"
    pattern = ng.Pattern("activation", op="exp", scale=lambda s: s != 1.0, bias=0.0, capture="exp")

    def edit(self, program: Program, found: ng.Found) -> Edit:
        from nkigym_graph.ir.statement import make_attrs
        from nkigym_graph.rewriting.patterns import insert_before, new_name, replace

        node = found["exp"]
        stmt = program[node]
        tile = Operand(new_name(program, node, "scaled"), tuple((0, b - a) for a, b in stmt.reads[0].slices))
        scale = ng.Statement(
            ng.get_op("tensor_scalar"),
            (stmt.reads[0], tile),
            make_attrs(op="multiply", scalar=stmt.attr("scale")),
        )
        exp = ng.Statement(stmt.op, (tile, stmt.dst), make_attrs(op="exp"))
        return insert_before(program, node, scale) | replace(program, node, exp)


def _scaled_exp(x):  # type: ignore[no-untyped-def]
    return ng.activation(x, op="exp", scale=0.5)


def test_an_edit_inserts_statements_under_fresh_ids_in_program_order() -> None:
    """An ``Edit`` could replace, absorb and remove statements but not add one: a transform
    splitting an op in two had to rebuild the program itself (``batched = False``)."""
    import pickle

    import numpy as np

    root = ng.tile(_scaled_exp, {"x": (128, 384)})
    (batch, child), *_ = ng.saturate_steps(root, [SplitScaledExp()])
    assert batch.count == 3 and len(child) == len(root) + 3  # three tiles, one batch
    new = [node for node in child.ids if node not in root]
    assert new == list(range(max(root.ids) + 1, max(root.ids) + 4))  # fresh, in program order
    assert all(
        child.position(node) + 1 == child.position(exp)
        for node, exp in zip(new, root.statements_of("activation"), strict=True)
    )
    assert all(child[node] == root[node] for node in root.ids if root[node].op.name != "activation")
    assert_same_snapshot(child, full_build(child))
    assert (
        child.rebuilt(child.statements, child.ids).ids == child.ids == pickle.loads(pickle.dumps(child)).ids
    )
    transform = SplitScaledExp()
    again = root
    for _ in range(3):  # one match at a time, replayed: the same ids
        again = ng.apply(again, transform, transform.analyze(again)[0])
    assert again == child and again.ids == child.ids
    x = np.random.default_rng(0).random((128, 384))
    np.testing.assert_allclose(ng.interpret(child, x=x), np.exp(0.5 * x), rtol=1e-6)
    assert ng.saturate(root, [SplitScaledExp(), "operand_merge"], check=True) == ng.saturate(
        root, [SplitScaledExp(), "operand_merge"]
    )
    found = ng.search(
        root, [SplitScaledExp(), "operand_merge"], strategy="exhaustive", budget=20, confirm=False
    )
    assert ng.replay(root, found.path).ids == found.best.ids


def test_an_insertion_before_a_removed_statement_is_refused() -> None:
    program = tiled_matmul(128, 128, 128)
    load = program.statements_of("load")[0]
    with pytest.raises(TransformError, match=r"insert statements before statements \[\d+\] they remove"):
        apply_edits(program, [Edit(remove={load}, insert={load: program[load]})])
    with pytest.raises(TransformError, match="edits change the same statements"):
        apply_edits(program, [Edit(remove={load}), Edit(insert={load: program[load]})])
    with pytest.raises(TransformError, match=r"Edit \|: both edits change \[\d+\]"):
        Edit(insert={load: program[load]}) | Edit(insert={load: program[load]})
