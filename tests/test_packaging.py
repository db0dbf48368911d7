"""Packaging: every package folder is listed in pyproject.toml (a wheel would miss it
otherwise), and the built-in plugins install under their own import name."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _listed() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def _found() -> set[str]:
    names = set()
    for init in (ROOT / "nkigym_graph").rglob("__init__.py"):
        names.add(".".join(init.parent.relative_to(ROOT).parts))
    for init in (ROOT / "plugins").rglob("__init__.py"):
        names.add(".".join(("nkigym_graph_plugins", *init.parent.relative_to(ROOT / "plugins").parts)))
    return names


def test_every_package_is_listed() -> None:
    assert _found() - _listed() == set()


def test_no_listed_package_is_missing() -> None:
    assert _listed() - _found() == set()


def test_no_generic_top_level_plugins_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["package-dir"]["nkigym_graph_plugins"] == "plugins"
    assert "plugins" not in _listed()
