"""``import nkigym_graph`` loads only the package: each public name is imported on
first use, every one of them still there (``__all__``, ``dir``, ``from ... import``).
Import time is measured in benchmarks/import_time.py, not here."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import nkigym_graph as ng

INIT = Path(ng.__file__)


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, nkigym_graph\n"
        "print(sorted(m for m in sys.modules if m.startswith(('nkigym_graph', 'numpy', 'networkx', "
        "'pydot', 'pluggy', 'yaml'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['nkigym_graph']"


def test_every_export_is_listed_and_resolves() -> None:
    assert set(ng.__all__) == set(ng._WHERE)
    assert len(ng.__all__) == len(set(ng.__all__))
    assert set(ng.__all__) <= set(dir(ng))
    for name in ng.__all__:
        assert getattr(ng, name) is not None, name


@pytest.mark.parametrize("name", ng.__all__)
def test_from_import_works_for_every_export(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from nkigym_graph import {name}", namespace)
    assert namespace[name] is getattr(ng, name)


def test_type_checkers_see_every_export() -> None:
    """The ``if TYPE_CHECKING`` imports name exactly the exports."""
    tree = ast.parse(INIT.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    names = {
        alias.asname or alias.name
        for node in ast.walk(block)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert names == set(ng.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"no attribute 'not_a_name'"):
        ng.not_a_name  # noqa: B018
    assert not hasattr(ng, "not_a_name")
