"""Calibration kernels for the timing model: C = A.T @ B in NKI (``lhsT`` [K, M], ``rhs``
[K, N], result [M, N] in the inputs' dtype).

``LADDER``: one kernel per structure of REFERENCE.md's "measured kernel-structure
ladder" (2048^3 bf16 on trn2 hardware), written here from the structures' descriptions.
Every rung issues the same matmuls (128-row stationary, 512-wide moving, one per K tile
of each 128 x 512 output tile) and evacuates each PSUM tile through the Scalar Engine
(``nisa.activation`` copy); they differ only in buffering, loop order and blocking.

``TUTORIAL``: the NKI tutorial's matmul progression -- basic (one tile), tiled, hoisted
loads, blocked free dimension, fully optimised -- in the same structures the tutorial
teaches, written here.

Shapes: M and N multiples of 512, K a multiple of 256 (the block sizes shrink for the
small shapes the tests run).
"""

from __future__ import annotations

HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"

RUNG1_SUNK_LOADS = (
    HEADER
    + '''
@nki.jit
def rung1_sunk_loads(lhsT, rhs):
    """Loads sunk into the innermost K loop, one buffer each: every matmul waits for its
    own two loads (and each load for the matmul before it to release the buffer)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a_tile = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
    b_tile = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    out_tile = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.sbuf)
    for m in range(M // 128):
        for n in range(N // 512):
            for k in range(K // 128):
                nisa.dma_copy(dst=a_tile, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                nisa.dma_copy(dst=b_tile, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(dst=acc, stationary=a_tile, moving=b_tile, accumulate=k > 0)
            nisa.activation(dst=out_tile, op=nl.copy, data=acc)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=out_tile)
    return result
'''
)

_HOISTED_BODY = """
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 128
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    # operand loads hoisted out of every loop: rhs by K tile, then lhsT by M strip
    b_all = nl.ndarray((128, KT, N), dtype=rhs.dtype, buffer=nl.sbuf)
    for k in range(KT):
        nisa.dma_copy(dst=b_all[0:128, k, 0:N], src=rhs[k * 128:(k + 1) * 128, 0:N])
    a_all = nl.ndarray((128, M // 128, KT, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
    for m in range(M // 128):  # element (p, k, j) of strip m is lhsT[k * 128 + p, m * 128 + j]
        strip = lhsT.ap([[M, 128], [128 * M, KT], [1, 128]], offset=m * 128)
        nisa.dma_copy(dst=a_all[0:128, m, 0:KT, 0:128], src=strip)
    accs = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(PSUM_BUFFERS)]
    outs = [nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.sbuf) for _ in range(PSUM_BUFFERS)]
    i = 0
    for m in range(M // 128):
        for n in range(N // 512):
            acc = accs[i % PSUM_BUFFERS]
            out_tile = outs[i % PSUM_BUFFERS]
            i += 1
            for k in range(KT):
                nisa.nc_matmul(dst=acc, stationary=a_all[0:128, m, k, 0:128],
                               moving=b_all[0:128, k, n * 512:(n + 1) * 512], accumulate=k > 0)
            nisa.activation(dst=out_tile, op=nl.copy, data=acc)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=out_tile)
    return result
"""

RUNG2_PSUM_PER_TILE = (
    HEADER
    + '''
@nki.jit
def rung2_psum_per_tile(lhsT, rhs):
    """A PSUM accumulator per (m, n) output tile, all K accumulated in PSUM; operand
    loads hoisted out of the K loop (here: out of all loops). One accumulator, so the
    next tile's matmuls wait until this one is drained."""'''
    + _HOISTED_BODY.replace("PSUM_BUFFERS", "1")
)

RUNG3_PSUM_DOUBLE = (
    HEADER
    + '''
@nki.jit
def rung3_psum_double(lhsT, rhs):
    """As rung 2, with the accumulator (and its SBUF copy) double-buffered: draining one
    overlaps filling the next."""'''
    + _HOISTED_BODY.replace("PSUM_BUFFERS", "2")
)

