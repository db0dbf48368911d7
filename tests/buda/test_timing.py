"""The netlist timing model against figures worked out by hand from its constants table.

One matmul of a ``[1 x 2]``-tile by a ``[2 x 1]``-tile operand (``m_k: 2``, ``u_kt: 1``)
on one Wormhole B0 core, every queue and buffer ``Float16_b`` (2080-byte tiles): the
per-core engine cycles, NOC, DRAM, L1 and FLOP counts below follow from the module
docstring of ``nkigym_graph.buda.timing.price`` and the table in ``.constants``
(1 GHz, 2048 MACs per cycle at LoFi, 64 B/cycle unpacker and packer, 32 B/cycle per NOC,
64 handshake cycles per ublock step, 2000 cycles of op start-up, 288 GB/s over six DRAM
channels).
"""

from __future__ import annotations

import pytest

from nkigym_graph.buda import check_netlist, load_netlist
from nkigym_graph.buda.optypes import MATH_FIDELITIES
from nkigym_graph.buda.timing import FIDELITY_PHASES, arch_constants, price_netlist, table
from nkigym_graph.ir.targets import GRAYSKULL, WORMHOLE_B0

TILE = 2080  # Float16_b tile with its header


def matmul_netlist(
    fidelity: str = "HiFi4",
    dram0: str = "[[0, 0x10000000]]",
    dram1: str = "[[0, 0x10100000]]",
    arch: str = "wormhole_b0",
    mblock: tuple[int, int] = (1, 1),
) -> str:
    rows, cols = mblock
    return f"""\
devices:
  arch: {arch}
queues:
  in0: {{type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, mblock: [{rows}, 2], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: {dram0}}}
  in1: {{type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, mblock: [2, {cols}], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: {dram1}}}
  out0: {{type: queue, input: mm, entries: 1, grid_size: [1, 1], t: 1, mblock: [{rows}, {cols}], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}}
graphs:
  graph0:
    target_device: 0
    input_count: 1
    mm:
      type: matmul
      grid_loc: [0, 0]
      grid_size: [1, 1]
      inputs: [in0, in1]
      in_df: [Float16_b, Float16_b]
      acc_df: Float16_b
      out_df: Float16_b
      intermed_df: Float16_b
      ublock_order: r
      buf_size_mb: 2
      math_fidelity: {fidelity}
      untilize_output: false
      attributes: {{m_k: 2, u_kt: 1}}
      t: 1
      mblock: [{rows}, {cols}]
      ublock: [1, 1]
programs:
  - run:
    - loop: 1
    - execute: {{graph_name: graph0}}
    - endloop
"""  # noqa: E501


def test_the_netlist_is_one_the_checker_accepts() -> None:
    assert check_netlist(matmul_netlist(), strict=True) == []


def test_one_matmul_core_by_hand() -> None:
    priced = price_netlist(load_netlist(matmul_netlist()), WORMHOLE_B0)
    (op,) = priced.ops
    engines = op.engines
    # two m_k steps, each one tile of input 0 and one of input 1; one partial sum packed
    # into the intermediate buffer and unpacked again (with input 1's unpacker)
    assert engines.unpack_a == 2 * TILE / 64
    assert engines.unpack_b == 3 * TILE / 64
    # two 32x32x32 tile products, 32768 MACs at 2048 per cycle, four HiFi4 passes each
    assert engines.math == 2 * 16 * 4 == 128
    assert engines.pack == 2 * TILE / 64  # the partial sum, then the output tile
    assert engines.handshake == 2 * 64
    assert engines.cycles == 128 + 128
    # input 0 multicast along the row, input 1 down the column: 4 tiles over two NOCs
    assert op.noc_cycles == 4 * TILE / (2 * 32)
    assert op.seconds == pytest.approx((256 + 2000) / 1e9)
    assert priced.seconds == pytest.approx(2.256e-6)
    assert op.flops == priced.flops == 2 * 32 * 32 * 32 * 2
    # L1: two output mblocks, input 0's two ublock rows of its K, input 1's whole K column,
    # the intermediate of the partial sum
    assert op.l1_bytes == priced.peak_l1_bytes == (2 + 4 + 2 + 1) * TILE
    assert priced.feasible


