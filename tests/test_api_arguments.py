"""A user's wrong argument to a public function raises the module's NkigymError subclass
naming the argument and the problem, never a raw Python exception."""

from __future__ import annotations

from pathlib import Path

import pytest

import nkigym_graph as ng
from nkigym_graph.cost import CostModelError
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.plugin.backends import EmitError

ROOT = tiled_matmul(128, 128, 256)
TEXT = str(ROOT)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TEXT.encode(), r"text must be a str of program text, got bytes .*decode bytes first"),
        (None, "text must be a str of program text, got NoneType None"),
        (5, "text must be a str of program text, got int 5"),
        (TEXT + "\udcff", r"line \d+, column 1: the text is not valid Unicode \(surrogates not allowed"),
        (TEXT.replace("tensor_0", "t\udcff", 1), r"line 4, column 6: the text is not valid Unicode"),
        (TEXT.replace("0:128]", "0:" + "+".join(["1"] * 100_000) + "]", 1), "nests expressions too deeply"),
        ("def f(a):\n    return a\x00\n", "null bytes"),
        ("\x00\xff\ufffe", "null bytes"),
        ("", "expected exactly one `def`"),
        ("def f(a):\n    tensor_0 = a[0:128, 0:128]\n    return tensor_0\n" * 2, "exactly one `def`"),
    ],
)
def test_bad_program_text_is_a_parse_error(text: object, message: str) -> None:
    with pytest.raises(ng.ParseError, match=message):
        ng.parse_program(text)  # type: ignore[arg-type]


def test_a_fragment_checks_its_text_too() -> None:
    with pytest.raises(ng.ParseError, match="text must be a str"):
        ng.parse_fragment(b"tensor_0 = a[0:128, 0:128]")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ([1, 2], r"shapes must be a map of name to sizes, .* got list \[1, 2\]"),
        ({"a": "128x128"}, r"shapes\['a'\] must be a sequence of sizes, got str '128x128'"),
        ({"a": (128, -1)}, r"shapes\['a'\] must be an integer >= 1, got -1"),
        ({"a": (128, "x")}, r"shapes\['a'\] must be an integer >= 1, got str 'x'"),
        ({5: (128, 128)}, "shapes keys must be parameter names, got int 5"),
    ],
)
def test_bad_shapes_are_a_parse_error(shapes: object, message: str) -> None:
    with pytest.raises(ng.ParseError, match=message):
        ng.parse_program(TEXT, shapes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "code",
    [
        "a[0:__import__('os').system('touch {m}'), 0:128]",
        "a[0:128, 0:(open('{m}', 'w') and 128)]",
        "nkigym.activation(a[0:128, 0:128], op=__import__('os').system('touch {m}'))",
        "nkigym.activation(a[0:128, 0:128], op=open('{m}', 'w').name)",
        "nkigym.tensor_scalar(a[0:128, 0:128], (lambda: open('{m}', 'w'))())",
        "nkigym.ndarray((128, 128), dtype=__import__('os').system('touch {m}'))",
    ],
)
def test_the_parser_never_evaluates_code(tmp_path: Path, code: str) -> None:
    marker = tmp_path / "marker"
    text = f"def f(a):\n    tensor_0 = {code.format(m=marker)}\n    return tensor_0\n"
    with pytest.raises(ng.ParseError):
        ng.parse_program(text, {"a": (128, 128)})
    assert not marker.exists()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("xyz", "path must be a list of \\(transform name, match\\) pairs, got str 'xyz'"),
        (None, "path must be a list .* got NoneType None"),
        ([("nope", 0)], "replay step 1: unknown transform 'nope'; registered transforms: .*data_reuse"),
        ([("data_reuse", 99)], r"replay step 1: data_reuse has \d+ match\(es\) here, no match 99"),
        ([("data_reuse", -1)], r"replay step 1: data_reuse has \d+ match\(es\) here, no match -1"),
        ([("data_reuse", None)], "path entry 1: the match must be a Match or an index, got NoneType None"),
        ([("data_reuse", True)], "path entry 1: the match must be a Match or an index, got bool True"),
        (["data_reuse"], "path entry 1 must be a \\(transform name, match\\) pair, got str"),
        ([(5, 0)], "path entry 1 must be a \\(transform name, match\\) pair, got tuple"),
    ],
)
def test_bad_replay_paths_are_a_search_error(path: object, message: str) -> None:
    with pytest.raises(ng.SearchError, match=message):
        ng.replay(ROOT, path)  # type: ignore[arg-type]


def test_replay_takes_match_indexes() -> None:
    first = ng.analyze(ROOT, "data_reuse")[0]
    assert ng.replay(ROOT, [("data_reuse", 0)]) == ng.apply(ROOT, "data_reuse", first)


def test_replay_needs_a_program() -> None:
    with pytest.raises(ng.SearchError, match="root must be a Program, got str"):
        ng.replay(TEXT, [])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (
            (ROOT, "data_reuse", None),
            ng.TransformError,
            "match must be a Match of 'data_reuse' .* got NoneType None",
        ),
        ((ROOT, "data_reuse", 0), ng.TransformError, "match must be a Match .* got int 0"),
        ((None, "data_reuse", None), ng.TransformError, "program must be a Program, got NoneType None"),
        (
            (ROOT, 5, None),
            ng.PluginError,
            "transform must be a transform name or a Transform instance, got int 5",
        ),
        ((ROOT, "nope", None), ng.PluginError, "unknown transform 'nope'"),
    ],
)
def test_bad_apply_arguments_are_named(args: tuple, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ng.apply(*args)


@pytest.mark.parametrize("program", [None, 5, TEXT])
def test_estimate_needs_a_program(program: object) -> None:
    with pytest.raises(CostModelError, match=r"program must be a Program .*, got"):
        ng.estimate(program)  # type: ignore[arg-type]


def test_search_on_a_tenstorrent_target_with_the_trainium_model_names_the_right_one() -> None:
    program = tiled_matmul(64, 64, 64, tile=32, target=ng.WORMHOLE_B0)
    refusal = r"prices Trainium targets \(trn1, trn2\); .*the tenstorrent cost model"
    with pytest.raises(CostModelError, match=refusal):
        ng.search(program, budget=2, cost_model="trn2")
    assert ng.search(program, budget=2).cost.model == "tenstorrent"


@pytest.mark.parametrize("emit", [ng.emit, ng.emit_artifact])
def test_emit_needs_a_program(emit: object) -> None:
    with pytest.raises(EmitError, match=r"program must be a Program .* got NoneType None"):
        emit(None, backend="buda")  # type: ignore[operator]


@pytest.mark.parametrize("transforms", [5, [5], {"data_reuse": None}])
def test_replay_transforms_must_be_transforms(transforms: object) -> None:
    with pytest.raises(ng.SearchError, match="transforms must be Transform instances"):
        ng.replay(ROOT, [("data_reuse", 0)], transforms)  # type: ignore[arg-type]


def test_a_match_is_applied_by_its_own_transform_only() -> None:
    """A data_reuse match given to operand_merge was applied as data_reuse's rewrite."""
    import nkigym_graph as ng

    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 256)})
    match = ng.get_transform("data_reuse").analyze(program)[0]
    with pytest.raises(ng.TransformError, match="one of transform 'data_reuse', not of 'operand_merge'"):
        ng.apply(program, "operand_merge", match)
    assert len(ng.apply(program, "data_reuse", match)) == len(program) - 1
