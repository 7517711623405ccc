"""Neighbours that change a column's dtype, and mutations that read a cell by its column's dtype.

A typed input (a DataFrame, a Parquet file, a backend's distinct cells) carries dtypes that were
inferred from all of its cells, so one added row can change them: a null turns a bool column into
object, a blank turns a datetime column into object, a ``True`` before 0/1 integers gives an
object column that ``pd.factorize`` groups by Python equality. Each ``TypedPair`` is such a
neighbour pair. Two checks use them:

* ``released_counts`` is every exact histogram discovery releases from a column (what its cells
  read as, their shapes, their texts, their values); on neighbours each must move by at most one
  row (L1 ≤ 1, the sensitivity the noise is calibrated for), on every input form and backend;
* ``vote_runs`` runs discovery's kind vote, or its shape vote, many times on a pair and
  ``discovery_runs`` end-to-end discovery (the kind vote, then the shape vote and the domain),
  for the statistical audits.

The mutations bring back, one at a time, the ways cells used to be read by their column's dtype;
each must be caught by the histograms and by the vote's audit. End-to-end discovery catches those
that change what it releases: a bool column read without shape cells no longer does, since its
default spelling True/False is left unset either way.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from auditing import log_likelihood_ratio
from cases import EPSILON
from claims import DELTA, Sample, spent_claim

from synth.columns import cells, encoding
from synth.columns.kinds import Kind
from synth.domains import discovery, votes
from synth.privacy import Accountant, Budget, NoiseSource, Notion
from synth.privacy.curator import CountRelease, NoisyCounts
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT
from synth.tables.counting import CountingTable, MemoryTable
from synth.tables.source import TableSource, read_table

ROWS = 30
SPARK_MASTER = "local[2]"


@dataclass(frozen=True)
class TypedPair:
    """A one-column table and its neighbour with one more row (``added``, placed ``first`` or last),
    the input forms that can hold both, and the mutation (in ``MUTATIONS``) that the pair exposes."""

    name: str
    base: pd.Series
    added: Any
    first: bool = False
    forms: tuple[str, ...] = ("dataframe", "csv", "parquet (pandas)", "parquet (pyarrow)")
    mutation: str = ""
    vote: Kind | None = None  # the shape vote the mutation shows in (None: the kind vote)

    @property
    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        cells = [self.added, *self.base.tolist()] if self.first else [*self.base.tolist(), self.added]
        base = pd.DataFrame({"x": self.base, "k": "r"})  # "k": no CSV record is all blank (no row)
        return base, pd.DataFrame({"x": pd.Series(cells), "k": "r"})  # x's dtype inferred again


UNSHAPED_BOOL = "a bool column has no shape cells (its dtype read)"
TIMESTAMP_STR = "a timestamp's time of day read from str()"
EQUALITY = "cells grouped by Python equality (True == 1)"
_RNG = np.random.default_rng(2029)
DATE_ROWS = 200  # dates over a month: enough for their bounds to be located, so discovery shows their shape
_DAYS = pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(_RNG.integers(0, 30, DATE_ROWS), unit="D"))
PAIRS = (
    TypedPair("bool column + a null", pd.Series(_RNG.random(ROWS) < 0.4), None, mutation=UNSHAPED_BOOL,
              vote=Kind.BOOLEAN),
    TypedPair("int column + a null", pd.Series(_RNG.integers(0, 5, ROWS)), None),
    TypedPair("date column + a null", _DAYS, None),
    TypedPair("date column + a blank", _DAYS, "", forms=("dataframe", "csv"), mutation=TIMESTAMP_STR,
              vote=Kind.DATETIME),
    TypedPair("0/1 column + a True first", pd.Series(_RNG.integers(0, 2, ROWS).tolist(), dtype=object), True,
              first=True, forms=("dataframe", "csv"), mutation=EQUALITY),
)


# --- what discovery releases from a column ----------------------------------------------------


def released_counts(table: CountingTable, name: str) -> dict[str, dict[Any, int]]:
    """Every exact histogram discovery releases (with noise) from column ``name``, over the rows."""
    column = table.column_cells(name)
    values, weights = column.values, column.weights
    each = np.ones(len(values), dtype=np.int64) if weights is None else weights

    def tally(keys: list[Any]) -> dict[Any, int]:
        out: collections.Counter = collections.Counter()
        for key, weight in zip(keys, each.tolist(), strict=True):
            out[key] += weight
        return dict(out)

    out = {"what the cells read as": tally(cells.classify_cells(values).tolist()),
           "texts": dict(cells.text_counts(values, ("",), weights).items())}
    for kind in (Kind.BOOLEAN, Kind.FLOAT, Kind.DATETIME):
        out[f"shapes as {kind.value}"] = tally(cells.classify_shapes(values, kind).tolist())
    for kind in (Kind.INTEGER, Kind.DATETIME):
        parsed, missing = cells.parse_values(values, kind)
        out[f"values as {kind.value}"] = tally(["missing" if m else "unreadable" if np.isnan(v) else float(v)
                                                for v, m in zip(parsed, missing, strict=True)])
    return out


def largest_move(first: dict[str, dict[Any, int]], second: dict[str, dict[Any, int]]) -> tuple[str, int]:
    """The histogram that moved most between two tables, and its L1 distance."""
    moves = {key: sum(abs(first[key].get(cell, 0) - second[key].get(cell, 0)) for cell in {*first[key], *second[key]})
             for key in first}
    worst = max(moves, key=lambda key: moves[key])
    return worst, moves[worst]


def write_form(frame: pd.DataFrame, form: str, folder: Path, stem: str) -> pd.DataFrame | Path:
    """``frame`` as ``form`` gives it: itself, or a file written by pandas or by pyarrow alone."""
    if form == "dataframe":
        return frame
    if form == "csv":
        path = folder / f"{stem}.csv"
        pd.DataFrame({c: [None if pd.isna(v) else cells.cell_text(v) for v in frame[c]] for c in frame}).to_csv(
            path, index=False)
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"{stem}.parquet"
    if form == "parquet (pandas)":
        frame.to_parquet(path, index=False)
    else:
        pq.write_table(pa.table({c: pa.array([None if pd.isna(v) else v for v in frame[c]]) for c in frame}), path)
    return path


@contextlib.contextmanager
def opened(data: pd.DataFrame | Path, backend: str) -> Iterator[CountingTable]:
    """``data`` as the privacy boundary reads it on ``backend``."""
    if isinstance(data, pd.DataFrame):
        yield MemoryTable(data)
        return
    if backend == "memory":
        table = read_table(data)
        assert isinstance(table, pd.DataFrame)
        yield MemoryTable(table)
        return
    source = TableSource(str(data), backend, SPARK_MASTER if backend == "spark" else None)
    counting = source.open(("",))
    assert counting is not None
    try:
        yield counting
    finally:
        source.close()


# --- mutations: a cell read by its column's dtype ---------------------------------------------


def _bool_column_unshaped(original: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def classify_shapes(series: pd.Series, kind: Kind, missing_markers: Any = ("",)) -> np.ndarray:
        if pd.api.types.is_bool_dtype(series.dtype):
            return np.full(len(series), -1, dtype=np.int64)
        return original(series, kind, missing_markers)
    return classify_shapes


def _timestamps_as_str(original: Callable[[Any], str]) -> Callable[[Any], str]:
    def cell_text(value: Any) -> str:
        return str(value).strip() if isinstance(value, pd.Timestamp) else original(value)
    return cell_text


def _factorized_by_equality(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    labels, uniques = pd.factorize(series, use_na_sentinel=True)
    return np.asarray(labels, dtype=np.int64), list(np.asarray(uniques, dtype=object))


MUTATIONS: dict[str, Callable[[], contextlib.AbstractContextManager[None]]] = {}


def _mutation(name: str, attribute: str, replacement: Callable[[Any], Any]) -> None:
    """Register a mutation that replaces ``synth.columns.cells``'s ``attribute`` (and the name a reader
    imported from it) with ``replacement(original)`` while it is applied."""
    @contextlib.contextmanager
    def applied() -> Iterator[None]:
        original = getattr(cells, attribute)
        holders = [module for module in (cells, discovery, encoding, votes) if getattr(module, attribute, None) is original]
        for module in holders:
            setattr(module, attribute, replacement(original))
        try:
            yield
        finally:
            for module in holders:
                setattr(module, attribute, original)
    MUTATIONS[name] = applied


_mutation(UNSHAPED_BOOL, "classify_shapes", _bool_column_unshaped)
_mutation(TIMESTAMP_STR, "cell_text", _timestamps_as_str)
_mutation(EQUALITY, "_factorize", lambda _: _factorized_by_equality)


# --- the statistical audits -------------------------------------------------------------------


class RecordingRelease(CountRelease):
    """A CountRelease that keeps each count vector it was given and what it released."""

    def __init__(self, accountant: Accountant, noise: NoiseSource) -> None:
        super().__init__(accountant, noise, Neighbouring())
        self.records: list[tuple[np.ndarray, NoisyCounts]] = []

    def release(self, counts: np.ndarray, budget: float, query: str, extra_delta: float = 0.0,
                note: str = "") -> NoisyCounts:
        released = super().release(counts, budget, query, extra_delta, note)
        self.records.append((np.asarray(counts), released))
        return released


def _vote(pair: TypedPair, frame: pd.DataFrame, source: NoiseSource) -> tuple[RecordingRelease, Accountant]:
    accountant = Accountant(Budget(EPSILON))
    counts = RecordingRelease(accountant, source)
    if pair.vote is None:
        votes.vote_kind("x", frame["x"], counts, EPSILON)
    else:
        votes.vote_shape("x", frame["x"], pair.vote, counts, EPSILON)
    return counts, accountant


def vote_runs(pair: TypedPair, mutation: str, noise: Callable[[int], NoiseSource], runs: int) -> Sample:
    """Discovery's kind vote (or the shape vote of ``pair.vote``) on each table of the pair at
    ε = EPSILON, ``runs`` times. Statistic: the log-likelihood ratio of the released histogram
    between the two tables' exact histograms, as the (possibly mutated) reader counts them."""
    with MUTATIONS[mutation]() if mutation else contextlib.nullcontext():
        exact = [_vote(pair, frame, noise(9 + stream))[0].records[0][0] for stream, frame in enumerate(pair.tables)]
        statistics, claims = [], []
        for stream, frame in enumerate(pair.tables):
            source, ratios = noise(stream), np.empty(runs)
            for run in range(runs):
                counts, accountant = _vote(pair, frame, source)
                released = counts.records[0][1]
                ratios[run] = log_likelihood_ratio(released.values, exact[0], exact[1], released.mechanism,
                                                   released.noise_scale)
            statistics.append(ratios)
            claims.append(spent_claim(accountant))
    return Sample(statistics[0], statistics[1], max(claims, key=lambda claim: claim.epsilon))


