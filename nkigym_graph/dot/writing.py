"""Writing a picture to a file: ``.dot``/``.gv`` always, ``.svg``/``.png``/``.pdf`` with Graphviz.

Every failure is an ``NkigymError`` naming the path: a directory, a missing or
unwritable folder, an unknown suffix, Graphviz absent.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from nkigym_graph.errors import NkigymError

if TYPE_CHECKING:
    import pydot

TEXT_SUFFIXES = ("dot", "gv", "")
RENDERED_SUFFIXES = ("svg", "png", "pdf")


def save(dot: pydot.Dot, path: str | Path) -> Path:
    """Write ``dot`` to ``path`` in the format its suffix names."""
    path = Path(path)
    if path.is_dir():
        raise NkigymError(
            f"cannot write a picture to {str(path)!r}: it is a directory; give a file name such as p.dot"
        )
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in TEXT_SUFFIXES + RENDERED_SUFFIXES:
        raise NkigymError(f"unsupported picture format {path.suffix!r}: use .dot, .svg, .png or .pdf")
    if suffix in TEXT_SUFFIXES:
        data: bytes = dot.to_string().encode()
    else:
        if shutil.which("dot") is None:
            raise NkigymError(
                f"writing {path.name} needs Graphviz's `dot` program (apt-get install graphviz); "
                "a .dot file needs nothing"
            )
        rendered = dot.create(format=suffix)
        data = rendered if isinstance(rendered, bytes) else rendered.encode()
    try:
        path.write_bytes(data)
    except OSError as err:
        raise NkigymError(f"cannot write picture {str(path)!r}: {err.strerror or err}") from err
    return path
