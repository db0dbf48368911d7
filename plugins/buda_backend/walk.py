"""Depth-first post-order without recursion (chains of ops can be long)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def post_order(roots: Iterable[T], children: Callable[[T], Sequence[T]]) -> list[T]:
    """Every node reachable from ``roots``, each after its children (visited in the given order).

    >>> post_order([3], lambda n: [n - 1, n - 2] if n > 1 else [])
    [1, 0, 2, 3]
    """
    order: list[T] = []
    seen: set[T] = set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(children(root)))]
        while stack:
            node, pending = stack[-1]
            for child in pending:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(children(child))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order
