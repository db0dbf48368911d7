"""Tenstorrent: emit a Buda netlist with fused ops for relu(a.T @ b + bias), check it
against the NET2HLKS fused-op rules, and evaluate it in numpy.

    python examples/buda_netlist.py [OUTPUT_DIR]
"""

import sys
from pathlib import Path

import numpy as np

import nkigym_graph as nkigym
from nkigym_graph_plugins.buda_backend import run_netlist


def matmul_bias_relu(a, b, bias):
    return nkigym.activation(nkigym.tensor_tensor(nkigym.nc_matmul(a, b), bias, op="add"), op="relu")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    shapes = {"a": (128, 64), "b": (128, 96), "bias": (64, 96)}
    program = nkigym.tile(matmul_bias_relu, shapes, target=nkigym.WORMHOLE_B0)
    artifact = nkigym.emit_artifact(program, backend="buda", arch="wormhole_b0")
    path = out / "matmul_bias_relu.yaml"
    path.write_text(artifact.text)
    facts = artifact.facts
    print(
        f"netlist: {facts['ops']} graph op(s), {facts['fused_ops']} fused op(s) "
        f"with {facts['sub_ops']} sub-ops, "
        f"{facts['circular_buffers']} circular buffers (limit {facts['circular_buffer_limit']}) -> {path}"
    )

    violations = nkigym.check_netlist(path)
    print(f"fused-op rules: {len(violations)} violation(s)")
    assert not violations

    rng = np.random.default_rng(0)
    inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    (result,) = run_netlist(artifact, inputs).values()
    error = np.abs(result - nkigym.interpret(program, **inputs)).max()
    print(f"max |netlist - program| = {error:.1e}")
    assert error < 1e-3


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out"))
