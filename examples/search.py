"""Search: explore rewrite sequences of a tiled 512x512x1024 matmul under the analytic
Trn2 cost model; every program reached is verified against the original.

    python examples/search.py
"""

import numpy as np

import nkigym_graph as nkigym


def main() -> None:
    program = nkigym.tile(nkigym.nc_matmul, {"lhs": (512, 512), "rhs": (512, 1024)})
    print(f"tiled: {len(program)} statements; {nkigym.estimate(program)}")

    result = nkigym.search(program, strategy="greedy", seed=0)
    print(f"greedy: {result.stats}")
    print(f"best: {len(result.best)} statements after {len(result.path)} rewrites; {result.cost}")
    for transform, match in result.path[:5]:
        print(f"  {transform}: {match.detail}")

    walk = nkigym.search(program, strategy="random", budget=20, seed=1, min_depth=3)
    print(f"random walks: {walk.stats}")

    assert nkigym.replay(program, result.path) == result.best  # the path reproduces the best
    rng = np.random.default_rng(0)
    lhs, rhs = rng.standard_normal((512, 512)), rng.standard_normal((512, 1024))
    assert np.allclose(nkigym.interpret(result.best, dtype=np.float64, lhs=lhs, rhs=rhs), lhs.T @ rhs)


if __name__ == "__main__":
    main()