RUNG4_STREAMING = (
    HEADER
    + '''
@nki.jit
def rung4_streaming(lhsT, rhs):
    """Streaming, single-level K: per (n block, m block) of 512 x 512, the K blocks of
    lhsT and rhs load double-buffered (the next K block loads while this one
    multiplies) and PSUM accumulates all of K (four accumulators, double-buffered
    across output blocks)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    BK = min(1024, K // 2)
    KB, KT = K // BK, BK // 128
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a_bufs = [nl.ndarray((128, KT, 512), dtype=lhsT.dtype, buffer=nl.sbuf) for _ in range(2)]
    b_bufs = [nl.ndarray((128, KT, 512), dtype=rhs.dtype, buffer=nl.sbuf) for _ in range(2)]
    accs = [[nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(4)] for _ in range(2)]
    outs = [nl.ndarray((128, 4, 512), dtype=lhsT.dtype, buffer=nl.sbuf) for _ in range(2)]
    step = 0
    block = 0
    for n in range(N // 512):
        for mb in range(M // 512):
            acc = accs[block % 2]
            out_block = outs[block % 2]
            block += 1
            for kb in range(KB):
                a_blk = a_bufs[step % 2]
                b_blk = b_bufs[step % 2]
                step += 1
                # element (p, k, j) of a K block is row kb * BK + k * 128 + p
                a_src = lhsT.ap([[M, 128], [128 * M, KT], [1, 512]], offset=kb * BK * M + mb * 512)
                b_src = rhs.ap([[N, 128], [128 * N, KT], [1, 512]], offset=kb * BK * N + n * 512)
                nisa.dma_copy(dst=a_blk, src=a_src)
                nisa.dma_copy(dst=b_blk, src=b_src)
                for mt in range(4):
                    for k in range(KT):
                        nisa.nc_matmul(dst=acc[mt], stationary=a_blk[0:128, k, mt * 128:(mt + 1) * 128],
                                       moving=b_blk[0:128, k, 0:512], accumulate=kb > 0 or k > 0)
            for mt in range(4):
                nisa.activation(dst=out_block[0:128, mt, 0:512], op=nl.copy, data=acc[mt])
                r0 = mb * 512 + mt * 128
                nisa.dma_copy(dst=result[r0:r0 + 128, n * 512:(n + 1) * 512], src=out_block[0:128, mt, 0:512])
    return result
'''
)

_RFACTOR_BODY = """
    K, M = lhsT.shape
    _, N = rhs.shape
    BK = min(1024, K // 2)
    KB, KT, MT = K // BK, BK // 128, M // 128
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a_bufs = [nl.ndarray((128, KT, 512), dtype=lhsT.dtype, buffer=nl.sbuf) for _ in range(2)]
    b_bufs = [nl.ndarray((128, KT, 512), dtype=rhs.dtype, buffer=nl.sbuf) for _ in range(2)]
    accs = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(4)]
    partials = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf) for _ in range(4)]
    outs = [nl.ndarray((128, MT, 512), dtype=nl.float32, buffer=nl.sbuf) for _ in range(OUT_BUFFERS)]
    a_step = 0
    tile = 0
    for n in range(N // 512):
        out_block = outs[n % OUT_BUFFERS]
        ZERO
        for kb in range(KB):
            b_blk = b_bufs[kb % 2]
            # element (p, k, j) of a K block is row kb * BK + k * 128 + p
            b_src = rhs.ap([[N, 128], [128 * N, KT], [1, 512]], offset=kb * BK * N + n * 512)
            nisa.dma_copy(dst=b_blk, src=b_src)
            for mb in range(M // 512):
                a_blk = a_bufs[a_step % 2]
                a_step += 1
                a_src = lhsT.ap([[M, 128], [128 * M, KT], [1, 512]], offset=kb * BK * M + mb * 512)
                nisa.dma_copy(dst=a_blk, src=a_src)
                for mt in range(4):
                    acc = accs[tile % 4]
                    partial = partials[tile % 4]
                    tile += 1
                    for k in range(KT):
                        nisa.nc_matmul(dst=acc, stationary=a_blk[0:128, k, mt * 128:(mt + 1) * 128],
                                       moving=b_blk[0:128, k, 0:512], accumulate=k > 0)
                    nisa.activation(dst=partial, op=nl.copy, data=acc)
                    m = mb * 4 + mt
                    ACCUMULATE
        STORE
    return result
"""

_ZERO = "nisa.memset(dst=out_block, value=0.0, engine=nisa.engine.gpsimd)"
_ADD = """nisa.tensor_tensor(dst=out_block[0:128, m, 0:512], data1=out_block[0:128, m, 0:512],
                                       data2=partial, op=nl.add)"""
_COPY_OR_ADD = """if kb == 0:
                        nisa.tensor_copy(dst=out_block[0:128, m, 0:512], src=partial)
                    else:
                        nisa.tensor_tensor(dst=out_block[0:128, m, 0:512], data1=out_block[0:128, m, 0:512],
                                           data2=partial, op=nl.add)"""
_STORE_BLOCK = """# element (p, m, j) of the block is result[m * 128 + p, n * 512 + j]
        nisa.dma_copy(dst=result.ap([[N, 128], [128 * N, MT], [1, 512]], offset=n * 512), src=out_block)"""

RUNG5_RFACTOR = (
    HEADER
    + '''
@nki.jit
def rung5_rfactor(lhsT, rhs):
    """Two-level K ("rfactor"): N blocks of 512 outermost; K in blocks of 1024 (the rhs
    block loaded once per K block and kept for every M block, lhsT blocks
    double-buffered); PSUM accumulates a K block's 8 tiles, the partial is copied to
    SBUF and added (tensor_tensor) into the SBUF output block [M x 512] (the first K
    block's partial copied in), stored once per block. One output buffer: the next
    block's first copies wait for this block's store."""'''
    + _RFACTOR_BODY.replace("OUT_BUFFERS", "1")
    .replace("        ZERO\n", "")
    .replace("ACCUMULATE", _COPY_OR_ADD)
    .replace("STORE", _STORE_BLOCK)
)

