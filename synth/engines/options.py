"""Engine options: one frozen dataclass per engine, read from a profile's [engine_options] table.

``EngineOptions`` holds the rule every engine shares: a key that is not a field of the engine's
options is refused with the list of the fields; the rest go to the dataclass, whose
``__post_init__`` checks each value with the small checks below. ``to_dict`` (``asdict``) is what
the Description records. Options are public settings: nothing here sees data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Self

from synth.errors import EngineError


@dataclass(frozen=True)
class EngineOptions:
    """Base of the engines' options; an engine without options uses it as it is (no fields)."""

    @classmethod
    def read(cls, engine: str, options: Mapping[str, Any]) -> Self:
        """The options of ``engine`` from a table of settings, defaults for the keys left out;
        EngineError naming any key the engine does not have, or any value out of range."""
        known = sorted(f.name for f in fields(cls))
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise EngineError(
                f"engine {engine!r} has no option(s) {unknown}; its options are "
                f"{known or 'none'}. Fix [engine_options] in the profile."
            )
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        """The options as the Description records them (defaults filled in)."""
        return asdict(self)


def whole_number(key: str, value: Any, least: int) -> int:
    """``value`` of option ``key`` as a whole number of at least ``least``; EngineError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise EngineError(f"{key} must be a whole number of at least {least}; got {value!r}.")
    return value


def share(key: str, value: Any, hint: str) -> float:
    """``value`` of option ``key`` as a number strictly between 0 and 1; EngineError (with ``hint``) otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise EngineError(f"{key} must be a number strictly between 0 and 1 ({hint}); got {value!r}.")
    return value


def positive(key: str, value: Any, hint: str) -> float:
    """``value`` of option ``key`` as a finite positive number; EngineError (with ``hint``) otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise EngineError(f"{key} must be a positive number ({hint}); got {value!r}.")
    return value


def megabytes(key: str, value: Any) -> float:
    """``value`` of option ``key`` as a positive number of megabytes; EngineError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise EngineError(f"{key} must be a positive number of megabytes; got {value!r}.")
    return value


def true_or_false(key: str, value: Any) -> bool:
    """``value`` of option ``key`` as a boolean; EngineError otherwise."""
    if not isinstance(value, bool):
        raise EngineError(f"{key} must be true or false; got {value!r}.")
    return value


def one_of(key: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` of option ``key`` as one of ``choices``; EngineError otherwise."""
    if value not in choices:
        raise EngineError(f"{key} must be one of {list(choices)}; got {value!r}.")
    return str(value)
