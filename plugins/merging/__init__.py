"""The merge engine behind ``operand_merge`` and ``free_dim_merge``: the rules for
merging same-op statements with adjacent slices into one wider statement (``merge``),
merge candidates kept per (op, axis) section so a derived snapshot updates them
(``sections``), and the transform class both plugins instantiate
(``merge_transform``). Only those plugins use it, so it lives beside them.
"""
