"""Every public function, given a wrong-typed argument in any position, either works or
raises an ``NkigymError`` subclass: never another exception, never a hang.

The calls are in ``sweep_cases.py``; exported callables left out are listed there.
"""

from __future__ import annotations

import contextlib
import inspect
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sweep_cases import EXCLUDED, NESTED, Case, cases

import nkigym_graph as ng
from nkigym_graph import nki_sim

WRONG = {"None": None, "int": 5, "str": "x", "bytes": b"x", "list": [1, 2]}
SECONDS = 60


def _cases() -> dict[str, Case]:
    with tempfile.TemporaryDirectory() as tmp:
        return cases(Path(tmp))


def _positions() -> Iterator[tuple[str, int | str]]:
    for name, (_, args, kwargs) in _cases().items():
        yield from ((name, i) for i in range(len(args)))
        yield from ((name, key) for key in kwargs)


def _timeout(signum: int, frame: Any) -> None:
    raise TimeoutError(f"the call took over {SECONDS} s")


@pytest.mark.parametrize("wrong", list(WRONG))
@pytest.mark.parametrize(("name", "position"), list(_positions()))
def test_a_wrong_argument_is_refused_by_name(
    name: str, position: int | str, wrong: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    function, args, kwargs = cases(tmp_path)[name]
    args, kwargs = list(args), dict(kwargs)
    if isinstance(position, int):
        args[position] = WRONG[wrong]
    else:
        kwargs[position] = WRONG[wrong]
    try:
        with contextlib.suppress(ng.NkigymError), _deadline():
            result = function(*args, **kwargs)
            if inspect.isgenerator(result):
                list(result)
    finally:
        if name == "register_plugin" and ng.get_plugin_manager().is_registered(args[0]):
            ng.unregister_plugin(args[0])


@pytest.mark.parametrize("wrong", list(WRONG))
@pytest.mark.parametrize("where", list(NESTED))
def test_a_wrong_value_inside_an_argument_is_refused(
    where: str, wrong: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with contextlib.suppress(ng.NkigymError), _deadline():
        NESTED[where](WRONG[wrong])


@contextlib.contextmanager
def _deadline() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_every_export_is_swept_or_excluded() -> None:
    exported = {name for name in ng.__all__ if callable(getattr(ng, name))}
    exported |= {f"nki_sim.{name}" for name in nki_sim.__all__ if callable(getattr(nki_sim, name))}
    swept = set(_cases()) | set(EXCLUDED)
    classes = {
        name for name in exported if inspect.isclass(getattr(ng, name, None) or getattr(nki_sim, name[8:]))
    }
    assert exported - classes - swept == set()


def _program_positions() -> Iterator[tuple[str, int, str]]:
    for name, (function, args, _) in _cases().items():
        parameters = list(inspect.signature(function).parameters)
        for i, arg in enumerate(args):
            if isinstance(arg, ng.Program):
                yield name, i, parameters[i]


@pytest.mark.parametrize("wrong", list(WRONG))
@pytest.mark.parametrize(("name", "position", "argument"), list(_program_positions()))
def test_a_program_argument_is_required_and_named(
    name: str, position: int, argument: str, wrong: str, tmp_path: Path
) -> None:
    function, args, kwargs = cases(tmp_path)[name]
    args = (*args[:position], WRONG[wrong], *args[position + 1 :])
    text = wrong == "str" and "netlist" in argument  # a str there is netlist text
    with pytest.raises(
        ng.NkigymError, match="not a map|netlist" if text else rf"\b{argument}\b.* must be a Program"
    ):
        function(*args, **kwargs)
