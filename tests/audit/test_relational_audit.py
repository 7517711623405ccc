"""The person-level privacy audit of a relational release: the whole relational describer
(``synth.relational.describer.describe_database``: bounding, the root part with its children counts,
the child part joined with its parents' columns, the noisy count of parents over the bound) run many
times on two databases that differ by one person, a patient with every visit that references them;
the added patient has more visits than the bound (MANY), all alike, so that after bounding every
child histogram moves by exactly the bound in one cell: the worst case of the sensitivity.

Honest: the audited ε lower bound stays at or below the ε the accountant says was spent.
Mutations, each a real way to get a relational release wrong, must break that claim:

* the child part's sensitivity not scaled by the bound (a unit treated as one row);
* truncation after measuring (every visit measured, the noise calibrated for the bound);
* a key column read as data (the patients' key measured as a column whose categories are read from
  the data): the added person's key then appears in the release, a certain tell;
* three levels deep (each visit's tests; the added patient has far more visits and tests than the
  bounds), a deep table's sensitivity set to its own bound instead of the product of the bounds
  from the root down.

The statistic is the log-likelihood ratio of every noisy count released (all parts), computed
against the exact counts of each database (the same describer with noise that adds nothing); for
the key case, whether the added person's key appears anywhere in the release.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
import pytest
from auditing import AuditResult, Claim, audit, log_likelihood_ratio

import synth.relational.describer as relational
from synth.domains.profile import Profile
from synth.privacy import SeededNoise
from synth.privacy.measurement import PARENT_RELEASE
from synth.privacy.neighbours import Neighbouring
from synth.relational.bounding import bound_database
from synth.relational.keys import ForeignKey, Structure, TableKeys
from synth.relational.profile import RelationalProfile, relational_from_dict
from synth.relational.source import Database

BOUND = 10  # max_children: large, so that a unit moves each child histogram far beyond one row
MANY = 20 * BOUND  # the added patient's visits: far beyond the bound
ADDED = "p-added"  # the added patient's key
CONFIDENCE = 0.99
RUNS = {"honest": (300, 4_000), "mutation": (400, 4_000)}  # runs per database (default, strong)

PROFILE = {
    "release": {"epsilon": 1.0, "delta": 0.0, "engine": "independent"},
    "tables": {
        "patients": {"primary_key": "patient_id",
                     "columns": {"sex": {"kind": "categorical", "categories": ["F", "M"], "complete": True,
                                         "missing": False}}},
        "visits": {"primary_key": "visit_id", "foreign_key": "patient_id", "references": "patients",
                   "max_children": BOUND,
                   "columns": {"ward": {"kind": "categorical", "categories": ["A", "B", "C"], "complete": True,
                                        "missing": False}}},
    },
}
STRUCTURE = Structure(TableKeys("patients", "patient_id"),
                      (TableKeys("visits", "visit_id", (ForeignKey("patient_id", "patients", "patient_id"),)),))


def databases() -> tuple[Database, Database]:
    """Six patients with one or two visits each, and the same with one more patient (MANY visits, ward C)."""
    patients = pd.DataFrame({"patient_id": [f"p{i}" for i in range(6)], "sex": ["F", "M"] * 3})
    owners = [f"p{i}" for i in range(6) for _ in range(1 + i % 2)]
    visits = pd.DataFrame({"visit_id": range(len(owners)), "patient_id": owners,
                           "ward": ["A", "B"] * (len(owners) // 2) + ["A"] * (len(owners) % 2)})
    added_patient = pd.DataFrame({"patient_id": [ADDED], "sex": ["M"]})
    added_visits = pd.DataFrame({"visit_id": range(100, 100 + MANY), "patient_id": [ADDED] * MANY, "ward": ["C"] * MANY})
    first = {"patients": patients, "visits": visits}
    second = {"patients": pd.concat([patients, added_patient], ignore_index=True),
              "visits": pd.concat([visits, added_visits], ignore_index=True)}
    return tuple(  # type: ignore[return-value]
        Database("sqlite", "audit.sqlite", frames, {n: tuple(f.columns) for n, f in frames.items()},
                 STRUCTURE.tables) for frames in (first, second))


# --------------------------------------------------------------------------------------------
# Three levels: each visit's tests. The added patient has DEEP_MANY visits with DEEP_MANY tests each,
# so that after bounding the tests histogram moves by BOUND × TESTS_BOUND in one cell.
# --------------------------------------------------------------------------------------------

TESTS_BOUND = 3
DEEP_MANY = 2 * BOUND
DEEP_PROFILE = json.loads(json.dumps(PROFILE))
DEEP_PROFILE["tables"]["tests"] = {
    "primary_key": "test_id", "foreign_key": "visit_id", "references": "visits", "max_children": TESTS_BOUND,
    "columns": {"result": {"kind": "categorical", "categories": ["low", "high"], "complete": True, "missing": False}}}
DEEP_STRUCTURE = Structure(STRUCTURE.root, (*STRUCTURE.children,
                                            TableKeys("tests", "test_id", (ForeignKey("visit_id", "visits", "visit_id"),))))


def deep_databases() -> tuple[Database, Database]:
    """``databases`` with one test per visit, and the added patient's DEEP_MANY visits with DEEP_MANY tests each."""
    first, second = databases()
    visits = first.frames["visits"]
    tests = pd.DataFrame({"test_id": range(len(visits)), "visit_id": visits["visit_id"], "result": "low"})
    added_visits = pd.DataFrame({"visit_id": range(100, 100 + DEEP_MANY), "patient_id": [ADDED] * DEEP_MANY,
                                 "ward": ["C"] * DEEP_MANY})
    added_tests = pd.DataFrame({"test_id": range(1000, 1000 + DEEP_MANY ** 2),
                                "visit_id": np.repeat(added_visits["visit_id"].to_numpy(), DEEP_MANY), "result": "high"})
    frames = ({**first.frames, "tests": tests},
              {"patients": second.frames["patients"], "visits": pd.concat([visits, added_visits], ignore_index=True),
               "tests": pd.concat([tests, added_tests], ignore_index=True)})
    return tuple(  # type: ignore[return-value]
        Database("sqlite", "audit.sqlite", f, {n: tuple(t.columns) for n, t in f.items()}, DEEP_STRUCTURE.tables)
        for f in frames)


