"""Interleaving the lowered instruction groups so that no engine's queue waits needlessly.

Each engine runs its instructions in the order the kernel issues them, so an
instruction whose inputs are late holds up the work queued behind it on its engine
although later work (another row tile's) could run. Once every instruction has its
engine, this pass cuts the groups into single instructions (an allocation goes with the
instruction after it) and reissues them by list scheduling on the engine model
(:mod:`.engines`): at each step, of the next ``WINDOW`` pieces in the lowered order
whose inputs are issued, the one that can start first (the earlier one on a tie)::

    lowered                                  interleaved
    y0 = scalar_tensor_tensor(x0, ...)       y0 = scalar_tensor_tensor(x0, ...)   # Vector
    y0' = scalar_tensor_tensor(y0, ...)      s1 = activation(x1, reduce_res=...)  # Scalar: free now
    s1 = activation(x1, reduce_res=...)      y0' = scalar_tensor_tensor(y0, ...)  # Vector

A piece follows every earlier piece it conflicts with (it reads what that one writes,
or writes what that one reads or writes; an allocation writes its tile; a group
assigning a name is a barrier), so the kernel computes the same. The window bounds how
far work moves up, and so how many tiles are live at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from .builder import WRITTEN, read_buffers, time_call
from .engines import CHOICES, FIXED_ENGINE, EngineLoads, Recipe
from .ir import Alloc, Assign, Call, Group, Instr, Ref

WINDOW = 24
"""How many pieces ahead of the first one not yet issued the pass looks."""


def interleave(
    groups: Sequence[Group],
    loads: EngineLoads,
    window: int = WINDOW,
    recipe_of: Callable[[Group], Recipe | None] | None = None,
) -> tuple[list[Group], EngineLoads]:
    """``groups`` reissued as above and the engine model's loads after them (``loads``: a
    fresh model with the kernel's constants, filled here). With ``recipe_of`` (policy
    ``recipe``), each instruction several engines can run chooses its engine again as it
    is reissued, by the group's recipe (:class:`.engines.Recipe`), else where it finishes
    first then: a short instruction, or a PSUM copy, goes to an engine that is idle at
    that point. Each group is cut into its instructions first (an allocation goes with
    the instruction after it), so that one statement's instructions can move apart."""
    groups = _pieces(groups)
    after = _dependencies(groups)
    issued = [False] * len(groups)
    waiting = [len(preds) for preds in after]
    followers: list[list[int]] = [[] for _ in groups]
    for index, preds in enumerate(after):
        for pred in preds:
            followers[pred].append(index)
    order: list[Group] = []
    first = 0
    while first < len(groups):
        candidates = [
            i for i in range(first, min(len(groups), first + window)) if not issued[i] and waiting[i] == 0
        ]
        pick = min(candidates, key=lambda i: (_start(groups[i], loads), i))
        group = groups[pick]
        if recipe_of is None:
            for instr in group.instrs:
                if isinstance(instr, Call):
                    time_call(loads, instr.fn, instr.args)
        else:
            loads.recipe = recipe_of(group)
            group = replace(group, instrs=tuple(_rechoose(loads, instr) for instr in group.instrs))
        order.append(group)
        issued[pick] = True
        for follower in followers[pick]:
            waiting[follower] -= 1
        while first < len(groups) and issued[first]:
            first += 1
    return order, loads


def _pieces(groups: Sequence[Group]) -> list[Group]:
    """Each group cut after each of its calls (the comment stays on the first piece)."""
    pieces: list[Group] = []
    for group in groups:
        held: list[Instr] = []
        comment = group.comment
        for instr in group.instrs:
            held.append(instr)
            if isinstance(instr, Call):
                pieces.append(Group(group.kind, comment, tuple(held), group.node))
                held, comment = [], ""
        if held:
            pieces.append(Group(group.kind, comment, tuple(held), group.node))
    return pieces


def _rechoose(loads: EngineLoads, instr: Instr) -> Instr:
    """``instr`` queued on ``loads``, on the engine the policy prefers now if NKI lets
    several run it."""
    if not isinstance(instr, Call):
        return instr
    if instr.fn not in CHOICES:
        time_call(loads, instr.fn, instr.args)
        return instr
    args = tuple((key, arg) for key, arg in instr.args if key != "engine")
    return Call(instr.fn, time_call(loads, instr.fn, args, choose=True))


def _start(group: Group, loads: EngineLoads) -> float:
    """When the group's first timed instruction could start on its queue (0 for none)."""
    for instr in group.instrs:
        if not isinstance(instr, Call):
            continue
        dst = next((arg for key, arg in instr.args if key == "dst" and isinstance(arg, Ref)), None)
        if dst is None:
            continue
        reads = read_buffers(instr.args, dst)
        if instr.fn == "nisa.dma_copy":
            ring = "load" if _on_chip(dst) else "store"
            inputs = max((loads.ready.get(r, 0.0) for r in reads), default=0.0)
            return max(loads.free[ring], inputs)
        given = next((str(arg) for key, arg in instr.args if key == "engine"), None)
        engine = given.removeprefix("nisa.engine.") if given else FIXED_ENGINE.get(instr.fn)
        if engine is None:
            continue
        return max([loads.free[engine], *(loads.ready_on(engine, r) for r in reads)])
    return 0.0


def _on_chip(ref: Ref) -> bool:
    return hasattr(ref.base, "buffer")


def _dependencies(groups: Sequence[Group]) -> list[set[int]]:
    """Per group, the earlier groups it must follow."""
    last_write: dict[int, int] = {}
    reads_since: dict[int, list[int]] = {}
    barrier: int | None = None
    after: list[set[int]] = []
    for index, group in enumerate(groups):
        preds: set[int] = set() if barrier is None else {barrier}
        read, written = _accesses(group)
        for base in read:
            if base in last_write:
                preds.add(last_write[base])
        for base in written:
            if base in last_write:
                preds.add(last_write[base])
            preds.update(reads_since.get(base, ()))
        for base in read:
            reads_since.setdefault(base, []).append(index)
        for base in written:
            last_write[base] = index
            reads_since[base] = []
        if any(isinstance(instr, Assign) for instr in group.instrs):
            preds.update(range(index))
            barrier = index
        preds.discard(index)
        after.append(preds)
    return after


def _accesses(group: Group) -> tuple[set[int], set[int]]:
    """The buffers (by identity) the group reads and those it writes."""
    read: set[int] = set()
    written: set[int] = set()
    for instr in group.instrs:
        if isinstance(instr, Alloc):
            written.add(id(instr.tile))
            if instr.append_to is not None:
                written.add(id(instr.append_to))
        elif isinstance(instr, Call):
            for key, arg in instr.args:
                if isinstance(arg, Ref):
                    (written if key in WRITTEN else read).add(id(arg.base))
    return read, written
