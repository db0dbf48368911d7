"""The plugin system: hook documentation, built-ins through entry points, outside plugins."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
import types
from importlib import metadata

import numpy as np
import pytest

import nkigym_graph as ng
from nkigym_graph.plugin import hookspecs
from nkigym_graph.plugin.manager import plugin_sources
from nkigym_graph.rewriting.transform import Edit, Match, Rename, Transform

BUILTIN_TRANSFORMS = {"data_reuse", "operand_merge", "free_dim_merge", "dead_code"}


def test_every_hook_is_documented() -> None:
    hooks = [
        f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("nkigym_graph_")
    ]
    assert len(hooks) >= 5
    for hook in hooks:
        assert hook.__doc__ and len(hook.__doc__.strip()) > 40, hook.__name__


def test_builtins_come_through_the_entry_point_group() -> None:
    points = {ep.name: ep.value for ep in metadata.entry_points(group="nkigym_graph")}
    for name in BUILTIN_TRANSFORMS:
        assert points[name].startswith("nkigym_graph_plugins.")
    assert set(ng.transforms()) >= BUILTIN_TRANSFORMS
    sources = dict(plugin_sources())
    assert "nkigym-graph" in sources["data_reuse"]


class ReluOfRelu(Transform):
    """``relu(relu(x))`` -> ``relu(x)``: the outer activation goes, its readers read the inner."""

    name = "relu_of_relu"

    def analyze(self, program: ng.Program) -> list[Match]:
        matches = []
        for node in program.statements_of("activation"):
            outer = program[node]
            if outer.attr("op") != "relu":
                continue
            for src, _ in program.producers(node):
                inner = program[src]
                if (
                    inner.op.name == "activation"
                    and inner.attr("op") == "relu"
                    and inner.dst.slices == outer.operands[0].slices
                ):
                    edit = Edit(remove=frozenset({node}), renames={outer.dst.var: Rename(inner.dst.var)})
                    matches.append(Match(self.name, (src, node), edit, program_hash=program.canonical_hash))
        return matches


class OutsidePlugin:
    """A plugin object, as a third-party package would provide it."""

    @ng.hookimpl
    def nkigym_graph_register_transforms(self):
        return [ReluOfRelu]


def _relu_twice(a, b):
    return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu")


def test_an_outside_plugin_is_registered_and_used_by_saturate() -> None:
    plugin = OutsidePlugin()
    ng.register_plugin(plugin, name="outside")
    try:
        assert "relu_of_relu" in ng.transforms()
        program = ng.tile(_relu_twice, {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
        result = ng.saturate(program, ["relu_of_relu"])
        assert len(result.statements_of("activation")) == len(program.statements_of("activation")) // 2
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 256))
        np.testing.assert_allclose(ng.interpret(result, a=a, b=b), np.maximum(a.T @ b, 0), rtol=1e-12)
    finally:
        ng.unregister_plugin(plugin)
    assert "relu_of_relu" not in ng.transforms()


def test_a_name_registered_twice_names_both_plugins() -> None:
    class Clash:
        @ng.hookimpl
        def nkigym_graph_register_transforms(self):
            class Impostor(ReluOfRelu):
                name = "data_reuse"

            return [Impostor]

    plugin = Clash()
    ng.register_plugin(plugin, name="clash")
    try:
        with pytest.raises(ng.PluginError, match="'data_reuse' is registered by both"):
            ng.transforms()
    finally:
        ng.unregister_plugin(plugin)


def test_a_misspelt_hook_is_rejected() -> None:
    module = types.ModuleType("typo_plugin")

    @ng.hookimpl
    def nkigym_graph_register_transfroms():
        return []

    module.nkigym_graph_register_transfroms = nkigym_graph_register_transfroms  # type: ignore[attr-defined]
    with pytest.raises(ng.PluginError, match="unknown hook 'nkigym_graph_register_transfroms'"):
        ng.register_plugin(module, name="typo")
    assert not ng.get_plugin_manager().is_registered(module)  # left as before


def test_rewrite_hook_sees_every_rewrite() -> None:
    seen = []

    class Recorder:
        @ng.hookimpl
        def nkigym_graph_program_rewritten(self, transform_name, before, after):
            seen.append((transform_name, len(before), len(after)))

    plugin = Recorder()
    ng.register_plugin(plugin, name="recorder")
    try:
        program = ng.tile(ng.nc_matmul, {"lhs": (256, 128), "rhs": (256, 256)})
        ng.saturate(program, ["data_reuse"])
    finally:
        ng.unregister_plugin(plugin)
    assert seen and all(name == "data_reuse" and after < before for name, before, after in seen)


FAKE_PLUGIN = """
import nkigym_graph
from nkigym_graph.rewriting.transform import Transform

