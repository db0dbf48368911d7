"""Which engine runs an instruction that NKI lets several engines run.

``nisa.tensor_copy`` and ``nisa.tensor_scalar`` run on the Vector, Scalar or GpSimd
Engine (NeuronCore-v3) and
``nisa.tensor_tensor`` on the Vector or GpSimd Engine. The engines run their
instructions in order, side by side, so a kernel that gives them all to the Vector
Engine waits on it while the others idle, and an instruction queued behind one that
waits for its inputs waits too. The backend follows the kernel as it emits it, with the
calibrated timing model's per-instruction times (``nkigym_graph.nki_sim.timing``):
when each engine's queue is free, when each buffer's last write lands (DMA transfers
as the timing model moves them: after their fixed latency, each run of HBM bytes at the
queues' rate plus its overhead; matmuls at their input dtype's rate). With
``emit(..., reorder=True)`` it gives each flexible instruction to an engine by one of
four policies: ``finish``, the engine on which it would finish first;
``balance``, the engine whose total work would end least (the default engine on a tie);
``ahead``, the engine on which it would finish first counting the work only that
engine can do that is still to come (a row's maxima on the Vector Engine, its
exponentials on the Scalar Engine), so that the engines end together; or ``thrifty``,
the engine on which it would finish first counting its own time ``THRIFT`` times more
(so an instruction goes where it is cheap unless another engine is idle: the two-input
Vector rate is twice the one-input one); it lowers the kernel with each and keeps the
one the model ends first (``makespan``); with policy ``recipe`` the long instructions
of each strand of the program go where the strand's :class:`Recipe` says (:mod:`.mix`);
otherwise (policy ``fixed``) every instruction stays on its default engine::

    nisa.tensor_reduce(dst=m, op=nl.maximum, data=x, ...)         # Vector only
    nisa.activation(dst=e, op=nl.exp, data=x, bias=m, ...)        # Scalar only
    nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=r,
                       engine=nisa.engine.gpsimd)                 # finishes first there

The GpSimd Engine cannot read or write PSUM, so an instruction touching PSUM is never
given to it. The figures only steer the choice; the kernel's time is the profile's.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nkigym_graph.nki_sim.timing.constants import TimingConstants

VECTOR, SCALAR, GPSIMD, TENSOR = "vector", "scalar", "gpsimd", "tensor"
FIXED_ENGINE = {
    "nisa.tensor_reduce": VECTOR,
    "nisa.tensor_copy": VECTOR,
    "nisa.tensor_tensor": VECTOR,
    "nisa.tensor_scalar": VECTOR,
    "nisa.memset": VECTOR,
    "nisa.activation": SCALAR,
    "nisa.nc_matmul": TENSOR,
    "nisa.nc_transpose": TENSOR,
    "nisa.scalar_tensor_tensor": VECTOR,
    "nisa.bn_stats": VECTOR,
    "nisa.bn_aggr": VECTOR,
}
"""The engine an instruction runs on when the backend does not choose one."""
CHOICES = {
    "nisa.tensor_copy": (VECTOR, SCALAR, GPSIMD),
    "nisa.tensor_scalar": (VECTOR, SCALAR, GPSIMD),
    "nisa.tensor_tensor": (VECTOR, GPSIMD),
}
"""The engines NKI lets run each flexible instruction, the default first."""


def reachable(engines: Iterable[str], psum: bool) -> list[str]:
    """``engines`` without the GpSimd Engine when an operand is in PSUM (it cannot reach PSUM)."""
    return [engine for engine in engines if engine != GPSIMD or not psum]


POLICIES = ("balance", "finish", "ahead")
"""The policies that choose engines (``fixed`` keeps the default engine)."""
THRIFTY = "thrifty"
"""The policy the emitter also tries on column-split and skewed programs (:mod:`.columns`, :mod:`.skew`)."""
THRIFT = 4.0
"""How many times ``thrifty`` counts an instruction's own time on an engine."""
RECIPE = "recipe"
"""The policy that follows a :class:`Recipe` per strand of the program (:mod:`.mix`)."""
RECIPE_MIN_ELEMENTS = 512
"""Instructions of fewer elements per partition than this go where they finish first
under the ``recipe`` policy (a recipe places the long ones)."""


@dataclass(frozen=True)
class Recipe:
    """How one strand of the program (a row tile's statements, :mod:`.mix`) is lowered:
    whether its row statistics take ``bn_stats`` (:mod:`.moments`), whether its chains
    fuse into ``scalar_tensor_tensor`` s (:mod:`.scalar_tensor`), and the engine its long
    one-input and two-input instructions run on, where NKI lets them (else they go where
    they finish first)."""

    moments: bool
    fused: bool
    one_input: str
    two_input: str
    dma_add: bool = False
    """Whether an addition of a row spread over the partitions (``+ beta``) is a DMA that
    adds the row into its other operand's tile in place (``dst_rmw_op=nl.add``, on the
    inbound ring, :class:`.lowering.TensorRowLowering`) rather than a ``tensor_tensor``."""
    at_store: bool = False
    """With ``dma_add``: the DMA adds at the store instead, on the outbound ring: the row
    is stored to the result's output region first (it needs nothing computed, so it
    fills the outbound ring's idle time early), and the result's store adds into it."""

    @property
    def label(self) -> str:
        add = (", row added by the store" if self.at_store else ", row add by DMA") if self.dma_add else ""
        return (
            f"{'bn_stats' if self.moments else 'sums'}, {'fused' if self.fused else 'plain'}, "
            f"{self.one_input}/{self.two_input}{add}"
        )


