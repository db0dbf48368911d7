"""Parameter dtypes: one resolver for every entry point, refused by name, kept by files."""

from __future__ import annotations

import re

import pytest

import nkigym_graph as nkigym
from nkigym_graph.errors import ParseError
from nkigym_graph.ir.dtypes import DtypeError, resolve_dtype
from nkigym_graph.text import dumps_program, loads_program, read_program, write_program


def matmul(a, b):
    return nkigym.nc_matmul(a, b)


def test_resolve_dtype_names_the_argument() -> None:
    assert resolve_dtype(" BF16 ") == "bfloat16"
    with pytest.raises(DtypeError, match=r"^--dtype: 'nope' is not a supported dtype; choose one of"):
        resolve_dtype("nope", "--dtype")


def test_parse_program_refuses_an_unknown_dtype() -> None:
    text = nkigym.tile(matmul, {"a": (128, 128), "b": (128, 128)}).to_source()
    with pytest.raises(DtypeError, match=r"dtype: 'nope' is not a supported dtype"):
        nkigym.parse_program(text, dtype="nope")
    assert {p.dtype for p in nkigym.parse_program(text, dtype="bf16").params} == {"bfloat16"}
    by_name = nkigym.parse_program(text, dtype={"b": "fp16"})
    assert [p.dtype for p in by_name.params] == ["float32", "float16"]


def test_a_header_dtype_nope_is_refused() -> None:
    text = dumps_program(nkigym.tile(matmul, {"a": (128, 128), "b": (128, 128)}))
    bad = text.replace("b:128x128:float32", "b:128x128:nope", 1)
    with pytest.raises(
        ParseError, match=r"line 1, column 1: header, parameter 'b': 'nope' is not a supported"
    ):
        loads_program(bad)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h + " junk=1", "unknown header field 'junk' (the fields are target, params, fragment)"),
        (lambda h: h + " target=trn2", "header field 'target' given twice"),
        (lambda h: h.replace("params=", "params=a:1x1:float32,"), "parameter 'a' is listed twice"),
        (lambda h: h + " oops", "the header has 'oops', which is not a name=value field"),
        (lambda h: h + " fragment=yes", "header field fragment='yes': write fragment=1 or leave it out"),
    ],
)
def test_a_header_with_a_field_it_cannot_read_is_refused(edit, message) -> None:  # type: ignore[no-untyped-def]
    """Unknown, repeated or stray header fields used to be ignored (a typo went unnoticed)."""
    header, _, body = dumps_program(nkigym.tile(matmul, {"a": (128, 128), "b": (128, 128)})).partition("\n")
    with pytest.raises(ParseError, match=r"line 1, column 1: " + re.escape(message)):
        loads_program(edit(header) + "\n" + body)


def _matmul_file() -> tuple[str, str]:
    """The header line and the body of a 128 x 128 matmul's program file."""
    header, _, body = dumps_program(nkigym.tile(matmul, {"a": (128, 128), "b": (128, 128)})).partition("\n")
    return header, body


def test_a_header_naming_a_parameter_the_program_lacks_names_the_header_line() -> None:
    """Such a header was refused as "dtype: 'c' is not a parameter", naming neither the
    header nor its line."""
    header, body = _matmul_file()
    with pytest.raises(ParseError) as info:
        loads_program(header.replace("params=", "params=c:1x1:float32,") + "\n" + body)
    assert str(info.value) == (
        "line 1, column 1: header field params: 'c' is not a parameter (parameters: a, b)"
    )


@pytest.mark.parametrize(
    ("edit", "left_out"),
    [
        (lambda h: h.replace(",b:128x128:float32", ""), "parameter 'b'"),
        (lambda h: h.replace("params=a:128x128:float32,b:128x128:float32", "params="), "parameters 'a', 'b'"),
        (lambda h: h.replace(" params=a:128x128:float32,b:128x128:float32", ""), "parameters 'a', 'b'"),
    ],
)
def test_a_header_that_leaves_out_a_parameter_is_refused_naming_it(edit, left_out: str) -> None:  # type: ignore[no-untyped-def]
    """The header is read strictly: a parameter it left out used to become float32 silently."""
    header, body = _matmul_file()
    with pytest.raises(ParseError) as info:
        loads_program(edit(header) + "\n" + body)
    assert str(info.value) == (
        f"line 1, column 1: header field params leaves out {left_out} "
        "(it lists every parameter as name:shape:dtype)"
    )