def discovery_runs(pair: TypedPair, mutation: str, noise: Callable[[int], NoiseSource], runs: int) -> Sample:
    """End-to-end discovery of the pair's column (its kind voted, then its shape and domain) at
    ε = EPSILON and δ = DELTA / 2 (text needs δ), on each table ``runs`` times. Statistic: the
    column found (kind, missing code and written shape), as a category."""
    outcomes: dict[Any, int] = {}
    statistics, claims = [], []
    with MUTATIONS[mutation]() if mutation else contextlib.nullcontext():
        for stream, frame in enumerate(pair.tables):
            source, found = noise(stream), np.empty(runs)
            for run in range(runs):
                accountant = Accountant(Budget(EPSILON, DELTA), Notion.APPROX)
                counts = CountRelease(accountant, source, Neighbouring())
                found_columns = discovery.discover_columns(frame[["x"]], {"x": None}, counts, EPSILON, DELTA / 2,
                                                           SILENT).columns
                column = found_columns.get("x")
                outcome = None if column is None else (column.kind, getattr(column, "missing", None),
                                                       getattr(column, "shape", None))
                found[run] = outcomes.setdefault(outcome, len(outcomes))
            statistics.append(found)
            claims.append(spent_claim(accountant))
    return Sample(statistics[0], statistics[1], max(claims, key=lambda claim: claim.epsilon))
