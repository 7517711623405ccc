"""Engines audited on a tiny table: the table, its neighbour, how a release is reduced to one statistic,
and the runs of an engine's whole pipeline (``engine_runs``) or of ``synth.api.describe`` as a user runs it
(``describe_runs``), for the privacy audit's cases (tests/audit/cases.py).
"""

from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from auditing import Claim, log_likelihood_ratio
from claims import NoiseFactory, Sample, largest, spent_claim

from synth.api import describe
from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.kinds import Kind
from synth.columns.schema import Schema
from synth.domains.profile import Profile
from synth.engines import EngineResult, make_engine
from synth.privacy import Accountant, Budget
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.measurement import Measurement
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT
from synth.tables.source import read_table

NAMES = ("a", "b", "c")
SIZES = (2, 3, 2)
ROWS = 30


def tiny_table(columns: int, seed: int = 7) -> np.ndarray:
    """ROWS rows over the first ``columns`` of NAMES, with dependent columns."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, ROWS)
    b = (a + rng.integers(0, 2, ROWS)) % 3
    c = (b + (rng.random(ROWS) < 0.2)) % 2
    return np.column_stack([a, b, c])[:, :columns].astype(np.int64)


def no_rows(columns: int) -> np.ndarray:
    """A table of no rows over the first ``columns`` of NAMES: with ``neighbour``, 0 rows against 1."""
    return np.zeros((0, columns), dtype=np.int64)


def neighbour(table: np.ndarray, relation: str) -> np.ndarray:
    """The neighbouring table: one row added (add/remove) or row 0 replaced by a row that
    differs from it in every column (replace)."""
    sizes = np.array(SIZES[:table.shape[1]])
    if relation == "add-remove":
        return np.vstack([table, sizes - 1])
    other = table.copy()
    other[0] = (table[0] + 1) % sizes
    return other


def public_schema(columns: int) -> Schema:
    """Categories v0, v1, ... of each audited column, complete and never missing: code k is ``vk``."""
    return Schema(tuple(Column(name, Kind.CATEGORICAL, categories=tuple(f"v{k}" for k in range(size)),
                               complete=True, missing=False)
                        for name, size in zip(NAMES[:columns], SIZES[:columns], strict=False)))


def write_codes(codes: np.ndarray, path: Path) -> Path:
    """The table as category texts, in a CSV or Parquet file (by ``path``'s suffix)."""
    frame = pd.DataFrame({name: [f"v{k}" for k in codes[:, j]] for j, name in enumerate(NAMES[:codes.shape[1]])})
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return path


REFUSED = -1e9  # the statistic of a run that exits instead of releasing: an output like any other


def describe_runs(refuses_empty: bool, noise: NoiseFactory, runs: int) -> Sample:
    """``synth.api.describe`` as a user runs it, on a CSV file of no rows (its header) and its
    neighbour of one row, with a public profile (engine independent, pure ε = 2), each run seeded
    afresh. Statistic: the release's log-likelihood ratio, or REFUSED when the run exits.
    ``refuses_empty``: the mutation, the exit on an exactly empty table that describe had."""
    first = no_rows(3)
    tables = (first, neighbour(first, "add-remove"))
    statistics: list[list[float]] = [[], []]
    claims = []
    with tempfile.TemporaryDirectory(prefix="synth-audit-") as folder:
        paths = [write_codes(codes, Path(folder) / f"table{part}.csv") for part, codes in enumerate(tables)]
        for run in range(runs):
            for part, path in enumerate(paths):
                profile = Profile(schema=public_schema(3), epsilon=2.0, engine="independent", seed=2 * run + part)
                if refuses_empty and read_table(path).empty:
                    statistics[part].append(REFUSED)
                    continue
                d = describe(path, profile, report_to=None)
                statistics[part].append(release_llr(EngineResult(d.measurements, compression=d.compression), *tables))
                claims.append(Claim(d.privacy["spent"]["epsilon"], d.privacy["spent"]["delta"]))
    return Sample(np.array(statistics[0]), np.array(statistics[1]), largest(claims))


def expected_values(m: Measurement, codes: np.ndarray, compression: Mapping[str, np.ndarray]) -> np.ndarray:
    """The noise-free values of measurement ``m`` on ``codes``: its marginal on the compressed and
    coarsened codes it was measured on, times its weights."""
    if not m.attrs:
        return np.array([float(codes.shape[0])])
    columns, shape = [], []
    for attr in m.attrs:
        column = codes[:, NAMES.index(attr)]
        size = SIZES[NAMES.index(attr)]
        for maps in (compression, m.coarsening):
            if attr in maps:
                column, size = maps[attr][column], int(maps[attr].max()) + 1
        columns.append(column)
        shape.append(size)
    counts = np.bincount(np.ravel_multi_index(tuple(columns), shape), minlength=math.prod(shape)).astype(float)
    return counts if m.weights is None else counts * m.weights


def release_llr(result: EngineResult, first: np.ndarray, second: np.ndarray) -> float:
    """The log-likelihood ratio (second vs first table) of every measurement an engine released."""
    return float(sum(
        log_likelihood_ratio(m.values, expected_values(m, first, result.compression),
                             expected_values(m, second, result.compression), m.mechanism, m.noise_scale)
        for m in result.measurements))


def chosen_database(result: EngineResult, first: np.ndarray, second: np.ndarray) -> float:
    """SmallDB's draw: the database it chose, as one code (its sorted cells in base |cells|).
    Its noisy row count is left out: an event on part of a release is an event on the release."""
    rows = np.asarray(result.output.database)
    sizes = SIZES[:rows.shape[1]]
    cells = np.sort(np.ravel_multi_index(tuple(rows.T), sizes))
    return float(np.ravel_multi_index(tuple(cells), (math.prod(sizes),) * cells.size))


EngineStatistic = Callable[[EngineResult, np.ndarray, np.ndarray], float]  # (release, first, second)


@dataclass(frozen=True)
class EngineSetup:
    """An engine, its options, the budget and relation it is audited under, and the statistic of
    its release (``release_llr``, or ``chosen_database``: a code, audited as categorical)."""

    engine: str
    options: dict[str, Any] = field(default_factory=dict)
    epsilon: float = 2.0
    delta: float = 0.0
    relation: str = "add-remove"
    columns: int = 3  # of the table
    statistic: EngineStatistic = release_llr
    table: Callable[[int], np.ndarray] = tiny_table  # columns -> the first table

    @property
    def categorical(self) -> bool:
        return self.statistic is chosen_database


CodeRows = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | None]]  # a table -> the Curator's codes, weights


