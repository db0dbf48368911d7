"""Walking a netlist's ``programs`` to find which graphs run, in which order.

Read: ``var``/``staticvar`` (a list of names, set to 0, or a map of initial values),
``varinst`` with ``set``, ``add``, ``inc`` and ``incwrap`` (other opcodes are queue-pointer
bookkeeping and are skipped), ``loop: N`` / ``loop: $var`` ... ``endloop`` (nested), and
``execute: {graph_name: G}``; other instructions (``param``, ``allocate_queue``, ...) do
not change which graphs run and are skipped. Every program runs, in file order. A netlist
without programs runs each graph once, in file order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nkigym_graph.buda.errors import NetlistEvaluationError
from nkigym_graph.buda.netlist import Netlist

MAX_EXECUTIONS = 100_000
"""Guard against a runaway loop count."""


def _value(arg: Any, variables: dict[str, int], where: str) -> int:
    if isinstance(arg, bool):
        return int(arg)
    if isinstance(arg, int):
        return arg
    text = str(arg)
    if text.startswith("$"):
        if text not in variables:
            raise NetlistEvaluationError(where, f"variable {text} is used before it is declared")
        return variables[text]
    try:
        return int(text, 0)
    except ValueError as exc:
        raise NetlistEvaluationError(where, f"'{text}' is not a number or $variable") from exc


def _declare(arg: Any, variables: dict[str, int], where: str) -> None:
    if isinstance(arg, Mapping):
        for name, value in arg.items():
            variables[str(name)] = _value(value, variables, where)
    elif isinstance(arg, list):
        for name in arg:
            variables.setdefault(str(name), 0)


def _varinst(arg: Any, variables: dict[str, int], where: str) -> None:
    if not isinstance(arg, list) or len(arg) < 2:
        raise NetlistEvaluationError(where, f"varinst needs [$var, opcode, args...], got {arg!r}")
    target, opcode, args = str(arg[0]), str(arg[1]), [_value(a, variables, where) for a in arg[2:]]
    if opcode == "set" and args:
        variables[target] = args[0]
    elif opcode == "add" and len(args) >= 2:
        variables[target] = args[0] + args[1]
    elif opcode == "inc" and args:
        variables[target] = variables.get(target, 0) + args[0]
    elif opcode == "incwrap" and len(args) >= 2 and args[1]:
        variables[target] = (variables.get(target, 0) + args[0]) % args[1]


def _instructions(netlist: Netlist) -> Iterator[tuple[str, list[Any]]]:
    for program in netlist.programs:
        if not isinstance(program, Mapping):
            raise NetlistEvaluationError("programs", f"each program is a one-key map, got {program!r}")
        for name, body in program.items():
            if not isinstance(body, list):
                raise NetlistEvaluationError(f"program '{name}'", "must be a list of instructions")
            yield str(name), body


def _opcode(item: Any, where: str) -> tuple[str, Any]:
    """An instruction's opcode and argument (None for a bare name)."""
    if not isinstance(item, str | Mapping):
        raise NetlistEvaluationError(where, f"an instruction is a name or a one-key map, got {item!r}")
    return (item, None) if isinstance(item, str) else next(iter(item.items()), ("", None))


def _graph_name(arg: Any, where: str) -> str:
    """The graph an ``execute`` instruction names."""
    graph = arg.get("graph_name") if isinstance(arg, Mapping) else None
    if graph is None:
        raise NetlistEvaluationError(where, "execute needs a graph_name")
    return str(graph)


def _run_program(name: str, body: list[Any]) -> Iterator[str]:
    variables: dict[str, int] = {}
    loops: list[tuple[int, int]] = []  # (index of the first instruction in the loop, runs left)
    pc, executions = 0, 0
    while pc < len(body):
        item, where = body[pc], f"program '{name}', instruction {pc}"
        opcode, arg = _opcode(item, where)
        if opcode in ("var", "staticvar"):
            _declare(arg, variables, where)
        elif opcode == "varinst":
            _varinst(arg, variables, where)
        elif opcode == "loop":
            count = _value(arg, variables, where)
            if count <= 0:
                pc = _skip_loop(body, pc, where)
                continue
            loops.append((pc + 1, count))
        elif opcode == "endloop":
            if not loops:
                raise NetlistEvaluationError(where, "endloop without loop")
            start, left = loops.pop()
            if left > 1:
                loops.append((start, left - 1))
                pc = start
                continue
        elif opcode == "execute":
            graph = _graph_name(arg, where)
            executions += 1
            if executions > MAX_EXECUTIONS:
                raise NetlistEvaluationError(where, f"more than {MAX_EXECUTIONS} graph executions")
            yield graph
        pc += 1


def _skip_loop(body: list[Any], pc: int, where: str) -> int:
    depth = 0
    for index in range(pc, len(body)):
        item = body[index]
        opcode = item if isinstance(item, str) else next(iter(item), "")
        depth += {"loop": 1, "endloop": -1}.get(opcode, 0)
        if depth == 0:
            return index + 1
    raise NetlistEvaluationError(where, "loop without endloop")


def graph_runs(netlist: Netlist) -> Iterator[str]:
    """The graph names executed by the netlist's programs, in order."""
    if not netlist.programs:
        yield from netlist.graphs
        return
    for name, body in _instructions(netlist):
        yield from _run_program(name, body)


def executes(netlist: Netlist) -> Iterator[tuple[str, str]]:
    """``(place, graph name)`` of every ``execute`` instruction, in file order, read without
    running the programs (a loop's count does not matter); raises
    :class:`NetlistEvaluationError` for a malformed program or instruction."""
    for name, body in _instructions(netlist):
        for pc, item in enumerate(body):
            where = f"program '{name}', instruction {pc}"
            opcode, arg = _opcode(item, where)
            if opcode == "execute":
                yield where, _graph_name(arg, where)
