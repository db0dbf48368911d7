"""``nkigym-graph``: the command-line entry point.

Commands chain through program files (``.nkg``)::

    nkigym-graph tile kernels.py:matmul --shape lhs=1024x1024 --shape rhs=1024x1024 -o p.nkg
    nkigym-graph search p.nkg -o best.nkg
    nkigym-graph emit best.nkg --backend nki -o kernel.py
    nkigym-graph profile kernel.py --shape a=1024x1024 --shape b=1024x1024 --trace kernel.json

Exit codes: 0 success, 1 a check failed (netlist violations, simulation mismatch),
2 a usage or input error (one line on stderr; ``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nkigym_graph.cli import commands, profile_command
from nkigym_graph.errors import NkigymError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nkigym-graph", description="Tile, rewrite, search and emit kernels for AI accelerators."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("tile", help="tile a Python function: FILE.py:FUNC")
    p.add_argument("function", metavar="FILE.py:FUNC")
    p.add_argument("--shape", action="append", metavar="NAME=DIMxDIM", help="a parameter's shape (repeat)")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--target", default="trn2", help="trn2 (default), trn1, grayskull, wormhole_b0, blackhole")
    p.add_argument("-o", "--output", help="program file to write (default: stdout)")
    p.set_defaults(run=commands.tile)

    p = sub.add_parser("transforms", help="list the registered transforms")
    p.set_defaults(run=commands.transforms)

    p = sub.add_parser("saturate", help="apply transforms to a fixpoint")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument("--transforms", help="comma-separated names (default: data_reuse,operand_merge,dead_code)")
    p.add_argument("-o", "--output")
    p.set_defaults(run=commands.saturate)

    p = sub.add_parser("search", help="search rewrite sequences for the best program")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument("--strategy", default="greedy", help="greedy (default), beam, random, exhaustive")
    p.add_argument("--budget", type=int, default=200, help="states to explore (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=0, help="evaluate states in N processes")
    p.add_argument("--transforms", help="comma-separated names")
    progress = p.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None)
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("-o", "--output")
    p.set_defaults(run=commands.search)

    p = sub.add_parser("emit", help="emit a kernel (nki) or a netlist (buda)")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument("--backend", default="nki")
    p.add_argument("--arch", help="buda: grayskull, wormhole_b0 (default) or blackhole")
    p.add_argument("-o", "--output")
    p.set_defaults(run=commands.emit)

    p = sub.add_parser("simulate", help="run an NKI kernel file on random inputs and check it")
    p.add_argument("kernel", metavar="KERNEL.py")
    p.add_argument("--program", help="reference program file: compare with its interpretation")
    p.add_argument("--shape", action="append", metavar="NAME=DIMxDIM")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=commands.simulate)

    profile_command.add_parser(sub)

    p = sub.add_parser("check-netlist", help="check a Buda netlist against the fused-op rules")
    p.add_argument("netlist", metavar="NETLIST.yaml")
    p.add_argument("--arch")
    p.set_defaults(run=commands.check_netlist)

    p = sub.add_parser("dot", help="write a DOT picture of a program (.dot, .svg, .png)")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument("-o", "--output")
    p.set_defaults(run=commands.dot)

    p = sub.add_parser("plugins", help="list loaded plugins and where each came from")
    p.set_defaults(run=commands.plugins)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (NkigymError, OSError, ValueError) as err:
        if args.debug:
            raise
        print(f"nkigym-graph {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
