"""Every simulator rule rejects a crafted kernel, naming the rule, instruction and line.

Each case is a kernel body; the offending line ends in ``# BAD`` and the error must point
at it. The shared setup gives an HBM input ``a`` [128, 512] and tiles ``s`` (SBUF
[128, 512], loaded), ``w`` (SBUF [128, 128], ones), ``p`` (PSUM [128, 512]) and an HBM
output ``out``.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from nkigym_graph.ir.targets import TRN2, Target
from nkigym_graph.nki_sim import RULES, NKISimulationError, Simulator, simulate

HEADER = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a):
    s = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=a)
    w = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=w, value=1.0)
    p = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
    out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
"""


def kernel_source(body: str) -> tuple[str, int]:
    """The kernel text and the 1-based line marked ``# BAD``."""
    text = HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    text += "    return out\n"
    marked = [i for i, line in enumerate(text.splitlines(), 1) if line.endswith("# BAD")]
    assert len(marked) == 1, "mark exactly one line with # BAD"
    return text, marked[0]


def _input() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((128, 512), dtype=np.float32)


CASES: list[tuple[str, str, str]] = [
    # allocation
    ("alloc.partition_limit", "nl.ndarray", "t = nl.ndarray((256, 64), nl.float32, buffer=nl.sbuf)  # BAD"),
    ("alloc.rank", "nl.ndarray", "t = nl.ndarray((128,), nl.float32, buffer=nl.sbuf)  # BAD"),
    ("alloc.shape", "nl.ndarray", "t = nl.ndarray((128, 0), nl.float32, buffer=nl.sbuf)  # BAD"),
    ("alloc.dtype", "nl.ndarray", "t = nl.ndarray((128, 4), 'float64', buffer=nl.sbuf)  # BAD"),
    ("alloc.buffer", "nl.ndarray", "t = nl.ndarray((128, 4), nl.float32, buffer='dram')  # BAD"),
    ("alloc.partition_limit", "nl.zeros", "t = nl.zeros((129, 4), nl.float32, buffer=nl.psum)  # BAD"),
    ("sbuf.capacity", "nl.ndarray", "t = nl.ndarray((128, 50000), nl.float32)  # BAD"),
    (
        "sbuf.capacity",
        "nl.ndarray",
        """
        big1 = nl.ndarray((128, 30000), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=big1, value=0.0)
        big2 = nl.ndarray((128, 30000), nl.float32, buffer=nl.sbuf)  # BAD
        nisa.tensor_copy(dst=big2, src=big1)
    """,
    ),
    (
        "psum.capacity",
        "nl.ndarray",
        """
        banks = []
        for i in range(8):
            banks.append(nl.ndarray((128, 512), nl.float32, buffer=nl.psum))
        extra = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)  # BAD
        for bank in banks:
            nisa.memset(dst=bank, value=0.0)
    """,
    ),
    # indexing and views
    ("index.bounds", "tensor indexing", "v = a[0:256, 0:512]  # BAD"),
    ("index.bounds", "tensor indexing", "nisa.tensor_copy(dst=w[:, nl.ds(120, 16)], src=w[:, 0:16])  # BAD"),
    ("index.step", "tensor indexing", "v = a[:, 0:512:-1]  # BAD"),
    ("index.empty", "tensor indexing", "v = a[:, 5:5]  # BAD"),
    ("index.rank", "tensor indexing", "v = a[0:1, 0:2, 0:3]  # BAD"),
    ("index.type", "tensor indexing", "v = a[:, 1.5]  # BAD"),
    ("index.partition_int", "tensor indexing", "v = s[0, 0:4]  # BAD"),
    ("view.reshape", "tensor view", "v = s.reshape((64, 1024))  # BAD"),
    ("view.ap", "tensor view", "v = s.ap([[512, 128], [1, 1024]])  # BAD"),
    ("view.ap", "tensor view", "v = s.ap([[1, 256], [1, 2]])  # BAD"),
    # operands
    ("operand.type", "nisa.memset", "nisa.memset(dst=3, value=0.0)  # BAD"),
    ("operand.buffer", "nisa.tensor_copy", "nisa.tensor_copy(dst=s, src=a)  # BAD"),
    ("operand.buffer", "nl.store", "nl.store(s, w)  # BAD"),  # nl.store writes HBM
    ("operand.buffer", "nl.store", "nl.store(out, a)  # BAD"),  # from on-chip memory
    ("operand.buffer", "nl.load", "t = nl.load(s)  # BAD"),  # nl.load reads HBM
    ("operand.rank", "nisa.memset", "nisa.memset(dst=s[:, 0], value=0.0)  # BAD"),
    (
        "operand.readonly",
        "nisa.memset",
        """
        b = nl.broadcast_to(s[0:1, :], (128, 512))
        nisa.memset(dst=b, value=1.0)  # BAD
    """,
    ),
    ("operand.value", "nisa.memset", "nisa.memset(dst=s, value='one')  # BAD"),
    ("engine.psum", "nisa.memset", "nisa.memset(dst=p, value=0.0, engine=nisa.engine.gpsimd)  # BAD"),
    ("dst.shape", "nisa.tensor_copy", "nisa.tensor_copy(dst=w, src=s)  # BAD"),
    ("dst.shape", "nisa.activation", "nisa.activation(dst=w, op=nl.exp, data=s)  # BAD"),
    ("op.invalid", "nisa.activation", "nisa.activation(dst=s, op=nl.add, data=s)  # BAD"),
    (
        "op.invalid",
        "nisa.tensor_reduce",
        "nisa.tensor_reduce(dst=s[:, 0:1], op=nl.exp, data=s, axis=1)  # BAD",
    ),
    (
        "dtype.bitvec",
        "nisa.tensor_tensor",
        "nisa.tensor_tensor(dst=s, data1=s, data2=s, op=nl.bitwise_and)  # BAD",
    ),
    (
        "unknown_keyword",
        "nisa.nc_matmul",
        "nisa.nc_matmul(dst=p, stationary=w, moving=s, transpose_x=True)  # BAD",
    ),
    (
        "unknown_keyword",
        "nl.ndarray",
        "t = nl.ndarray((128, 4), nl.float32, buffer=nl.sbuf, mask=None)  # BAD",
    ),
    ("bad_arguments", "nisa.tensor_copy", "nisa.tensor_copy(dst=s)  # BAD"),
    # Tensor Engine
    (
        "matmul.input_buffer",
        "nisa.nc_matmul",
        """
        q = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=q, moving=s)  # BAD
    """,
    ),
    ("matmul.dst_buffer", "nisa.nc_matmul", "nisa.nc_matmul(dst=s, stationary=w, moving=s)  # BAD"),
    (
        "matmul.dst_dtype",
        "nisa.nc_matmul",
        """
        q = nl.ndarray((128, 512), nl.bfloat16, buffer=nl.psum)
        nisa.nc_matmul(dst=q, stationary=w, moving=s)  # BAD
    """,
    ),
    (
        "matmul.input_dtype",
        "nisa.nc_matmul",
        """
        i = nl.ndarray((128, 128), nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=i, value=1)
        nisa.nc_matmul(dst=p, stationary=i, moving=s)  # BAD
    """,
    ),
    ("matmul.k_mismatch", "nisa.nc_matmul", "nisa.nc_matmul(dst=p, stationary=w, moving=s[0:64, :])  # BAD"),
    ("matmul.m_limit", "nisa.nc_matmul", "nisa.nc_matmul(dst=p, stationary=s[:, 0:256], moving=s)  # BAD"),
    (
        "matmul.n_limit",
        "nisa.nc_matmul",
        """
        wide = nl.ndarray((128, 640), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=wide, value=1.0)
        acc = nl.ndarray((128, 640), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=w, moving=wide)  # BAD
    """,
    ),
    ("matmul.dst_shape", "nisa.nc_matmul", "nisa.nc_matmul(dst=p[0:64, :], stationary=w, moving=s)  # BAD"),
    (
        "matmul.psum_bank",
        "nisa.nc_matmul",
        """
        two_banks = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=two_banks[:, 256:768], stationary=w, moving=s)  # BAD
    """,
    ),
    (
        "matmul.accumulate_non_matmul",
        "nisa.nc_matmul",
        """
        nisa.memset(dst=p, value=0.0)
        nisa.nc_matmul(dst=p, stationary=w, moving=s, accumulate=True)  # BAD
    """,
    ),
    (
        "matmul.accumulate_non_matmul",
        "nisa.nc_matmul",
        """
        nisa.nc_matmul(dst=p, stationary=w, moving=s)
        nisa.activation(dst=p, op=nl.relu, data=p)
        nisa.nc_matmul(dst=p, stationary=w, moving=s)  # BAD
    """,
    ),
    ("transpose.buffer", "nisa.nc_transpose", "nisa.nc_transpose(dst=w, data=w)  # BAD"),
    (
        "transpose.size",
        "nisa.nc_transpose",
        """
        q = nl.ndarray((128, 128), nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=q, data=w, engine=nisa.engine.vector)  # BAD
    """,
    ),
    ("transpose.size", "nisa.nc_transpose", "nisa.nc_transpose(dst=p, data=s)  # BAD"),
    (
        "transpose.dtype",
        "nisa.nc_transpose",
        """
        q = nl.ndarray((128, 128), nl.bfloat16, buffer=nl.psum)
        nisa.nc_transpose(dst=q, data=w)  # BAD
    """,
    ),
    # Vector / Scalar Engine
    (
        "tensor_tensor.both_psum",
        "nisa.tensor_tensor",
        "nisa.tensor_tensor(dst=s, data1=p, data2=p, op=nl.add)  # BAD",
    ),
    (
        "tensor_tensor.layout",
        "nisa.tensor_tensor",
        "nisa.tensor_tensor(dst=s, data1=s, data2=w, op=nl.add)  # BAD",
    ),
    (
        "scalar.operand",
        "nisa.tensor_scalar",
        "nisa.tensor_scalar(dst=s, data=s, op0=nl.add, operand0=w)  # BAD",
    ),
    ("scalar.operand", "nisa.activation", "nisa.activation(dst=s, op=nl.exp, data=s, bias=w)  # BAD"),
    (
        "tensor_scalar.op1",
        "nisa.tensor_scalar",
        "nisa.tensor_scalar(dst=s, data=s, op0=nl.add, operand0=1.0, op1=nl.multiply)  # BAD",
    ),
    (
        "reduce.partition_axis",
        "nisa.tensor_reduce",
        """
        r = nl.ndarray((1, 512), nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=r, op=nl.add, data=s, axis=0)  # BAD
    """,
    ),
    (
        "reduce.axis",
        "nisa.tensor_reduce",
        """
        c = nl.ndarray((128, 4, 128), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=c, value=1.0)
        nisa.tensor_reduce(dst=w, op=nl.add, data=c, axis=1)  # BAD
    """,
    ),
    (
        "activation.reduce",
        "nisa.activation",
        """
        r = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=s, op=nl.exp, data=s, reduce_op=nl.maximum,  # BAD
                        reduce_res=r, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    """,
    ),
    (
        "bn_stats.fmax",
        "nisa.bn_stats",
        """
        st = nl.ndarray((128, 6), nl.float32, buffer=nl.sbuf)
        c = nl.ndarray((128, 513), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=c, value=1.0)
        nisa.bn_stats(dst=st, data=c)  # BAD
    """,
    ),
    (
        "bn_aggr.triples",
        "nisa.bn_aggr",
        """
        mv = nl.ndarray((128, 2), nl.float32, buffer=nl.sbuf)
        st = nl.ndarray((128, 8), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=st, value=1.0)
        nisa.bn_aggr(dst=mv, data=st)  # BAD
    """,
    ),
    # DMA
    ("dma.psum", "nisa.dma_copy", "nisa.dma_copy(dst=out, src=p)  # BAD"),
    ("dma.shape", "nisa.dma_copy", "nisa.dma_copy(dst=out[:, 0:256], src=s)  # BAD"),
    ("dma.rmw_op", "nisa.dma_copy", "nisa.dma_copy(dst=out, src=s, dst_rmw_op=nl.multiply)  # BAD"),
    (
        "dma_transpose.axes",
        "nisa.dma_transpose",
        "nisa.dma_transpose(dst=w, src=a[:, 0:128], axes=(0, 1))  # BAD",
    ),
    # kernel
    ("return.buffer", "kernel", "return s  # BAD"),
    ("kernel.assert", "kernel", "assert a.shape[0] == 64, 'needs 64 rows'  # BAD"),
    ("kernel.exception", "kernel", "x = 1 / 0  # BAD"),
    ("kernel.exception", "kernel", "x = 1 if s else 0  # BAD"),  # a tile has no truth value
    ("api.unsupported", "kernel", "x = nl.par_dim(128)  # BAD"),
]


