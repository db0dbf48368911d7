"""A snapshot derived from its parent by an edit equals the same program built in full."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transforms.test_transforms_properties import TRANSFORMS, tiled_cases

import nkigym_graph as ng
from nkigym_graph import Program
from nkigym_graph.errors import TransformError
from nkigym_graph.ir.statement import Operand
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.rewriting.rewrite import apply_edits, select_non_conflicting
from nkigym_graph.rewriting.transform import Edit


def full_build(program: Program) -> Program:
    return program.replace()


def assert_same_snapshot(derived: Program, built: Program) -> None:
    assert derived.derivation is not None
    assert derived.statements == built.statements
    assert dict(derived.variables) == dict(built.variables)
    for node in range(len(built)):
        assert sorted(derived._data_in[node]) == sorted(built._data_in[node]), node
        assert sorted(derived._order_in[node]) == sorted(built._order_in[node]), node
        assert derived.pred_of(node) == built.pred_of(node)
    assert derived.node_keys == built.node_keys
    assert derived.canonical_hash == built.canonical_hash
    assert dict(derived.index.by_op) == dict(built.index.by_op)
    assert dict(derived.index.writers) == dict(built.index.writers)
    assert {v: sorted(c) for v, c in derived.index.consumers.items()} == {
        v: sorted(c) for v, c in built.index.consumers.items()
    }
    assert dict(derived.index.loads_by_source) == dict(built.index.loads_by_source)
    assert sorted(derived.graph.edges(data=True)) == sorted(built.graph.edges(data=True))


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
        child = ng.apply(program, transform, matches[pick % len(matches)])
        if child.derivation is not None:
            assert child.derivation.parent() is program
            assert_same_snapshot(child, full_build(child))
        program = child


def test_batches_of_edits_derive_too() -> None:
    program = tiled_matmul(512, 256, 512)
    assert program.canonical_hash
    for name in ("data_reuse", "operand_merge", "dead_code"):
        transform = ng.get_transform(name)
        matches = select_non_conflicting(transform.analyze_batch(program))
        child = apply_edits(program, [m.edit for m in matches], transform=name)
        assert_same_snapshot(child, full_build(child))
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
