"""The trn2 analytic cost model: ordering sanity, feasibility, MFU, reporting."""

from __future__ import annotations

import dataclasses

import pytest

import nkigym_graph as ng
from nkigym_graph.cost import CostModelError, CostReport, cost_models, estimate
from nkigym_graph.ir.ops import ALLOC, LOAD, NC_MATMUL, STORE
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement, make_attrs
from nkigym_graph.ir.synthetic import tiled_matmul
from nkigym_graph.ir.targets import TRN2
from nkigym_graph.ir.variables import Param
from nkigym_graph.tiling import nc_matmul, tile


def _matmuls(widths: list[int], dtype: str = "bfloat16") -> Program:
    """One 128x128 stationary tile times moving tiles of the given widths (side by side)."""
    n = sum(widths)
    stmts = [
        Statement(ALLOC, (Operand("output", ((0, 128), (0, n))),), make_attrs(dtype=dtype)),
        Statement(LOAD, (Operand("a", ((0, 128), (0, 128))), Operand("t_a", ((0, 128), (0, 128))))),
        Statement(LOAD, (Operand("b", ((0, 128), (0, n))), Operand("t_b", ((0, 128), (0, n))))),
    ]
    start = 0
    for i, width in enumerate(widths):
        tile = ((0, 128), (start, start + width))
        out = ((0, 128), (0, width))
        stmts.append(
            Statement(
                NC_MATMUL,
                (Operand("t_a", ((0, 128), (0, 128))), Operand("t_b", tile), Operand(f"t_{i}", out)),
            )
        )
        stmts.append(Statement(STORE, (Operand(f"t_{i}", out), Operand("output", tile))))
        start += width
    params = [Param("a", (128, 128), dtype), Param("b", (128, n), dtype)]
    return Program("matmuls", params, stmts, "output")


def test_trn2_is_a_registered_cost_model() -> None:
    assert "trn2" in cost_models()
    assert isinstance(estimate(tiled_matmul(128, 128, 128)), CostReport)


def test_one_wide_matmul_is_cheaper_than_four_narrow_ones() -> None:
    one, four = estimate(_matmuls([512])), estimate(_matmuls([128] * 4))
    assert one.flops == four.flops == 2 * 128 * 128 * 512
    assert one.engine_seconds["tensor"] < four.engine_seconds["tensor"]
    # (end to end the four narrow ones store their results while the next multiplies)
    # a fixed issue cost (16 cycles) + MultiplyMoving (N cycles) at 2.4 GHz, bf16 inputs
    assert one.engine_seconds["tensor"] == pytest.approx((16 + 512) / 2.4e9)
    assert four.engine_seconds["tensor"] == pytest.approx(4 * (16 + 128) / 2.4e9)


def test_fp32_matmul_is_four_times_slower_and_has_the_fp32_peak() -> None:
    bf16, fp32 = estimate(_matmuls([512])), estimate(_matmuls([512], "float32"))
    assert fp32.engine_seconds["tensor"] == pytest.approx((16 + 4 * 512) / 2.4e9)  # moving columns 4x slower
    # the peaks of the timing model's table (128 x 128 x 2 x 2.4 GHz; a quarter for fp32)
    assert (bf16.peak_flops, fp32.peak_flops) == pytest.approx((78.6e12, 19.7e12))


def test_deduplicated_loads_move_fewer_bytes_and_take_less_time() -> None:
    program = tiled_matmul(256, 256, 512)
    deduplicated = ng.saturate(program, ["data_reuse"])
    before, after = estimate(program), estimate(deduplicated)
    assert after.bytes_moved < before.bytes_moved
    loads = len(program.statements_of("load")) - len(deduplicated.statements_of("load"))
    assert before.bytes_moved - after.bytes_moved == loads * 128 * 128 * 4
    assert after.seconds < before.seconds and after.better_than(before)


