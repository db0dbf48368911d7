"""The rules the NKI simulator enforces, by stable id.

Every :class:`~nkigym_graph.nki_sim.errors.NKISimulationError` carries one of these ids.

Allocation and memory
    ``alloc.shape``            shape is not a tuple of positive ints
    ``alloc.dtype``            dtype is not an NKI data type
    ``alloc.buffer``           buffer is not ``nl.sbuf``, ``nl.psum`` or an HBM buffer
    ``alloc.rank``             an SBUF/PSUM tensor has fewer than 2 dimensions
    ``alloc.partition_limit``  dim 0 (partition) of an SBUF/PSUM tensor exceeds 128
    ``alloc.hbm_capacity``     one HBM tensor larger than the target's HBM (``Target.hbm_bytes``)
    ``sbuf.capacity``          live SBUF bytes per partition exceed the target's SBUF
    ``psum.capacity``          live PSUM bytes per partition exceed the target's PSUM (8 x 2 KiB)
    ``psum.banks``             a profiled run's live PSUM tiles need more than 8 banks (each
                               tile takes whole 2 KiB banks)

Indexing and views
    ``index.rank``             more indices than dimensions (or several ``...``)
    ``index.type``             an index that is not an int, a slice, ``nl.ds`` or ``...``
    ``index.bounds``           an index or slice outside the tensor
    ``index.step``             a slice step that is not a positive int
    ``index.empty``            a slice that selects nothing
    ``index.partition_int``    an int index on the partition dim of an SBUF/PSUM tensor
    ``view.reshape``           ``reshape`` / ``view`` that cannot be a view of the same bytes
    ``view.ap``                an access pattern that is malformed or leaves the tensor

Operands (all instructions)
    ``operand.type``           an operand that must be a tensor is something else
    ``operand.buffer``         an operand in a buffer the instruction cannot access
    ``operand.rank``           an SBUF/PSUM operand with fewer than 2 dimensions
    ``operand.readonly``       a destination that is a read-only view (``nl.broadcast_to``)
    ``operand.value``          a scalar operand that is not a number
    ``engine.psum``            a GpSimd-engine instruction that touches PSUM
    ``dst.shape``              destination partition count / elements per partition differ
                               from the result's
    ``op.invalid``             an ``op`` that the instruction cannot apply
    ``dtype.bitvec``           a bit-vector operator on non-integer data
    ``unknown_keyword``        a keyword argument the instruction does not take
    ``bad_arguments``          missing, duplicated or surplus arguments

Tensor Engine
    ``matmul.input_buffer``    stationary or moving not in SBUF
    ``matmul.dst_buffer``      dst not in PSUM
    ``matmul.dst_dtype``       dst not float32 (NeuronCore-v2/v3)
    ``matmul.input_dtype``     an input dtype the Tensor Engine does not multiply
    ``matmul.k_mismatch``      partition sizes (K) of stationary and moving differ
    ``matmul.k_limit``         K > 128
    ``matmul.m_limit``         stationary free size M > 128
    ``matmul.n_limit``         moving free size N > 512
    ``matmul.dst_shape``       dst is not [M, N]
    ``matmul.psum_bank``       dst crosses a 2 KiB PSUM bank boundary
    ``matmul.accumulate_non_matmul``  a matmul that accumulates onto PSUM last written by a
                               non-matmul instruction (undefined on NeuronCore-v2/v3)
    ``transpose.buffer``       nc_transpose buffers fit neither the Tensor Engine
                               (SBUF -> PSUM) nor the Vector Engine
    ``transpose.size``         input larger than 128 x 128 (Tensor Engine) or 32 x 32 (Vector)
    ``transpose.dtype``        dst dtype differs from the input dtype

Vector / Scalar Engine
    ``tensor_tensor.both_psum``  both inputs in PSUM
    ``tensor_tensor.layout``   inputs differ in partition count or elements per partition
    ``scalar.operand``         a scalar operand (scale, bias, operand0/1, initial) that is
                               neither a number nor a [P, 1] tile
    ``tensor_scalar.op1``      ``op1`` and ``operand1`` not given together
    ``tensor_scalar_reduce.op``  a bit-vector ``op0``, or a ``reduce_op`` other than add,
                               multiply, max or min
    ``tensor_scalar_reduce.reduce_res``  a ``reduce_res`` that is not [P, 1]
    ``reduce.partition_axis``  a reduction over axis 0
    ``reduce.axis``            reduction axes that are not the last contiguous free axes
    ``activation.reduce``      ``reduce_op`` other than add, or a bad ``reduce_res``
    ``bn_stats.fmax``          ``bn_stats`` data with more than 512 elements per partition
                               (``nl.tile_size.bn_stats_fmax``)
    ``bn_aggr.triples``        ``bn_aggr`` data whose elements per partition are not a
                               multiple of 3 ((count, mean, variance x count) triples)

GpSimd Engine (``iota``, ``affine_select``)
    ``affine.pattern``         an access pattern that is not 1 to 4 ``[step, num]`` pairs of
                               ints, or whose counts do not multiply to the tile's elements
    ``affine.operand``         an offset, channel multiplier or step that is not an int, or a
                               fill value (``on_false_value``) that is not a number

DMA
    ``dma.psum``               a DMA that reads or writes PSUM
    ``dma.shape``              DMA source and destination shapes differ
    ``dma.rmw_op``             a ``dst_rmw_op`` other than add
    ``dma_transpose.axes``     an unsupported permutation

Kernel
    ``kernel.source``          the source cannot be read, parsed or executed
    ``kernel.not_found``       no kernel function, or several without ``kernel_name``
    ``kernel.arguments``       the arrays do not fit the kernel's parameters
    ``input.dtype``            an input array with a dtype NKI does not support
    ``return.buffer``          the kernel returns an SBUF/PSUM tensor
    ``return.type``            the kernel returns something other than HBM tensors (a number,
                               None, an empty tuple)
    ``kernel.assert``          an ``assert`` in the kernel failed
    ``kernel.exception``       any other Python exception inside the kernel
    ``kernel.exit``            the kernel raised SystemExit (``sys.exit``), a KeyboardInterrupt
                               without a real interrupt, or another non-``Exception``
    ``limit.instructions``     the kernel issued more NKI instructions than ``max_instructions``
    ``limit.time``             the kernel ran longer than ``timeout`` seconds of wall time
    ``limit.value``            a ``max_instructions`` or ``timeout`` that is not None or a
                               non-negative number
    ``argument.value``         a ``kernel_name`` that is not a str or None, or a ``report``
                               or ``profile`` flag that is not True or False
    ``api.unsupported``        an ``nki`` name the simulator does not provide
    ``simulation.inactive``    an NKI call outside a running simulation
    ``target.family``          a target that is not an AWS Neuron core
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


def _parse(doc: str) -> dict[str, str]:
    rules: dict[str, str] = {}
    last = ""
    for raw in doc.splitlines():
        line = raw.strip()
        if line.startswith("``") and "``" in line[2:]:
            end = line.index("``", 2)
            last = line[2:end]
            rules[last] = line[end + 2 :].strip()
        elif last and raw.startswith(" " * 27) and line:
            rules[last] += " " + line
        else:
            last = ""
    return rules


RULES: Mapping[str, str] = MappingProxyType(_parse(__doc__ or ""))
"""Rule id -> one-line description, read from this module's docstring."""
