"""``nkigym-graph``: the command-line entry point (also ``python -m nkigym_graph``).

Commands chain through program files (``.nkg``)::

    nkigym-graph tile kernels.py:matmul --shape lhs=1024x1024 --shape rhs=1024x1024 -o p.nkg
    nkigym-graph search p.nkg -o best.nkg
    nkigym-graph emit best.nkg --backend nki -o kernel.py
    nkigym-graph profile kernel.py --shape a=1024x1024 --shape b=1024x1024 --trace kernel.json

Exit codes: 0 success, 1 a check failed (netlist violations, simulation mismatch),
2 a usage or input error (one line on stderr), 3 an internal error (a bug: one line), 130
interrupted. ``--debug`` prints the traceback before the line; the exit code is the same.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from nkigym_graph.cli import commands, profile_command
from nkigym_graph.errors import NkigymError
from nkigym_graph.foreign_errors import describe


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    from nkigym_graph import __version__
    from nkigym_graph.cli.inputs import (
        emit_dtype,
        non_negative_int,
        output_file,
        positive_int,
        positive_seconds,
    )
    from nkigym_graph.cli.kernel_process import add_limit_arguments
    from nkigym_graph.dot.folding import AUTO_FOLD_ABOVE, AUTO_FOLD_WIDER_THAN, FOLDS
    from nkigym_graph.ir.dtypes import ALIASES, choices
    from nkigym_graph.plugin.transforms import DEFAULT_PIPELINE
    from nkigym_graph.search import STRATEGIES
    from nkigym_graph.tiling.arguments import MAX_STATEMENTS

    parser = _Parser(
        prog="nkigym-graph",
        description="Tile, rewrite, search and emit kernels for AI accelerators.",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 a usage or input error, 3 an internal error.",
    )
    parser.add_argument("--version", action="version", version=f"nkigym-graph {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("tile", help="tile a Python function: FILE.py:FUNC (the file is run as Python)")
    p.add_argument("function", metavar="FILE.py:FUNC")
    p.add_argument("--shape", action="append", metavar="NAME=DIMxDIM", help="a parameter's shape (repeat)")
    aliases = ", ".join(f"{a}={n}" for a, n in ALIASES.items() if a in ("bf16", "fp32", "fp16", "fp64"))
    p.add_argument("--dtype", default="float32", help=f"{choices()} (default float32; aliases {aliases})")
    targets = "trn2 (default), trn1, grayskull, wormhole_b0, blackhole, or a target a plugin registers"
    p.add_argument("--target", default="trn2", help=targets)
    p.add_argument(
        "--max-statements",
        type=positive_int,
        default=MAX_STATEMENTS,
        help=f"refuse a tiled program larger than this (default {MAX_STATEMENTS:,})",
    )
    p.add_argument(
        "--online",
        action="store_true",
        help="compute a row maximum and the sums of the exponentials it shifts (softmax, attention) "
        "in one pass over the row: a running maximum, rescaled sums (tile(..., online=True))",
    )
    p.add_argument("-o", "--output", type=output_file, help="program file to write (default: stdout)")
    p.set_defaults(run=commands.tile)

    p = sub.add_parser("ops", help="list the ops and the functions their op= takes")
    p.set_defaults(run=commands.ops)

    p = sub.add_parser("transforms", help="list the registered transforms")
    p.set_defaults(run=commands.transforms)

    p = sub.add_parser("saturate", help="apply transforms to a fixpoint")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument("--transforms", help=f"comma-separated names (default: {','.join(DEFAULT_PIPELINE)})")
    p.add_argument("-o", "--output", type=output_file)
    p.set_defaults(run=commands.saturate)

    p = sub.add_parser("search", help="search rewrite sequences for the best program")
    p.add_argument("program", metavar="PROGRAM.nkg")
    strategies = ", ".join(f"{name} (default)" if name == "greedy" else name for name in STRATEGIES)
    p.add_argument("--strategy", default="greedy", help=strategies)
    p.add_argument("--budget", type=positive_int, default=200, help="states to explore (default 200)")
    p.add_argument(
        "--seconds",
        type=positive_seconds,
        help="wall-clock limit: return the best found so far when it passes (default: none)",
    )
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument(
        "--workers", type=positive_int, help="evaluate states in N processes (default: in this one)"
    )
    p.add_argument("--transforms", help="comma-separated names (default: the strategy's)")
    progress = p.add_mutually_exclusive_group()
    progress.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show progress (default: on a terminal; redrawn there, plain lines elsewhere)",
    )
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument(
        "--no-confirm",
        dest="confirm",
        action="store_false",
        help="do not emit and check the best program with its target's backend (NKI kernel or Buda netlist)",
    )
    p.add_argument("-o", "--output", type=output_file)
    p.set_defaults(run=commands.search)

    p = sub.add_parser("emit", help="emit a kernel (nki) or a netlist (buda)")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument("--backend", default="nki")
    p.add_argument("--arch", help="buda: grayskull, wormhole_b0 (default) or blackhole")
    p.add_argument(
        "--df",
        help="buda: data format of queues and op data: Bfp8_b, Float16_b, Float16 or Float32, in any "
        "case (default: the program's dtype)",
    )
    p.add_argument(
        "--dtype",
        type=emit_dtype,
        help="nki: the kernel's dtype (default: the program's; a float64 program needs one, e.g. fp32)",
    )
    p.add_argument("-o", "--output", type=output_file)
    p.set_defaults(run=commands.emit)

    p = sub.add_parser(
        "simulate",
        help="run an NKI kernel file (Python, in a limited child process) on random inputs and check it",
    )
    p.add_argument("kernel", metavar="KERNEL.py")
    p.add_argument("--program", help="reference program file: compare with its interpretation")
    p.add_argument("--shape", action="append", metavar="NAME=DIMxDIM")
    p.add_argument("--seed", type=non_negative_int, default=0)
    add_limit_arguments(p)
    p.set_defaults(run=commands.simulate)

    profile_command.add_parser(sub)

    p = sub.add_parser(
        "check-netlist",
        help="check a Buda netlist against the fused-op rules",
        description="Check a Buda netlist. Errors (what the real backend rejects) fail the check; "
        "--strict fails on warnings too (documented, checked by no backend code).",
    )
    p.add_argument("netlist", metavar="NETLIST.yaml", nargs="?")
    p.add_argument("--arch")
    p.add_argument("--strict", action="store_true", help="fail on warnings as well as errors")
    p.add_argument(
        "--min-severity",
        choices=("info", "warning", "error"),
        help="least severity to print (default: warning; info adds notes on retired rules)",
    )
    p.add_argument(
        "--rules",
        action="store_true",
        help="print every rule with its severity, enforcement and backend reference, and exit",
    )
    p.set_defaults(run=commands.check_netlist)

    p = sub.add_parser("dot", help="write a DOT picture of a program (.dot, .svg, .png)")
    p.add_argument("program", metavar="PROGRAM.nkg")
    p.add_argument(
        "--fold",
        default="auto",
        metavar="|".join(FOLDS),
        help=f"group statements (default auto: by output tile above {AUTO_FOLD_ABOVE} statements or "
        f"with more than {AUTO_FOLD_WIDER_THAN} side by side)",
    )
    p.add_argument("--expand", action="store_true", help="draw folded groups as clusters of their statements")
    p.add_argument("--diff", metavar="AFTER.nkg", help="picture what changed from PROGRAM to AFTER")
    p.add_argument("-o", "--output", type=output_file)
    p.set_defaults(run=commands.dot)

    p = sub.add_parser("plugins", help="list loaded plugins and where each came from")
    p.set_defaults(run=commands.plugins)
    for command in sub.choices.values():  # --debug after the command, too
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (never raises; ``--debug`` adds tracebacks)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error already printed
        return done.code if isinstance(done.code, int) else 2
    try:
        return int(args.run(args))
    except (NkigymError, OSError, ValueError, RecursionError, MemoryError) as err:
        _fail(args, str(err) if isinstance(err, NkigymError) else describe(err))
        return 2
    except KeyboardInterrupt:
        _fail(args, "interrupted")
        return 130
    except Exception as err:  # a bug: still one line
        hint = "" if args.debug else " (run with --debug for the traceback)"
        _fail(args, f"internal error: {describe(err)}{hint}")
        return 3


def _fail(args: argparse.Namespace, message: str) -> None:
    """The error's one line on stderr, after its traceback with ``--debug``."""
    if args.debug:
        traceback.print_exc()
    line = " ".join(message.split())
    print(f"nkigym-graph {args.command}: error: {line}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