def test_a_fragment_header_lists_its_inputs() -> None:
    fragment = nkigym.parse_fragment(
        "t = a[0:128, 0:128]\nu = nkigym.activation(t, op='exp')\nout[0:128, 0:128] = u\n",
        dtype={"a": "bf16"},
    )
    text = dumps_program(fragment)
    assert loads_program(text) == fragment
    with pytest.raises(ParseError, match=r"^line 1, column 1: header field params leaves out parameter 'a'"):
        loads_program(text.replace("params=a:128x128:bfloat16", "params=", 1))


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3"])
def test_a_fragment_file_keeps_its_outputs_dtypes(tmp_path, dtype: str) -> None:
    """A fragment's header listed only its inputs, so its outputs came back float32."""
    fragment = nkigym.parse_fragment(
        "t = a[0:128, 0:128]\nu = nkigym.activation(t, op='exp')\nout[0:128, 0:128] = u\n",
        dtype={"a": "bf16", "out": dtype},
    )
    assert [(o.name, o.dtype) for o in fragment.outputs] == [("out", dtype)]
    path = write_program(fragment, tmp_path / "f.nkg")
    back = read_program(path)
    assert [(o.name, o.shape, o.dtype) for o in back.outputs] == [("out", (128, 128), dtype)]
    assert f"params=a:128x128:bfloat16,out:128x128:{dtype} fragment=1" in path.read_text().splitlines()[0]
    assert back == fragment
    old = dumps_program(fragment).replace(f",out:128x128:{dtype}", "", 1)  # a file written before
    assert [(o.name, o.dtype) for o in loads_program(old).outputs] == [("out", "float32")]


def test_mixed_parameter_dtypes_round_trip_through_files(tmp_path) -> None:
    text = dumps_program(nkigym.tile(matmul, {"a": (128, 128), "b": (128, 256)}))
    mixed = text.replace("b:128x256:float32", "b:128x256:bfloat16", 1)
    program = loads_program(mixed)
    assert [p.dtype for p in program.params] == ["float32", "bfloat16"]
    path = write_program(nkigym.saturate(program), tmp_path / "s.nkg")
    assert [p.dtype for p in read_program(path).params] == ["float32", "bfloat16"]
    assert "b:128x256:bfloat16" in path.read_text().splitlines()[0]


def test_read_and_write_program_are_exported() -> None:
    assert nkigym.read_program is read_program
    assert nkigym.write_program is write_program


def test_program_file_errors_are_named(tmp_path) -> None:
    from nkigym_graph.text.files import ProgramFileError

    program = nkigym.tile(matmul, {"a": (128, 128), "b": (128, 128)})
    with pytest.raises(ProgramFileError, match=r"cannot read program file .*missing.nkg: No such file"):
        read_program(tmp_path / "missing.nkg")
    with pytest.raises(ProgramFileError, match=r"cannot read program file"):
        read_program(tmp_path)
    (tmp_path / "binary.nkg").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ProgramFileError, match=r"binary.nkg is not a program file \(not UTF-8 text\)"):
        read_program(tmp_path / "binary.nkg")
    with pytest.raises(ProgramFileError, match=r"path must be a str or a path, got int"):
        read_program(5)  # type: ignore[arg-type]
    with pytest.raises(ProgramFileError, match=r"cannot write program file"):
        write_program(program, tmp_path)
    with pytest.raises(ProgramFileError, match=r"program must be a Program, got str"):
        write_program("def f(a): ...", tmp_path / "x.nkg")  # type: ignore[arg-type]


def test_numpy_spellings_follow_numpy() -> None:
    assert resolve_dtype("f4") == "float32"
    assert resolve_dtype("float") == resolve_dtype(float) == "float64"  # numpy's meaning
    assert resolve_dtype("ml_dtypes.bfloat16") == "bfloat16"
    with pytest.raises(DtypeError, match=r"dtype: 'int8' is not a supported dtype"):
        resolve_dtype("int8")
