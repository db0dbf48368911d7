"""An example nkigym-graph plugin: fold ``relu(relu(x))`` into ``relu(x)``."""
