"""The canonical hash: invariant under renaming and independent reordering, sensitive
to every semantic change."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import random_topological_order, tiled_programs
from support import seed_text

from nkigym_graph import Operand, Program, VerificationError, parse_program
from nkigym_graph.ir.statement import make_attrs
from nkigym_graph.ir.variables import INTERMEDIATE

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _renamed(program: Program, seed: int) -> Program:
    names = [v for v, info in program.variables.items() if info.kind == INTERMEDIATE]
    fresh = [f"v{i}" for i in range(len(names))]
    random.Random(seed).shuffle(fresh)
    mapping = dict(zip(names, fresh, strict=True))
    return program.replace(statements=[s.renamed(mapping) for s in program.statements])


@SETTINGS
@given(tiled_programs(), st.integers(0, 2**32))
def test_hash_is_invariant_under_renaming_intermediates(program: Program, seed: int) -> None:
    renamed = _renamed(program, seed)
    assert renamed.to_source() != program.to_source()
    assert renamed.canonical_hash == program.canonical_hash


@SETTINGS
@given(tiled_programs(), st.integers(0, 2**32))
def test_hash_is_invariant_under_topological_reordering(program: Program, seed: int) -> None:
    order = random_topological_order(program, seed)
    reordered = program.replace(statements=[program[i] for i in order])
    assert reordered.canonical_hash == program.canonical_hash


@SETTINGS
@given(tiled_programs(), st.integers(0, 2**32), st.data())
def test_any_single_slice_edit_changes_the_hash(program: Program, seed: int, data: st.DataObject) -> None:
    """Move one load's source region or one store's destination region."""
    rnd = random.Random(seed)
    movable = list(program.statements_of("load")) + list(program.statements_of("store"))
    node = rnd.choice(movable)
    stmt = program[node]
    position = 0 if stmt.op.name == "load" else 1
    var, slices = stmt.operands[position]
    shape = program.variables[var].shape
    dim = data.draw(st.integers(0, len(slices) - 1))
    start, stop = slices[dim]
    room = [s for s in range(0, shape[dim] - (stop - start) + 1) if s != start]
    if not room:
        return
    new_start = data.draw(st.sampled_from(room))
    moved = (*slices[:dim], (new_start, new_start + stop - start), *slices[dim + 1 :])
    statements = list(program.statements)
    statements[node] = stmt.with_operand(position, Operand(var, moved))
    try:
        edited = program.replace(statements=statements)
    except VerificationError:
        return  # the edit made an invalid program: nothing to compare
    assert edited.canonical_hash != program.canonical_hash


def test_op_attribute_parameter_and_output_changes_change_the_hash() -> None:
    text = seed_text("002_program")
    base = parse_program(text)
    variants = [
        parse_program(text, shapes={"a": (128, 128), "b": (128, 512)}),  # parameter shape
        parse_program(text.replace("(a, b)", "(a, c)").replace("b[", "c[")),  # parameter name
        parse_program(text.replace("np.float64", "np.float32")),  # output dtype
        parse_program(text.replace("output", "result")),  # output name
    ]
    hashes = {base.canonical_hash, *(v.canonical_hash for v in variants)}
    assert len(hashes) == 1 + len(variants)
    tail = 'tensor_6 = nkigym.activation(tensor_5, op="{}")\n    output[0:128, 128:256] = tensor_6'
    exp = parse_program(text.replace("output[0:128, 128:256] = tensor_5[0:128, 0:128]", tail.format("exp")))
    tanh = parse_program(text.replace("output[0:128, 128:256] = tensor_5[0:128, 0:128]", tail.format("tanh")))
    assert exp.canonical_hash != tanh.canonical_hash != base.canonical_hash


def test_swapping_matmul_operands_changes_the_hash() -> None:
    text = seed_text("001_program_before")
    swapped = text.replace("nc_matmul(tensor_0, tensor_1)", "nc_matmul(tensor_1[0:128, 0:128], tensor_0)")
    assert parse_program(text).canonical_hash != parse_program(swapped).canonical_hash


def test_dependent_statements_keep_their_order_in_the_hash() -> None:
    """Two stores to the same region in either order are different programs."""
    text = """
    def f(a):
        output = nkigym.ndarray((128, 128), dtype=np.float32)
        tensor_0 = a[0:128, 0:128]
        tensor_1 = nkigym.activation(tensor_0, op="exp")
        output[0:128, 0:128] = tensor_0
        output[0:128, 0:128] = tensor_1
        return output
    """
    swapped = text.replace(
        "output[0:128, 0:128] = tensor_0\n        output[0:128, 0:128] = tensor_1",
        "output[0:128, 0:128] = tensor_1\n        output[0:128, 0:128] = tensor_0",
    )
    assert parse_program(text).canonical_hash != parse_program(swapped).canonical_hash


@pytest.mark.parametrize("name", ["001_program_before", "002_program"])
def test_node_keys_are_stable_hex_digests(name: str) -> None:
    program = parse_program(seed_text(name))
    assert len(program.node_keys) == len(program)
    assert all(len(k) == 32 and int(k, 16) >= 0 for k in program.node_keys.values())
    assert len(program.canonical_hash) == 40
    assert make_attrs(b=1, a=2) == (("a", 2), ("b", 1))


READ_BACK = """def f(a):
    output = nkigym.ndarray((128, 384), dtype=np.float32)
    t1 = a[0:128, 0:128]
    t2 = a[0:128, 128:256]
    output[0:128, 0:128] = t1
    x = output[0:128, 0:128]
    output[0:128, 0:128] = t2
    y = output[0:128, 0:128]
    output[0:128, 128:256] = FIRST
    output[0:128, 256:384] = SECOND
    return output