class Nothing(Transform):
    name = "fake_nothing"
    def analyze(self, program):
        return []

@nkigym_graph.hookimpl
def nkigym_graph_register_transforms():
    return [Nothing]
"""


def _installed_fake_plugin(root) -> dict[str, str]:
    (root / "fake_plugin.py").write_text(FAKE_PLUGIN)
    info = root / "fake_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[nkigym_graph]\nfake = fake_plugin\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    return env


def _transforms_in_subprocess(env: dict[str, str]) -> set[str]:
    code = "import nkigym_graph as ng; print(' '.join(sorted(ng.transforms())))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_entry_point_plugins_autoload_unless_disabled(tmp_path) -> None:
    env = _installed_fake_plugin(tmp_path)
    assert _transforms_in_subprocess(env) >= BUILTIN_TRANSFORMS | {"fake_nothing"}
    env["NKIGYM_GRAPH_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    loaded = _transforms_in_subprocess(env)
    assert "fake_nothing" not in loaded and loaded >= BUILTIN_TRANSFORMS


def test_plugin_module_docstrings_show_before_and_after() -> None:
    for name, transform in ng.transforms().items():
        module = sys.modules[type(transform).__module__]
        doc = textwrap.dedent(module.__doc__ or "")
        if module.__name__.startswith("nkigym_graph_plugins"):
            assert "Before" in doc and "After" in doc, name


class _ScaleFold(ng.PatternTransform):
    """Forwards multiplies by one configured scalar (instances differ in it)."""

    name = "scale_fold"

    def __init__(self, scalar: float) -> None:
        self.pattern = ng.Pattern("tensor_scalar", op="multiply", scalar=scalar, capture="mul")

    def edit(self, program: ng.Program, found: ng.Found) -> Edit | None:
        from nkigym_graph.rewriting.patterns import forward

        return forward(program, found["mul"])


class _ScaleFoldPlugin:
    def __init__(self, scalar: float) -> None:
        self.scalar = scalar

    @ng.hookimpl
    def nkigym_graph_register_transforms(self) -> list[Transform]:
        return [_ScaleFold(self.scalar)]


def _times_one(x):  # type: ignore[no-untyped-def]
    return ng.tensor_scalar(ng.activation(x, op="relu"), 1.0, op="multiply")


def test_analyses_do_not_outlive_the_plugin_that_registered_the_transform() -> None:
    """A cached analysis was found by the transform's name and class: after its plugin was
    replaced by one registering another instance of the class under the same name, the
    program kept the old instance's matches (``matches_of`` and search disagreed with
    ``analyze``)."""
    program = ng.tile(_times_one, {"x": (128, 256)})
    first = _ScaleFoldPlugin(1.0)
    ng.register_plugin(first)
    try:
        assert len(ng.matches_of(program, "scale_fold")) == 2
    finally:
        ng.unregister_plugin(first)
    second = _ScaleFoldPlugin(2.0)
    ng.register_plugin(second)
    try:
        assert ng.analyze(program, "scale_fold") == []
        assert len(ng.matches_of(program, "scale_fold")) == 0
        assert ng.search(program, ["scale_fold"], confirm=False).path == []
    finally:
        ng.unregister_plugin(second)
