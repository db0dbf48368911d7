"""Transforms step by step: data reuse, then operand merges, with a DOT picture per step.

    python examples/transforms.py [OUTPUT_DIR]

Writes step_<n>.dot (and .svg when Graphviz is installed) to OUTPUT_DIR (default: out/).
"""

import shutil
import sys
from pathlib import Path

import numpy as np

import nkigym_graph as nkigym


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    program = nkigym.tile(nkigym.nc_matmul, {"lhs": (128, 256), "rhs": (128, 256)}, dtype=np.float64)
    steps = [("tiled", program)]
    for name in ("data_reuse", "operand_merge"):
        for match in nkigym.analyze(program, name)[:1]:
            print(f"{name}: {match.detail}")
            program = nkigym.apply(program, name, match)
            steps.append((name, program))
    steps.append(("saturated", nkigym.saturate(program)))

    rng = np.random.default_rng(0)
    lhs, rhs = rng.standard_normal((128, 256)), rng.standard_normal((128, 256))
    for index, (label, step) in enumerate(steps):
        assert np.allclose(nkigym.interpret(step, lhs=lhs, rhs=rhs), lhs.T @ rhs)
        suffix = ".svg" if shutil.which("dot") else ".dot"
        path = nkigym.write_dot(step, out / f"step_{index}_{label}{suffix}")
        print(f"step {index} ({label}): {len(step)} statements, hash {step.canonical_hash[:12]} -> {path}")
    print(steps[-1][1])


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "out"))