@pytest.mark.parametrize(
    ("rule", "instruction", "body"), CASES, ids=[f"{rule}-{i}" for i, (rule, _, _) in enumerate(CASES)]
)
def test_rule_rejects_crafted_kernel(rule: str, instruction: str, body: str) -> None:
    source, line = kernel_source(body)
    with pytest.raises(NKISimulationError) as caught:
        simulate(source, _input())
    err = caught.value
    assert (err.rule, err.instruction, err.line) == (rule, instruction, line), str(err)
    assert str(err).startswith(f"{instruction} (line {line}) [{rule}]: ")


def test_message_names_the_limit() -> None:
    body = next(body for rule, _, body in CASES if rule == "matmul.n_limit")
    source, _ = kernel_source(body)
    expected = r"\[matmul\.n_limit\]: moving free size N=640 > 512"
    with pytest.raises(NKISimulationError, match=expected):
        simulate(source, _input())


def test_k_limit_comes_from_the_target() -> None:
    wide = Target(
        name="wide-test",
        family="neuron",
        partition_size=256,
        tile_sizes=TRN2.tile_sizes,
        op_limits={"nc_matmul": {"M": 128, "K": 128, "N": 512}},
        sbuf_bytes_per_partition=TRN2.sbuf_bytes_per_partition,
        psum_bytes_per_partition=TRN2.psum_bytes_per_partition,
        facts=TRN2.facts,
    )
    source, line = kernel_source("""
        x = nl.ndarray((256, 128), nl.float32, buffer=nl.sbuf)
        y = nl.ndarray((256, 512), nl.float32, buffer=nl.sbuf)
        nisa.nc_matmul(dst=p, stationary=x, moving=y)  # BAD
    """)
    with pytest.raises(NKISimulationError) as caught:
        simulate(source, _input(), target=wide)
    assert (caught.value.rule, caught.value.line) == ("matmul.k_limit", line)
    assert "K=256 > 128" in str(caught.value)