class NoNoise(SeededNoise):
    """Adds nothing: the describer's exact answers, to compute the log-likelihood ratio against."""

    def discrete_laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:
        return np.asarray(counts, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# The mutations: each patches one piece of the relational describer for the duration of a run
# --------------------------------------------------------------------------------------------


def _one_row_per_unit(relation: Any = "add-remove", rows_per_unit: int = 1) -> Neighbouring:
    return Neighbouring(relation)  # the bound ignored: a unit's rows counted as one


def _bound_after_measuring(frames: Any, structure: Structure, max_children: dict[str, int], rng: Any,
                           choose: Any = None, count_caps: Any = None) -> Any:
    every = bound_database(frames, structure, {name: 10**9 for name in max_children}, rng,
                           count_caps=max_children)  # nothing cut (the counts capped as before)
    children = tuple(dataclasses.replace(child, max_children=max_children[child.name],
                                         rows_per_unit=max_children[child.name],
                                         count_cap=max_children[child.name]) for child in every.children)
    return dataclasses.replace(every, children=children)  # noise still calibrated for the bound


class KeyAsData(TableKeys):
    """The root's key is not dropped: it stays a column of the measured table."""

    @property
    def key_columns(self) -> tuple[str, ...]:
        return ()


def _key_profile(profile: RelationalProfile, database: Database) -> RelationalProfile:
    """The root's key listed as a categorical column, its categories read from the data."""
    keys = sorted(database.frames["patients"]["patient_id"].astype(str))
    data = json.loads(json.dumps(PROFILE))
    data["release"]["accept_data_derived_domains"] = True
    data["tables"]["patients"]["columns"]["patient_id"] = {"kind": "categorical", "categories": keys,
                                                           "source": "data-derived", "missing": False}
    data["tables"]["patients"].pop("primary_key")
    parsed = relational_from_dict(data)
    return dataclasses.replace(parsed, keys=profile.keys)


def _deep_rows_not_multiplied(frames: Any, structure: Structure, max_children: dict[str, int], rng: Any,
                              choose: Any = None, count_caps: Any = None) -> Any:
    bounded = bound_database(frames, structure, max_children, rng, choose, count_caps)
    children = tuple(dataclasses.replace(child, rows_per_unit=child.max_children) for child in bounded.children)
    return dataclasses.replace(bounded, children=children)  # a test's noise calibrated for 3 rows, not 10 × 3


MUTATIONS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "sensitivity not scaled by the bound": lambda mp: mp.setattr(relational, "Neighbouring", _one_row_per_unit),
    "truncation after measuring": lambda mp: mp.setattr(relational, "bound_database", _bound_after_measuring),
}
DEEP_MUTATIONS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "a deep table's sensitivity not the product of the bounds":
        lambda mp: mp.setattr(relational, "bound_database", _deep_rows_not_multiplied),
}


@contextmanager
def _noise(source: SeededNoise) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(relational, "noise_source", lambda seed: source)
        yield


def _release(database: Database, source: SeededNoise, profile: RelationalProfile, structure: Structure) -> Any:
    with _noise(source):
        return relational.describe_database(database, profile, structure)


