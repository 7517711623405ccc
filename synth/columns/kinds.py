"""Column kinds, and where a column's domain came from.

A column's kind decides its domain and its codes (``synth.columns.schema``); its domain source says
whether the release stays differentially private end to end.
"""

from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    """What a column holds; it decides the domain and the code layout."""

    CATEGORICAL = "categorical"
    INTEGER = "integer"
    FLOAT = "float"
    DATETIME = "datetime"
    BOOLEAN = "boolean"
    ID = "id"  # a key: left out of the model, written as fresh keys (synth.columns.unmodelled)
    TEXT = "text"  # free text: left out of the model, written empty (synth.columns.unmodelled)


class DomainSource(str, Enum):
    """Where a column's domain came from; only ``data-derived`` breaks end-to-end DP."""

    PUBLIC = "public"
    DP_ESTIMATED = "dp-estimated"
    DATA_DERIVED = "data-derived"


NUMERIC_KINDS = frozenset({Kind.INTEGER, Kind.FLOAT, Kind.DATETIME})
UNMODELLED_KINDS = frozenset({Kind.ID, Kind.TEXT})
