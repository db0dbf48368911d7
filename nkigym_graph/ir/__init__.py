"""The IR: what a program is. An immutable, verified DAG snapshot (``program``) of
statements (``statement``) over ops (``ops``) and targets (``targets``), with its
variables, dependency edges, indexes, verification rules, canonical hash, derivation
from a parent by an edit, and its text form (``printer``).

This layer imports only itself and ``nkigym_graph.errors``.
"""
