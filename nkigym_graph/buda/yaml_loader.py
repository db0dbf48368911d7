"""YAML reading that keeps line numbers and resolves repeated keys like the Buda parser.

The backend's parser (yaml-cpp) walks every key/value pair of a map in order and assigns
fields as it goes, so for a repeated key the *last* value wins. Input TM lists are the
exception: ``input_<i>_tms`` entries are appended to the op's TM list, so a repeated
``input_0_tms`` key adds to the earlier one (an empty or ``None`` value adds nothing).
This loader does the same and records every repeated key.

Maps are built as :class:`MarkedDict` and lists as :class:`MarkedList`: plain ``dict`` and
``list`` subclasses that also carry the 1-based ``line`` where they start, so later errors
can point into the text. Anchors, aliases, merge keys (``<<``), comments, flow and block
styles and hex integers (``0x10000000``) are ordinary YAML and handled by PyYAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

from nkigym_graph.buda.errors import NetlistError

TMS_KEY = re.compile(r"^input_\d+_tms$")


@dataclass(frozen=True)
class DuplicateKey:
    """A key that appears more than once in one YAML map."""

    key: str
    first_line: int
    line: int


class MarkedDict(dict[Any, Any]):
    """A ``dict`` that remembers where it starts, where each key is, and repeated keys."""

    line: int = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines: dict[Any, int] = {}
        self.duplicates: list[DuplicateKey] = []

    def line_of(self, key: Any) -> int:
        """The line of ``key`` (or of the map itself when the key is not known)."""
        return self.key_lines.get(key, self.line)


class MarkedList(list[Any]):
    """A ``list`` that remembers the line where it starts."""

    line: int = 0


def line_of(value: Any) -> int:
    """The starting line of a map or list read by this loader, else 0."""
    return int(getattr(value, "line", 0))


def is_empty_tms(value: Any) -> bool:
    """True for the spellings of "no TMs" seen in real netlists: null, ``None``, ``[]``."""
    return value is None or value == [] or (isinstance(value, str) and value in ("None", "none"))


class _NetlistLoader(yaml.SafeLoader):
    """SafeLoader whose maps and lists are marked and whose repeated keys follow Buda."""


def _construct_map(loader: _NetlistLoader, node: MappingNode) -> Any:
    data = MarkedDict()
    data.line = node.start_mark.line + 1
    yield data
    own_pairs = sum(1 for key_node, _ in node.value if key_node.tag != "tag:yaml.org,2002:merge")
    loader.flatten_mapping(node)
    merged_pairs = len(node.value) - own_pairs  # merge-key pairs come first; own keys override them
    merged_keys: set[Any] = set()
    for position, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise ConstructorError(
                "while reading a map",
                node.start_mark,
                "found an unhashable key",
                key_node.start_mark,
            ) from exc
        value = loader.construct_object(value_node, deep=True)
        key_line = key_node.start_mark.line + 1
        if position < merged_pairs:
            merged_keys.add(key)
        elif key in merged_keys:
            merged_keys.discard(key)
        elif key in data:
            data.duplicates.append(DuplicateKey(str(key), data.key_lines[key], key_line))
            if isinstance(key, str) and TMS_KEY.match(key):
                value = _append_tms(data[key], value)
        data[key] = value
        data.key_lines[key] = key_line


def _append_tms(first: Any, second: Any) -> Any:
    """Join two values of a repeated ``input_<i>_tms`` key the way the backend does."""
    if is_empty_tms(second):
        return first
    if is_empty_tms(first):
        return second
    joined = MarkedList(
        (first if isinstance(first, list) else [first]) + (second if isinstance(second, list) else [second])
    )
    joined.line = line_of(first)
    return joined


def _construct_seq(loader: _NetlistLoader, node: SequenceNode) -> Any:
    data = MarkedList()
    data.line = node.start_mark.line + 1
    yield data
    data.extend(loader.construct_sequence(node, deep=True))


_NetlistLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_NetlistLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def parse_yaml(text: str, source: str = "<string>", max_nodes: int = 1_000_000) -> Any:
    """Parse YAML text into marked maps and lists; bad YAML, or a document of more than
    ``max_nodes`` nodes with its aliases expanded, raises :class:`NetlistError`."""
    loader: _NetlistLoader | None = None
    try:
        loader = _NetlistLoader(text)  # reading starts here: it may refuse a character
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node, max_nodes, source)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise NetlistError(f"invalid YAML: {problem}", line, column, source) from exc
    except yaml.YAMLError as exc:
        raise NetlistError(f"invalid YAML: {exc}", source=source) from exc
    except RecursionError:
        raise NetlistError("invalid YAML: nested too deeply", source=source) from None
    finally:
        if loader is not None:
            loader.dispose()


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [item for pair in node.value for item in pair]
    return list(node.value) if isinstance(node, SequenceNode) else []


def expanded_size(root: Node, limit: int, source: str = "<string>") -> int:
    """Nodes of the document under ``root`` with every alias expanded (each shared node
    counted once per use), refused past ``limit`` and for an alias inside itself. Linear
    in the distinct nodes: it never expands anything."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes being counted: ancestors of the current one
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > limit:
                line = node.start_mark.line + 1
                raise NetlistError(
                    f"the document expands to more than {limit} YAML nodes (aliases included; "
                    f"NetlistLimits.yaml_nodes)",
                    line,
                    source=source,
                )
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise NetlistError(
                "an alias refers to a node inside itself", node.start_mark.line + 1, source=source
            )
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]
