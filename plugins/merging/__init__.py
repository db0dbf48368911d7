"""The merge transforms behind ``operand_merge`` and ``free_dim_merge``: merge
candidates kept per (op, axis) section so a derived snapshot updates them
(``sections``), and the transform class both plugins instantiate
(``merge_transform``). The rules for merging same-op statements with adjacent slices
are the rewriting layer's (``nkigym_graph.rewriting.patterns.adjacency``), shared with
the set patterns plugin authors write.
"""
