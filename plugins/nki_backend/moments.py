"""A row's mean and mean square from one Vector Engine pass: ``bn_stats`` and ``bn_aggr``.

A layer norm takes two statistics of the same rows, its mean and (for the variance
``mean(x^2) - mean^2``) its mean square; tiled and merged, they are::

    s = tensor_reduce(x, op="sum")          # Vector (or Scalar)
    mean = tensor_scalar(s, F, op="divide")
    q = activation(x, op="square")          # Scalar, summing what it writes:
    t = tensor_reduce(q, op="sum")          #   one instruction with the square
    mean_sq = tensor_scalar(t, F, op="divide")
    m2 = activation(mean, op="square")
    var = tensor_tensor(mean_sq, m2, op="subtract")

``nisa.bn_stats`` reads up to 512 elements per partition and writes (count, mean,
variance x count) of its even and its odd elements; ``nisa.bn_aggr`` combines the
triples of a row's chunks into the row's mean and variance (NKI ISA documentation,
``nki.isa.bn_stats`` / ``nki.isa.bn_aggr``). So the group above can be::

    nisa.bn_stats(dst=st[:, 0:6], data=x[:, 0:512])     # one per 512-column chunk
    nisa.bn_stats(dst=st[:, 6:12], data=x[:, 512:1024])
    nisa.bn_aggr(dst=mv, data=st)                       # mv[:, 0] mean, mv[:, 1] variance

and the group's results that other statements read come from ``mv``: ``mean`` and
``var`` are its columns, a sum is ``mean * F``, a mean square ``mean * mean + var``, a
sum of squares that times ``F``, ``m2`` is ``mean * mean``. Only ``x`` [P, F], a sum (or
mean) reduction of it and the sum (or mean) of its square (read by nothing else) are
needed; the divisions, ``m2`` and ``var`` join the group when they are exactly these.

It is one pass of the Vector Engine (a little more than a row sum) instead of a
Vector pass and a Scalar pass side by side: which is faster depends on how busy each
engine is, so where the kernel reaches such a group the engine model (:mod:`.engines`,
its policy) decides, as for ``scalar_tensor_tensor`` (:mod:`.scalar_tensor`); with
the policy ``fixed`` (the default emit) the group lowers statement by statement.

A group forms when its statements write variables of their own (written once, not
accumulated, not outputs), every fusion (:mod:`.fusion`) a member takes part in lies
inside the group, and nothing between the group's first instruction and its last
member writes ``x``: the ``bn_stats`` run where the group's first work would.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from nkigym_graph.ir.literals import format_literal
from nkigym_graph.ir.program import Program
from nkigym_graph.ir.statement import Operand, Statement
from nkigym_graph.ir.variables import INTERMEDIATE

from .builder import STATISTIC_DTYPE, KernelBuilder
from .engines import RECIPE, SCALAR, VECTOR, EngineLoads
from .fusion import Fusions
from .ir import Ref, Tile, const_slices, whole

BN_STATS_FMAX = 512
"""Elements per partition one ``nisa.bn_stats`` reads at most (``nl.tile_size.bn_stats_fmax``)."""
STATS = 6
"""Values ``bn_stats`` writes per partition: (count, mean, variance x count), even then odd."""
SUMS = frozenset({"sum", "mean"})
ROLES = ("sum", "mean", "square_sum", "mean_square", "mean_squared", "variance")
"""What each statement of a group computes (a group has some of them): the row sum or
mean, the sum or mean of the squares, the squared mean and the variance."""


@dataclass(frozen=True)
class Moments:
    """One group: the data region, the square it reads, and the statement of each role."""

    data: Operand
    square: int
    """``activation(x, op="square")``: read only by the square sum."""
    roles: tuple[tuple[str, int], ...]
    """(role, statement) pairs (see ``ROLES``)."""

    @property
    def members(self) -> tuple[int, ...]:
        return (self.square, *(node for _, node in self.roles))

    @property
    def count(self) -> int:
        """Elements per partition of the data."""
        return math.prod(stop - start for start, stop in self.data.slices[1:])

    @property
    def partitions(self) -> int:
        start, stop = self.data.slices[0]
        return stop - start

    def node(self, role: str) -> int | None:
        return dict(self.roles).get(role)


def plan_moments(program: Program, order: list[int], fusions: Fusions) -> dict[int, Moments]:
    """The groups of ``program`` lowered in ``order`` with ``fusions``, by the statement
    where each group's first work runs (its anchor)."""
    position = {node: i for i, node in enumerate(order)}
    groups: dict[int, Moments] = {}
    claimed: set[int] = set()
    for node in program.statements_of("tensor_reduce"):
        group = _match(program, node)
        if group is None or claimed.intersection(group.members) or not _inside(fusions, group.members):
            continue
        runs = [position[fusions.runs_at.get(m, m)] for m in group.members]
        first, last = min(runs), max(position[m] for m in group.members)
        if any(program[n].dst.var == group.data.var for n in order[first + 1 : last + 1]):
            continue  # x changes before the plain lowering would have read it all
        groups[order[first]] = group
        claimed.update(group.members)
    return groups