"""


def test_a_read_back_of_an_output_is_keyed_by_the_store_it_reads() -> None:
    """Two loads of one output region, before and after it is overwritten, read different
    values: storing them the other way round is another program."""
    import numpy as np

    from nkigym_graph import interpret

    p1 = parse_program(READ_BACK.replace("FIRST", "x").replace("SECOND", "y"))
    p2 = parse_program(READ_BACK.replace("FIRST", "y").replace("SECOND", "x"))
    a = np.random.default_rng(0).random((128, 256))
    assert not np.array_equal(interpret(p1, a=a), interpret(p2, a=a))
    assert p1.canonical_hash != p2.canonical_hash and p1 != p2
    renamed = parse_program(READ_BACK.replace("x", "first").replace("FIRST", "first").replace("SECOND", "y"))
    assert renamed.canonical_hash == p1.canonical_hash


TWO_REGIONS = """def f(a, b):
    output = nkigym.ndarray((128, 128), dtype=np.float32)
    t = a[0:128, 0:384]
    READ
    v = b[0:128, 0:128]
    t[0:128, 128:256] = nkigym.activation(v, op="exp")
    LATER
    w = nkigym.tensor_tensor(u, t[0:128, 128:256], op="add")
    output[0:128, 0:128] = w
    return output
"""


def test_a_statement_reading_two_regions_of_a_tile_is_not_ordered_against_the_gap() -> None:
    """The read of t[:, 0:128] and t[:, 256:384] does not conflict with a write of
    t[:, 128:256], so moving it after that write is the same program."""
    read = 'u = nkigym.tensor_tensor(t[0:128, 0:128], t[0:128, 256:384], op="add")'
    before = parse_program(TWO_REGIONS.replace("READ", read).replace("    LATER\n", ""))
    after = parse_program(TWO_REGIONS.replace("    READ\n", "").replace("LATER", read))
    assert before.canonical_hash == after.canonical_hash
    (reader,) = [n for n in before.ids if before[n].op.name == "tensor_tensor" and before[n].dst.var == "u"]
    (writer,) = [n for n in before.ids if before[n].op.name == "activation"]
    assert not before.reaches(reader, writer)


SCALAR = """def f(a):
    out = nkigym.ndarray((128, 128), dtype=np.float32)
    t0 = a[0:128, 0:128]
    t1 = nkigym.tensor_scalar(t0, VALUE, op="divide")
    out[0:128, 0:128] = t1
    return out
"""


@pytest.mark.parametrize(("first", "second"), [("2", "2.0"), ("0.0", "-0.0")])
def test_a_hash_does_not_depend_on_the_programs_hashed_before_it(first: str, second: str) -> None:
    """Statement heads were cached by equal attributes, and ``2 == 2.0``, ``0.0 == -0.0``:
    whichever was hashed first gave its text to the other (dividing by 0.0 and by -0.0
    then hashed, and compared, equal)."""
    import subprocess
    import sys

    script = (
        "import sys, nkigym_graph as ng\n"
        "for v in sys.argv[2:]: print(ng.parse_program(sys.argv[1].replace('VALUE', v)).canonical_hash)\n"
    )
    alone = subprocess.run(
        [sys.executable, "-c", script, SCALAR, second], capture_output=True, text=True, check=True
    )
    after = subprocess.run(
        [sys.executable, "-c", script, SCALAR, first, second], capture_output=True, text=True, check=True
    )
    assert alone.stdout.split()[0] == after.stdout.split()[1]
    one, other = (parse_program(SCALAR.replace("VALUE", v)) for v in (first, second))
    if first == "0.0":
        assert one != other and one.canonical_hash != other.canonical_hash
