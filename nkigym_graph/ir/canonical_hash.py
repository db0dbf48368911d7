"""Canonical, Merkle-style hashing of a program's DAG.

A node's key hashes its op, attributes, accumulation flag, each operand's slices and
the identity of each operand's tensor: the name of a parameter or output, or, for an
on-chip intermediate, the keys of the statements that produced the region read. A read
of an output (a program that reads back what it stored) adds the keys of the stores it
reads, so which store a read sees is part of the key. The
keys of ordering predecessors are folded in too. Intermediate names never enter a key,
and the program key hashes the *sorted* multiset of node keys, so renaming
intermediates or reordering independent statements leaves it unchanged, while any
change of op, slice, parameter, output or dependency changes it. One pass, linear.

The multiset enters the program key as the sum of the node keys (128-bit numbers) modulo
2**128 (``key_sum``): a sum of hash outputs is a multiset hash, and a derived snapshot
updates it from its parent's with the keys that changed, without visiting the others.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from hashlib import blake2b

from nkigym_graph.ir import overlay
from nkigym_graph.ir.dependencies import Use
from nkigym_graph.ir.overlay import REMOVED, Overlay, over
from nkigym_graph.ir.statement import StatementsById
from nkigym_graph.ir.targets import Target
from nkigym_graph.ir.variables import INTERMEDIATE, Param, Variable

DataIn = Mapping[int, Sequence[tuple[int, Use]]]
"""Per node id, its data edges as ``(source node, use)``."""
OrderIn = Mapping[int, Sequence[tuple[int, str]]]
"""Per node id, its ordering edges as ``(earlier node, variable)``."""


_TEXT: dict[object, str] = {}
"""``repr`` of slices, shared by every key computation (they repeat across statements and
across snapshots)."""
_HEADS: dict[tuple[str, int, bool], tuple[object, str]] = {}
"""``repr`` of statement heads by op name, the identity of the attributes tuple (held in
the entry, so the identity is not reused) and the accumulation flag. Not by equal
attributes: ``2 == 2.0`` and ``0.0 == -0.0``, whose texts differ, would share one text,
and a hash would depend on which was hashed first."""
_TEXT_LIMIT = 200_000
"""Entries ``_TEXT`` and ``_HEADS`` hold before they start afresh."""


class _KeyMaker:
    """Computes node keys one at a time (shared by the full and incremental passes)."""

    def __init__(self, statements: StatementsById, variables: Mapping[str, Variable]) -> None:
        self.statements = statements
        self.variables = variables
        self.internal: dict[str, bool] = {}  # variable -> is an on-chip intermediate
        if len(_TEXT) > _TEXT_LIMIT:
            _TEXT.clear()
        if len(_HEADS) > _TEXT_LIMIT:
            _HEADS.clear()
        self.text = _TEXT
        self.heads = _HEADS

    def key(
        self,
        node: int,
        data_in: Sequence[tuple[int, Use]],
        order_in: Sequence[tuple[int, str]],
        keys: Mapping[int, str],
    ) -> str:
        stmt = self.statements[node]
        text, internal = self.text, self.internal
        attrs = stmt.attrs
        known = self.heads.get((stmt.op.name, id(attrs), stmt.accumulate))
        if known is None or known[0] is not attrs:
            known = self.heads[(stmt.op.name, id(attrs), stmt.accumulate)] = (
                attrs,
                repr((stmt.op.name, attrs, stmt.accumulate)),
            )
        parts = [known[1]]
        read: dict[int, list[str]] = {}  # operand position -> keys of its producers, in edge order
        for src, use in data_in:
            found = read.get(use.position)
            if found is None:
                read[use.position] = [keys[src]]
            else:
                found.append(keys[src])
        for position, (var, slices) in enumerate(stmt.operands):
            inside = internal.get(var)
            if inside is None:
                info = self.variables.get(var)
                inside = internal[var] = info is not None and info.kind == INTERMEDIATE
            found = read.get(position)
            if inside:
                if found is None:
                    parts.append("~")
                else:
                    parts.append("~" + (",".join(sorted(found)) if len(found) > 1 else found[0]))
            elif found is None:
                parts.append(var)
            else:  # an output read back: which stores it reads
                parts.append(var + "~" + ",".join(sorted(found)))
            parts.append(text.get(slices) or text.setdefault(slices, repr(slices)))
        if order_in:
            sources = {src for src, _ in data_in}
            after = {src for src, _ in order_in if src not in sources}
            if after:
                parts.append("after:" + ",".join(sorted([keys[src] for src in after])))
        return blake2b("|".join(parts).encode(), digest_size=16).hexdigest()


def node_keys(
    statements: StatementsById,
    variables: Mapping[str, Variable],
    data_in: DataIn,
    order_in: OrderIn,
    nodes: Iterable[int] | None = None,
) -> dict[int, str]:
    """The Merkle key of every node (id -> key), computed over ``nodes`` in program
    order (a topological order; default ``0 .. len(statements) - 1``)."""
    maker = _KeyMaker(statements, variables)
    keys: dict[int, str] = {}
    for node in range(len(data_in)) if nodes is None else nodes:
        keys[node] = maker.key(node, data_in[node], order_in[node], keys)
    return keys


def derived_node_keys(
    statements: StatementsById,
    variables: Mapping[str, Variable],
    data_in: DataIn,
    order_in: OrderIn,
    parent_keys: Mapping[int, str],
    removed: Iterable[int],
    dirty: Iterable[int],
    candidates: Callable[[int], Iterable[int]],
    order_key: Callable[[int], int],
    parent_sum: int,
) -> tuple[Mapping[int, str], int]:
    """``node_keys`` of a program derived from a parent whose keys (and their
    ``key_sum``, ``parent_sum``) are known, and their ``key_sum``: a node keeps its
    parent's key (statements keep their ids) unless it is ``dirty`` or reads from or is
    ordered after a node whose key changed; ``removed`` nodes lose theirs.

    Work proceeds from the dirty nodes in program order (``order_key``); when a key
    changes, the nodes that may depend on it (``candidates(node)``: a superset of its
    successors, e.g. every later statement mentioning one of its variables) are
    revisited if they have an edge from it. Untouched nodes are never visited."""
    maker = _KeyMaker(statements, variables)
    total, gone = parent_sum, list(removed)
    shared = len(parent_keys) >= overlay.SHARED_FROM
    changes: dict[int, str]
    keys: Mapping[int, str]
    if shared:  # the child's keys are an overlay of the changes on the parent's
        changes = dict.fromkeys(gone, REMOVED)
        keys = Overlay(parent_keys, changes)  # reads through the changes made so far
    else:  # a small parent's keys are copied and changed in the copy
        changes = parent_keys.copy() if isinstance(parent_keys, dict) else dict(parent_keys)
        keys = changes
        for node in gone:
            del changes[node]
    for node in gone:
        total -= int(parent_keys[node], 16)
    queue = sorted((order_key(node), node) for node in set(dirty))  # ascending: already a heap
    queued = {node for _, node in queue}
    while queue:
        _, node = heapq.heappop(queue)
        key = maker.key(node, data_in[node], order_in[node], keys)
        old = keys.get(node)
        if key == old:
            continue
        changes[node] = key
        total += int(key, 16) - (int(old, 16) if old is not None else 0)
        for later in candidates(node):
            if later not in queued and _has_edge_from(node, data_in[later], order_in[later]):
                queued.add(later)
                heapq.heappush(queue, (order_key(later), later))
    return over(parent_keys, changes) if shared else keys, total % KEY_MODULUS


KEY_MODULUS = 2**128
"""Node keys are 128-bit numbers (hex digests of 16 bytes); their sum is taken modulo this."""


def key_sum(keys: Iterable[str]) -> int:
    """The multiset hash of node keys: their sum modulo ``KEY_MODULUS``."""
    return sum(int(key, 16) for key in keys) % KEY_MODULUS


def _has_edge_from(
    node: int, data_in: Sequence[tuple[int, Use]], order_in: Sequence[tuple[int, str]]
) -> bool:
    for edges in (data_in, order_in):  # loops: a few edges each, any() of a generator costs more
        for src, _ in edges:
            if src == node:
                return True
    return False


def program_key(
    target: Target,
    params: Sequence[Param],
    outputs: Sequence[Param],
    returns: Sequence[str],
    variables: Mapping[str, Variable],
    keys: Mapping[int, str],
    writers_of: Callable[[str], Sequence[int]],
    total: int,
) -> str:
    """The program's canonical hash from its node keys and their ``key_sum`` (``total``)."""
    h = blake2b(digest_size=20)
    h.update(f"{target.name}|{tuple(params)!r}|{tuple(outputs)!r}|".encode())
    for var in returns:
        if variables[var].kind == INTERMEDIATE:
            h.update(("~" + ",".join(sorted(keys[n] for n in writers_of(var)))).encode())
        else:
            h.update(f"return {var}".encode())
    h.update(f"|{len(keys)}|{total:032x}".encode())
    return h.hexdigest()
