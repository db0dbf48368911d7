"""``python -m nkigym_graph``: the same as the ``nkigym-graph`` command."""

import sys

from nkigym_graph.cli import main

sys.exit(main())
