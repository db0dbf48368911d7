"""The seeds' tiled-program text format: parsing, printing, round trips, errors."""

from __future__ import annotations

import pytest
from support import normalized_lines, seed_names, seed_text

import nkigym_graph as ng
from nkigym_graph import ParseError, parse_fragment, parse_program
from nkigym_graph.ir.variables import OUTPUT, PARAM

PROGRAMS = [n for n in seed_names() if "program" in n]
FRAGMENTS = [n for n in seed_names() if "program" not in n]


@pytest.mark.parametrize("name", PROGRAMS)
def test_seed_programs_round_trip(name: str) -> None:
    text = seed_text(name)
    program = parse_program(text)
    assert normalized_lines(program.to_source()) == normalized_lines(text)
    assert str(program) == program.to_source()


@pytest.mark.parametrize("name", FRAGMENTS)
def test_seed_fragments_round_trip(name: str) -> None:
    text = seed_text(name)
    fragment = parse_fragment(text)
    assert fragment.fragment
    assert normalized_lines(fragment.to_source()) == normalized_lines(text)


@pytest.mark.parametrize("name", PROGRAMS + FRAGMENTS)
def test_reparse_of_printed_text_is_the_same_program(name: str) -> None:
    parse = parse_program if name in PROGRAMS else parse_fragment
    program = parse(seed_text(name))
    again = parse(program.to_source())
    assert again.canonical_hash == program.canonical_hash
    assert again.statements == program.statements


def test_parameter_shapes_are_inferred_from_the_largest_slice() -> None:
    program = parse_program(seed_text("002_program"))
    assert program.parameter("a").shape == (128, 128)
    assert program.parameter("b").shape == (128, 256)
    assert program.variables["output"].shape == (256, 256)
    assert program.variables["output"].dtype == "float64"


def test_explicit_shapes_override_inference() -> None:
    program = parse_program(seed_text("001_program_before"), shapes={"a": (128, 512), "b": (128, 256)})
    assert program.parameter("a").shape == (128, 512)


def test_fragment_inputs_and_outputs_are_classified() -> None:
    fragment = parse_fragment(seed_text("000_stores_free_before"))
    assert fragment.variables["tensor_2"].kind == PARAM
    assert not fragment.variables["tensor_2"].external  # an on-chip input
    assert fragment.variables["output"].kind == OUTPUT
    loads = parse_fragment(seed_text("000_loads_free_before"))
    assert loads.variables["b"].external


def test_accumulate_form_parses_and_prints() -> None:
    text = """
    def f(a, b):
        output = nkigym.ndarray((128, 128), dtype=np.float32)
        tensor_0 = a[0:128, 0:128]
        tensor_1 = b[0:128, 0:128]
        tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
        tensor_3 = a[128:256, 0:128]
        tensor_4 = b[128:256, 0:128]
        tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_3, tensor_4)
        output[0:128, 0:128] = tensor_2
        return output
    """
    program = parse_program(text)
    assert program.statements[6].accumulate
    assert normalized_lines(program.to_source()) == normalized_lines(text)


def test_other_ops_print_with_keywords() -> None:
    text = """
    def f(a, b):
        output = nkigym.ndarray((128, 1), dtype=np.float32)
        tensor_0 = a[0:128, 0:128]
        tensor_1 = b[0:128, 0:128]
        tensor_2 = nkigym.tensor_tensor(tensor_0, tensor_1, op="add")
        tensor_3 = nkigym.activation(tensor_2, op="tanh")
        tensor_4 = nkigym.tensor_scalar(tensor_3, 0.5, op="multiply")
        tensor_5 = nkigym.nc_transpose(tensor_4)
        tensor_6 = nkigym.tensor_reduce(tensor_5, op="max")
        output[0:128, 0:1] = tensor_6
        return output
    """
    program = parse_program(text)
    assert normalized_lines(program.to_source()) == normalized_lines(text)
    assert program.statements[5].attr("scalar") == 0.5


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("def f(a):\n    tensor_0 = a[0:128, 0:128\n    return tensor_0\n", "never closed", 2),
        (
            "def f(a):\n    tensor_0 = a[0:128, 0:128]\n    tensor_1 = nkigym.frobnicate(tensor_0)\n"
            "    return tensor_1\n",
            "unknown op `frobnicate`",
            3,
        ),
        ("def f(a):\n    tensor_0 = a[0:128:2, 0:128]\n    return tensor_0\n", "start:stop", 2),
        ("def f(a):\n    tensor_0 = a[0:n, 0:128]\n    return tensor_0\n", "integer literal", 2),
        (
            "def f(a):\n    tensor_0 = a[0:128, 0:128]\n    tensor_0 = a[0:128, 0:128]\n"
            "    return tensor_0\n",
            "already defined",
            3,
        ),
        ("def f(a):\n    tensor_0 = a[0:128, 0:128]\n", "return", 2),
        ("def f(a):\n    output[0:128, 0:128] = tensor_9\n    return output\n", "not defined", 2),
        ("def f(a):\n    import os\n    return a\n", "unsupported statement", 2),
        (
            "def f(a):\n    tensor_0 = __import__('os').system('true')\n    return tensor_0\n",
            "unsupported call",
            2,
        ),
    ],
)
def test_bad_text_raises_parse_error_with_position(text: str, message: str, line: int) -> None:
    with pytest.raises(ParseError, match=message) as info:
        parse_program(text)
    assert info.value.line == line
    assert info.value.column >= 1