RUNG6_BEST = (
    HEADER
    + '''
@nki.jit
def rung6_best(lhsT, rhs):
    """The best hand structure: as rung 5 with 4 rotating output buffers, zeroed per
    block (on GpSimd, otherwise idle) with every K block's partial added, so a block's
    zeroing and adds overlap the previous block's store."""'''
    + _RFACTOR_BODY.replace("OUT_BUFFERS", "4")
    .replace("ZERO", _ZERO)
    .replace("ACCUMULATE", _ADD)
    .replace("STORE", _STORE_BLOCK)
)

LADDER: list[tuple[str, str, float]] = [
    ("loads in the K loop, one buffer each", RUNG1_SUNK_LOADS, 16.0),
    ("PSUM per (m, n) tile, loads hoisted", RUNG2_PSUM_PER_TILE, 59.0),
    ("+ PSUM accumulator double-buffered", RUNG3_PSUM_DOUBLE, 83.7),
    ("streaming, loads double-buffered, one-level K", RUNG4_STREAMING, 89.5),
    ("+ two-level K (rfactor)", RUNG5_RFACTOR, 90.6),
    ("best hand kernel (rotating output blocks)", RUNG6_BEST, 90.92),
]
"""(structure, kernel source, published MFU % on trn2 hardware at 2048^3 bf16)."""


TUTORIAL_BASIC = (
    HEADER
    + '''
@nki.jit
def tutorial_basic(lhsT, rhs):
    """One matmul: the whole problem is one [128 x 128] x [128 x 512] tile."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=out, src=acc)
    nisa.dma_copy(dst=result, src=out)
    return result
'''
)

TUTORIAL_TILED = (
    HEADER
    + '''
@nki.jit
def tutorial_tiled(lhsT, rhs):
    """Tiles of 128 x 128 (stationary) and 128 x 512 (moving); both loaded per matmul."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
            out = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out, src=acc)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=out)
    return result
'''
)

TUTORIAL_HOISTED = (
    HEADER
    + '''
@nki.jit
def tutorial_hoisted(lhsT, rhs):
    """lhsT's column strip loaded once per m (hoisted out of the n and k loops), rhs's
    strip once per (m, n), each as one transfer."""
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 128
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        a = nl.ndarray((128, KT, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=lhsT.ap([[M, 128], [128 * M, KT], [1, 128]], offset=m * 128))
        for n in nl.affine_range(N // 512):
            b = nl.ndarray((128, KT, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=b, src=rhs.ap([[N, 128], [128 * N, KT], [1, 512]], offset=n * 512))
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                nisa.nc_matmul(dst=acc, stationary=a[0:128, k, 0:128], moving=b[0:128, k, 0:512])
            out = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out, src=acc)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=out)
    return result
'''
)

TUTORIAL_BLOCKED = (
    HEADER
    + '''
@nki.jit
def tutorial_blocked(lhsT, rhs):
    """Blocked free dimensions: an lhsT block of 4 M tiles and an rhs block of 4 N
    tiles loaded once and reused by the 16 (m, n) tile pairs between them."""
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 128
    BM, BN = min(512, M), min(2048, N)
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // BM):
        a = nl.ndarray((128, KT, BM), dtype=lhsT.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=lhsT.ap([[M, 128], [128 * M, KT], [1, BM]], offset=mb * BM))
        for nb in nl.affine_range(N // BN):
            b = nl.ndarray((128, KT, BN), dtype=rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=b, src=rhs.ap([[N, 128], [128 * N, KT], [1, BN]], offset=nb * BN))
            for mt in nl.affine_range(BM // 128):
                for nt in nl.affine_range(BN // 512):
                    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        nisa.nc_matmul(dst=acc, stationary=a[0:128, k, mt * 128:(mt + 1) * 128],
                                       moving=b[0:128, k, nt * 512:(nt + 1) * 512])
                    out = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=out, src=acc)
                    r0, c0 = mb * BM + mt * 128, nb * BN + nt * 512
                    nisa.dma_copy(dst=result[r0:r0 + 128, c0:c0 + 512], src=out)
    return result
'''
)

TUTORIAL: list[tuple[str, str, tuple[int, int, int]]] = [
    ("basic (one tile)", TUTORIAL_BASIC, (128, 128, 512)),
    ("tiled", TUTORIAL_TILED, (2048, 2048, 2048)),
    ("hoisted loads", TUTORIAL_HOISTED, (2048, 2048, 2048)),
    ("blocked free dimensions", TUTORIAL_BLOCKED, (2048, 2048, 2048)),
    ("fully optimised (blocked K, M, N; SBUF accumulation)", RUNG6_BEST, (2048, 2048, 2048)),
]
"""(step, kernel source, (K, M, N)); the fully optimised step is the ladder's best
structure, which is the tutorial's final kernel."""
