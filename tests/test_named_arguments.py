"""Each argument check added by the sweep: the error class and a message naming the argument."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sweep_cases import MATCH, ROOT, STITCH_META, TT, WEIGHTS, EmptyPlugin

import nkigym_graph as ng
from nkigym_graph.stitching import StitchError
from nkigym_graph.text import loads_program

X = np.ones((128, 128), np.float32)


class _Hookless:
    """An object without hook implementations."""


CASES: list[tuple[Any, tuple[Any, ...], dict[str, Any], type, str]] = [
    (ng.get_target, (5,), {}, ng.PluginError, "target must be a target name or a Target, got int 5"),
    (ng.parse_program, (str(ROOT),), {"target": 5}, ng.PluginError, "target must be .* got int 5"),
    (ng.emit, (ROOT, "nki", [1]), {}, ng.PluginError, r"target must be .* got list \[1\]"),
    (ng.emit, (ROOT, 5), {}, ng.PluginError, "backend must be a backend name, got int 5"),
    (ng.get_transform, ([1],), {}, ng.PluginError, "transform must be a transform name"),
    (ng.get_op, ([1],), {}, ng.PluginError, r"op must be an op name, got list \[1\]"),
    (ng.activation, (X,), {"op": [1]}, ng.OpCallError, r"op=\[1\] is not one of"),
    (loads_program, (b"def f(a): ...",), {}, ng.ParseError, "text must be a str .*decode bytes first"),
    (ng.interpret, (None,), {}, ng.NkigymError, "program must be a Program .* got NoneType None"),
    (ng.interpret, (ROOT, "x"), {}, ng.NkigymError, "dtype must be a numpy dtype or None, got str 'x'"),
    (ng.saturate, (ROOT, 5), {}, ng.TransformError, "names must be a list of transform names, got int 5"),
    (ng.saturate, (ROOT,), {"seed": "x"}, ng.TransformError, "seed must be an integer >= 0, got str 'x'"),
    (ng.saturate, (ROOT,), {"check": "x"}, ng.TransformError, "check must be True or False, got str 'x'"),
    (ng.saturate_steps, (None,), {}, ng.TransformError, "program must be a Program, got NoneType None"),
    (ng.explain, (ROOT, "data_reuse", "x"), {}, ng.TransformError, "nodes must be an integer >= 0, got str"),
    (
        ng.explain,
        (ROOT, "data_reuse", 999),
        {},
        ng.TransformError,
        r"nodes must be statement ids of the program \(program.ids\), got 999",
    ),
    (ng.to_dot, (None,), {}, ng.NkigymError, "program must be a Program .* got NoneType None"),
    (ng.to_dot_diff, (ROOT, 5), {}, ng.NkigymError, "after must be a Program .* got int 5"),
    (
        ng.write_dot,
        (ROOT, None),
        {},
        ng.NkigymError,
        r"path must be a file path \(str or Path\), got NoneType",
    ),
    (ng.register_plugin, (None,), {}, ng.PluginError, "plugin must have @nkigym_graph.hookimpl functions"),
    (ng.register_plugin, (_Hookless(),), {}, ng.PluginError, "plugin must have .* got _Hookless"),
    (ng.unregister_plugin, (_Hookless(),), {}, ng.PluginError, "plugin is not registered: _Hookless"),
    (ng.find_weights, (None,), {}, StitchError, "program must be a Program .* got NoneType None"),
    (ng.stitching_of, (5,), {}, StitchError, "program must be a Program .* got int 5"),
    (
        ng.stitch_program,
        (WEIGHTS, "w1"),
        {},
        StitchError,
        "weights must be a list of parameter names, got str",
    ),
    (
        ng.stitch_program,
        (WEIGHTS, [1]),
        {},
        StitchError,
        "weights must be a list of parameter names, got int 1",
    ),
    (ng.stitch_inputs, (WEIGHTS, [1]), {}, StitchError, "inputs must be a map of parameter name to array"),
    (ng.compile_time_args, (None,), {}, StitchError, "metadata must be a StitchMetadata .* got NoneType"),
    (ng.compile_time_args, (STITCH_META, 0), {"target": b"x"}, ng.PluginError, "target must be .* got bytes"),
    (ng.circular_buffers, (None,), {}, StitchError, "netlist_or_program must be a Program or a netlist"),
    (ng.check_circular_buffers, (TT, 5), {}, ng.PluginError, "target must be .* got int 5"),
    (
        ng.NetlistLimits,
        (),
        {"grid": "x"},
        ng.NetlistError,
        "NetlistLimits grid must be an integer >= 1, got str",
    ),
    (ng.NetlistLimits, (), {"t": 0}, ng.NetlistError, "NetlistLimits t must be an integer >= 1, got 0"),
]


@pytest.mark.parametrize(("function", "args", "kwargs", "error", "message"), CASES)
def test_the_argument_is_named(function: Any, args: tuple, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        function(*args, **kwargs)


class _UnknownHook:
    @ng.hookimpl
    def nkigym_graph_no_such_hook(self) -> None:
        """Not a hook of nkigym_graph."""


def test_register_plugin_refuses_what_pluggy_refuses() -> None:
    plugin = _UnknownHook()
    with pytest.raises(
        ng.PluginError, match="plugin cannot be registered: unknown hook 'nkigym_graph_no_such_hook'"
    ):
        ng.register_plugin(plugin)
    assert not ng.get_plugin_manager().is_registered(plugin)
    first = EmptyPlugin()
    ng.register_plugin(first, "sweep_twice")
    try:
        with pytest.raises(
            ng.PluginError, match="plugin cannot be registered: Plugin name already registered"
        ):
            ng.register_plugin(EmptyPlugin(), "sweep_twice")
        with pytest.raises(ng.PluginError, match="plugin cannot be registered: Plugin already registered"):
            ng.register_plugin(first)
    finally:
        ng.unregister_plugin(first)


def test_saturate_steps_checks_before_the_first_batch() -> None:
    with pytest.raises(ng.TransformError, match="names must be a list"):
        ng.saturate_steps(ROOT, 5)  # type: ignore[arg-type]  # no iteration needed


def test_compile_time_args_takes_a_target_name() -> None:
    assert ng.compile_time_args(STITCH_META, 3, target="wormhole_b0")[0] == ("stitched_weights_cb", 3)


def test_apply_still_works_after_the_checks(tmp_path: Path) -> None:
    assert len(ng.apply(ROOT, "data_reuse", MATCH)) < len(ROOT)
    assert ng.write_dot(ROOT, tmp_path / "p.dot").exists()


@pytest.mark.parametrize(
    ("function", "args", "kwargs", "message"),
    [
        (ng.to_dot, (ROOT,), {"collapse": None}, "collapse must be True or False, got NoneType None"),
        (ng.to_dot_diff, (ROOT, ROOT), {"collapse": "x"}, "collapse must be True or False, got str"),
        (ng.search, (ROOT,), {"budget": 2, "confirm": "x"}, "confirm must be None, True or False, got str"),
    ],
)
def test_a_flag_must_be_true_or_false(function: Any, args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ng.NkigymError, match=message):
        function(*args, **kwargs)
