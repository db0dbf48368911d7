"""Writing the netlist document as YAML the way netlists are usually written.

Queues and fused sub-ops are one flow map per line, lists of numbers and names are flow
lists, DRAM addresses are hex, and a comment header says what the host queues hold.
Reading the text back with ``yaml.safe_load`` gives the document again (plain ints for
the hex addresses).
"""

from __future__ import annotations

from typing import Any

import yaml

from .queues import Hex


class _Flow(dict[Any, Any]):
    """A map written on one line."""


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


_Dumper.add_representer(Hex, lambda d, v: d.represent_scalar("tag:yaml.org,2002:int", hex(int(v))))
_Dumper.add_representer(_Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))


def _styled(doc: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    out["queues"] = {name: _Flow(spec) for name, spec in doc.get("queues", {}).items()}
    if "fused_ops" in doc:
        out["fused_ops"] = {
            fused_id: {
                **spec,
                "schedules": [
                    [{name: _Flow(sub) for name, sub in entry.items()} for entry in schedule]
                    for schedule in spec["schedules"]
                ],
            }
            for fused_id, spec in doc["fused_ops"].items()
        }
    return out


def to_yaml(doc: dict[str, Any], header: list[str]) -> str:
    """The netlist text: ``# header`` lines, then the sections in the usual order."""
    body = yaml.dump(_styled(doc), Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100_000)
    comments = "".join(f"# {line}\n" for line in header)
    return comments + body