def test_dram_traffic_is_bounded_by_the_busiest_channel() -> None:
    together = price_netlist(load_netlist(matmul_netlist()), WORMHOLE_B0)
    apart = price_netlist(load_netlist(matmul_netlist(dram1="[[2, 0x10000000]]")), WORMHOLE_B0)
    per_channel = 288e9 / 6
    assert together.dram_bytes == apart.dram_bytes == 5 * TILE  # in0, in1 two tiles each, out0 one
    assert together.dram_seconds == pytest.approx(4 * TILE / per_channel)  # in0 and in1 on channel 0
    assert apart.dram_seconds == pytest.approx(2 * TILE / per_channel)


@pytest.mark.parametrize(
    ("fidelity", "passes"),
    [("LoFi", 1), ("HiFi2", 2), ("HiFi3", 3), ("HiFi4", 4), ("HiFi2_A", 2), ("HiFi2_B", 2)],
)
def test_math_fidelity_sets_the_passes_through_the_multiplier(fidelity: str, passes: int) -> None:
    priced = price_netlist(load_netlist(matmul_netlist(fidelity)), WORMHOLE_B0)
    assert priced.ops[0].engines.math == 2 * 16 * passes
    rows, cols = WORMHOLE_B0.facts["grid"]
    assert priced.peak_flops == pytest.approx(rows * cols * 2048 * 2 * 1e9 / passes)


def test_every_fidelity_the_checker_accepts_has_its_phases_and_a_source() -> None:
    """HiFi2_A and HiFi2_B (two-phase HiFi2 variants in tt-budabackend's MathFidelity) were
    missing from the table, so they were priced as four HiFi4 passes."""
    unpriced = [name for name in MATH_FIDELITIES if name not in FIDELITY_PHASES]
    assert unpriced == [], f"fidelities priced as HiFi4 by default: {unpriced}"
    lines = [line.split() for line in table().splitlines() if " fidelity " in line]
    sources = {words[2]: words[4] for words in lines}
    assert sources == dict.fromkeys(("LoFi", "HiFi2", "HiFi3", "HiFi4"), "[DF]") | {
        "HiFi2_A": "[BBF]",
        "HiFi2_B": "[BBF]",
    }


def test_buffers_that_do_not_fit_in_l1_make_the_netlist_infeasible() -> None:
    # 32 x 32 output tiles per core: two output mblocks alone are 2 * 1024 * 2080 bytes
    priced = price_netlist(load_netlist(matmul_netlist(mblock=(32, 32))), WORMHOLE_B0)
    assert not priced.feasible
    (reason,) = priced.reasons
    assert reason.startswith("op mm needs") and "KiB are free on wormhole_b0" in reason


def test_grayskull_has_one_mib_of_l1_and_its_own_clock() -> None:
    grayskull, wormhole = arch_constants("grayskull"), arch_constants("wormhole_b0")
    assert grayskull.l1_bytes.value == 1024 * 1024 and wormhole.l1_bytes.value == 1464 * 1024
    priced = price_netlist(load_netlist(matmul_netlist(arch="grayskull")), GRAYSKULL)
    # 1024 MACs per cycle: twice Wormhole's 16 cycles a tile product per pass
    assert priced.ops[0].engines.math == 2 * 32 * 4
    assert priced.ops[0].seconds == pytest.approx((max(97.5, 256, 65) + 128 + 2000) / 1.2e9)


def test_every_constant_has_a_source() -> None:
    text = table()
    for arch in ("grayskull", "wormhole_b0", "blackhole"):
        for name, constant in vars(arch_constants(arch)).items():
            assert constant.source, f"{arch} {name} has no source"
            assert name in text
    assert "estimate" in text and "[HC24]" in text
