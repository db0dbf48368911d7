"""The plugin is registered through its entry point and folds chains of relus exactly,
a whole chain in one batch."""

import numpy as np

import nkigym_graph as ng


def relus(depth):
    def chain(a, b):
        x = ng.nc_matmul(a, b)
        for _ in range(depth):
            x = ng.activation(x, op="relu")
        return x

    return chain


def test_relu_fold_is_registered_and_exact() -> None:
    assert "relu_fold" in ng.transforms()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 256))
    for depth in (2, 3, 5):
        program = ng.tile(relus(depth), {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
        steps = list(ng.saturate_steps(program, ["relu_fold"]))
        assert len(steps) == 1  # the whole chain folds in one batch
        folded = steps[0][1]
        assert len(folded.statements_of("activation")) == 2  # one relu per 128-column tile
        np.testing.assert_allclose(ng.interpret(folded, a=a, b=b), np.maximum(a.T @ b, 0.0))
        assert ng.saturate(program, ["relu_fold"], check=True) == folded


def test_a_scaled_outer_relu_is_not_folded() -> None:
    def scaled(a, b):
        return ng.activation(ng.activation(ng.nc_matmul(a, b), op="relu"), op="relu", scale=2.0, bias=-1.0)

    program = ng.tile(scaled, {"a": (128, 128), "b": (128, 256)}, dtype=np.float64)
    assert ng.analyze(program, "relu_fold") == []
