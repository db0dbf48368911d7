"""Loading a Buda netlist and a thin typed view over it.

>>> nl = load_netlist('''
... devices: {arch: grayskull}
... queues:
...   in0:  {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1,
...          mblock: [1, 1], ublock: [1, 1], df: Float16, loc: dram, dram: [[0, 0x10000000]]}
...   out0: {input: op0, type: queue, entries: 1, grid_size: [1, 1], t: 1,
...          mblock: [1, 1], ublock: [1, 1], df: Float16, loc: dram, dram: [[0, 0x11000000]]}
... graphs:
...   g: {op0: {type: exp, grid_size: [1, 1], inputs: [in0], mblock: [1, 1], ublock: [1, 1]}}
... programs:
...   - run: [{execute: {graph_name: g}}]
... ''')
>>> nl.arch_names, nl.op("op0").type, nl.queues["in0"].dram
(('grayskull',), 'exp', ((0, 268435456),))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nkigym_graph.buda.errors import NetlistError
from nkigym_graph.buda.fields import Where, require_map
from nkigym_graph.buda.limits import DEFAULT_LIMITS, NetlistLimits, check_limits
from nkigym_graph.buda.model import (
    FusedOp,
    NetlistOp,
    Queue,
    SubOp,
    parse_fused_op,
    parse_op,
    parse_queue,
)
from nkigym_graph.buda.yaml_loader import DuplicateKey, MarkedDict, parse_yaml
from nkigym_graph.ir.arguments import describe

GRAPH_SETTINGS = ("target_device", "input_count")
"""Keys of a graph map that are settings, not ops."""
REQUIRED_SECTIONS = ("queues", "graphs")
"""Top-level sections every netlist has, non-empty. Like the backend's parser, loading
ignores other top-level keys; an empty ``programs`` is the ``graph.programs`` violation
(the evaluator then runs each graph once)."""
PROGRAM_HEADER = "# nkigym-graph program:"
"""The first line of a program file (``nkigym_graph.text.files``), refused with a hint."""

NetlistSource = str | Path | Mapping[str, Any]
"""YAML text (a ``str`` is always text), a file (a ``Path``) or an already parsed map."""


@dataclass(frozen=True, eq=False)
class Netlist:
    """A parsed netlist: the raw map (``data``) plus typed views of its sections.

    ``queues`` by name, ``graphs`` as graph name -> op name -> :class:`NetlistOp`, ``fused_ops`` by
    id (always a string: YAML ``0:`` and ``"0":`` are the same fused op), ``programs`` as
    the raw list. ``duplicates`` lists names defined twice (repeated keys of the ``queues``,
    ``graphs``, per-graph and ``fused_ops`` maps) as ``(section, DuplicateKey)``; repeated
    fields inside one queue or op are resolved as the backend does (see
    :mod:`nkigym_graph.buda.yaml_loader`) and not listed.
    """

    data: Mapping[str, Any] = field(repr=False)
    source: str
    queues: Mapping[str, Queue]
    graphs: Mapping[str, Mapping[str, NetlistOp]]
    fused_ops: Mapping[str, FusedOp]
    programs: tuple[Any, ...]
    duplicates: tuple[tuple[str, DuplicateKey], ...] = ()
    op_index: Mapping[str, NetlistOp] = field(default_factory=dict, repr=False)
    """Every op by name (the first one when a name is used in two graphs)."""

    @property
    def devices(self) -> Mapping[str, Any]:
        value = self.data.get("devices")
        return value if isinstance(value, Mapping) else {}

    @property
    def arch_names(self) -> tuple[str, ...]:
        """The architectures in ``devices.arch`` (a name or a list of names)."""
        arch = self.devices.get("arch")
        if arch is None:
            return ()
        return tuple(str(a) for a in arch) if isinstance(arch, list) else (str(arch),)

    def ops(self, graph: str) -> Mapping[str, NetlistOp]:
        """The ops of one graph by name."""
        if graph not in self.graphs:
            raise NetlistError(f"no graph '{graph}'; graphs: {sorted(self.graphs)}", source=self.source)
        return self.graphs[graph]

    def all_ops(self) -> Iterator[NetlistOp]:
        """Every op of every graph, in file order."""
        for ops in self.graphs.values():
            yield from ops.values()

    def op(self, name: str) -> NetlistOp | None:
        """The op called ``name`` in any graph, or None."""
        return self.op_index.get(name)

    def fused_op(self, fused_id: Any) -> FusedOp:
        """The fused op with this id (``0`` and ``"0"`` are the same)."""
        key = str(fused_id)
        if key not in self.fused_ops:
            known = sorted(self.fused_ops)
            raise NetlistError(f"no fused op with id '{key}'; ids: {known}", source=self.source)
        return self.fused_ops[key]

    def sub_ops(self, fused_id: Any, schedule: int) -> tuple[SubOp, ...]:
        """The sub-ops of one schedule of a fused op."""
        fused = self.fused_op(fused_id)
        if not 0 <= schedule < len(fused.schedules):
            raise NetlistError(
                f"fused op {fused.id} has {len(fused.schedules)} schedules, no schedule {schedule}",
                source=self.source,
            )
        return fused.schedules[schedule]

    def instances(self, fused_id: Any) -> list[NetlistOp]:
        """The graph ops that run the fused op ``fused_id``."""
        key = str(fused_id)
        return [op for op in self.all_ops() if op.type == "fused_op" and op.fused_op_id == key]

    def producer(self, name: str) -> Queue | NetlistOp | None:
        """The queue or op called ``name`` (what an op input refers to), or None."""
        return self.queues.get(name) or self.op(name)

    def output_queues(self) -> list[Queue]:
        """Queues written by an op (their ``input`` names an op): what a run produces."""
        return [q for q in self.queues.values() if not q.is_host_input and self.op(q.input)]

    def host_queues(self) -> list[Queue]:
        """Queues written by the host: what a run needs as inputs."""
        return [q for q in self.queues.values() if q.is_host_input]


def _section(data: Mapping[str, Any], key: str, kind: type, where: Where) -> Any:
    value = data.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise where.error(data, key, f"must be a {'map' if kind is dict else 'list'}")
    return value


def _duplicates(section: str, value: Any) -> list[tuple[str, DuplicateKey]]:
    return [(section, d) for d in value.duplicates] if isinstance(value, MarkedDict) else []


def _require_sections(data: Any, where: Where, source: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        hint = ""
        if isinstance(data, str) and "\n" not in data.strip() and source.startswith("<"):
            hint = " (a str is netlist text: read a file with pathlib.Path(...) or path=)"
        raise where.error(data, None, f"must be a map of sections, got {_held(data)}{hint}")
    missing = [key for key in REQUIRED_SECTIONS if not data.get(key)]
    if missing:
        raise where.error(
            data, None, f"missing or empty section(s) {missing}; a netlist needs queues and graphs"
        )
    return data


def _held(data: Any) -> str:
    """What a parsed YAML document holds, in the netlist author's words."""
    if data is None:
        return "nothing"
    if isinstance(data, list | tuple):
        return "a list"
    return f"a single value ({'text' if isinstance(data, str) else type(data).__name__})"


