"""Unique netlist names for queues and ops (a name is either a queue or an op, once).

Parameters keep their names; a parameter the host stores transposed is ``<name>_t``;
constants are ``fill_<k>`` / ``ones_<k>``; graph ops are named after the tensor-level op
whose result they produce (``nc_matmul_3``); output queues after the program's outputs.
"""

from __future__ import annotations

from collections.abc import Iterable

from .nodes import ConstSource, NodeSource, ParamSource, Source


class Names:
    """Claims names in a fixed order so the same program always gets the same netlist."""

    def __init__(self, params: Iterable[str], outputs: Iterable[str], nodes: dict[int, str]) -> None:
        self.taken: set[str] = set()
        self.params = {p: self.claim(p) for p in params}
        self.outputs = {o: self.claim(o) for o in outputs}
        self.nodes = {node: self.claim(label) for node, label in nodes.items()}
        self.transposed: dict[str, str] = {}
        self.constants: dict[object, str] = {}

    def claim(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def source(self, source: Source) -> str:
        """The queue or op an operand reads."""
        if isinstance(source, NodeSource):
            return self.nodes[source.node]
        if isinstance(source, ParamSource):
            if not source.transposed:
                return self.params[source.name]
            if source.name not in self.transposed:
                self.transposed[source.name] = self.claim(f"{source.name}_t")
            return self.transposed[source.name]
        assert isinstance(source, ConstSource)
        constant = source.constant
        if constant not in self.constants:
            count = sum(1 for c in self.constants if type(c) is type(constant))
            self.constants[constant] = self.claim(f"{constant.label()}_{count}")
        return self.constants[constant]
