"""``nkigym_graph.search`` is both the search package and the search function: its
modules import by their dotted names, and calling it searches."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import nkigym_graph as ng
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.search.run import search


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (imports in a known order) and return its output."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_search_modules_import_by_their_dotted_names() -> None:
    out = _fresh(
        """
        import nkigym_graph.search.remote as remote
        import nkigym_graph.search.remote
        print(remote.ProgramRef.__name__, nkigym_graph.search.remote is remote)
        """
    )
    assert out.split() == ["ProgramRef", "True"]


def test_the_package_is_still_the_search_function() -> None:
    out = _fresh(
        """
        import nkigym_graph.search.strategies
        import nkigym_graph as ng
        from nkigym_graph.ir.synthetic import tiled_matmul
        root = tiled_matmul(256, 256, 256)
        result = ng.search(root, strategy="greedy", confirm=False)
        print(ng.replay(root, result.path) == result.best, len(result.best) < len(root))
        """
    )
    assert out.split() == ["True", "True"]


def test_calling_the_package_is_calling_search() -> None:
    assert inspect.signature(ng.search) == inspect.signature(search)
    root = tiled_matmul(256, 128, 256)
    assert ng.search(root, confirm=False).best == search(root, confirm=False).best
