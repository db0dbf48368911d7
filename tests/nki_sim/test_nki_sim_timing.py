"""The timing model (``nki_sim.profile``): dependency rules, overlap, constants, trace.

Behaviour only, never timings of this machine: every assertion compares model times of
tiny kernels with each other.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nkigym_graph.errors import NkigymError
from nkigym_graph.nki_sim import NKISimulationError, Profile, profile, simulate
from nkigym_graph.nki_sim.timing import TRN2_TIMING
from nkigym_graph.nki_sim.timing.recorder import COMPUTE_ENGINES

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"
BF16 = np.dtype(ml_dtypes.bfloat16)


def _kernel(body: str, params: str = "a") -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return HEADER + f"@nki.jit\ndef kernel({params}):\n{lines}\n"


def _slices(prof: Profile, line_text: str) -> list[tuple[float, float]]:
    """(start, end) of every slice whose source line contains ``line_text``."""
    out = []
    for s in prof.slices:
        label = prof._label(prof.events[s.event])
        if line_text in label:
            out.append((s.start, s.end))
    return out


def _span(prof: Profile, line_text: str) -> tuple[float, float]:
    found = _slices(prof, line_text)
    assert found, f"no slice for {line_text!r}"
    return min(s for s, _ in found), max(e for _, e in found)


def _a() -> np.ndarray:
    return np.random.default_rng(0).random((128, 512)).astype(np.float32)


# -- dependencies through memory -----------------------------------------------------
RAW = _kernel(
    """
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=t, src=a)  # LOAD
nisa.tensor_copy(dst=u, src=t)  # READ
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=u)
return out
"""
)


def test_read_after_write_waits_for_the_writer() -> None:
    prof = profile(RAW, _a())
    assert np.array_equal(prof.outputs, _a())
    load_end = _span(prof, "# LOAD")[1]
    assert _span(prof, "# READ")[0] >= load_end


WAR = _kernel(
    """
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
v = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.memset(dst=t, value=1.0)  # FILL
nisa.tensor_copy(dst=u, src=t)  # READ
nisa.dma_copy(dst=TARGET, src=a)  # OVERWRITE
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=u)
return out
"""
)


def test_write_after_read_waits_for_the_reader() -> None:
    same = profile(WAR.replace("TARGET", "t"), _a())
    other = profile(WAR.replace("TARGET", "v"), _a())
    assert np.all(same.outputs == 1.0)
    read_end = _span(same, "# READ")[1]
    assert _span(same, "# OVERWRITE")[0] >= read_end
    # the same load into another buffer need not wait
    assert _span(other, "# OVERWRITE")[0] < _span(other, "# READ")[1]


WAW = _kernel(
    """
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
v = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.memset(dst=t, value=1.0)  # FIRST
nisa.dma_copy(dst=TARGET, src=a)  # SECOND
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=t)
return out
"""
)


def test_write_after_write_keeps_the_order() -> None:
    same = profile(WAW.replace("TARGET", "t"), _a())
    other = profile(WAW.replace("TARGET", "v"), _a())
    assert np.array_equal(same.outputs, _a())
    assert _span(same, "# SECOND")[0] >= _span(same, "# FIRST")[1]
    assert _span(other, "# SECOND")[0] < _span(other, "# FIRST")[1]


def test_disjoint_regions_of_one_tile_do_not_depend() -> None:
    kernel = _kernel(
        """
t = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.memset(dst=t[0:128, 0:512], value=1.0)
nisa.tensor_copy(dst=u, src=t[0:128, 0:512])  # READ
nisa.dma_copy(dst=t[0:128, 512:1024], src=a)  # OTHER HALF
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nisa.dma_copy(dst=out, src=u)
return out
"""
    )
    prof = profile(kernel, _a())
    assert _span(prof, "# OTHER HALF")[0] < _span(prof, "# READ")[1]


# -- overlap: single vs double buffering ---------------------------------------------
STREAM = _kernel(
    """
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
bufs = [nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf) for _ in range(BUFFERS)]
w = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=w, src=a)
acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
for k in range(8):
    buf = bufs[k % BUFFERS]
    nisa.dma_copy(dst=buf, src=b[k * 128:(k + 1) * 128, 0:512])  # LOAD
    nisa.nc_matmul(dst=acc, stationary=w, moving=buf)  # MATMUL
