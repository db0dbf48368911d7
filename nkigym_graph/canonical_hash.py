"""Canonical, Merkle-style hashing of a program's DAG.

A node's key hashes its op, attributes, accumulation flag, each operand's slices and
the identity of each operand's tensor: the name of a parameter or output, or, for an
on-chip intermediate, the keys of the statements that produced the region read. The
keys of ordering predecessors are folded in too. Intermediate names never enter a key,
and the program key hashes the *sorted* multiset of node keys, so renaming
intermediates or reordering independent statements leaves it unchanged, while any
change of op, slice, parameter, output or dependency changes it. One pass, linear.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from hashlib import blake2b

from nkigym_graph.statement import Statement
from nkigym_graph.targets import Target
from nkigym_graph.variables import INTERMEDIATE, Param, Variable

Incoming = Sequence[Sequence[tuple[int, int]]]
"""Per node, its data producers as ``(source node, operand position)``."""


def node_keys(
    statements: Sequence[Statement],
    variables: Mapping[str, Variable],
    data_in: Incoming,
    order_in: Sequence[Sequence[int]],
) -> list[str]:
    """The Merkle key of every node, in statement order (a topological order)."""
    keys: list[str] = []
    append = keys.append
    text: dict[object, str] = {}  # repr cache: slices and attrs repeat across statements
    internal = {name for name, info in variables.items() if info.kind == INTERMEDIATE}
    for node, stmt in enumerate(statements):
        head = (stmt.op.name, stmt.attrs, stmt.accumulate)
        parts = [text.get(head) or text.setdefault(head, repr(head))]
        incoming = data_in[node]
        for position, (var, slices) in enumerate(stmt.operands):
            if var in internal:
                found = [keys[src] for src, pos in incoming if pos == position]
                ident = "~" + ",".join(sorted(found)) if len(found) > 1 else "~" + "".join(found)
            else:
                ident = var
            parts.append(ident)
            parts.append(text.get(slices) or text.setdefault(slices, repr(slices)))
        if order_in[node]:
            parts.append("after:" + ",".join(sorted(keys[src] for src in order_in[node])))
        append(blake2b("|".join(parts).encode(), digest_size=16).hexdigest())
    return keys


def program_key(
    target: Target,
    params: Sequence[Param],
    outputs: Sequence[Param],
    returns: Sequence[str],
    variables: Mapping[str, Variable],
    keys: Sequence[str],
    writers_of: Callable[[str], Sequence[int]],
) -> str:
    """The program's canonical hash from its node keys."""
    h = blake2b(digest_size=20)
    h.update(f"{target.name}|{tuple(params)!r}|{tuple(outputs)!r}|".encode())
    for var in returns:
        if variables[var].kind == INTERMEDIATE:
            h.update(("~" + ",".join(sorted(keys[n] for n in writers_of(var)))).encode())
        else:
            h.update(f"return {var}".encode())
    h.update("\n".join(sorted(keys)).encode())
    return h.hexdigest()
