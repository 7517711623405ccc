"""A child table's part is given its parent rows' columns from the parent part's release
(``synth.relational.parent_marginals``, ``synth.engines.given``): aim then spends the child part's
budget only on marginals that hold a child column, the given tables are a function of the released
parent Description alone (post-processing, no ledger entry), and they match the rows the child part
measures."""

from __future__ import annotations

import re

import numpy as np
import pytest
from relational_cases import hospital, write_profile, write_sqlite

import synth.relational.describer as describer
from synth.columns.domain import Domain
from synth.engines.given import compress_given
from synth.privacy.measurement import PARENT_RELEASE
from synth.relational.parent_marginals import kept_rows_per_code, parent_marginals
from synth.relational.profile import load_relational_profile
from synth.relational.release import structure_of
from synth.relational.source import read_database

BOUND = 5  # relational_cases' max_children (and the count's cap)


def _release(tmp_path, engine: str = "aim", epsilon: float = 1.0, parents: int = 400):
    frames = hospital(parents)
    database = read_database(write_sqlite(frames, tmp_path / "h.sqlite"))
    profile = load_relational_profile(write_profile(tmp_path / "p.toml", epsilon=epsilon, engine=engine, seed=3,
                                                    max_children=BOUND))
    return frames, describer.describe_database(database, profile, structure_of(database, profile))


def _given(description) -> list:
    return [m for m in description.measurements if m.mechanism == PARENT_RELEASE]


def test_each_count_bucket_keeps_the_mean_of_its_counts_cut_at_the_bound() -> None:
    # buckets {0}, {1}, {2}, {3, 4}, {5 .. 8}, {9 .. 20} at a bound of 3
    weights = kept_rows_per_code(np.array([0, 1, 2, 3, 5, 9, 21]), 3)
    np.testing.assert_allclose(weights, [0, 1, 2, 3, 3, 3])
    np.testing.assert_allclose(kept_rows_per_code(np.array([0, 2, 6]), 4), [0.5, (2 + 3 + 4 + 4) / 4])


def test_the_child_part_measures_no_marginal_of_parent_columns_only(tmp_path) -> None:
    _, release = _release(tmp_path)
    visits = release.part("visits").description
    given = _given(visits)
    assert given and all(all(a.startswith("patients.") for a in m.attrs) for m in given)
    measured = [m for m in visits.measurements if m.mechanism != PARENT_RELEASE]
    assert measured and all("ward" in m.attrs for m in measured)
    # the ledger charged every measured marginal of the visits part, and none of the given ones
    queried = [tuple(re.fullmatch(r"marginal\((.*)\)", e.query).group(1).split(", "))
               for e in release.ledger if e.query.startswith("marginal(")]
    assert not [q for q in queried if all(a.startswith("patients.") for a in q)]
    assert sum("ward" in q for q in queried) == len(measured)


def test_an_engine_that_takes_no_given_marginals_measures_the_parent_columns_itself(tmp_path) -> None:
    _, release = _release(tmp_path, engine="mst")
    visits = release.part("visits").description
    assert not _given(visits)
    assert any(m.attrs == ("patients.sex",) for m in visits.measurements)


def test_the_given_marginals_are_the_parent_release_weighted_by_the_rows_each_parent_keeps(tmp_path) -> None:
    frames, release = _release(tmp_path, epsilon=200.0, parents=600)
    patients, visits = release.part("patients").description, release.part("visits").description
    # a function of the released patients Description alone: recomputed from it, the same tables
    # (the Description holds them on the codes aim merged where they hold no mass)
    again = parent_marginals("patients", patients, patients.schema.names, "visits_count", BOUND)
    _, _, merged = compress_given(again, Domain(visits.schema.names, visits.schema.sizes))
    assert [(m.attrs, m.values.tolist(), m.noise_scale) for m in merged] == [
        (m.attrs, m.values.tolist(), m.noise_scale) for m in _given(visits)]
    # at a large ε the parent model is close to the data: the (sex, count) table is the kept visits
    per = frames["visits"].groupby("patient_id").size().reindex(frames["patients"]["patient_id"], fill_value=0)
    count = np.minimum(per.to_numpy(), BOUND)
    sex = (frames["patients"]["sex"] == "M").to_numpy().astype(int)
    exact = np.zeros((2, BOUND + 1))
    np.add.at(exact, (sex, count), count)  # a parent of count c (at most the bound) keeps c rows
    table = next(m for m in again if m.attrs == ("patients.sex", "patients.visits_count"))
    found = table.values.reshape(2, BOUND + 1)
    assert np.abs(found - exact).sum() <= 0.03 * exact.sum()
    assert found.sum() == pytest.approx(exact.sum(), rel=0.02)

