"""RMS norm + matmul, rmsnorm(x) @ w (2048^3, bf16): the predecessor's workload.

Tile, search, emit an NKI kernel, simulate it against numpy and profile it; emit a Buda
netlist at a small size, check it and evaluate it against numpy.

    python examples/rmsnorm_matmul.py [OUTPUT_DIR] [--small] [--online]

The functions and their numpy references are in ``workloads.py``; ``--small`` (or
``NKIGYM_EXAMPLES=small``) runs the test sizes, ``--online`` tiles softmax rows online.
"""

import sys

from workloads import main

if __name__ == "__main__":
    main(["rmsnorm_matmul"], sys.argv[1:])
