"""Plugins: the extension points. The hooks a plugin implements and ``hookimpl``
(``hookspecs``), the process's plugin manager (``manager``), the one registry of the
transforms, backends, cost models and targets plugins contribute (``registry``), what
backends and cost models hand over (``protocols``, ``cost_report``), calling a backend
or cost model with its failures named (``calls``), and the functions that find those by
name: ``emit`` (``backends``) and the rewriting driver's entry points (``transforms``).

This layer imports the IR, numeric and rewriting layers only.
"""
