"""The error the NKI backend raises: it names the statement, rule or limit that stopped it."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class NkiEmitError(NkigymError):
    """A program (or an option) the NKI backend cannot turn into a kernel.

    ``statement`` is the program line involved (empty when the problem is program-wide).
    """

    def __init__(self, message: str, statement: str = "") -> None:
        self.statement = statement
        where = f"statement `{statement}`: " if statement else ""
        super().__init__(f"{where}{message}")
