"""Numeric truth: running a program in numpy (``interpreter``, and the memoized
``evaluate`` that serves programs sharing statements), the memory such a run needs
(``memory_limit``), comparing arrays (``compare``) and checking that a rewritten
program computes what the original does (``equivalence``).

This layer imports only the IR.
"""
