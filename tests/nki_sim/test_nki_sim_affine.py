"""``nisa.affine_select`` and ``nisa.iota``: values against the NKI reference's pseudo
code, the rules they check (SBUF only, the pattern covers the tile, a comparison
``cmp_op``), and their GpSimd timing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nkigym_graph.nki_sim import NKISimulationError, profile, simulate
from nkigym_graph.nki_sim.timing.constants import timing_constants

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
COMPARE = {
    "greater_equal": np.greater_equal,
    "greater": np.greater,
    "less_equal": np.less_equal,
    "less": np.less,
    "equal": np.equal,
    "not_equal": np.not_equal,
}


def _kernel(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"{HEADER}@nki.jit\ndef kernel(x):\n{lines}\n"


def _select(pattern: str, offset: int, multiplier: int, cmp: str, fill: str, buffer: str = "sbuf") -> str:
    return _kernel(
        f"""
t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.{buffer})
nisa.dma_copy(dst=t, src=x) if "{buffer}" == "sbuf" else nisa.tensor_copy(dst=t, src=t)
r = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
nisa.affine_select(dst=r, pattern={pattern}, offset={offset}, channel_multiplier={multiplier},
                   on_true_tile=t, on_false_value={fill}, cmp_op=nl.{cmp})
out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=r)
return out
"""
    )


def _expected(
    x: np.ndarray, steps: list[tuple[int, int]], offset: int, multiplier: int, cmp: str, fill: float
):
    """The reference's loops: partition, then the pattern's indexes outermost first."""
    out = np.empty_like(x)
    flat = x.reshape(x.shape[0], -1)
    for p in range(x.shape[0]):
        for index in np.ndindex(*(count for _, count in steps)):
            value = offset + p * multiplier + sum(step * i for (step, _), i in zip(steps, index, strict=True))
            position = np.ravel_multi_index(index, [count for _, count in steps])
            out.reshape(x.shape[0], -1)[p, position] = flat[p, position] if COMPARE[cmp](value, 0) else fill
    return out


def test_causal_mask_on_a_tile() -> None:
    x = np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32)
    out = simulate(_select("[[-1, 128]]", 0, 1, "greater_equal", 'float("-inf")'), x)
    np.testing.assert_array_equal(out, np.where(np.tril(np.ones((128, 128), dtype=bool)), x, -np.inf))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    partitions=st.integers(1, 128),
    steps=st.lists(st.tuples(st.integers(-3, 3), st.integers(1, 6)), min_size=1, max_size=3),
    offset=st.integers(-50, 50),
    multiplier=st.integers(-2, 2),
    cmp=st.sampled_from(sorted(COMPARE)),
)
def test_affine_select_follows_the_reference_loops(
    partitions: int, steps: list[tuple[int, int]], offset: int, multiplier: int, cmp: str
) -> None:
    elements = int(np.prod([count for _, count in steps]))
    x = np.random.default_rng(partitions).standard_normal((partitions, elements)).astype(np.float32)
    pattern = str([list(pair) for pair in steps])
    out = simulate(_select(pattern, offset, multiplier, cmp, "-5.0"), x)
    np.testing.assert_array_equal(out, _expected(x, steps, offset, multiplier, cmp, -5.0))


def test_iota_writes_the_affine_values() -> None:
    kernel = _kernel(
        """
r = nl.ndarray((4, 6), dtype=nl.int32, buffer=nl.sbuf)
nisa.iota(dst=r, pattern=[[10, 2], [1, 3]], offset=7, channel_multiplier=100)
out = nl.ndarray((4, 6), dtype=nl.int32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=r)
return out
"""
    )
    out = simulate(kernel, np.zeros((1, 1), dtype=np.float32))
    expected = 7 + 100 * np.arange(4)[:, None] + np.array([0, 1, 2, 10, 11, 12])[None, :]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("pattern", "cmp", "buffer", "rule"),
    [
        ("[[-1, 64]]", "greater_equal", "sbuf", "affine.pattern"),  # covers 64 of 128 elements
        ("[[-1, 128]]", "add", "sbuf", "op.invalid"),  # not a comparison
        ("[[-1, 128]]", "greater_equal", "psum", "engine.psum"),  # GpSimd cannot read PSUM
        ("[[0.5, 128]]", "greater_equal", "sbuf", "affine.operand"),
    ],
)
def test_bad_calls_name_the_rule(pattern: str, cmp: str, buffer: str, rule: str) -> None:
    x = np.zeros((128, 128), dtype=np.float32)
    with pytest.raises(NKISimulationError, match=rule.replace(".", r"\.")):
        simulate(_select(pattern, 0, 1, cmp, "0.0", buffer), x)


def test_affine_select_is_timed_on_the_gpsimd_engine() -> None:
    """One instruction of 512 elements per partition: the timing model's GpSimd price."""
    x = np.zeros((128, 512), dtype=np.float32)
    prof = profile(_select("[[-1, 512]]", 0, 1, "greater_equal", 'float("-inf")'), x)
    c = timing_constants("trn2")
    expected_ns = (c.gpsimd_fixed_cycles + 512 * c.gpsimd_cycles_per_element) / c.gpsimd_clock_ghz
    busy = prof.utilisation["GpSimd"] * prof.total_ns
    assert busy == pytest.approx(expected_ns, rel=1e-6)