def netlist_from_data(data: Any, source: str = "<dict>", limits: NetlistLimits = DEFAULT_LIMITS) -> Netlist:
    """Build the typed view of an already parsed netlist map, held to ``limits``."""
    where = Where("netlist", source)
    data = _require_sections(data, where, source)
    queues_raw = _section(data, "queues", dict, where)
    graphs_raw = _section(data, "graphs", dict, where)
    fused_raw = _section(data, "fused_ops", dict, where)
    programs_raw = _section(data, "programs", list, where)
    queues = {str(name): parse_queue(name, spec, where) for name, spec in queues_raw.items()}
    graphs: dict[str, dict[str, NetlistOp]] = {}
    duplicates = (
        _duplicates("queues", queues_raw)
        + _duplicates("graphs", graphs_raw)
        + _duplicates("fused_ops", fused_raw)
    )
    for graph_name, graph_raw in graphs_raw.items():
        here = where.inner(f"graph '{graph_name}'")
        graph_raw = require_map(graph_raw, here)
        duplicates += _duplicates(f"graph {graph_name}", graph_raw)
        graphs[str(graph_name)] = {
            str(name): parse_op(name, str(graph_name), spec, here)
            for name, spec in graph_raw.items()
            if name not in GRAPH_SETTINGS
        }
    fused_ops: dict[str, FusedOp] = {}
    for fused_id, spec in fused_raw.items():
        fused_ops[str(fused_id)] = parse_fused_op(fused_id, spec, where)
    op_index: dict[str, NetlistOp] = {}
    for ops in graphs.values():
        for name, op in ops.items():
            op_index.setdefault(name, op)
    netlist = Netlist(
        data=data,
        source=source,
        queues=queues,
        graphs=graphs,
        fused_ops=fused_ops,
        programs=tuple(programs_raw),
        duplicates=tuple(duplicates),
        op_index=op_index,
    )
    check_limits(netlist, limits)
    return netlist