def _counts(release: Any) -> list[tuple[np.ndarray, str, float]]:
    """Every noisy count released: (values, mechanism, noise scale), in a fixed order. A child part's
    given marginals are left out: they are post-processing of the parent part's release (recomputed
    from it in tests/test_relational_parent_marginals.py), not noisy counts of their own."""
    found = [(m.values, m.mechanism, m.noise_scale) for part in release.parts for m in part.description.measurements
             if m.mechanism != PARENT_RELEASE]
    for child, over in release.over_bound.items():
        entry = next(e for e in release.ledger if e.query.startswith("count of") and child in e.query)
        found.append((np.array([over["noisy"]]), entry.mechanism, entry.noise_scale))
    return found


def _llr_runs(runs: int, seed: int, mutation: str = "", deep: bool = False) -> tuple[np.ndarray, np.ndarray, Claim]:
    profile = relational_from_dict(DEEP_PROFILE if deep else PROFILE)
    pair = deep_databases() if deep else databases()
    structure = DEEP_STRUCTURE if deep else STRUCTURE
    statistics: list[list[float]] = [[], []]
    claims = []
    with pytest.MonkeyPatch.context() as mp:
        if mutation:
            {**MUTATIONS, **DEEP_MUTATIONS}[mutation](mp)
        exact = [_counts(_release(db, NoNoise(0), profile, structure)) for db in pair]
        for run in range(runs):
            for side, database in enumerate(pair):
                release = _release(database, SeededNoise(seed + 2 * run + side), profile, structure)
                statistics[side].append(float(sum(
                    log_likelihood_ratio(values, a[0], b[0], mechanism, scale)
                    for (values, mechanism, scale), a, b in zip(_counts(release), *exact, strict=True))))
                claims.append(release.spent["epsilon"])
    return np.array(statistics[0]), np.array(statistics[1]), Claim(max(claims))


def _key_runs(runs: int, seed: int, read_as_data: bool) -> tuple[np.ndarray, np.ndarray, Claim]:
    """Whether the added person's key appears anywhere in the release (its Descriptions)."""
    pair = databases()
    statistics: list[list[float]] = [[], []]
    claims = []
    for run in range(runs):
        for side, database in enumerate(pair):
            profile = relational_from_dict(PROFILE)
            structure = STRUCTURE
            if read_as_data:
                structure = Structure(KeyAsData("patients", "patient_id"), STRUCTURE.children)
                profile = _key_profile(profile, database)
            release = _release(database, SeededNoise(seed + 2 * run + side), profile, structure)
            text = json.dumps([part.description.to_dict() for part in release.parts])
            statistics[side].append(float(ADDED in text))
            claims.append(release.spent["epsilon"])
    return np.array(statistics[0]), np.array(statistics[1]), Claim(max(claims))


def _audit(sample: tuple[np.ndarray, np.ndarray, Claim], categorical: bool = False) -> AuditResult:
    first, second, claim = sample
    return audit(first, second, claim, CONFIDENCE, categorical)


def _runs(kind: str, strong: bool) -> int:
    return RUNS[kind][1 if strong else 0]


def _seed(name: str) -> int:
    return zlib.crc32(name.encode()) * 1_000_000


def test_a_person_with_more_children_than_the_bound_stays_within_the_claim(audit_strong: bool) -> None:
    result = _audit(_llr_runs(_runs("honest", audit_strong), _seed("honest")))
    assert not result.violates, f"the relational release leaks more than it claims: {result.summary()}"


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_broken_relational_release_is_caught(mutation: str, audit_strong: bool) -> None:
    result = _audit(_llr_runs(_runs("mutation", audit_strong), _seed(mutation), mutation))
    assert result.violates, f"the audit missed the bug '{mutation}': {result.summary()}"


def test_a_person_with_rows_three_levels_deep_stays_within_the_claim(audit_strong: bool) -> None:
    result = _audit(_llr_runs(_runs("honest", audit_strong), _seed("deep honest"), deep=True))
    assert not result.violates, f"the three-level release leaks more than it claims: {result.summary()}"


@pytest.mark.parametrize("mutation", sorted(DEEP_MUTATIONS))
def test_a_broken_three_level_release_is_caught(mutation: str, audit_strong: bool) -> None:
    result = _audit(_llr_runs(_runs("mutation", audit_strong), _seed(mutation), mutation, deep=True))
    assert result.violates, f"the audit missed the bug '{mutation}': {result.summary()}"


def test_keys_never_reach_the_release(audit_strong: bool) -> None:
    sample = _key_runs(_runs("honest", audit_strong) // 3, _seed("keys"), read_as_data=False)
    assert sample[0].max() == sample[1].max() == 0.0  # the added person's key never appears
    assert not _audit(sample).violates


def test_a_key_column_read_as_data_is_caught(audit_strong: bool) -> None:
    result = _audit(_key_runs(_runs("honest", audit_strong) // 3, _seed("key as data"), read_as_data=True))
    assert result.violates, f"the audit missed a key column read as data: {result.summary()}"


def test_the_audited_profile_is_a_relational_profile() -> None:
    profile = relational_from_dict(PROFILE)
    assert isinstance(profile.base, Profile) and profile.max_children == {"visits": BOUND}