def _match(program: Program, total: int) -> Moments | None:
    """The group whose row sum (or mean) is statement ``total``, if it has one."""
    stmt = program[total]
    if not _sum_of(stmt) or not _own(program, stmt):
        return None
    data = stmt.operands[0]
    if len(data.slices) != 2:
        return None
    for square, place in program.consumers_of(data.var):
        found = program[square]
        if place != 0 or found.operands[0] != data or not _is_square(found) or not _own(program, found):
            continue
        readers = program.consumers_of(found.dst.var)
        if len(readers) != 1 or readers[0][1] != 0:
            continue
        squares = program[readers[0][0]]
        if _sum_of(squares) and squares.operands[0] == found.dst and _own(program, squares):
            return _complete(program, data, square, total, readers[0][0])
    return None


def _complete(program: Program, data: Operand, square: int, total: int, squares: int) -> Moments:
    """The group of the two reductions, with the divisions, the squared mean and the
    variance that read them, when there are such statements."""
    count = math.prod(stop - start for start, stop in data.slices[1:])
    roles: dict[str, int] = {}
    for node, plain, averaged in ((total, "sum", "mean"), (squares, "square_sum", "mean_square")):
        if program[node].attr("op") == "mean":
            roles[averaged] = node
            continue
        roles[plain] = node
        division = _reader(program, node, lambda s: _divides(s, count))
        if division is not None:
            roles[averaged] = division
    if "mean" in roles:
        squared = _reader(program, roles["mean"], _is_square)
        if squared is not None:
            roles["mean_squared"] = squared
            if "mean_square" in roles:
                mean_sq, m2 = program[roles["mean_square"]].dst, program[squared].dst
                variance = _reader(program, roles["mean_square"], lambda s: _subtracts(s, mean_sq, m2))
                if variance is not None:
                    roles["variance"] = variance
    return Moments(data, square, tuple((role, roles[role]) for role in ROLES if role in roles))


def _reader(program: Program, node: int, test: Callable[[Statement], bool]) -> int | None:
    """The first statement reading all of ``node``'s result as its data that passes ``test``
    and writes a variable of its own."""
    dst = program[node].dst
    for reader, place in program.consumers_of(dst.var):
        stmt = program[reader]
        if place == 0 and stmt.operands[0] == dst and test(stmt) and _own(program, stmt):
            return reader
    return None


def _own(program: Program, stmt: Statement) -> bool:
    """``stmt`` writes all of an intermediate variable only it writes, not accumulating."""
    info = program.variables[stmt.dst.var]
    shape = tuple(stop - start for start, stop in stmt.dst.slices)
    return (
        not stmt.accumulate
        and info.kind == INTERMEDIATE
        and len(program.writers_of(stmt.dst.var)) == 1
        and shape == tuple(info.shape)
        and all(start == 0 for start, _ in stmt.dst.slices)
    )


def _sum_of(stmt: Statement) -> bool:
    return stmt.op.name == "tensor_reduce" and stmt.attr("op") in SUMS


def _is_square(stmt: Statement) -> bool:
    if stmt.op.name != "activation":
        return False
    values = stmt.op.attr_values(stmt.attrs)
    return bool(values["op"] == "square" and values["scale"] == 1 and values.get("bias", 0.0) == 0)


def _divides(stmt: Statement, count: int) -> bool:
    return (
        stmt.op.name == "tensor_scalar"
        and stmt.attr("op") == "divide"
        and float(stmt.attr("scalar")) == float(count)
    )


def _subtracts(stmt: Statement, first: Operand, second: Operand) -> bool:
    return (
        stmt.op.name == "tensor_tensor"
        and stmt.attr("op") == "subtract"
        and stmt.operands[0] == first
        and stmt.operands[1] == second
    )


def _inside(fusions: Fusions, members: Iterable[int]) -> bool:
    """Whether every fusion that takes in a member takes in members only."""
    inside = set(members)
    pairs: list[set[int]] = [
        {doer, done}
        for table in (fusions.reduce_of, fusions.first_of, fusions.negation_of)
        for doer, done in table.items()
    ]
    pairs += [set(chain) for chain in fusions.chains.values()]
    pairs += [set(group) for group in fusions.transposes_of.values()]
    return all(pair <= inside or not pair & inside for pair in pairs)


# -- choosing and lowering ---------------------------------------------------------------
def chunks(count: int) -> list[tuple[int, int]]:
    """The ``bn_stats`` chunks of a row of ``count`` elements: 512 each, the last one less."""
    return [(start, min(start + BN_STATS_FMAX, count)) for start in range(0, count, BN_STATS_FMAX)]