def load_netlist(
    source: NetlistSource | Netlist | None = None,
    *,
    path: str | Path | None = None,
    limits: NetlistLimits = DEFAULT_LIMITS,
) -> Netlist:
    """Load a netlist from YAML text (a ``str`` is always text), a file (a ``Path``, or
    ``path=`` as a ``str`` or ``Path``), a parsed map, or pass a :class:`Netlist` through.
    A netlist needs ``queues`` and ``graphs``; bad YAML, a malformed or
    missing section, or a size outside ``limits`` (see :mod:`nkigym_graph.buda.limits`)
    raises :class:`NetlistError` naming the line."""
    if not isinstance(limits, NetlistLimits):
        raise NetlistError(f"limits must be a NetlistLimits, got {describe(limits)}")
    if path is not None:
        if source is not None:
            raise NetlistError("pass the netlist or path=, not both")
        if not isinstance(path, str | Path):
            raise NetlistError(f"path must be a str or pathlib.Path, got {describe(path)}")
        return _read(Path(path), limits)
    if isinstance(source, Netlist):
        return source
    if isinstance(source, Mapping):
        return netlist_from_data(source, limits=limits)
    if isinstance(source, Path):
        return _read(source, limits)
    if isinstance(source, str):
        return _from_text(source, "<string>", limits)
    hint = " (decode bytes first)" if isinstance(source, bytes | bytearray) else ""
    raise NetlistError(
        f"must be YAML text (str), a pathlib.Path, a parsed map or a Netlist, got {describe(source)}{hint}"
    )


def _read(path: Path, limits: NetlistLimits) -> Netlist:
    try:
        size = path.stat().st_size
        if size > 4 * limits.text_chars:  # UTF-8 takes at most 4 bytes a character
            message = f"{size} bytes is more than NetlistLimits.text_chars = {limits.text_chars} characters"
            raise NetlistError(message, source=str(path))
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise NetlistError(f"cannot read netlist file: {reason}", source=str(path)) from exc
    return _from_text(text, str(path), limits)


def _from_text(text: str, source: str, limits: NetlistLimits) -> Netlist:
    if len(text) > limits.text_chars:
        raise NetlistError(
            f"{len(text)} characters is more than NetlistLimits.text_chars = {limits.text_chars}",
            source=source,
        )
    if text.startswith(PROGRAM_HEADER) or text.lstrip().startswith("def "):
        raise NetlistError(
            "this is a program (the tiled-program text format), not a netlist; emit a netlist with "
            "emit_artifact(program, backend='buda', arch=...) or `nkigym-graph emit P --backend buda`",
            source=source,
        )
    return netlist_from_data(parse_yaml(text, source, limits.yaml_nodes), source, limits)
