"""Weight stitching: three matmuls' weights become one stitched tensor (one circular
buffer instead of three), and the result is unchanged.

    python examples/weight_stitching.py
"""

import numpy as np

import nkigym_graph as nkigym


def three_projections(x, w1, w2, w3):
    """x.T @ w1 + x.T @ w2 + x.T @ w3 (x is [K, M]; each w is [K, N])."""
    q, k, v = nkigym.nc_matmul(x, w1), nkigym.nc_matmul(x, w2), nkigym.nc_matmul(x, w3)
    return nkigym.tensor_tensor(nkigym.tensor_tensor(q, k, op="add"), v, op="add")


def main() -> None:
    shapes = {"x": (64, 32), "w1": (64, 64), "w2": (64, 64), "w3": (64, 64)}
    program = nkigym.tile(three_projections, shapes, dtype=np.float64, target=nkigym.WORMHOLE_B0)
    (match,) = nkigym.analyze(program, "weight_stitch")
    print(f"weight_stitch: {match.detail}")
    stitched = nkigym.apply(program, "weight_stitch", match)
    print(f"parameters: {[p.name for p in program.params]} -> {[p.name for p in stitched.params]}")

    before = nkigym.circular_buffers(program, "wormhole_b0")
    after = nkigym.circular_buffers(stitched, "wormhole_b0")
    print(f"circular buffers: {before.total} -> {after.total} (limit {after.limit})")

    rng = np.random.default_rng(0)
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    stitched_inputs = nkigym.stitch_inputs(stitched, inputs)  # builds the stitched weight tensor
    error = np.abs(nkigym.interpret(stitched, **stitched_inputs) - nkigym.interpret(program, **inputs)).max()
    print(f"max |stitched - original| = {error:.1e}")
    assert error < 1e-12


if __name__ == "__main__":
    main()