def test_parser_never_evaluates_the_text(tmp_path) -> None:
    marker = tmp_path / "marker"
    call = f"nkigym.activation(open({str(marker)!r}, 'w'), op='exp')"
    text = f"def f(a):\n    tensor_0 = {call}\n    return tensor_0\n"
    with pytest.raises(ParseError):
        parse_program(text)
    assert not marker.exists()


EXP = """def f(a):
    output = nkigym.ndarray((128, 128), dtype=np.float32)
    t = a[0:128, 0:128]
    u = nkigym.activation(t, op="exp"EXTRA)
    output[0:128, 0:128] = u
    return output
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (EXP.replace("EXTRA", ', op="tanh"'), "line 4, column 40: op given twice"),
        (EXP.replace("(a)", "(a, *b, c=1, **kw)").replace("EXTRA", ""), "parameter `b`: a program"),
        (EXP.replace("(a)", "(a, **kw)").replace("EXTRA", ""), "parameter `kw`: a program takes plain"),
        (EXP.replace("(a)", "(a=1)").replace("EXTRA", ""), "plain parameters only \\(no defaults"),
        (EXP.replace("(a)", "(a, a)").replace("EXTRA", ""), "line 1, column 10: parameter `a` is listed"),
        (EXP.replace("EXTRA", ", scale=" + "9" * 400), "scale must be a number a float can hold"),
        (EXP.replace("a[0:128, 0:128]", "a[128:0, 0:128]").replace("EXTRA", ""), "line 3, column 11: the"),
    ],
)
def test_text_python_would_refuse_or_that_would_be_dropped_is_refused(text: str, message: str) -> None:
    """A keyword given twice (Python's compiler refuses it; the last one won), extra
    parameters (dropped) and an integer no float holds (an overflow later)."""
    with pytest.raises(ng.NkigymError, match=message):
        parse_program(text)
    assert len(parse_program(EXP.replace("EXTRA", ""))) == 4


def test_a_rule_broken_by_a_statement_of_the_text_names_its_line() -> None:
    """Verification names the statement; parsing adds the line it was written on."""
    with pytest.raises(
        ng.VerificationError, match=r"\[bounds\] statement `t = a\[0:128, 0:128\]`: line 3: "
    ) as err:
        parse_program(EXP.replace("EXTRA", ""), shapes={"a": (64, 128)})
    assert err.value.rule == "bounds"
    with pytest.raises(
        ng.VerificationError, match=r"\[attributes\] .*: line 4: scale must be a finite number"
    ):
        parse_program(EXP.replace("EXTRA", ', scale=float("nan")'))


CHAIN = """def f(lhs, rhs):
    output = nkigym.ndarray((128, 128), dtype=np.float32)
    tensor_0 = lhs[0:128, 0:128]
    tensor_1 = rhs[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
    tensor_3 = lhs[128:256, 0:128]
    tensor_4 = rhs[128:256, 0:128]
    tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_3, tensor_4)
    tensor_5 = lhs[256:384, 0:128]
    tensor_6 = rhs[256:384, 0:128]
    tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_5, tensor_6)
    output[0:128, 0:128] = tensor_2
    return output