def test_merged_loads_beat_small_ones_per_byte() -> None:
    program = tiled_matmul(128, 128, 512, dtype="bfloat16")
    merged = ng.saturate(program, ["operand_merge"])
    before, after = estimate(program), estimate(merged)
    assert after.bytes_moved == before.bytes_moved
    assert after.engine_seconds["dma"] < before.engine_seconds["dma"]


def test_an_over_capacity_program_is_infeasible_and_ranks_last() -> None:
    # reused, every tile of the 2048 x 4096 fp32 operand b lives until the last row block:
    # 256 KiB per partition
    big = tiled_matmul(256, 2048, 4096)
    reused = ng.saturate(big, ["data_reuse"])
    report = estimate(reused)
    assert not report.feasible
    assert "SBUF" in report.reason and "exceeds 192.0 KiB" in report.reason
    assert report.peak_sbuf_bytes > TRN2.sbuf_bytes_per_partition
    slower_but_fitting = estimate(big)
    assert slower_but_fitting.feasible and slower_but_fitting.seconds > report.seconds
    assert slower_but_fitting.better_than(report) and not report.better_than(slower_but_fitting)


def test_psum_tiles_count_against_psum() -> None:
    report = estimate(_matmuls([512]))
    assert report.peak_psum_bytes == 512 * 4  # one fp32 accumulator of 512 columns
    assert report.peak_sbuf_bytes == (128 + 512) * 2  # the bf16 operand tiles


@pytest.mark.parametrize("size", [128, 256, 1024])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_mfu_is_within_zero_and_one(size: int, dtype: str) -> None:
    for program in (tiled_matmul(size, size, size, dtype=dtype), ng.saturate(tiled_matmul(size, size, size))):
        report = estimate(program)
        assert 0 < report.mfu <= 1
        assert report.mfu == pytest.approx(report.flops / report.seconds / report.peak_flops)


def test_engines_overlap_so_time_is_a_critical_path_not_a_sum() -> None:
    report = estimate(ng.saturate(tiled_matmul(1024, 1024, 1024, dtype="bfloat16")))
    busy = report.engine_seconds
    assert max(busy.values()) <= report.seconds < sum(busy.values())


def test_roofline_knee_is_215_flop_per_byte_for_bf16() -> None:
    report = estimate(tiled_matmul(256, 256, 256, dtype="bfloat16"))
    assert report.knee == pytest.approx(TRN2.facts["roofline_knee_flop_per_byte"], rel=0.01)
    assert report.bound == "memory"
    assert estimate(ng.saturate(tiled_matmul(1024, 1024, 1024, dtype="bfloat16"))).bound == "compute"


def test_report_says_it_is_modeled_not_measured() -> None:
    text = str(estimate(tiled_matmul(256, 256, 256)))
    assert "modeled (analytic cost model), not measured" in text
    assert "MFU" in text and "feasible" in text
    assert estimate(tiled_matmul(128, 128, 128)).to_dict()["measured"] is False


def test_unknown_cost_model_is_named() -> None:
    with pytest.raises(ng.PluginError, match=r"unknown cost model 'nope'; registered cost models: .*trn2"):
        estimate(tiled_matmul(128, 128, 128), model="nope")


def test_trn2_refuses_a_tenstorrent_target_naming_the_model_that_prices_it() -> None:
    program = tiled_matmul(32, 32, 32, tile=32, target=ng.GRAYSKULL)
    assert estimate(program).model == "tenstorrent"  # the default model is the target's
    with pytest.raises(CostModelError) as info:
        estimate(program, "trn2")
    message = str(info.value)
    assert "prices Trainium targets (trn1, trn2)" in message and "grayskull, a tenstorrent target" in message
    assert "the tenstorrent cost model prices it" in message
    assert "_hz" not in message and "facts" not in message  # no internal fact names


