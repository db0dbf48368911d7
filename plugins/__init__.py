"""Built-in plugins of nkigym-graph (transforms and backends), registered through the
``nkigym_graph`` entry-point group exactly like third-party plugins."""
