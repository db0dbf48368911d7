"""Analyses cached per snapshot and carried along derivations.

``analysis_of(program, transform)`` is ``transform.analysis(program)`` (its matches,
``transform.analyze(program)``, and any state), computed once per snapshot and
transform (``analysis_key``: a configured instance's analyses are its own). When the
snapshot was derived from a parent (``Program.derivation``) whose analysis by the same
transform is known, the transform may update that analysis instead of redoing it
(``Transform.reanalysis``): a search that rewrites a few statements of a large program
then pays for those statements, not for the program. Analyses keep statements by id,
which a statement keeps across derivations, so nothing needs translating.

The cache is this layer's: it keeps analyses in ``Program.memo``, a per-snapshot
dictionary the IR offers to higher layers and never reads itself (a program's
analyses live and die with it). Match lists may be lazy (``LazyMatches``): a search that picks one match of
hundreds only builds that one.

>>> from nkigym_graph import get_transform
>>> from nkigym_graph.ir.synthetic import tiled_matmul
>>> program = tiled_matmul(256, 128, 256)
>>> reuse = get_transform("data_reuse")
>>> list(analysis_of(program, reuse).matches) == reuse.analyze(program)
True
>>> analysis_of(program, reuse) is analysis_of(program, reuse)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, overload

from nkigym_graph.rewriting.transform import Transform

if TYPE_CHECKING:
    from nkigym_graph.ir.program import Program
    from nkigym_graph.rewriting.transform import Match

Spec = TypeVar("Spec")


class Analysis(NamedTuple):
    """A transform's matches in one snapshot and whatever it keeps to update them."""

    matches: Sequence[Match]
    state: Any = None


class LazyMatches(Sequence["Match"], Generic[Spec]):
    """Matches built from small ``specs`` on first access (``make(spec)``)."""

    __slots__ = ("_built", "_make", "specs")

    def __init__(self, specs: Sequence[Spec], make: Callable[[Spec], Match]) -> None:
        self.specs = specs
        self._make = make
        self._built: dict[int, Match] = {}

    def __len__(self) -> int:
        return len(self.specs)

    @overload
    def __getitem__(self, index: int) -> Match: ...

    @overload
    def __getitem__(self, index: slice) -> list[Match]: ...

    def __getitem__(self, index: int | slice) -> Match | list[Match]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self.specs)
        found = self._built.get(index)
        if found is None:
            found = self._built[index] = self._make(self.specs[index])
        return found

    def __iter__(self) -> Iterator[Match]:
        return (self[i] for i in range(len(self.specs)))


MAX_CHAIN = 64
"""Ancestors an analysis is carried through before analysing in full instead."""

_ANALYSIS = "analysis"
"""The first part of the keys analyses are kept under in ``Program.memo``."""


class _Instance:
    """A key part equal only for one object (a transform need not be hashable)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Instance) and other.obj is self.obj


def analysis_key(transform: Transform) -> tuple[Any, ...]:
    """The ``Program.memo`` key of ``transform``'s analyses: its name and class, and the
    instance itself when it holds attributes of its own (configured when made, as a
    plugin may register ``Scaled(2.0)``): such instances of one class find different
    matches, so none may take another's analysis (one registered under the same name
    after its plugin was replaced, say). Instances without state share them, as the
    copies of a transform a process pool's workers unpickle do."""
    own = getattr(transform, "__dict__", None)
    return (_ANALYSIS, transform.name, type(transform), _Instance(transform) if own is None or own else None)


def analysis_of(program: Program, transform: Transform) -> Analysis:
    """``transform``'s analysis of ``program``, cached: updated from the nearest
    ancestor (along ``Program.derivation``) whose analysis is known, when the transform
    can update, else done in full."""
    key = analysis_key(transform)
    found: Analysis | None = program.memo.get(key)
    if found is not None:
        return found
    chain = [program]  # the programs to analyse, nearest the known ancestor last
    updates = type(transform).reanalysis is not Transform.reanalysis
    while updates and len(chain) <= MAX_CHAIN:
        derivation = chain[-1].derivation
        parent = derivation.parent() if derivation is not None else None
        if parent is None:
            break
        known = parent.memo.get(key)
        if known is not None:
            found = known
            break
        chain.append(parent)
    if found is None:
        top = chain.pop()
        found = top.memo[key] = transform.analysis(top)
    for child in reversed(chain):
        updated = transform.reanalysis(child, found)
        if updated is None:  # this transform cannot update here: analyse the program asked about
            found = program.memo[key] = transform.analysis(program)
            return found
        found = child.memo[key] = updated
    return found
