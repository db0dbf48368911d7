"""What the NKI backend refuses, with messages that name the problem."""

from __future__ import annotations

import numpy as np
import pytest
from nki_backend.nki_cases import CASES, tiled

import nkigym_graph as ng
from nkigym_graph import TRN2
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph_plugins.nki_backend import LOWERINGS, NkiEmitError, emit_kernel

CASE = {c.id: c for c in CASES}


def test_float64_needs_the_dtype_option() -> None:
    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 128)}, dtype=np.float64)
    with pytest.raises(NkiEmitError, match=r"dtype float64, which NKI does not support.*dtype='float32'"):
        ng.emit(program, backend="nki")


def test_an_unsupported_dtype_is_answered_with_the_dtypes_tile_takes() -> None:
    """The message says to tile with a supported dtype: it lists only those ``tile`` takes."""
    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 128)}, dtype=np.float64)
    with pytest.raises(NkiEmitError) as info:
        ng.emit(program, backend="nki")
    assert "(supported: float32, bfloat16, float16, float8_e4m3, float8_e5m2)" in str(info.value)


def test_unknown_option_is_named() -> None:
    with pytest.raises(NkiEmitError, match=r"unknown option\(s\) \['unroll'\].*roll_loops"):
        ng.emit(tiled_matmul(128, 128, 128), backend="nki", unroll=True)


def test_tenstorrent_target_is_refused() -> None:
    with pytest.raises(NkiEmitError, match="grayskull is not an AWS Neuron core"):
        ng.emit(tiled_matmul(128, 128, 128), backend="nki", target="grayskull")


def test_fragment_is_refused() -> None:
    fragment = ng.parse_fragment('tensor_1 = nkigym.activation(tensor_0, op="exp")', {"tensor_0": (128, 128)})
    with pytest.raises(NkiEmitError, match="fragment"):
        ng.emit(fragment, backend="nki")


def test_op_without_lowering_names_the_statement() -> None:
    lowerings = {name: lowering for name, lowering in LOWERINGS.items() if name != "activation"}
    with pytest.raises(NkiEmitError, match=r"nkigym.activation.*no NKI lowering for op 'activation'"):
        emit_kernel(tiled(CASE["matmul_tanh"]), TRN2, lowerings)


def test_the_dtype_option_takes_tiles_names_and_refuses_others() -> None:
    """``dtype="fp32"`` was refused (tile takes it), ``dtype="int8"`` accepted (a matmul
    truncated to integers)."""
    import numpy as np

    import nkigym_graph as ng

    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 256)})
    assert ng.emit(program, backend="nki", dtype="fp32") == ng.emit(program, backend="nki", dtype=np.float32)
    with pytest.raises(ng.NkigymError, match="'int8' is not a supported dtype"):
        ng.emit(program, backend="nki", dtype="int8")


@pytest.mark.parametrize("option", ["roll_loops", "fit_memory", "reorder"])
@pytest.mark.parametrize("value", ["False", "no", 0, None])
def test_flag_options_must_be_true_or_false(option: str, value: object) -> None:
    """``roll_loops="False"`` emitted rolled loops (a non-empty string is truthy) and
    ``reorder=0`` was taken as False: every flag was used by truthiness, unchecked."""
    with pytest.raises(NkiEmitError, match=rf"{option} must be True or False, got"):
        ng.emit(tiled_matmul(128, 128, 128), backend="nki", **{option: value})
