"""A plugin's mistakes are errors naming the plugin and what is wrong: hooks that raise or
return the wrong thing, malformed transforms, backends, cost models and targets, names
that clash, observers that raise, and backends or cost models whose results are wrong.
Built-ins keep priority over third parties for what they provide."""

from __future__ import annotations

import math
import re
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import nkigym_graph as ng
from nkigym_graph.plugin import hookspecs
from nkigym_graph.plugin.calls import estimate_with
from nkigym_graph.plugin.manager import ObserverError, plugin_sources
from nkigym_graph.plugin.registry import registered_cost_models
from nkigym_graph.rewriting.patterns import forward


def _relus(a, b):
    return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu")


PROGRAM = ng.tile(_relus, {"a": (128, 128), "b": (128, 256)})


@contextmanager
def registered(*plugins: tuple[object, str | None]) -> Iterator[None]:
    """``(plugin, name)``s registered in order while the block runs."""
    done = []
    try:
        for plugin, name in plugins:
            ng.register_plugin(plugin, name=name)
            done.append(plugin)
        yield
    finally:
        for plugin in reversed(done):
            ng.unregister_plugin(plugin)


@contextmanager
def refused(
    match: str, *plugins: tuple[object, str | None]
) -> Iterator[pytest.ExceptionInfo[ng.PluginError]]:
    """A ``PluginError`` matching ``match`` from the block, with ``plugins`` registered."""
    with registered(*plugins), pytest.raises(ng.PluginError, match=match) as raised:
        yield raised


def returning(kind: str, value: Callable[[], Any]) -> object:
    """A plugin whose ``nkigym_graph_register_<kind>`` hook returns ``value()``."""

    class Returning:
        pass

    setattr(Returning, f"nkigym_graph_register_{kind}", ng.hookimpl(lambda self: value()))
    return Returning()


class FoldRelus(ng.PatternTransform):
    name = "fold_relus"
    pattern = ng.Pattern("activation", ng.Pattern("activation", op="relu"), op="relu", capture="outer")

    def edit(self, program, found):
        return forward(program, found["outer"])


def _report(program: ng.Program, **changes: Any) -> ng.CostReport:
    figures: dict[str, Any] = dict(
        model="flat", target=program.target.name, seconds=1e-6, engine_seconds={"tensor": 1e-6},
        bytes_moved=0, flops=0, peak_flops=1e12, knee=1.0, statements=len(program),
        peak_sbuf_bytes=0, peak_psum_bytes=0, sbuf_capacity=1, psum_capacity=1,
    )  # fmt: skip
    return ng.CostReport(**{**figures, **changes})


class FlatNeuronModel:
    """A third party's model of the neuron family, the built-in ``trn2``'s."""

    name = "flat"
    families = ("neuron",)

    def estimate(self, program: ng.Program) -> ng.CostReport:
        return _report(program)


# 1. registration order: built-ins first, both plugins named in that order


def test_a_plugin_cost_model_does_not_replace_the_builtin_one_for_its_family() -> None:
    with registered((returning("cost_models", lambda: [FlatNeuronModel]), "flat_plugin")):
        assert "flat" in registered_cost_models()
        assert ng.estimate(PROGRAM).model == "trn2"
        assert ng.estimate(PROGRAM, "flat").model == "flat"


def test_a_name_registered_twice_names_the_plugins_in_registration_order() -> None:
    first = (returning("transforms", lambda: [FoldRelus]), "first")
    second = (returning("transforms", lambda: [FoldRelus]), "second")
    with refused("'fold_relus' is registered by both 'first' and 'second'", first, second):
        ng.transforms()


# 2. an observer that raises is named, not the transform


class RaisingObserver:
    @ng.hookimpl
    def nkigym_graph_program_rewritten(self, transform_name, before, after):
        raise RuntimeError("observer bug")


def test_a_raising_observer_is_an_error_naming_it_and_the_hook() -> None:
    expected = r"observer plugin 'watcher' \(nkigym_graph_program_rewritten\) failed .*RuntimeError: observer"
    with registered((RaisingObserver(), "watcher")):
        with pytest.raises(ObserverError, match=expected) as raised:
            ng.saturate(PROGRAM, ["data_reuse"])
        assert isinstance(raised.value, ng.PluginError)
        assert isinstance(raised.value.__cause__, RuntimeError)
        with pytest.raises(ObserverError, match="observer plugin 'watcher'"):
            ng.search(PROGRAM, ["data_reuse"], strategy="greedy", budget=3)


