"""Successor candidates: single matches, batches, fixpoints, and the back-off parts of a
batch that greedy and beam search try when a whole batch does not pay."""

from __future__ import annotations

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.rewriting.rewrite import select_non_conflicting
from nkigym_graph.rewriting.transform import Match, Transform
from nkigym_graph.search.derive import backoff, candidates_of, derive, span

ROOT = tiled_matmul(512, 256, 512)
REUSE = ng.get_transform("data_reuse")
MERGE = ng.get_transform("operand_merge")


def test_modes_offer_single_matches_batches_fixpoints_and_fine_batches() -> None:
    singles = candidates_of(ROOT, REUSE, "single")
    assert [c.matches for c in singles] == [(m,) for m in ng.analyze(ROOT, "data_reuse")]
    whole, fixpoint = candidates_of(ROOT, MERGE, "batch")
    assert not whole.saturate and fixpoint.saturate and whole.matches == fixpoint.matches
    (fine,) = candidates_of(ROOT, MERGE, "fine")
    assert list(fine.matches) == select_non_conflicting(ng.analyze(ROOT, "operand_merge"))


def test_a_fixpoint_candidate_runs_the_transform_until_it_has_no_match() -> None:
    whole, fixpoint = candidates_of(ROOT, MERGE, "batch")
    once, batches = derive(ROOT, MERGE, whole.matches)
    done, all_batches = derive(ROOT, MERGE, fixpoint.matches, saturate=True)
    assert len(batches) == 1 and len(all_batches) > 1 and all_batches[0] == batches[0]
    assert len(done) < len(once) < len(ROOT)
    assert not ng.analyze(done, "operand_merge")
    assert done == ng.saturate(ROOT, ["operand_merge"])


def test_back_off_parts_shrink_and_end() -> None:
    # every load absorbed into the first of its region: matches spanning short and long distances
    matches = tuple(select_non_conflicting(ng.get_transform("data_reuse").analyze_batch(ROOT)))
    assert backoff(ROOT, matches, 0) == [matches]
    halvings = 1
    while parts := backoff(ROOT, matches, halvings):
        assert all(0 < len(part) < len(matches) and set(part) < set(matches) for part in parts)
        halvings += 1
    assert halvings > 2
    first_half, local = backoff(ROOT, matches, 1)
    assert first_half == matches[: len(matches) // 2]
    assert max(span(ROOT, m) for m in local) <= max(span(ROOT, m) for m in matches) / 2


class _Custom(Transform):
    """A transform with its own rewrite: it cannot be batched."""

    name = "custom"

    def analyze(self, program: ng.Program) -> list[Match]:
        return REUSE.analyze(program)[:2]

    def rewrite(self, program: ng.Program, match: Match) -> ng.Program:
        return REUSE.rewrite(program, match)


def test_a_transform_with_its_own_rewrite_offers_single_matches_in_every_mode() -> None:
    for mode in ("single", "batch", "fine"):
        assert [len(c.matches) for c in candidates_of(ROOT, _Custom(), mode)] == [1, 1]
