"""Search options: progress display, and clear errors for bad arguments."""

from __future__ import annotations

import io

import pytest

from nkigym_graph.program import Program
from nkigym_graph.search import SearchError, search
from nkigym_graph.search.progress import Progress
from nkigym_graph.synthetic import tiled_matmul
from nkigym_graph.transform import Edit, Match, Transform

ROOT = tiled_matmul(256, 256, 256)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_silent_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    search(ROOT, strategy="random", budget=10)
    assert capsys.readouterr().err == ""


def test_progress_can_be_forced(capsys: pytest.CaptureFixture[str]) -> None:
    search(ROOT, strategy="random", budget=10, progress=True)
    err = capsys.readouterr().err
    assert "search random:" in err and "states" in err and "best" in err and "states/s" in err
    assert err.endswith("\n")


def test_progress_shows_on_a_terminal_and_can_be_switched_off() -> None:
    shown, hidden = _Terminal(), _Terminal()
    Progress("search", None, shown).update(3, 1, 2e-6, force=True)
    Progress("search", False, hidden).update(3, 1, 2e-6, force=True)
    assert "3 states (1 duplicates), best 2.00 us modeled" in shown.getvalue()
    assert hidden.getvalue() == ""


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"strategy": "annealing"},
            "unknown search strategy 'annealing'; known: beam, exhaustive, greedy, random",
        ),
        (
            {"strategy": "greedy", "width": 3},
            r"strategy 'greedy' has no option\(s\) \['width'\]; it accepts: batch=True",
        ),
        ({"verify": "some"}, r"verify must be one of \('sampled', 'all'\)"),
        ({"budget": 0}, "budget must be a positive integer, got 0"),
        ({"workers": -1}, "workers must be a positive integer"),
        ({"executor": "cluster"}, "executor must be None, 'process' or a concurrent.futures.Executor"),
        ({"transforms": ()}, "needs at least one transform"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(SearchError, match=message):
        search(ROOT, **kwargs)


def test_an_unknown_transform_is_named() -> None:
    with pytest.raises(Exception, match="unknown transform 'fuse_all'"):
        search(ROOT, ("data_reuse", "fuse_all"))


class _Crashing(Transform):
    """A transform whose rewrite has a bug."""

    name = "crashing"

    def analyze(self, program: Program) -> list[Match]:
        return [Match(self.name, (0,), Edit(), program_hash=program.canonical_hash)]

    def rewrite(self, program: Program, match: Match) -> Program:
        raise KeyError("boom")


def test_a_failing_rewrite_is_named_with_the_state() -> None:
    with pytest.raises(
        SearchError,
        match=r"transform 'crashing' failed on state \w{12} \(depth 0\): .*in rewrite: KeyError: 'boom'",
    ):
        search(ROOT, (_Crashing(),))