def test_a_trainium_target_without_the_facts_is_refused() -> None:
    program = tiled_matmul(128, 128, 128, target=dataclasses.replace(ng.TRN2, name="bare", facts={}))
    with pytest.raises(CostModelError, match=r"cannot price target 'bare': it lacks the NeuronCore figures"):
        estimate(program)


def test_elementwise_tails_and_transposes_run_on_their_engines() -> None:
    tail = estimate(tiled_matmul(256, 256, 256, tail="tanh"))
    plain = estimate(tiled_matmul(256, 256, 256))
    # four activations of 128 x 128 on the Scalar Engine: ~N cycles + 200 fixed each (the
    # Scalar Engine's fixed cycles, not the Vector Engine's 100), at 1.2 GHz
    assert tail.engine_seconds["scalar"] == pytest.approx(4 * (128 + 200) / 1.2e9)
    assert tail.flops == plain.flops + 4 * 128 * 128
    transposed = estimate(ng.tile(lambda a: ng.nc_transpose(a), {"a": (128, 256)}))
    assert transposed.engine_seconds["tensor"] > 0 and transposed.flops == 0
    assert transposed.peak_psum_bytes > 0  # the transpose result lives in PSUM


def _double_matmul(a, b, c):
    return nc_matmul(nc_matmul(a, b), c)


def test_psum_reads_by_the_tensor_engine_and_dma_wait_for_an_eviction() -> None:
    # per output tile: the second matmul reads the first one's PSUM result, the store reads
    # its own; the loaded operands are in SBUF and need no copy
    program = tile(_double_matmul, {"a": (128, 128), "b": (128, 128), "c": (128, 256)})
    copies = 2 * 2
    assert estimate(program).engine_seconds["vector"] == pytest.approx(copies * (128 + 100) / 0.96e9)


def _states(root: Program, steps: int) -> list[Program]:
    """A walk of single rewrites from ``root``, the middle candidate each time."""
    transforms = [ng.get_transform(n) for n in ("data_reuse", "operand_merge", "dead_code")]
    out, program = [root], root
    for _ in range(steps):
        found = [(t, m) for t in transforms for m in t.analyze(program)]
        if not found:
            break
        transform, match = found[len(found) // 2]
        program = ng.apply(program, transform, match)
        out.append(program)
    return out


@pytest.mark.parametrize(
    "root",
    [
        tiled_matmul(256, 384, 256, tail="tanh"),
        tile(_double_matmul, {"a": (256, 256), "b": (256, 256), "c": (256, 384)}),
    ],
    ids=["tail", "double_matmul"],
)
def test_prices_kept_across_states_give_the_reports_of_a_fresh_model(root: Program) -> None:
    shared = cost_models()["trn2"]
    for program in _states(root, 6):
        fresh = type(shared)()
        assert shared.estimate(program) == fresh.estimate(program)


def _two_layers(x_t, w1, w2):  # type: ignore[no-untyped-def]
    return ng.nc_matmul(ng.activation(ng.nc_matmul(w1, x_t), op="relu"), w2)


def test_a_computed_tile_has_the_working_dtype_so_a_bf16_matmul_reading_it_runs_at_the_bf16_rate() -> None:
    # the relu of a matmul result (fp32 in PSUM) is a bf16 tile in the kernel, as the NKI
    # backend emits it, and the stationary operand of the second matmul: it streams bf16,
    # as fast as the first
    shapes = {"x_t": (128, 128), "w1": (128, 128), "w2": (128, 128)}
    two = estimate(ng.tile(_two_layers, shapes, dtype="bfloat16"))
    # a fixed issue cost (16 cycles) + N = 128 cycles each at 2.4 GHz
    assert two.engine_seconds["tensor"] == pytest.approx(2 * (16 + 128) / 2.4e9)
    fp32 = estimate(ng.tile(_two_layers, shapes, dtype="float32"))
    assert fp32.engine_seconds["tensor"] == pytest.approx(2 * (16 + 4 * 128) / 2.4e9)  # moving 4x slower
