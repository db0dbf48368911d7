"""Comparing computed arrays with reference ones, non-finite values included.

Two elements agree when both are finite and close, or when both are the same
non-finite value: nan and nan, inf and inf, -inf and -inf (by position and sign).
A finite value against a non-finite one, or infinities of opposite signs, never agree.

>>> import numpy as np
>>> errors(np.array([1.0, np.inf, np.nan, -np.inf]), np.array([1.5, np.inf, np.nan, np.inf])).tolist()
[0.5, 0.0, 0.0, inf]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def errors(got: npt.ArrayLike, want: npt.ArrayLike) -> np.ndarray:
    """Per element: ``|got - want|`` where both are finite, 0 where both hold the same
    non-finite value, and inf where they disagree otherwise."""
    a = np.asarray(got, dtype=np.float64)
    b = np.asarray(want, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - b)
    finite = np.isfinite(a) & np.isfinite(b)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return np.where(finite, diff, np.where(same, 0.0, np.inf))


def magnitude(want: npt.ArrayLike) -> float:
    """The largest absolute finite value of ``want`` (0.0 if it has none)."""
    b = np.abs(np.asarray(want, dtype=np.float64))
    return float(b[np.isfinite(b)].max(initial=0.0))


def relative_error(got: npt.ArrayLike, want: npt.ArrayLike) -> float:
    """The largest element error of ``got`` divided by ``want``'s finite magnitude (or 1)."""
    return float(errors(got, want).max(initial=0.0)) / (magnitude(want) or 1.0)
