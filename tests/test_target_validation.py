"""A malformed ``Target`` is refused when it is made, naming the target and the field,
so a bad plugin target cannot tile into a wrong (e.g. empty) program."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import nkigym_graph as ng


def _target(**changes: Any) -> ng.Target:
    fields: dict[str, Any] = {
        "name": "chip",
        "family": "neuron",
        "partition_size": 128,
        "tile_sizes": dict(ng.TRN2.tile_sizes),
        "op_limits": {op: dict(limits) for op, limits in ng.TRN2.op_limits.items()},
        "sbuf_bytes_per_partition": 192 * 1024,
        "psum_bytes_per_partition": 16 * 1024,
        "facts": dict(ng.TRN2.facts),
        "hbm_bytes": 2**30,
        **changes,
    }
    return ng.Target(**fields)


def test_a_well_formed_target_is_accepted() -> None:
    assert _target().partition_size == 128
    assert _target(hbm_bytes=None).hbm_bytes is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"tile_sizes": {**ng.TRN2.tile_sizes, "N": -128}},
            r"tile_sizes\['N'\] must be an integer >= 1, got -128",
        ),
        ({"tile_sizes": {**ng.TRN2.tile_sizes, "N": 0}}, r"tile_sizes\['N'\] must be an integer >= 1, got 0"),
        ({"tile_sizes": {**ng.TRN2.tile_sizes, "N": 1.5}}, r"tile_sizes\['N'\] must be an integer"),
        ({"tile_sizes": [128]}, "tile_sizes must be a mapping"),
        ({"partition_size": -5}, "partition_size must be an integer >= 1, got -5"),
        ({"partition_size": 0}, "partition_size must be an integer >= 1, got 0"),
        (
            {"sbuf_bytes_per_partition": "lots"},
            "sbuf_bytes_per_partition must be an integer >= 1, got str 'lots'",
        ),
        ({"psum_bytes_per_partition": True}, "psum_bytes_per_partition must be an integer >= 1, got bool"),
        ({"hbm_bytes": -1}, "hbm_bytes must be an integer >= 1"),
        ({"op_limits": {"nc_matmul": {"N": 0}}}, r"op_limits\['nc_matmul'\]\['N'\] must be an integer >= 1"),
        ({"op_limits": {"nc_matmul": 512}}, r"op_limits\['nc_matmul'\] must be a mapping"),
        ({"family": None}, "family must be a string"),
        ({"facts": None}, "facts must be a mapping"),
    ],
)
def test_a_malformed_field_is_refused_naming_target_and_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ng.PluginError, match=f"^Target 'chip': {message}"):
        _target(**changes)


@pytest.mark.parametrize("name", ["", None, 3])
def test_a_target_needs_a_name(name: object) -> None:
    with pytest.raises(ng.PluginError, match="Target: name must be a non-empty string"):
        _target(name=name)


def test_replace_checks_the_new_fields_too() -> None:
    with pytest.raises(ng.PluginError, match="Target 'trn2': partition_size"):
        dataclasses.replace(ng.TRN2, partition_size=0)


class _NegativeTilePlugin:
    @ng.hookimpl
    def nkigym_graph_register_targets(self) -> list[ng.Target]:
        return [_target(name="negative_n", tile_sizes={**ng.TRN2.tile_sizes, "N": -128})]


def test_a_plugin_with_a_negative_tile_size_cannot_tile_into_an_empty_program() -> None:
    def matmul(a: Any, b: Any) -> Any:
        return ng.nc_matmul(a, b)

    plugin = _NegativeTilePlugin()
    ng.register_plugin(plugin, name="negative_n_test")
    try:
        with pytest.raises(ng.NkigymError, match=r"Target 'negative_n': tile_sizes\['N'\]"):
            ng.tile(matmul, {"a": (128, 128), "b": (128, 256)}, target="negative_n")
    finally:
        ng.unregister_plugin(plugin)
