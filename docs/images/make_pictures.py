"""Regenerate the README's pictures (needs Graphviz): ``python docs/images/make_pictures.py``.

Each picture is drawn by the same calls the README's tour makes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nkigym_graph as nkigym

HERE = Path(__file__).parent
WORKLOAD_PICTURES = {
    "softmax": {"x": (128, 1024)},
    "layernorm": {"x": (128, 1024), "gamma": (1, 1024), "beta": (1, 1024)},
    "rmsnorm_matmul": {"x": (128, 256), "w": (256, 512)},
    "mlp": {"x_t": (128, 128), "w1": (128, 256), "b1": (256, 1), "w2": (256, 128)},
    "attention": {"q_t": (128, 128), "k_t": (128, 1024), "v": (1024, 128)},
    "causal_attention": {"q_t": (128, 512), "k_t": (128, 512), "v": (512, 128)},
}
"""The README's workload pictures: each tiled at a small size (``examples/workloads.py``)."""


def matmul(a, b):  # type: ignore[no-untyped-def]
    """a.T @ b, as in the README."""
    return nkigym.nc_matmul(a, b)


def main_job_timeline(path: Path) -> None:
    """The timeline of the kernel ``./run main`` emits (1024^3 fp32, the schedule search's
    best, on its random inputs of seed 0); needs matplotlib."""
    import numpy as np

    program = nkigym.tile(matmul, {"a": (1024, 1024), "b": (1024, 1024)})
    best = nkigym.search(program, strategy="schedule", seed=0, confirm=False, progress=False).best
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
    nkigym.nki_sim.profile(nkigym.emit(best, backend="nki"), a, b).write_timeline(path)


def main() -> None:
    program = nkigym.tile(matmul, {"a": (128, 128), "b": (128, 256)})
    nkigym.write_dot(program, HERE / "tiled.svg")
    nkigym.write_dot(nkigym.saturate(program), HERE / "saturated.svg")

    (_, reused), (_, merged) = list(nkigym.saturate_steps(program))[:2]  # data_reuse, then operand_merge
    nkigym.write_dot(nkigym.to_dot_diff(reused, merged), HERE / "merge_batch.svg")

    big = nkigym.tile(matmul, {"a": (1024, 1024), "b": (1024, 1024)})
    nkigym.write_dot(big, HERE / "big_tiled.svg")  # 1,601 statements: folded by default
    nkigym.write_dot(nkigym.saturate(big), HERE / "big_saturated.svg", fold="tile")
    sys.path.insert(0, str(HERE.parents[1] / "examples"))
    from workloads import WORKLOADS

    for name, shapes in WORKLOAD_PICTURES.items():
        nkigym.write_dot(nkigym.tile(WORKLOADS[name].func, shapes), HERE / f"{name}_tiled.svg")
    main_job_timeline(HERE / "kernel_timeline.svg")
    for path in sorted(HERE.glob("*.svg")):
        print(f"wrote {path.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
