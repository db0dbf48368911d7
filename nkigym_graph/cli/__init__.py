"""The ``nkigym-graph`` command line."""

from nkigym_graph.cli.app import main

__all__ = ["main"]