def prefers_moments(loads: EngineLoads, group: Moments, data: int) -> bool:
    """Whether the engine model's policy prefers ``bn_stats`` and ``bn_aggr`` (Vector) to
    the row sum (on the Vector or the Scalar Engine, whichever the policy prefers, see
    ``TensorReduceLowering``) and the squares' sum (Scalar), each way priced on a
    copy of ``loads`` (``data``: the buffer the group reads). The policy ``fixed``
    never takes them; the policy ``recipe`` does where the strand's recipe says so."""
    if loads.policy == "fixed":
        return False
    if loads.recipe is not None and loads.policy == RECIPE:
        return loads.recipe.moments
    pieces = chunks(group.count)
    stats, own, finished = loads.copy(), 0.0, 0.0
    for start, stop in pieces:
        finished = stats.run(VECTOR, stop - start, 1, [data], -1)
        own += stats.time_ns(VECTOR, stop - start, 1)
    finished = stats.run(VECTOR, STATS * len(pieces), 1, [-1], -2)
    own += stats.time_ns(VECTOR, STATS * len(pieces), 1)
    plain = min(_plain(loads, group.count, data, engine) for engine in (VECTOR, SCALAR))
    return stats.preference(finished, own) < plain


def _plain(loads: EngineLoads, count: int, data: int, engine: str) -> float:
    """The policy's preference for the row sum on ``engine`` and the squares' sum on the
    Scalar Engine, priced on a copy of ``loads``."""
    plain = loads.copy()
    sums = plain.run(engine, count, 1, [data], -3)
    squares = plain.run(SCALAR, count, 1, [data], -4)
    own = plain.time_ns(engine, count, 1) + plain.time_ns(SCALAR, count, 1)
    return plain.preference(max(sums, squares), own)


def lower_moments(kb: KernelBuilder, group: Moments, text: str) -> bool:
    """The group's ``bn_stats`` and ``bn_aggr``, and the results other statements read,
    when the engine model prefers them (:func:`prefers_moments`); returns whether it did."""
    program = kb.program
    data = kb.read(group.data, text)
    if not prefers_moments(kb.engines, group, id(data.base)):
        return False
    parts = group.partitions
    pieces = chunks(group.count)
    stem = program[group.roles[0][1]].dst.var  # the row sum's (or mean's) variable
    stats = kb.new_tile(f"{stem}_stats", (parts, STATS * len(pieces)), STATISTIC_DTYPE, "sbuf")
    (p_start, p_stop), (c_start, _) = data.slices
    for index, (start, stop) in enumerate(pieces):
        chunk = Ref(data.base, ((p_start, p_stop), (c_start.plus(start), c_start.plus(stop))), data.index)
        dst = Ref(stats, const_slices(((0, parts), (STATS * index, STATS * index + STATS))))
        kb.call("nisa.bn_stats", ("dst", dst), ("data", chunk))
    moments = kb.new_tile(f"{stem}_mv", (parts, 2), STATISTIC_DTYPE, "sbuf")
    kb.call(
        "nisa.bn_aggr", ("dst", Ref(moments, whole(moments.shape))), ("data", Ref(stats, whole(stats.shape)))
    )
    squares = kb.engines.time_ns(SCALAR, group.count, 1)  # the Scalar work the group no longer has
    kb.engines.ahead[SCALAR] = max(0.0, kb.engines.ahead[SCALAR] - squares)
    _derive(kb, group, moments)
    return True


def _derive(kb: KernelBuilder, group: Moments, moments: Tile) -> None:
    """Give each result a statement outside the group reads its value: the mean and the
    variance are the columns of ``bn_aggr``'s result ``moments``; the others are computed
    from them."""
    program = kb.program
    members = set(group.members)
    count = format_literal(group.count)
    mean = Ref(moments, const_slices(((0, group.partitions), (0, 1))))
    variance = Ref(moments, const_slices(((0, group.partitions), (1, 2))))

    def needed(role: str) -> Statement | None:
        node = group.node(role)
        if node is None:
            return None
        stmt = program[node]
        readers = program.consumers_of(stmt.dst.var)
        return stmt if any(reader not in members for reader, _ in readers) else None

    for role, column in (("mean", 0), ("variance", 1)):
        node = group.node(role)
        if node is not None:
            kb.views[program[node].dst.var] = (moments, column)
    total = needed("sum")
    if total is not None:
        _times(kb, kb.write(total.dst), mean, count)
    mean_sq, square_sum = needed("mean_square"), needed("square_sum")
    if mean_sq is not None or square_sum is not None:
        if mean_sq is not None:
            target = kb.write(mean_sq.dst)
        else:
            tile = kb.new_tile("mean_square", (group.partitions, 1), STATISTIC_DTYPE, "sbuf")
            target = Ref(tile, whole(tile.shape))
        kb.call(
            "nisa.scalar_tensor_tensor",
            ("dst", target),
            ("data", mean),
            ("op0", "nl.multiply"),
            ("operand0", mean),
            ("op1", "nl.add"),
            ("operand1", variance),
        )
        if square_sum is not None:
            _times(kb, kb.write(square_sum.dst), target, count)
    squared = needed("mean_squared")
    if squared is not None:
        kb.call(
            "nisa.tensor_tensor",
            ("dst", kb.write(squared.dst)),
            ("data1", mean),
            ("data2", mean),
            ("op", "nl.multiply"),
        )


def _times(kb: KernelBuilder, dst: Ref, data: Ref, count: str) -> None:
    """``dst = data * count`` (a mean times the elements it averages: their sum)."""
    kb.call("nisa.tensor_scalar", ("dst", dst), ("data", data), ("op0", "nl.multiply"), ("operand0", count))
