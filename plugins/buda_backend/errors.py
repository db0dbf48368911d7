"""The error the Buda backend raises: it names the statement, op or rule that stopped it."""

from __future__ import annotations

from nkigym_graph.errors import NkigymError, OptionError


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


class BudaOptionError(BudaEmitError, OptionError):
    """A Buda backend option given a value it cannot take (``df='fp8'``): the message is
    ``"{option} {problem}"``."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = problem
        super().__init__(f"{option} {problem}")
