"""One attention head, softmax(q @ k.T / sqrt(d)) @ v (seq 2048, d 128, bf16).

Tile, search, emit an NKI kernel, simulate it against numpy and profile it; emit a Buda
netlist at a small size, check it and evaluate it against numpy.

    python examples/attention.py [OUTPUT_DIR] [--small] [--online] [--causal]

The functions and their numpy references are in ``workloads.py``; ``--small`` (or
``NKIGYM_EXAMPLES=small``) runs the test sizes, ``--online`` tiles softmax rows online,
``--causal`` runs causal attention (no Buda netlist: the mask has no Buda form).
"""

import sys

from workloads import main

if __name__ == "__main__":
    main(["causal_attention" if "--causal" in sys.argv else "attention"], sys.argv[1:])