def in_memory(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The table's rows as they are (the memory backend)."""
    return codes, None


def engine_runs(setup: EngineSetup, neighbouring: Neighbouring, noise: NoiseFactory, runs: int,
                code_rows: CodeRows = in_memory) -> Sample:
    """The engine's whole pipeline (``describe`` through a ``Curator``) on the tiny table and its
    neighbour, a fresh accountant and noise source per run; ``code_rows`` gives the Curator each
    table's code rows (a counting backend's distinct code rows and weights). Statistic: the setup's."""
    engine = make_engine(setup.engine, setup.options)
    first = setup.table(setup.columns)
    tables = (first, neighbour(first, setup.relation))
    counted = [code_rows(codes) for codes in tables]  # counted once: a backend's counts are exact
    domain = Domain(NAMES[:setup.columns], SIZES[:setup.columns])
    template = Accountant(Budget(setup.epsilon, setup.delta))  # copied: a zCDP budget takes ms to set up
    statistics: list[list[float]] = [[], []]
    claims = []
    for run in range(runs):
        for part, (codes, weights) in enumerate(counted):
            accountant = copy.deepcopy(template)
            curator = Curator(codes, domain, CountRelease(accountant, noise(2 * run + part), neighbouring), weights)
            statistics[part].append(setup.statistic(engine.describe(curator, SILENT), *tables))
            claims.append(spent_claim(accountant))
    return Sample(np.array(statistics[0]), np.array(statistics[1]), largest(claims))