def test_an_observer_may_take_a_subset_of_the_arguments() -> None:
    seen = []

    class Names:
        @ng.hookimpl
        def nkigym_graph_program_rewritten(self, transform_name):
            seen.append(transform_name)

    with registered((Names(), None)):
        ng.saturate(PROGRAM, ["data_reuse"])
    assert seen and set(seen) == {"data_reuse"}


# 3. a hook that raises or returns the wrong thing; a hook taking arguments it is not given


class NoName(ng.PatternTransform):
    pattern = FoldRelus.pattern

    def edit(self, program, found):
        return None


class NeedsArguments(FoldRelus):
    name = "needs_arguments"

    def __init__(self, size: int) -> None:
        self.size = size


HOOK_MISTAKES = {
    "raises": (lambda: 1 / 0, r"failed: ZeroDivisionError: division by zero"),
    "an int": (lambda: 5, r"must return a list, got int 5"),
    "a str": (lambda: "x", r"must return a list, got str 'x'"),
    "a class": (lambda: FoldRelus, r"must return a list, got type"),
    "a list of str": (lambda: ["x"], r"str 'x' is not a nkigym_graph.Transform"),
    "no name": (lambda: [NoName], r"NoName .* needs a name \(a non-empty str\), got str ''"),
    "arguments": (lambda: [NeedsArguments], r"NeedsArguments\(\) failed: TypeError: .*'size'"),
}


@pytest.mark.parametrize("value, message", HOOK_MISTAKES.values(), ids=HOOK_MISTAKES.keys())
def test_a_hook_mistake_is_a_plugin_error_naming_the_plugin(value: Callable[[], Any], message: str) -> None:
    expected = rf"nkigym_graph_register_transforms of plugin 'careless'.*{message}"
    with refused(expected, (returning("transforms", value), "careless")):
        ng.transforms()


def test_a_broken_registration_says_how_to_go_on_and_unregistering_mends_it() -> None:
    """Every lookup fails while the plugin is registered (the hook is collected on use):
    the error says so and names the way out."""
    careless = returning("transforms", lambda: [NoName])
    ng.register_plugin(careless, name="careless")
    try:
        with pytest.raises(ng.PluginError, match=r"every lookup of transforms fails .*unregister_plugin"):
            ng.get_transform("data_reuse")
    finally:
        ng.unregister_plugin(careless)
    assert ng.get_transform("data_reuse").name == "data_reuse"


def test_a_hook_taking_arguments_it_is_not_given_is_refused_naming_the_plugin() -> None:
    class WrongSignature:
        @ng.hookimpl
        def nkigym_graph_register_transforms(self, extra):
            return [FoldRelus]

    plugin = WrongSignature()
    with pytest.raises(ng.PluginError, match=r"cannot be registered: Plugin 'wrong' for hook .*\{'extra'\}"):
        ng.register_plugin(plugin, name="wrong")
    assert not ng.get_plugin_manager().is_registered(plugin)


# 4. backends' and cost models' results are checked, their failures named


def _backend(result: Callable[..., Any]) -> object:
    backend = type("Custom", (ng.Backend,), {"name": "custom", "emit": lambda self, p, t, **o: result()})
    return returning("backends", lambda: [backend])


BACKEND_MISTAKES = {
    "None": (lambda: None, r"returned NoneType None, not an Artifact"),
    "a str": (lambda: "text", r"returned str 'text', not an Artifact"),
    "raises": (lambda: 1 / 0, r"failed in emit: ZeroDivisionError"),
    "text not a str": (lambda: ng.Artifact("custom", 123), r"in emit: Artifact text must be a str, got int"),
}


@pytest.mark.parametrize("result, message", BACKEND_MISTAKES.values(), ids=BACKEND_MISTAKES.keys())
@pytest.mark.parametrize("emit", [ng.emit, ng.emit_artifact])
def test_a_backends_wrong_result_or_failure_names_it(
    emit: Callable[..., Any], result: Callable[[], Any], message: str
) -> None:
    with refused(rf"backend 'custom' \(plugin 'emitters'\) {message}", (_backend(result), "emitters")):
        emit(PROGRAM, backend="custom")


def test_a_raising_backends_error_chains_its_cause() -> None:
    with refused("ZeroDivisionError", (_backend(lambda: 1 / 0), None)) as raised:
        ng.emit(PROGRAM, backend="custom")
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_a_backend_without_options_is_named_when_given_some() -> None:
    emit = lambda self, program, target: ng.Artifact(backend="plain", text="ok")  # noqa: E731
    backend = type("Plain", (ng.Backend,), {"name": "plain", "emit": emit})
    with registered((returning("backends", lambda: [backend]), "plain_plugin")):
        assert ng.emit(PROGRAM, backend="plain") == "ok"
        with pytest.raises(ng.PluginError, match=r"'plain' \(plugin 'plain_plugin'\) .*TypeError.*'opt'"):
            ng.emit(PROGRAM, backend="plain", opt=1)


