"""Hypothesis strategies that mutate text: characters, lines and tokens.

``mutated(corpus, tokens)`` picks a text from ``corpus`` and applies one to four
mutations: replace, insert or delete characters (including NUL, a lone surrogate and
non-ASCII), delete, duplicate or swap lines, or insert one of ``tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

KINDS = ["char", "insert", "delete", "line_delete", "line_copy", "line_swap", "token"]
ODD_CHARACTERS = ["\x00", "\udcff", "\t", "\r", "\n", "é", "\ufeff", "'", '"', "\\", "#", " "]


@st.composite
def _mutation(draw: st.DrawFn, text: str, tokens: Sequence[str]) -> str:
    lines = text.split("\n")
    kind = draw(st.sampled_from(KINDS))
    at = draw(st.integers(0, max(len(text) - 1, 0)))
    if kind == "char":
        return text[:at] + draw(st.sampled_from(ODD_CHARACTERS) | st.characters()) + text[at + 1 :]
    if kind == "insert":
        return text[:at] + draw(st.text(max_size=4)) + text[at:]
    if kind == "delete":
        return text[:at] + text[at + draw(st.integers(1, 40)) :]
    row = draw(st.integers(0, len(lines) - 1))
    if kind == "line_delete":
        del lines[row]
    elif kind == "line_copy":
        lines.insert(row, lines[row])
    elif kind == "line_swap":
        other = draw(st.integers(0, len(lines) - 1))
        lines[row], lines[other] = lines[other], lines[row]
    else:
        return text[:at] + draw(st.sampled_from(list(tokens))) + text[at:]
    return "\n".join(lines)


@st.composite
def mutated(draw: st.DrawFn, corpus: Sequence[str], tokens: Sequence[str]) -> str:
    """A text of ``corpus`` with one to four mutations."""
    text = draw(st.sampled_from(list(corpus)))
    for _ in range(draw(st.integers(1, 4))):
        text = draw(_mutation(text, tokens))
    return text
