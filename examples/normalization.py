"""Layer norm and RMS norm of 4096 x 4096 fp32 rows (with their weights).

Tile, search, emit an NKI kernel, simulate it against numpy and profile it; emit a Buda
netlist at a small size, check it and evaluate it against numpy.

    python examples/normalization.py [OUTPUT_DIR] [--small] [--online]

The functions and their numpy references are in ``workloads.py``; ``--small`` (or
``NKIGYM_EXAMPLES=small``) runs the test sizes, ``--online`` tiles softmax rows online.
"""

import sys

from workloads import main

if __name__ == "__main__":
    main(["layernorm", "rmsnorm"], sys.argv[1:])
