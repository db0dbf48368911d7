"""Helpers shared by the tests: the seed example texts, text comparison and the
examples' workloads."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SEEDS = Path(__file__).parent / "fixtures" / "seeds"


def seed_text(name: str) -> str:
    """The text of seed example ``name`` (e.g. ``"001_program_before"``)."""
    return (SEEDS / f"{name}.py.txt").read_text()


def seed_names() -> list[str]:
    """All seed example names."""
    return sorted(p.name.removesuffix(".py.txt") for p in SEEDS.glob("*.py.txt"))


def normalized_lines(text: str) -> list[str]:
    """Lines with surrounding whitespace and blank lines removed (equality up to whitespace)."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def example_workloads() -> ModuleType:
    """``examples/workloads.py`` (as module ``workloads``), loaded without putting
    ``examples/`` on the path: its ``transforms.py`` would shadow the tests'
    ``transforms`` package."""
    if "workloads" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "workloads", Path(__file__).parents[1] / "examples" / "workloads.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["workloads"] = module  # dataclasses look their module up while the file runs
        spec.loader.exec_module(module)
    return sys.modules["workloads"]
