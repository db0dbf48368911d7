"""Helpers shared by the tests: the seed example texts and text comparison."""

from __future__ import annotations

from pathlib import Path

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
