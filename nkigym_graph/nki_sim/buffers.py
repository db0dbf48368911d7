"""Memory buffers: ``nl.sbuf``, ``nl.psum`` and the HBM kinds.

``nl.hbm`` is an alias of ``nl.private_hbm``; kernel inputs live in ``nl.shared_hbm``.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["sbuf", "psum", "hbm"]


class Buffer:
    """One memory region. Compared by identity; ``kind`` groups the HBM variants."""

    __slots__ = ("kind", "name")

    def __init__(self, name: str, kind: Kind) -> None:
        self.name = name
        self.kind: Kind = kind

    @property
    def on_chip(self) -> bool:
        return self.kind != "hbm"

    @property
    def label(self) -> str:
        """``SBUF``, ``PSUM`` or ``HBM``, for messages."""
        return self.kind.upper()

    def __repr__(self) -> str:
        return f"nl.{self.name}"


SBUF = Buffer("sbuf", "sbuf")
PSUM = Buffer("psum", "psum")
PRIVATE_HBM = Buffer("private_hbm", "hbm")
SHARED_HBM = Buffer("shared_hbm", "hbm")

BUFFERS: dict[str, Buffer] = {
    "sbuf": SBUF,
    "psum": PSUM,
    "hbm": PRIVATE_HBM,
    "private_hbm": PRIVATE_HBM,
    "shared_hbm": SHARED_HBM,
}
"""``nl`` attribute name -> buffer."""


def resolve_buffer(value: object) -> Buffer | None:
    """The buffer for ``nl.sbuf`` etc. (or its name); None when it is not one."""
    if value is None:
        return SBUF
    if isinstance(value, Buffer):
        return value
    if isinstance(value, str):
        return BUFFERS.get(value.removeprefix("nl."))
    return None
