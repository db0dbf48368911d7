"""NKI: tile and saturate a 512x512x512 matmul + tanh, emit the NKI kernel, and run it in
the numpy NKI simulator against numpy.

    python examples/nki_kernel.py [OUTPUT_DIR]
"""

import sys
from pathlib import Path

import numpy as np

import nkigym_graph as nkigym


def matmul_tanh(a, b):
    return nkigym.activation(nkigym.nc_matmul(a, b), op="tanh")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    shapes = {"a": (512, 512), "b": (512, 512)}
    program = nkigym.saturate(nkigym.tile(matmul_tanh, shapes))
    artifact = nkigym.emit_artifact(program, backend="nki")
    path = out / "matmul_tanh_kernel.py"
    path.write_text(artifact.text)
    print(
        f"kernel: {artifact.facts['lines']} lines "
        f"({artifact.facts['lines_unrolled']} before loop rolling) -> {path}"
    )
    print("\n".join(artifact.text.splitlines()[:24]))

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shapes[name]).astype(np.float32) for name in ("a", "b"))
    result, report = nkigym.nki_sim.simulate(artifact.text, a, b, report=True)
    error = np.abs(result - np.tanh(a.astype(np.float64).T @ b)).max()
    print(f"simulated: {report}")
    print(f"max |kernel - numpy| = {error:.1e}")
    assert error < 1e-4


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out"))