"""


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ("(tensor_3, tensor_4)", "(tensor_3, tensor_4[0:128, 0:64])", 8),  # the only `+=` of its text
        ("(tensor_5, tensor_6)", "(tensor_5, tensor_6[0:128, 0:64])", 11),  # one of two into tensor_2
        (
            "tensor_2[0:128, 0:128] += nkigym.nc_matmul(tensor_3",
            "tensor_2[0:128, 0:256] += nkigym.nc_matmul(tensor_3",
            8,
        ),
    ],
)
def test_a_rule_broken_by_an_accumulation_names_its_line(old: str, new: str, line: int) -> None:
    """An accumulation (`t[...] += op(...)`) that breaks a rule is named by its line too,
    also when several accumulations write the same tile."""
    assert old in CHAIN
    with pytest.raises(ng.VerificationError, match=rf"\+= .*`: line {line}: "):
        parse_program(CHAIN.replace(old, new))


def test_returning_an_undefined_name_names_the_line() -> None:
    with pytest.raises(ParseError, match="returns `outptu`, which is not defined") as info:
        parse_program(CHAIN.replace("return output", "return outptu"))
    assert info.value.line == 13


def test_an_accumulation_written_bare_names_its_line() -> None:
    """`t += op(...)` prints as `t[0:128, 0:128] += op(...)`: its line is found all the same."""
    text = CHAIN.replace(
        "    tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)\n",
        "    tensor_2 += nkigym.nc_matmul(tensor_0, tensor_1)\n",
    )
    with pytest.raises(ng.VerificationError, match=r"\[read_before_write\] .*`: line 5: "):
        parse_program(text)


@pytest.mark.parametrize("value", ["[1]", "{1: 2}", "{1}"])
def test_an_attribute_that_is_a_list_dict_or_set_is_a_parse_error_on_its_line(value: str) -> None:
    with pytest.raises(ParseError, match=r"expected a number or a string, got the (list|dict|set)") as info:
        parse_program(EXP.replace("EXTRA", f", scale={value}"))
    assert info.value.line == 4


def test_a_shape_for_a_name_that_is_not_a_parameter_is_refused() -> None:
    """A misspelt name in ``shapes=`` is not silently ignored (``dtype=`` refuses one too)."""
    with pytest.raises(ParseError, match=r"shapes: 'aa' is not a parameter \(parameters: a\)"):
        parse_program(EXP.replace("EXTRA", ""), shapes={"aa": (256, 128)})
    assert parse_program(EXP.replace("EXTRA", ""), shapes={"a": (256, 128)}).parameter("a").shape == (
        256,
        128,
    )


def test_a_tensor_given_as_a_keyword_says_how_to_write_it() -> None:
    """`activation(x, op=..., bias=column)` is the Python API's spelling; the text takes the
    column positionally, and the error says so on its line."""
    text = EXP.replace("EXTRA", "").replace(
        'u = nkigym.activation(t, op="exp")',
        'c = nkigym.tensor_reduce(t, op="max")\n    u = nkigym.activation(t, op="exp", bias=c)',
    )
    with pytest.raises(
        ParseError, match=r"`bias=c` passes a tensor as a keyword.*`nkigym.activation\(t, c, \.\.\.\)`"
    ) as info:
        parse_program(text)
    assert info.value.line == 5
    fixed = text.replace('nkigym.activation(t, op="exp", bias=c)', 'nkigym.activation(t, c, op="exp")')
    assert len(parse_program(fixed)) == 5


def test_lines_count_from_the_first_line_of_the_text_leading_blank_lines_included() -> None:
    text = "\n\ndef f(a):\n    t = nkigym.frobnicate(a[0:128, 0:128])\n    return t\n"
    with pytest.raises(ParseError, match="unknown op `frobnicate`") as info:
        parse_program(text)
    assert info.value.line == 4


def test_an_error_in_a_program_file_names_the_files_line(tmp_path) -> None:
    """The header is the file's line 1: a statement's error names its line in the file."""
    path = tmp_path / "p.nkg"
    ng.write_program(parse_program(CHAIN), path)
    lines = path.read_text().splitlines()
    bad = next(
        i
        for i, line in enumerate(lines)
        if "tensor_3 = nkigym.nc_matmul" in line or "(tensor_3, tensor_4)" in line
    )
    lines[bad] = lines[bad].replace("tensor_4)", "tensor_4[0:128, 0:64])")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ng.VerificationError, match=rf"`: line {bad + 1}: nc_matmul produces"):
        ng.read_program(path)
    lines[bad] = lines[bad].replace("nkigym.nc_matmul", "nkigym.frobnicate")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError, match="unknown op") as info:
        ng.read_program(path)
    assert info.value.line == bad + 1


@pytest.mark.parametrize("dtype", ["np.int32", "np.complex128", "np.object_", '"S5"', '"float8_e4m3fn"'])
def test_an_output_dtype_a_program_cannot_have_is_refused_on_its_line(dtype: str) -> None:
    """Outputs take the dtypes parameters take; an integer output would truncate what the
    program computes (and its kernel would be checked against the untruncated result)."""
    text = EXP.replace("EXTRA", "").replace("np.float32", dtype)
    with pytest.raises(ng.VerificationError, match=r"line 2: an output's dtype is one of float32, bfloat16"):
        parse_program(text)


def test_an_output_dtype_may_be_an_alias() -> None:
    program = parse_program(EXP.replace("EXTRA", "").replace("np.float32", '"bf16"'))
    assert program.variables["output"].dtype == "bfloat16"
    assert 'dtype="bfloat16"' in str(program)
