"""A cache handed down along derivations answers as a fresh copy with the changed owners dropped would."""

from __future__ import annotations

import random

from nkigym_graph.rewriting.patterns.inherited import FLATTEN, Inherited


def test_a_long_chain_of_children_answers_as_copies_would() -> None:
    rng = random.Random(3)
    cache = Inherited[tuple[int, str], int](lambda key: key[0])
    expected: dict[tuple[int, str], int] = {}
    for node in range(300):
        for axis in ("free", "partition"):
            cache.put((node, axis), node)
            expected[(node, axis)] = node
    value = 1000
    for _ in range(3 * FLATTEN // 10):  # past FLATTEN changed owners: flattened on the way
        changed = set(rng.sample(range(300), 10))
        cache = cache.handed_down(changed)
        expected = {key: v for key, v in expected.items() if key[0] not in changed}
        for node in rng.sample(sorted(changed), 5):
            value += 1
            cache.put((node, "free"), value)
            expected[(node, "free")] = value
        probe = [(node, axis) for node in range(300) for axis in ("free", "partition")]
        assert {key: v for key in probe if (v := cache.get(key, None)) is not None} == expected
