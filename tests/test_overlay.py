"""``nkigym_graph.ir.overlay``: a chain of overlays reads like the dict it stands for."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nkigym_graph.ir import overlay
from nkigym_graph.ir.overlay import REMOVED, Overlay, over

# per step: keys to set (with a value) and keys to remove, drawn from a small key space
steps = st.lists(
    st.tuples(
        st.dictionaries(st.integers(0, 60), st.text(max_size=3), max_size=8), st.sets(st.integers(0, 60))
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(base=st.dictionaries(st.integers(0, 60), st.text(max_size=3), max_size=40), path=steps)
def test_a_chain_of_overlays_equals_the_dict_edited_in_turn(
    base: dict[int, str], path: list[tuple[dict[int, str], set[int]]]
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        # small bases are shared, and a few changes already flatten an overlay
        patch.setattr(overlay, "SHARED_FROM", 0)
        patch.setattr(overlay, "FLATTEN_MIN", 6)
        _check_chain(base, path)


def _check_chain(base: dict[int, str], path: list[tuple[dict[int, str], set[int]]]) -> None:
    mapping, expected = base, dict(base)
    frozen = dict(base)
    for changed, removed in path:
        gone = {key for key in removed if key in expected and key not in changed}
        mapping = over(mapping, {**dict.fromkeys(gone, REMOVED), **changed})
        for key in gone:
            del expected[key]
        expected.update(changed)
        assert dict(mapping) == expected
        assert len(mapping) == len(expected)
        assert list(mapping) == list(dict(mapping))
        for key in range(62):
            assert (key in mapping) == (key in expected)
            assert mapping.get(key, "?") == expected.get(key, "?")
            if key not in expected:
                with pytest.raises(KeyError):
                    mapping[key]
    assert base == frozen  # the base is never modified


def test_overlays_share_a_large_base_and_pickle_as_dicts() -> None:
    base = {n: str(n) for n in range(overlay.SHARED_FROM)}
    child = over(base, {3: "three", 5: REMOVED})
    grandchild = over(child, {5: "five"})
    assert isinstance(child, Overlay) and isinstance(grandchild, Overlay)
    assert (child[3], 5 in child, grandchild[5], len(child), len(grandchild)) == (
        "three",
        False,
        "five",
        len(base) - 1,
        len(base),
    )
    assert base[3] == "3" and 5 in base
    restored = pickle.loads(pickle.dumps(child))
    assert type(restored) is dict and restored == dict(child)