@pytest.mark.parametrize("field", ["backend", "text", "suffix"])
def test_an_artifact_needs_str_fields(field: str) -> None:
    values = {"backend": "b", "text": "t", field: 123}
    with pytest.raises(ng.PluginError, match=rf"Artifact {field} must be a str, got int 123"):
        ng.Artifact(**values)


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -1.0, None, "fast"], ids=repr)
def test_a_cost_report_needs_a_finite_time(seconds: Any) -> None:
    with pytest.raises(ng.PluginError, match=r"CostReport seconds must be a (finite )?number"):
        _report(PROGRAM, seconds=seconds)


def test_a_cost_report_needs_numbers() -> None:
    with pytest.raises(ng.PluginError, match=r"CostReport flops must be a number, got str"):
        _report(PROGRAM, flops="many")
    with pytest.raises(ng.PluginError, match=r"CostReport engine_seconds\['tensor'\] must be a finite"):
        _report(PROGRAM, engine_seconds={"tensor": math.inf})


@pytest.mark.parametrize("memories", [("L1",), ["L1", ""], ("L1", 2), "L1"], ids=repr)
def test_a_cost_report_needs_two_memory_names(memories: Any) -> None:
    with pytest.raises(ng.PluginError, match=r"CostReport memories must be two names"):
        _report(PROGRAM, memories=memories)


def test_a_cost_report_prints_its_own_memory_names() -> None:
    text = str(_report(PROGRAM, memories=("L1", "dest"), memory_per="core", peak_sbuf_bytes=2048))
    assert "L1 2.0/0 KiB and dest 0.0/0 KiB per core" in text
    assert "SBUF" not in str(_report(PROGRAM, memories=("L1", "")))


class RaisingModel:
    name = "raising"

    def estimate(self, program: ng.Program) -> ng.CostReport:
        raise ZeroDivisionError("division by zero")


class FloatModel:
    name = "float"

    def estimate(self, program: ng.Program) -> float:
        return 1.0


def test_calling_a_cost_model_names_it_and_its_plugin() -> None:
    with registered((returning("cost_models", lambda: [RaisingModel, FloatModel]), "models")):
        models = registered_cost_models()
        with pytest.raises(ng.PluginError, match=r"model 'raising' \(plugin 'models'\) failed") as raised:
            estimate_with(models["raising"], PROGRAM)
        assert isinstance(raised.value.__cause__, ZeroDivisionError)
        with pytest.raises(ng.PluginError, match=r"\(plugin 'models'\) returned float 1.0, not a CostReport"):
            estimate_with(models["float"], PROGRAM)
        assert estimate_with(models["trn2"], PROGRAM) == ng.estimate(PROGRAM)
        for name, message in (("raising", "failed in estimate"), ("float", "not a CostReport")):
            with pytest.raises(ng.PluginError, match=rf"cost model '{name}' \(plugin 'models'\).*{message}"):
                ng.estimate(PROGRAM, name)
            with pytest.raises(ng.PluginError, match=rf"cost model '{name}' \(plugin 'models'\).*{message}"):
                ng.search(PROGRAM, strategy="greedy", budget=3, cost_model=name, confirm=False)


class NanModel:
    name = "nan"

    def estimate(self, program: ng.Program) -> ng.CostReport:
        return _report(program, seconds=math.nan)


def test_a_cost_model_making_a_wrong_report_is_named() -> None:
    with registered((returning("cost_models", lambda: [NanModel]), "nans")):
        expected = r"cost model 'nan' \(plugin 'nans'\) in estimate: CostReport seconds must be a number"
        with pytest.raises(ng.PluginError, match=expected):
            estimate_with(registered_cost_models()["nan"], PROGRAM)


# 5. a duck-typed transform is refused when registered; the documented example works


class DuckTyped:
    name = "duck"

    def analyze(self, program):
        return []


def test_a_transform_that_is_not_a_transform_is_refused_naming_what_it_lacks() -> None:
    expected = r"plugin 'ducks'.*not a nkigym_graph.Transform.*saturates"
    with refused(expected, (returning("transforms", lambda: [DuckTyped]), "ducks")):
        ng.saturate(PROGRAM, ["duck"])


