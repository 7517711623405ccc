"""Checks on the tables of a parsed TOML profile, shared by ``synth.domains.profile`` and ``synth.domains.dp_draft``:
that a value is a table, and that a table holds only known keys (ProfileError, naming where, if not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.errors import ProfileError


def toml_table(value: Any, where: str) -> dict[str, Any]:
    """``value`` if it is a table; ProfileError naming ``where`` if not."""
    if not isinstance(value, dict):
        raise ProfileError(f"{where} must be a table (a [section] header with key = value lines).")
    return value


def reject_unknown_keys(table: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    """ProfileError naming ``where`` and the keys of ``table`` not in ``allowed``, if any."""
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise ProfileError(
            f"{where} has unknown key(s) {unknown}; the allowed keys are {', '.join(allowed)}. "
            "Check the spelling."
        )
