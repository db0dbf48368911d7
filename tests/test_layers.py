"""The layers of the package, lowest first: no module imports a module of a higher layer.

The check reads the source with ``ast`` (nothing is imported or run) and counts every
import: at module level, inside functions, and under ``if TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).parents[1]

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors", ("nkigym_graph.errors", "nkigym_graph.foreign_errors")),
    ("ir", ("nkigym_graph.ir",)),
    ("numeric", ("nkigym_graph.numeric",)),
    ("rewriting", ("nkigym_graph.rewriting",)),
    ("plugin", ("nkigym_graph.plugin",)),
    ("scheduling", ("nkigym_graph.scheduling",)),
    (
        "services",
        (
            "nkigym_graph.text",
            "nkigym_graph.tiling",
            "nkigym_graph.search",
            "nkigym_graph.cost",
            "nkigym_graph.nki_sim",
            "nkigym_graph.buda",
            "nkigym_graph.stitching",
            "nkigym_graph.dot",
        ),
    ),
    (
        "applications",
        (
            "nkigym_graph",  # the package itself: every public name
            "nkigym_graph.__main__",
            "nkigym_graph.main_job",
            "nkigym_graph.cli",
            "nkigym_graph_plugins",
        ),
    ),
)
"""Each layer's name and the modules (with their submodules) it holds."""


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the layer holding ``module`` (the longest prefix wins)."""
    best, best_length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or module.startswith(prefix + ".")
            if inside and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    if best < 0:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return best


class Import(NamedTuple):
    path: Path
    line: int
    importer: str
    imported: str


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[0] == "plugins":
        parts[0] = "nkigym_graph_plugins"
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(importer: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a relative ``from . import`` names."""
    package = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _project(name: str) -> bool:
    return name.split(".")[0] in ("nkigym_graph", "nkigym_graph_plugins")


def _modules() -> list[Path]:
    return sorted([*(ROOT / "nkigym_graph").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")])


def imports() -> list[Import]:
    """Every import of a project module by a project module."""
    found = []
    for path in _modules():
        if "build" in path.relative_to(ROOT).parts:
            continue
        importer = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = _resolve(importer, path, node) if node.level else (node.module or "")
                names = [module]
                if module in ("nkigym_graph", "nkigym_graph_plugins"):  # from the package: a submodule?
                    names = [_submodule_or_package(module, alias.name) for alias in node.names]
            else:
                continue
            found.extend(Import(path, node.lineno, importer, name) for name in names if _project(name))
    return found


def _submodule_or_package(package: str, name: str) -> str:
    folder = ROOT / ("plugins" if package == "nkigym_graph_plugins" else package)
    is_module = (folder / name / "__init__.py").exists() or (folder / f"{name}.py").exists()
    return f"{package}.{name}" if is_module else package


def upward(found: list[Import]) -> list[str]:
    """The imports of a module of a higher layer, described."""
    out = []
    for item in found:
        mine, theirs = layer_of(item.importer), layer_of(item.imported)
        if theirs > mine:
            out.append(
                f"{item.path.relative_to(ROOT)}:{item.line}: {item.importer} (layer {LAYERS[mine][0]!r}) "
                f"imports {item.imported} (layer {LAYERS[theirs][0]!r}, higher)"
            )
    return out


def test_every_module_is_in_a_layer() -> None:
    for path in _modules():
        layer_of(_module_name(path))


def test_no_module_imports_a_higher_layer() -> None:
    found = imports()
    assert len(found) > 500  # the walk sees the package's imports
    problems = upward(found)
    assert not problems, (
        "imports against the layer order ("
        + " < ".join(n for n, _ in LAYERS)
        + "):\n"
        + ("\n".join(problems))
    )


@pytest.mark.parametrize(
    ("importer", "imported", "upward_expected"),
    [
        ("nkigym_graph.ir.program", "nkigym_graph.text.printer", True),
        ("nkigym_graph.rewriting.driver", "nkigym_graph.plugin.registry", True),
        ("nkigym_graph.rewriting.driver", "nkigym_graph.ir.program", False),
        ("nkigym_graph.search.run", "nkigym_graph.cost.models", False),
        ("nkigym_graph.ir.targets", "nkigym_graph", True),
    ],
)
def test_the_check_names_an_upward_import(importer: str, imported: str, upward_expected: bool) -> None:
    """The check itself: a made-up import is reported exactly when it goes up."""
    problems = upward([Import(ROOT / "nkigym_graph" / "x.py", 7, importer, imported)])
    assert bool(problems) == upward_expected
    if upward_expected:
        assert f"imports {imported}" in problems[0] and "higher" in problems[0]
