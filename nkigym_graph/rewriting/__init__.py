"""Rewriting: how a program changes. The transform protocol and its edits
(``transform``), applying many edits in one rebuild (``rewrite``), analyses cached per
snapshot and carried along derivations (``analysis_cache``), transforms' failures named
(``transform_guard``) and the driver that applies matches and saturates
(``driver``).

This layer imports the IR and numeric layers only: transforms are given as objects
(finding one by name is the plugin layer's job).
"""
