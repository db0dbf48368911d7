"""The error the Buda backend raises: it names the statement, op or rule that stopped it."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError


class BudaEmitError(NkigymError):
    """A program the Buda backend cannot turn into a valid netlist.

    ``statement`` is the program line involved (empty when the problem is program-wide);
    ``violations`` lists the checker's findings when an emitted netlist broke a rule.
    """

    def __init__(self, message: str, statement: str = "", violations: tuple[str, ...] = ()) -> None:
        self.statement = statement
        self.violations = violations
        where = f"statement `{statement}`: " if statement else ""
        detail = "".join(f"\n  {v}" for v in violations)
        super().__init__(f"{where}{message}{detail}")
