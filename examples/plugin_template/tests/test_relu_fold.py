"""The plugin is registered through its entry point and folds double relus exactly."""

import numpy as np

import nkigym_graph as ng


def double_relu(a, b):
    return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu")


def test_relu_fold_is_registered_and_exact() -> None:
    assert "relu_fold" in ng.transforms()
    program = ng.tile(double_relu, {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
    folded = ng.saturate(program, ["relu_fold"])
    assert len(folded.statements_of("activation")) == len(program.statements_of("activation")) // 2
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 256))
    np.testing.assert_allclose(ng.interpret(folded, a=a, b=b), np.maximum(a.T @ b, 0.0))
