"""Search options: progress display, and clear errors for bad arguments."""

from __future__ import annotations

import io

import pytest

from nkigym_graph.ir.program import Program
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.rewriting.transform import Edit, Match, Transform
from nkigym_graph.search import SearchError, search
from nkigym_graph.search.progress import Progress

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
        ({"budget": 0}, "budget must be an integer >= 1, got 0"),
        ({"budget": -5}, "budget must be an integer >= 1, got -5"),
        ({"budget": True}, "budget must be an integer >= 1, got bool True"),
        ({"budget": 2.5}, "budget must be an integer >= 1, got float 2.5"),
        ({"workers": -1}, "workers must be an integer >= 1, got -1"),
        ({"workers": True}, "workers must be an integer >= 1, got bool True"),
        ({"executor": "cluster"}, "executor must be None, 'process' or a concurrent.futures.Executor"),
        ({"transforms": ()}, "needs at least one transform"),
        ({"transforms": 5}, "transforms must be a list of transform names .* got int 5"),
        ({"transforms": "data_reuse"}, "transforms must be a list .* got str 'data_reuse'"),
        ({"transforms": [5]}, "transforms entries must be names or Transform instances, got int 5"),
        (
            {"transforms": ["nope"]},
            "transforms: unknown transform 'nope'; registered transforms: .*data_reuse",
        ),
        ({"seconds": 0}, "seconds must be a number of seconds > 0, got 0"),
        ({"seconds": -2.5}, "seconds must be a number of seconds > 0, got -2.5"),
        ({"seconds": float("nan")}, "seconds must be a number of seconds > 0, got nan"),
        ({"seconds": float("inf")}, "seconds must be a number of seconds > 0, got inf"),
        ({"seconds": True}, "seconds must be a number of seconds > 0, got bool True"),
        ({"seconds": "10"}, "seconds must be a number of seconds > 0, got str '10'"),
        ({"seconds": 10**400}, "seconds must be a number of seconds > 0, got an int of 1329 bits"),
        ({"seed": -1}, "seed must be an integer >= 0, got -1"),
        ({"seed": "x"}, "seed must be an integer >= 0, got str 'x'"),
        ({"samples": 0}, "samples must be an integer >= 1, got 0"),
        ({"memo_bytes": -1}, "memo_bytes must be an integer >= 0, got -1"),
        ({"strategy": "beam", "width": "x"}, "beam option width must be an integer >= 1, got str 'x'"),
        ({"strategy": "beam", "width": 0}, "beam option width must be an integer >= 1, got 0"),
        ({"strategy": "beam", "width": -1}, "beam option width must be an integer >= 1, got -1"),
        ({"strategy": "beam", "batch": "yes"}, "beam option batch must be True or False, got str 'yes'"),
        ({"strategy": "random", "min_depth": -1}, "random option min_depth must be an integer >= 0"),
        ({"strategy": "random", "round_size": 0}, "random option round_size must be an integer >= 1"),
        ({"strategy": ["greedy"]}, "unknown search strategy \\['greedy'\\]"),
        ({"verify": ["all"]}, "verify must be one of"),
        ({"progress": "x"}, "progress must be None, True or False, got str 'x'"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(SearchError, match=message):
        search(ROOT, **kwargs)


def test_a_program_is_required() -> None:
    with pytest.raises(SearchError, match=r"program must be a Program .* got NoneType None"):
        search(None)  # type: ignore[arg-type]


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


def test_a_set_of_transforms_is_refused_for_its_missing_order() -> None:
    """The transforms' order is the candidates' order; a set's depends on the hash seed
    (a beam search's path changed with PYTHONHASHSEED)."""
    import nkigym_graph as ng

    program = ng.tile(lambda a, b: ng.nc_matmul(a, b), {"a": (128, 128), "b": (128, 256)})
    for transforms in ({"data_reuse", "dead_code"}, frozenset({"data_reuse"})):
        with pytest.raises(ng.SearchError, match="a set has no order"):
            ng.search(program, transforms)


def test_more_samples_than_output_elements_check_each_element_at_most_once() -> None:
    """Sample points beyond the output's elements check nothing more: samples=10**9
    allocated 16 GB of coordinates (a MemoryError, or the process killed)."""
    from nkigym_graph.search import Verifier, VerifySettings

    verifier = Verifier(ROOT, VerifySettings(samples=10**9))
    (var,) = verifier.points
    assert all(
        len(axis) == ROOT.variables[var].shape[0] * ROOT.variables[var].shape[1]
        for axis in verifier.points[var]
    )
    result = search(ROOT, samples=10**9, confirm=False)
    assert result.stats.verified > 0


def test_a_transform_that_changes_the_parameters_is_named_not_an_evaluation_error() -> None:
    """``weight_stitch`` replaces parameters: no state it gives can be checked on the
    root's inputs (the error was the verifier's "'stitched__...' is read by statement 2
    but nothing writes it", naming no transform)."""
    import nkigym_graph as ng

    def two(x, w1, w2):  # type: ignore[no-untyped-def]
        return ng.tensor_tensor(ng.nc_matmul(x, w1), ng.nc_matmul(x, w2), op="add")

    program = ng.tile(two, {"x": (128, 128), "w1": (128, 128), "w2": (128, 128)})
    for workers in (None, 2):
        with pytest.raises(
            SearchError, match=r"transform 'weight_stitch' failed .* changes the program's parameters"
        ):
            search(program, ["weight_stitch", "data_reuse"], workers=workers, confirm=False)


class _Retarget(Transform):
    """Moves the program to trn1 (its statements fit there too)."""

    name = "retarget"
    batched = False

    def analyze(self, program: Program) -> list[Match]:
        if program.target.name == "trn1":
            return []
        return [Match(self.name, (), Edit(), detail="to trn1", program_hash=program.canonical_hash)]

    def rewrite(self, program: Program, match: Match) -> Program:
        from nkigym_graph.ir.targets import TRN1

        return program.replace(target=TRN1)


@pytest.mark.parametrize("strategy", ["greedy", "exhaustive"])
def test_a_transform_that_changes_the_target_is_named(strategy: str) -> None:
    """A state on another target was searched, priced and verified as if it were one of
    the root's (its statements were checked against the other target's limits)."""
    with pytest.raises(SearchError, match=r"transform 'retarget' failed .* from target trn2 to trn1"):
        search(ROOT, [_Retarget(), "data_reuse"], strategy=strategy, budget=10, confirm=False)
