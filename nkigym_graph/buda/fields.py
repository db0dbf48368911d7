"""Typed reads of netlist fields; a field of the wrong shape raises :class:`NetlistError`.

Every reader takes the map, the key, and a ``Where`` naming the place (``queue in0``,
``fused op 0, schedule 1, sub-op add``) so the error says what is wrong and where.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nkigym_graph.buda.errors import NetlistError
from nkigym_graph.buda.formats import DATA_FORMATS
from nkigym_graph.buda.yaml_loader import MarkedDict, line_of

_MISSING = object()


@dataclass(frozen=True)
class Where:
    """A place in a netlist: a description and the source it came from."""

    what: str
    source: str = ""

    def error(self, spec: Any, key: str | None, message: str) -> NetlistError:
        line = spec.line_of(key) if isinstance(spec, MarkedDict) and key else line_of(spec)
        field = f" field '{key}'" if key else ""
        return NetlistError(f"{self.what}{field}: {message}", line=line, source=self.source)

    def inner(self, what: str) -> Where:
        return Where(f"{self.what}, {what}", self.source)


def require_map(value: Any, where: Where) -> Mapping[Any, Any]:
    """``value`` as a map, or an error naming the place."""
    if not isinstance(value, Mapping):
        raise where.error(value, None, f"must be a map, got {type(value).__name__}")
    return value


def get_int(spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING) -> int:
    """An integer field (``0x`` hex already decoded by YAML)."""
    value = spec.get(key, default)
    if value is _MISSING:
        raise where.error(spec, None, f"missing required field '{key}'")
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(spec, key, f"must be an integer, got {value!r}")
    return value


def get_count(spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING) -> int:
    """An integer field that counts something (``entries``): at least 0."""
    value = spec.get(key, default)
    if value is _MISSING:
        raise where.error(spec, None, f"missing required field '{key}'")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise where.error(spec, key, f"must be an integer >= 0, got {value!r}")
    return value


def get_str(spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING) -> Any:
    """A scalar field read as text (numbers become their decimal text)."""
    value = spec.get(key, default)
    if value is _MISSING:
        raise where.error(spec, None, f"missing required field '{key}'")
    if value is None and default is _MISSING:
        raise where.error(spec, key, "must not be empty")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    raise where.error(spec, key, f"must be a scalar, got {value!r}")


def get_pair(spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING) -> tuple[int, int]:
    """A ``[a, b]`` field of two integers (``grid_size``, ``mblock``, ``ublock``, ...)."""
    value = spec.get(key, default)
    if value is _MISSING:
        raise where.error(spec, None, f"missing required field '{key}'")
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise where.error(spec, key, f"must be a list of two integers, got {value!r}")
    return int(value[0]), int(value[1])


def get_str_list(spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING) -> tuple[str, ...]:
    """A list of names (``inputs``, ``pop``, ``in_df``); a single scalar counts as one."""
    value = spec.get(key, default)
    if value is _MISSING:
        raise where.error(spec, None, f"missing required field '{key}'")
    if value is None:
        return ()
    if isinstance(value, str | int):
        return (str(value),)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str | int) for v in value):
        raise where.error(spec, key, f"must be a list of names, got {value!r}")
    return tuple(str(v) for v in value)


def get_map(spec: Mapping[Any, Any], key: str, where: Where) -> Mapping[Any, Any]:
    """An optional map field (``attributes``); absent or null reads as empty."""
    value = spec.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise where.error(spec, key, f"must be a map, got {value!r}")
    return value


def get_bool(spec: Mapping[Any, Any], key: str, where: Where, default: bool = False) -> bool:
    """A boolean field; YAML ``true/false`` and the strings ``"true"/"false"`` are accepted."""
    value = spec.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise where.error(spec, key, f"must be true or false, got {value!r}")


def get_format(spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING) -> Any:
    """A data-format field (``df``, ``out_df``, ...): a name from ``DATA_FORMATS`` or None."""
    value = get_str(spec, key, where, default)
    if value is not None:
        _known_format(spec, key, value, where)
    return value


def get_format_list(
    spec: Mapping[Any, Any], key: str, where: Where, default: Any = _MISSING
) -> tuple[str, ...]:
    """A list of data formats (``in_df``)."""
    values = get_str_list(spec, key, where, default)
    for value in values:
        _known_format(spec, key, value, where)
    return values


def _known_format(spec: Mapping[Any, Any], key: str, value: str, where: Where) -> None:
    if value not in DATA_FORMATS:
        known = ", ".join(sorted(DATA_FORMATS))
        raise where.error(spec, key, f"{value!r} is not a Buda data format; known: {known}")
