"""``weight_stitch``: several matmuls' weights become one stitched parameter (seed 003).

Before::

    def f(x, w1, w2):
        ...
        tensor_1 = w1[0:64, 0:32]
        tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
        ...
        tensor_4 = w2[0:64, 0:64]
        tensor_5 = nkigym.nc_matmul(tensor_0, tensor_4)

After (``w1 [64, 32]`` in columns 0:32, ``w2 [64, 64]`` in columns 32:96)::

    def f(x, stitched__w1_64x32__w2_64x64):
        ...
        tensor_1 = stitched__w1_64x32__w2_64x64[0:64, 0:32]
        tensor_2 = nkigym.nc_matmul(tensor_0, tensor_1)
        ...
        tensor_4 = stitched__w1_64x32__w2_64x64[0:64, 32:96]
        tensor_5 = nkigym.nc_matmul(tensor_0, tensor_4)

On Tenstorrent the weights then take one circular buffer instead of one each. A weight
is a parameter read only as ``nc_matmul`` rhs; there is one match per dtype with two or
more weights (a stitched tensor has one dtype), whose nodes are the weights' loads.
Matches of different dtypes touch different loads and never conflict. The parameter's
name records the layout: ``nkigym_graph.stitching.stitching_of(program)`` gives the
``StitchMetadata`` and ``stitch_inputs(program, inputs)`` the stitched inputs.

The rewrite changes the parameter list, which a statement ``Edit`` cannot express, so
this transform is applied with ``apply`` (its ``rewrite``); ``saturate`` refuses it with
a message rather than applying only the statement part.
"""

from __future__ import annotations

from nkigym_graph import hookimpl
from nkigym_graph.errors import NkigymError, TransformError
from nkigym_graph.ir.program import Program
from nkigym_graph.rewriting.transform import Edit, Match, Transform
from nkigym_graph.stitching.errors import StitchError
from nkigym_graph.stitching.program_stitch import plan, stitch_program, stitched_loads
from nkigym_graph.stitching.weight_params import WeightAnalysis, find_weights


class WeightStitch(Transform):
    """Matmul weights of one dtype become one stitched parameter, each at its column offset."""

    name = "weight_stitch"
    batched = False  # it replaces parameters: saturation applies it through rewrite()

    def analyze(self, program: Program) -> list[Match]:
        matches = []
        for group in find_weights(program).groups:
            try:
                weights, metadata, stitched = plan(program, [w.name for w in group])
            except StitchError:
                continue  # the stitched name is taken: explain() and stitch_program() say so
            replaced = stitched_loads(program, weights, metadata, stitched)
            layout = ", ".join(
                f"{w.name} -> columns {slot.col_start}:{slot.col_end}"
                for w, slot in zip(weights, metadata.weights.values(), strict=True)
            )
            matches.append(
                Match(
                    transform=self.name,
                    nodes=tuple(sorted(replaced)),
                    edit=Edit(replace=replaced),
                    mentions=frozenset(w.name for w in weights),
                    detail=f"stitch {layout} of {stitched} {list(metadata.unified_shape)}",
                    program_hash=program.canonical_hash,
                )
            )
        return matches

    def rewrite(self, program: Program, match: Match) -> Program:
        self.check_origin(program, match)
        statements = program
        loaded = {statements[node].operands[0].var for node in match.nodes if node in program}
        weights = [p.name for p in program.params if p.name in loaded]
        try:
            return stitch_program(program, weights)
        except NkigymError as err:
            raise TransformError(f"{self.name}: {err}") from err

    def explain(self, program: Program, *nodes: int) -> str:
        """Why parameters are (not) stitched: all of them, or those ``nodes`` load."""
        analysis = find_weights(program)
        if not nodes:
            return analysis.explain()
        lines = []
        for node in nodes:
            if node not in program or program[node].op.name != "load":
                lines.append(f"statement {node} is not a load of a parameter")
                continue
            lines.append(f"statement {node}: {_why(analysis, program[node].operands[0].var)}")
        return "\n".join(lines)


def _why(analysis: WeightAnalysis, param: str) -> str:
    for group in analysis.groups:
        if param in {w.name for w in group}:
            return f"{param} is stitchable with {', '.join(w.name for w in group if w.name != param)}"
    return f"{param}: {analysis.rejected.get(param, 'is not a parameter')}"


@hookimpl
def nkigym_graph_register_transforms() -> list[type[Transform]]:
    return [WeightStitch]
