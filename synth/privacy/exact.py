"""Exact arithmetic for privacy accounting: rounding a real number to the float on the side that
can only overstate a privacy loss, and checking the numbers a budget or cost is made of.

Spent totals are ``fractions.Fraction`` sums of charged floats; wherever a real must become a float
(a noise scale, a cost, a conversion), it is rounded with these helpers, never by ``float()`` alone.
"""

from __future__ import annotations

import math
import numbers
import struct
from collections.abc import Callable
from fractions import Fraction

from synth.errors import BudgetError

ROUNDING_ULPS = 4  # margin, in units in the last place, for results of libm calls (log, exp, sqrt)


# --------------------------------------------------------------------------------------------
# Exact rounding helpers
# --------------------------------------------------------------------------------------------


def floor_float(value: Fraction) -> float:
    """The largest float that is <= ``value``."""
    result = float(value)
    if Fraction(result) > value:
        result = math.nextafter(result, -math.inf)
    return result


def ceil_float(value: Fraction) -> float:
    """The smallest float that is >= ``value``."""
    result = float(value)
    if Fraction(result) < value:
        result = math.nextafter(result, math.inf)
    return result


def round_up(value: float, ulps: int = ROUNDING_ULPS) -> float:
    """``value`` moved up by ``ulps`` floats: an upper bound for a libm result accurate to 1 ulp."""
    for _ in range(ulps):
        value = math.nextafter(value, math.inf)
    return value


def _float_key(value: float) -> int:
    """The bit pattern of a non-negative float, which orders like the float itself."""
    return int(struct.unpack("<q", struct.pack("<d", value))[0])


def _float_from_key(key: int) -> float:
    return float(struct.unpack("<d", struct.pack("<q", key))[0])


def largest_true(predicate: Callable[[float], bool], low: float, high: float) -> float:
    """The largest float x in [low, high) with ``predicate(x)``, for a predicate that is true at
    ``low``, false at ``high`` and monotone (true, then false) in between. Both bounds >= 0."""
    low_key, high_key = _float_key(low), _float_key(high)
    while high_key - low_key > 1:
        middle = (low_key + high_key) // 2
        if predicate(_float_from_key(middle)):
            low_key = middle
        else:
            high_key = middle
    return _float_from_key(low_key)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def positive(name: str, value: object, example: str = "1.0") -> float:
    if not is_real(value) or not math.isfinite(float(value)) or float(value) <= 0:  # type: ignore[arg-type]
        raise BudgetError(f"{name} must be a positive number such as {example}; got {value!r}.")
    return float(value)  # type: ignore[arg-type]


def non_negative(name: str, value: object) -> float:
    if not is_real(value) or not math.isfinite(float(value)) or float(value) < 0:  # type: ignore[arg-type]
        raise BudgetError(f"{name} must be a finite number >= 0; got {value!r}.")
    return float(value)  # type: ignore[arg-type]


def probability(name: str, value: object, *, allow_zero: bool = True) -> float:
    ok = is_real(value) and (0 <= float(value) < 1)  # type: ignore[arg-type]
    if ok and not allow_zero and float(value) == 0:  # type: ignore[arg-type]
        ok = False
    if not ok:
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise BudgetError(f"{name} must be a number in {interval} such as 1e-6; got {value!r}.")
    return float(value)  # type: ignore[arg-type]