class EngineLoads:
    """When each engine's queue and each buffer is ready, in ns from the kernel's start,
    and the work given to each engine."""

    def __init__(self, constants: TimingConstants, policy: str = "fixed") -> None:
        self.constants = constants
        self.policy = policy
        self.busy = {VECTOR: 0.0, SCALAR: 0.0, GPSIMD: 0.0, TENSOR: 0.0}
        self.rings = {"load": 0.0, "store": 0.0}
        """Time each DMA direction's busiest queue moves bytes (the rings' work)."""
        self.booked: dict[str, list[tuple[float, float]]] = {}
        """Per DMA ring, its busy intervals (sorted, disjoint)."""
        self.free = {VECTOR: 0.0, SCALAR: 0.0, GPSIMD: 0.0, TENSOR: 0.0, "load": 0.0, "store": 0.0}
        self.ready: dict[int, float] = {}
        """Buffer (``id`` of its base) -> when its last write lands."""
        self.writer: dict[int, str] = {}
        """Buffer -> the compute engine that wrote it last (its result reaches another
        engine ``engine_sync_ns`` later, as in the timing model)."""
        self.recipe: Recipe | None = None
        """Policy ``recipe``: the recipe of the strand being lowered (None: no strand's)."""
        self.ahead = {VECTOR: 0.0, SCALAR: 0.0, GPSIMD: 0.0, TENSOR: 0.0}
        """Time of the work only this engine can do that the kernel has still to issue
        (set by the caller; the ``ahead`` policy weighs it)."""

    def copy(self) -> EngineLoads:
        """An independent copy (to price an alternative lowering without emitting it)."""
        twin = EngineLoads(self.constants, self.policy)
        twin.busy, twin.free, twin.ahead = dict(self.busy), dict(self.free), dict(self.ahead)
        twin.rings = dict(self.rings)
        twin.booked = {ring: list(spans) for ring, spans in self.booked.items()}
        twin.ready, twin.writer = dict(self.ready), dict(self.writer)
        twin.recipe = self.recipe
        return twin

    def preference(self, finished: float, own_ns: float) -> float:
        """How much the policy dislikes a state of these loads reached by queuing
        instructions that take ``own_ns`` and finish at ``finished`` (lower is better):
        ``balance`` the busiest engine's work, ``thrifty`` the finish plus ``THRIFT``
        times the work, the others the finish."""
        if self.policy == "balance":
            return max(self.busy.values())
        if self.policy == THRIFTY:
            return finished + THRIFT * own_ns
        return finished

    def time_ns(self, engine: str, elements: int, inputs: int, dtype: str = "bfloat16") -> float:
        """One instruction of ``elements`` per partition over ``inputs`` streamed operands
        (for the Tensor Engine: ``elements`` moving columns of ``dtype`` inputs, at that
        dtype's rate: fp32 streams four times slower than bf16)."""
        c = self.constants
        if engine == VECTOR:
            per = c.vector_cycles_per_element_two_inputs if inputs >= 2 else c.vector_cycles_per_element
            return (c.vector_fixed_cycles + elements * per) / c.vector_clock_ghz
        if engine == SCALAR:
            return (c.scalar_fixed_cycles + elements * c.scalar_cycles_per_element) / c.scalar_clock_ghz
        if engine == TENSOR:
            columns = max(elements, c.pe_min_moving) * c.pe_cycles_per_column(dtype)
            return (c.pe_fixed_cycles + columns) / c.pe_clock_ghz
        return (c.gpsimd_fixed_cycles + elements * c.gpsimd_cycles_per_element) / c.gpsimd_clock_ghz

    def transfer(
        self,
        load: bool,
        partitions: int,
        bytes_per_partition: int,
        run_bytes: int,
        reads: Sequence[int],
        write: int,
    ) -> None:
        """A DMA into (``load``) or out of SBUF on its direction's ring, timed as the timing
        model times it: its bytes start moving ``dma_fixed_ns_hwdge`` after its inputs are
        ready (and once the ring is free); the busiest queue moves ``partitions / queues``
        rows of ``bytes_per_partition``, each at the queue's rate plus
        ``dma_chunk_overhead_ns`` per contiguous HBM run of ``run_bytes`` (so 4 KiB runs
        move at 94% of the rate, 16 KiB runs at 98%)."""
        c = self.constants
        ring = "load" if load else "store"
        inputs = max((self.ready.get(r, 0.0) for r in reads), default=0.0)
        rows = -(-partitions // c.dma_queues)
        runs = -(-bytes_per_partition // max(run_bytes, 1))
        row_ns = bytes_per_partition / c.dma_queue_bytes_per_ns + runs * c.dma_chunk_overhead_ns
        end = self._place(ring, inputs + c.dma_fixed_ns_hwdge, rows * row_ns)
        self.free[ring] = max(self.free[ring], end)
        self.rings[ring] += rows * row_ns
        self.ready[write] = end
        self.writer.pop(write, None)

    def _place(self, ring: str, earliest: float, duration: float) -> float:
        """Book ``duration`` on ``ring`` from ``earliest`` on; returns when it ends. Under
        the policy ``recipe`` a transfer takes the ring's first gap (a ring moves a later
        transfer while an earlier one waits for its inputs, as the timing model's queues
        do: a mix's row additions wait for their rows among loads that do not); otherwise
        transfers keep the order they are issued in, which also stands for the waits for
        rotating buffers (a rolled kernel's) that the model does not follow. The busy
        spans are kept maximal (touching ones merged)."""
        if self.policy != RECIPE:
            return max(self.free[ring], earliest) + duration
        booked = self.booked.setdefault(ring, [])
        start = earliest
        index = bisect.bisect_right(booked, (start, float("inf")))
        if index and booked[index - 1][1] > start:
            start = booked[index - 1][1]
        while index < len(booked) and booked[index][0] < start + duration:
            start = max(start, booked[index][1])
            index += 1
        end = start + duration
        first, last, span = index, index, (start, end)
        if first and booked[first - 1][1] >= start:
            first -= 1
            span = (booked[first][0], end)
        if last < len(booked) and booked[last][0] <= end:
            span = (span[0], booked[last][1])
            last += 1
        booked[first:last] = [span]
        return end

    @property
    def makespan(self) -> float:
        """When the last queue empties."""
        return max(self.free.values())

    def run(
        self,
        engine: str,
        elements: int,
        inputs: int,
        reads: Sequence[int],
        write: int,
        only: bool = True,
        dtype: str = "bfloat16",
    ) -> float:
        """Queue an instruction on ``engine``; returns when it finishes. ``only``: no other
        engine could run it (it is work ``ahead`` counted); ``dtype``: a Tensor Engine
        instruction's input dtype."""
        own = self.time_ns(engine, elements, inputs, dtype)
        finish = self._finish(engine, elements, inputs, reads, dtype)
        self.busy[engine] += own
        self.free[engine] = finish
        if only:
            self.ahead[engine] = max(0.0, self.ahead[engine] - own)
        self.ready[write] = finish
        self.writer[write] = engine
        return finish

    def same_as(self, buffer: int, written: int) -> None:
        """``buffer`` is written by the instruction that wrote ``written`` (a second result)."""
        self.ready[buffer] = self.ready[written]
        if written in self.writer:
            self.writer[buffer] = self.writer[written]

    def choose(
        self,
        options: Sequence[str],
        elements: int,
        inputs: int,
        reads: Sequence[int],
        write: int,
        psum: bool = False,
    ) -> str:
        """The engine of ``options`` the policy prefers (the first option on a tie), queued
        there (``psum``: it reads or writes PSUM, a copy a recipe does not place)."""
        engine = self.prefer(options, elements, inputs, reads, psum)
        self.run(engine, elements, inputs, reads, write, only=False)
        return engine

    def prefer(
        self, options: Sequence[str], elements: int, inputs: int, reads: Sequence[int], psum: bool = False
    ) -> str:
        """The engine of ``options`` the policy prefers (the first option on a tie), not queued;
        ``recipe``: the recipe's engine for a long instruction off PSUM, where it is an option."""
        placed = self.recipe is not None and self.policy == RECIPE and not psum
        if placed and self.recipe is not None and elements >= RECIPE_MIN_ELEMENTS:
            wanted = self.recipe.one_input if inputs < 2 else self.recipe.two_input
            if wanted in options:
                return wanted

        def cost(engine: str) -> float:
            if self.policy == "fixed":
                return 0.0
            if self.policy in ("finish", RECIPE):
                return self._finish(engine, elements, inputs, reads)
            if self.policy == "ahead":
                return self._finish(engine, elements, inputs, reads) + self.ahead[engine]
            if self.policy == THRIFTY:
                own = self.time_ns(engine, elements, inputs)
                return self._finish(engine, elements, inputs, reads) + THRIFT * own
            return self.busy[engine] + self.time_ns(engine, elements, inputs)

        return min(options, key=lambda e: (cost(e), options.index(e)))

    def _finish(
        self, engine: str, elements: int, inputs: int, reads: Sequence[int], dtype: str = "bfloat16"
    ) -> float:
        start = max([self.free[engine], *(self.ready_on(engine, r) for r in reads)])
        return start + self.time_ns(engine, elements, inputs, dtype)

    def ready_on(self, engine: str, buffer: int) -> float:
        """When ``buffer``'s last write is visible to ``engine``."""
        writer = self.writer.get(buffer)
        sync = self.constants.engine_sync_ns if writer is not None and writer != engine else 0.0
        return self.ready.get(buffer, 0.0) + sync