def test_syntax_error_reports_the_source_line() -> None:
    with pytest.raises(NKISimulationError) as caught:
        simulate("import nki\n\n@nki.jit\ndef k(a):\n    return a +\n", _input())
    assert (caught.value.rule, caught.value.line) == ("kernel.source", 5)


def test_module_level_error_is_a_source_error() -> None:
    with pytest.raises(NKISimulationError) as caught:
        simulate("import nki\nLIMIT = undefined_name\n", _input())
    assert (caught.value.rule, caught.value.line) == ("kernel.source", 2)
    assert "NameError" in str(caught.value)


TWO_KERNELS = (
    HEADER.split("@nki.jit")[0]
    + """
@nki.jit
def first(a):
    return a


@nki.jit
def second(a):
    return a
"""
)


def test_several_kernels_need_a_name() -> None:
    with pytest.raises(NKISimulationError) as caught:
        simulate(TWO_KERNELS, _input())
    assert caught.value.rule == "kernel.not_found"
    assert "first, second" in str(caught.value)
    x = _input()
    assert simulate(TWO_KERNELS, x, kernel_name="second") is x


def test_unknown_kernel_name() -> None:
    with pytest.raises(NKISimulationError) as caught:
        simulate(TWO_KERNELS, _input(), kernel_name="third")
    assert caught.value.rule == "kernel.not_found"


