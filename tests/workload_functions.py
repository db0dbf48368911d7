"""Functions many tests tile (softmax, attention) with their numpy references in float64."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import nkigym_graph as ng


def softmax(x: Any) -> Any:
    """Softmax of every row of ``x`` [R, F]: exp(x - max) times the reciprocal of its sum."""
    m = ng.tensor_reduce(x, op="max")
    e = ng.activation(x, op="exp", bias=ng.tensor_scalar(m, -1.0, op="multiply"))
    return ng.tensor_scalar(e, ng.activation(ng.tensor_reduce(e, op="sum"), op="reciprocal"))


def softmax_reference(x: np.ndarray) -> np.ndarray:
    """``softmax`` in numpy, in float64."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention(q_t: Any, k_t: Any, v: Any) -> Any:
    """softmax(q k^T / sqrt(d)) v for ``q_t`` [d, queries], ``k_t`` [d, keys], ``v`` [keys, d]."""
    scale = 1.0 / math.sqrt(q_t.shape[0])
    scores = ng.nc_matmul(q_t, k_t)
    shift = ng.tensor_scalar(ng.tensor_reduce(scores, op="max"), -scale, op="multiply")
    weights = ng.activation(scores, op="exp", scale=scale, bias=shift)
    total = ng.activation(ng.tensor_reduce(weights, op="sum"), op="reciprocal")
    return ng.tensor_scalar(ng.nc_matmul(ng.nc_transpose(weights), v), total)


def attention_reference(q_t: np.ndarray, k_t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``attention`` in numpy, in float64."""
    scores = np.asarray(q_t, dtype=np.float64).T @ k_t / math.sqrt(q_t.shape[0])
    return softmax_reference(scores) @ np.asarray(v, dtype=np.float64)
