"""The main job (``./run main``): parse the seed 002 tiled matmul, verify it, check it
against numpy, write its DOT picture and print its canonical hash."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import numpy as np

from nkigym_graph import interpret, parse_program, write_dot

SEED_002 = """
def tiled_matmul(a, b):
    output = nkigym.ndarray((256, 256), dtype=np.float64)
    tensor_0 = a[0:128, 0:128]
    tensor_1 = b[0:128, 0:128]
    tensor_2 = nkigym.nc_matmul(tensor_0[0:128, 0:128], tensor_1[0:128, 0:128])
    output[0:128, 0:128] = tensor_2[0:128, 0:128]
    tensor_3 = a[0:128, 0:128]
    tensor_4 = b[0:128, 128:256]
    tensor_5 = nkigym.nc_matmul(tensor_3[0:128, 0:128], tensor_4[0:128, 0:128])
    output[0:128, 128:256] = tensor_5[0:128, 0:128]
    return output
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./run main", description=__doc__)
    parser.add_argument("--out", default="out", help="output folder (default: out/)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    program = parse_program(SEED_002)  # parsing verifies: a bad program raises here
    rng = np.random.default_rng(0)
    a = rng.standard_normal(program.parameter("a").shape)
    b = rng.standard_normal(program.parameter("b").shape)
    expected = np.zeros((256, 256))
    expected[:128, :256] = a.T @ b
    error = float(np.abs(interpret(program, a=a, b=b) - expected).max())
    if error > 1e-9:
        raise SystemExit(f"numeric check FAILED: max |error| = {error:.3e}")
    pictures = [write_dot(program, out / "seed_002.dot")]
    if shutil.which("dot"):
        pictures.append(write_dot(program, out / "seed_002.svg"))
    (out / "seed_002.nkg").write_text(program.to_source())
    print(f"program        {program.name}: {len(program)} statements, verified")
    print(f"numeric check  max |interpret - numpy| = {error:.1e} (float64)")
    print(f"canonical hash {program.canonical_hash}")
    print(f"written        {', '.join(str(p) for p in pictures)}, {out / 'seed_002.nkg'}")
    print(f"time           {time.perf_counter() - start:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