def test_wrong_argument_count() -> None:
    source, _ = kernel_source("x = 1  # BAD")
    with pytest.raises(NKISimulationError) as caught:
        simulate(source, _input(), _input())
    assert (caught.value.rule, caught.value.line) == ("kernel.arguments", 7)


def test_unsupported_input_dtype() -> None:
    source, _ = kernel_source("x = 1  # BAD")
    with pytest.raises(NKISimulationError) as caught:
        simulate(source, np.zeros((128, 512)))
    assert caught.value.rule == "input.dtype"
    assert "float64" in str(caught.value)


def test_non_neuron_target_is_rejected() -> None:
    source, _ = kernel_source("x = 1  # BAD")
    with pytest.raises(NKISimulationError) as caught:
        simulate(source, _input(), target="wormhole_b0")
    assert caught.value.rule == "target.family"


def test_report_before_any_run() -> None:
    source, _ = kernel_source("x = 1  # BAD")
    with pytest.raises(NKISimulationError) as caught:
        _ = Simulator(source).peak_sbuf_bytes
    assert caught.value.rule == "simulation.inactive"


def test_every_rule_is_exercised_by_a_test() -> None:
    here = Path(__file__).parent
    text = "\n".join(p.read_text() for p in sorted(here.glob("test_nki_sim_*.py")))
    quoted = set(re.findall(r"\"([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)?)\"", text))
    missing = sorted(set(RULES) - quoted)
    assert not missing, f"rules without a test: {missing}"