def test_the_hookspecs_example_plugin_works() -> None:
    example = re.search(r"Example plugin module::\n\n(.*)", hookspecs.__doc__ or "", re.S)
    assert example is not None
    module = types.ModuleType("example_plugin")
    exec(compile(re.sub(r"(?m)^    ", "", example.group(1)), "hookspecs example", "exec"), module.__dict__)
    copies = ng.tile(lambda a: ng.activation(a, op="copy"), {"a": (128, 128)})
    with registered((module, None)):
        assert "drop_copies" in ng.transforms()
        assert not ng.saturate(copies, ["drop_copies"]).statements_of("activation")


# 6. names: non-empty strs; targets found in any case and never shadowing a built-in


@pytest.mark.parametrize("name", [42, "", " padded "], ids=repr)
def test_a_transform_name_must_be_a_non_empty_str(name: Any) -> None:
    badly_named = type("BadlyNamed", (FoldRelus,), {"name": name})
    expected = r"plugin 'names'.*needs a name \(a non-empty str\)"
    with refused(expected, (returning("transforms", lambda: [badly_named]), "names")):
        ng.transforms()


def _target(name: str) -> ng.Target:
    return ng.Target(
        name=name, family="neuron", partition_size=128, tile_sizes=dict(ng.TRN2.tile_sizes),
        op_limits={op: dict(limits) for op, limits in ng.TRN2.op_limits.items()},
        sbuf_bytes_per_partition=ng.TRN2.sbuf_bytes_per_partition,
        psum_bytes_per_partition=ng.TRN2.psum_bytes_per_partition, facts=dict(ng.TRN2.facts),
        hbm_bytes=ng.TRN2.hbm_bytes,
    )  # fmt: skip


@pytest.mark.parametrize("name", ["trn2", "TRN2"])
def test_a_plugin_target_named_like_a_builtin_one_is_refused(name: str) -> None:
    expected = rf"plugin 'impostor': target '{name}' clashes with the built-in target 'trn2'"
    with refused(expected, (returning("targets", lambda: [_target(name)]), "impostor")):
        ng.get_target("trn2")


def test_a_plugin_target_is_found_in_any_case() -> None:
    chip = _target("MyChip")
    with registered((returning("targets", lambda: [chip]), None)):
        assert ng.get_target("mychip") is chip
        assert ng.get_target("MYCHIP") is chip
        assert ng.tile(_relus, {"a": (128, 128), "b": (128, 256)}, target="mychip").target is chip


def test_plugin_targets_differing_in_case_clash() -> None:
    lower = (returning("targets", lambda: [_target("chip")]), "lower")
    upper = (returning("targets", lambda: [_target("CHIP")]), "upper")
    with refused("'chip' is registered by both 'lower' and 'upper'", lower, upper):
        ng.get_target("chip")


# 7. a plugin registered without a name is named after its class or module


class Unnamed:
    @ng.hookimpl
    def nkigym_graph_register_transforms(self):
        return [FoldRelus]


def test_a_plugin_registered_without_a_name_is_named_after_its_class() -> None:
    expected = "'fold_relus' is registered by both 'Unnamed' and 'Unnamed-2'"
    with refused(expected, (Unnamed(), None), (Unnamed(), None)):
        assert {"Unnamed", "Unnamed-2"} <= dict(plugin_sources()).keys()
        ng.transforms()


def test_a_module_plugin_registered_without_a_name_is_named_after_the_module() -> None:
    module = types.ModuleType("my_plugin_module")
    module.nkigym_graph_register_transforms = ng.hookimpl(lambda: [1])  # type: ignore[attr-defined]
    with refused("of plugin 'my_plugin_module': int 1 is not", (module, None)):
        ng.transforms()


def test_registering_a_plugin_twice_names_it() -> None:
    plugin = Unnamed()
    with refused("Plugin already registered as 'Unnamed'", (plugin, None)):
        ng.register_plugin(plugin)


class _Crashing(ng.Transform):
    name = "crashing"

    def analyze(self, program: ng.Program) -> list[ng.Match]:
        raise ZeroDivisionError("division by zero in analyze")


def test_a_failing_transform_is_credited_to_its_plugin_only_while_that_instance_is_its() -> None:
    plugin = returning("transforms", lambda: [_Crashing])
    with registered((plugin, "crashers")), pytest.raises(ng.TransformError, match=r"\(plugin 'crashers', "):
        ng.analyze(PROGRAM, "crashing")
    # the same name, from no plugin now: no plugin is named
    with pytest.raises(
        ng.TransformError, match=r"'crashing' \([\w.]*test_plugin_failures\) failed in analyze"
    ):
        ng.analyze(PROGRAM, _Crashing())