res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=res, src=acc)
nisa.dma_copy(dst=out, src=res)
return out
""",
    "a, b",
)


def _overlap(first: list[tuple[float, float]], second: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in first for s2, e2 in second)


def test_double_buffering_overlaps_loads_with_compute_single_buffering_does_not() -> None:
    rng = np.random.default_rng(1)
    a = rng.random((128, 128)).astype(BF16)
    b = rng.random((1024, 512)).astype(BF16)
    single = profile(STREAM.replace("BUFFERS", "1"), a, b)
    double = profile(STREAM.replace("BUFFERS", "2"), a, b)
    want = sum(a.astype(np.float32).T @ b[k * 128 : (k + 1) * 128].astype(np.float32) for k in range(8))
    for prof in (single, double):
        assert np.allclose(prof.outputs, want, rtol=1e-3)
    assert _overlap(_slices(single, "# LOAD"), _slices(single, "# MATMUL")) == 0.0
    assert _overlap(_slices(double, "# LOAD"), _slices(double, "# MATMUL")) > 0.0
    assert double.total_ns < single.total_ns
    assert double.stalls and "waited" in str(double.stalls[0])


def test_tiles_declared_in_a_loop_rotate_through_two_buffers() -> None:
    in_loop = STREAM.replace(
        "    buf = bufs[k % BUFFERS]", "    buf = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)"
    ).replace("BUFFERS", "1")
    rng = np.random.default_rng(1)
    a, b = rng.random((128, 128)).astype(BF16), rng.random((1024, 512)).astype(BF16)
    prof = profile(in_loop, a, b)
    assert _overlap(_slices(prof, "# LOAD"), _slices(prof, "# MATMUL")) > 0.0
    one = prof.reprice(dataclasses.replace(TRN2_TIMING, loop_tile_buffers=1))
    assert _overlap(_slices(one, "# LOAD"), _slices(one, "# MATMUL")) == 0.0


# -- PSUM banks ----------------------------------------------------------------------
NINE_BANKS = _kernel(
    """
w = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
nisa.dma_copy(dst=w, src=a)
accs = []
for i in range(COUNT):
    acc = nl.ndarray((128, WIDTH), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc[0:128, 0:128], stationary=w, moving=w)
    accs.append(acc)
out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
res = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
for acc in accs:
    nisa.tensor_copy(dst=res, src=acc[0:128, 0:128])
nisa.dma_copy(dst=out, src=res)
return out
"""
).replace("WIDTH", "128")


def test_psum_bank_overflow_is_an_error() -> None:
    a = np.eye(128, dtype=np.float32)
    simulate(NINE_BANKS.replace("COUNT", "9"), a)  # 9 x 512 B fits the 16 KiB by bytes ...
    with pytest.raises(NKISimulationError) as caught:  # ... but not the 8 banks
        profile(NINE_BANKS.replace("COUNT", "9"), a)
    assert caught.value.rule == "psum.banks"
    assert "9 banks" in str(caught.value)
    assert profile(NINE_BANKS.replace("COUNT", "8"), a).total_ns > 0


# -- the constants table -------------------------------------------------------------
MIXED = _kernel(
    """
w = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=w, src=a)
x = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
nisa.dma_copy(dst=x, src=b)
y = nl.load(c)
acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(dst=acc, stationary=w, moving=x)
s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.activation(dst=s, op=nl.exp, data=acc)
t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_tensor(dst=t, data1=s, data2=y, op=nl.add)
u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(dst=u, src=t)
v = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_scalar(dst=v, data=u, op0=nl.multiply, operand0=2.0, engine=nisa.engine.gpsimd)
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nl.store(out, v)
return out
""",
    "a, b, c",
)


def _mixed(dtype: np.dtype) -> Profile:
    rng = np.random.default_rng(2)
    a, b = rng.random((128, 128)).astype(dtype) / 64, rng.random((128, 512)).astype(dtype)
    c = rng.random((128, 512)).astype(np.float32)
    prof = profile(MIXED, a, b, c)
    want = 2 * (np.exp(a.astype(np.float32).T @ b.astype(np.float32)) + c)
    assert np.allclose(prof.outputs, want, rtol=1e-3)
    return prof


def _figures(prof: Profile) -> tuple[object, ...]:
    return (
        prof.total_ns,
        prof.mfu,
        tuple(sorted(prof.busy_ns.items())),
        len(prof.slices),
        tuple((s.track, s.start) for s in prof.slices),
    )


FP8 = np.dtype(ml_dtypes.float8_e4m3)


@pytest.mark.parametrize("name", [name for name, _ in TRN2_TIMING.as_rows()])
def test_each_documented_constant_is_used(name: str) -> None:
    value = getattr(TRN2_TIMING, name)
    if name == "psum_banks":  # the 8-bank rule: one bank fewer rejects 8 live tiles
        prof = profile(NINE_BANKS.replace("COUNT", "8"), np.eye(128, dtype=np.float32))
        with pytest.raises(NKISimulationError):
            prof.reprice(dataclasses.replace(TRN2_TIMING, psum_banks=7))
        return
    if name == "psum_bank_bytes":  # 8 live [128, 256] fp32 tiles: one 2 KiB bank each, two 512 B banks
        wide = NINE_BANKS.replace("COUNT", "8").replace(
            "(128, 128), dtype=nl.float32, buffer=nl.psum", "(128, 256), dtype=nl.float32, buffer=nl.psum"
        )
        prof = profile(wide, np.eye(128, dtype=np.float32))
        with pytest.raises(NKISimulationError):
            prof.reprice(dataclasses.replace(TRN2_TIMING, psum_bank_bytes=512))
        return
    if name == "loop_tile_buffers":
        return test_tiles_declared_in_a_loop_rotate_through_two_buffers()
    dtype = {
        "pe_cycles_per_column_fp32": np.float32,
        "pe_cycles_per_column_fp8": FP8,
        "peak_tflops_fp32": np.float32,
        "peak_tflops_fp8": FP8,
    }.get(name, BF16)
    base = _mixed(np.dtype(dtype))
    changed = base.reprice(dataclasses.replace(TRN2_TIMING, **{name: type(value)(value * 10 + 1)}))
    assert _figures(changed) != _figures(base), f"{name} changes nothing"


# -- the profile's report and its trace ------------------------------------------------
def test_summary_says_it_is_a_model() -> None:
    prof = _mixed(BF16)  # HBM-side bytes: the store casts nothing, the loads move their dtypes
    text = str(prof)
    assert "profiled" in text and "not measured" in text
    assert "MFU" in text and "DMA" in text and prof.critical in text
    assert 0 < prof.mfu < 1
    assert prof.dma_bytes == 128 * 128 * 2 + 128 * 512 * 2 + 2 * 128 * 512 * 4
    assert set(prof.busy_ns) == {*COMPUTE_ENGINES, "DMA"}


def test_simulate_report_carries_the_profile() -> None:
    _, report = simulate(RAW, _a(), report=True)
    assert isinstance(report.profile, Profile)
    assert report.profile.instructions == 3


def test_trace_is_trace_event_json(tmp_path: Path) -> None:
    prof = _mixed(BF16)
    path = prof.write_trace(tmp_path / "kernel.json")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"Tensor", "Vector", "Scalar", "GpSimd"} <= names
    assert {f"DMA {q} {d}" for q in range(16) for d in ("in", "out")} <= names
    tids = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert len(tids) == len(names)  # one track per engine and queue
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == len(prof.slices)
    for e in slices:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "cat"} <= set(e)
        assert isinstance(e["ts"], float) and e["dur"] >= 0
    # timestamps are microseconds: the last slice ends at the profile's total time
    assert max(e["ts"] + e["dur"] for e in slices) == pytest.approx(prof.total_us)
    matmul = next(e for e in slices if e["cat"] == "Tensor")
    assert "nisa.nc_matmul(dst=acc" in matmul["name"]  # named by its source line
    per_track: dict[int, list[tuple[float, float]]] = {}
    for e in slices:
        per_track.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in per_track.values():  # a track runs one instruction at a time
        spans.sort()
        assert all(b[0] >= a[1] - 1e-9 for a, b in itertools.pairwise(spans))


def test_timeline_needs_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prof = _mixed(BF16)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(NkigymError, match="matplotlib"):
        prof.write_timeline(tmp_path / "kernel.svg")


def test_timeline_draws_an_svg(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = _mixed(BF16).write_timeline(tmp_path / "kernel.svg")
    assert path.read_text().lstrip().startswith("<?xml")


# -- what takes time: writes into PSUM, t[...] += u --------------------------------------
def _psum_kernel(update: str, times: int) -> str:
    return _kernel(
        f"""
at = nl.load(a[:, 0:128])
bt = nl.load(a)
acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
nisa.nc_matmul(acc, at, bt)
for i in range({times}):
    {update}
o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
nisa.tensor_copy(o, acc)
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nl.store(out, o)
return out
"""
    )


@pytest.mark.parametrize("update", ["acc *= 0.5", "acc -= bt", "acc += bt", "acc[...] = bt"])
def test_engine_writes_into_psum_take_engine_time(update: str) -> None:
    """Only ``psum += <a matmul's PSUM result>`` folds into the Tensor Engine; ``psum *=
    0.5`` and the like were priced at 0 ns, so 20 of them cost nothing."""
    once, many = (profile(_psum_kernel(update, n), _a()) for n in (1, 20))
    assert many.busy_ns["Vector"] > once.busy_ns["Vector"] + 19 * 400
    assert many.total_ns > once.total_ns


@pytest.mark.parametrize("spelling", ["acc += p", "acc[...] += p"])
def test_accumulating_a_matmul_result_into_psum_stays_free(spelling: str) -> None:
    body = f"""
at = nl.load(a[:, 0:128])
bt = nl.load(a)
acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
for i in range(8):
    p = nl.matmul(at, bt, transpose_x=True)
    {spelling}
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nl.store(out, nl.copy(acc))
return out
"""
    prof = profile(_kernel(body), _a())
    a = _a().astype(np.float64)
    assert np.allclose(prof.outputs, 8 * (a[:, :128].T @ a), rtol=1e-5)
    assert prof.busy_ns["Vector"] < 2000  # nl.zeros and nl.copy, not a copy per +=


def test_subscripted_in_place_update_is_one_instruction() -> None:
    """``t[...] += u`` is ``t += u`` (Python then stores t's own view back, which is no
    instruction); it was priced as a second Vector pass."""
    plain, subscripted = (
        profile(
            _kernel(
                f"""
t = nl.load(a)
u = nl.load(a)
for i in range(10):
    {update}
out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
nl.store(out, t)
return out
"""
            ),
            _a(),
        )
        for update in ("t += u", "t[...] += u")
    )
    assert subscripted.busy_ns == plain.busy_ns and subscripted.total_ns == plain.total_ns
    assert np.array_equal(subscripted.outputs, plain.outputs)
