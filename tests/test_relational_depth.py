"""A database three levels deep (patients, their visits, each visit's tests): the privacy unit is a
patient with every row below them, a unit owns at most the product of the bounds of a deep table's
rows, and the ledger charges that; generation and evaluation walk the tree parents first."""

from __future__ import annotations

import numpy as np
import pandas as pd
from relational_cases import clinic, write_clinic_profile, write_clinic_sqlite

from synth import api
from synth.evaluate.relational import evaluate_database
from synth.relational.bounding import bound_database
from synth.relational.source import read_database
from synth.release.description import load_description

VISITS, TESTS = 5, 3


def _structure(database):
    from synth.relational.keys import Structure

    return Structure.of(database.declared, database.columns)


def test_a_unit_keeps_at_most_the_product_of_the_bounds_and_rows_under_a_cut_parent_go_with_it(tmp_path) -> None:
    frames = clinic(300, seed=2)
    heavy_visits = pd.DataFrame({"visit_id": range(10**6, 10**6 + 12), "patient_id": [1] * 12, "ward": ["C"] * 12})
    heavy_tests = pd.DataFrame({"test_id": range(10**6, 10**6 + 120), "visit_id": np.repeat(heavy_visits["visit_id"], 10),
                                "result": ["low"] * 120})
    frames["visits"] = pd.concat([frames["visits"], heavy_visits], ignore_index=True)
    frames["tests"] = pd.concat([frames["tests"], heavy_tests], ignore_index=True)
    database = read_database(write_clinic_sqlite(frames, tmp_path / "c.sqlite"))
    bounded = bound_database(database.frames, _structure(database), {"visits": VISITS, "tests": TESTS},
                             np.random.default_rng(0))
    visits, tests = bounded.children
    assert (visits.name, visits.rows_per_unit, tests.name, tests.parent, tests.rows_per_unit) == (
        "visits", VISITS, "tests", "visits", VISITS * TESTS)
    # each kept test carries its visit's columns (with the visit's own tests count), never a key
    assert list(tests.joined.columns) == ["visits.ward", "visits.tests_count", "result"]
    assert tests.joined["visits.tests_count"].max() == TESTS
    # the heavy patient: at most 5 visits kept, each with at most 3 tests; the tests of the 7 cut visits go too
    assert tests.cut_with_parent >= 7 * 10 and tests.orphans == 0
    per_visit = visits.joined.groupby(visits.joined.index)["tests_count"].sum()
    assert per_visit.max() <= TESTS and len(tests.own) == int(visits.joined["tests_count"].sum())
    assert tests.over.size == len(visits.own) and int(tests.over.sum()) >= VISITS  # the heavy one's kept visits


def test_the_ledger_charges_a_deep_table_at_the_product_of_its_bounds(tmp_path) -> None:
    path = write_clinic_sqlite(clinic(400, seed=3), tmp_path / "c.sqlite")
    result = api.run_database(path, tmp_path / "out", write_clinic_profile(tmp_path / "p.toml"), report_to=None)
    tests = load_description(tmp_path / "out" / "tests.description.json")
    over = [e for e in result.release.ledger if e.query.startswith("count of visits rows with more than")]
    assert len(over) == 1 and over[0].sensitivity == VISITS  # one unit owns up to 5 visits
    measured = [e for e in tests.ledger if not e.query.startswith("count of")]
    assert measured and all(e.sensitivity == VISITS * TESTS for e in measured)
    record = result.release.record({t: "" for t in ("patients", "visits", "tests")})
    assert [t.get("rows_per_unit") for t in record["tables"]] == [1, VISITS, VISITS * TESTS]
    assert "directly or through other rows" in record["privacy_unit"]


def test_max_children_of_a_deep_table_chosen_under_dp_is_charged_at_its_parents_rows_per_unit(tmp_path) -> None:
    path = write_clinic_sqlite(clinic(3000, seed=3), tmp_path / "c.sqlite")
    result = api.run_database(path, tmp_path / "out", write_clinic_profile(tmp_path / "p.toml", epsilon=8.0,
                                                                           tests_bound="dp"), report_to=None)
    histogram = [e for e in result.release.ledger if e.query.startswith("histogram of tests rows per visits row")]
    assert len(histogram) == 1 and histogram[0].sensitivity == VISITS
    assert result.release.part("tests").bound_source == "dp" and 1 <= result.release.part("tests").max_children <= 12  # Poisson(4) at most


def test_three_levels_are_generated_linked_and_evaluated_against_the_naive_links(tmp_path) -> None:
    path = write_clinic_sqlite(clinic(3000, seed=4), tmp_path / "c.sqlite")
    api.run_database(path, tmp_path / "out", write_clinic_profile(tmp_path / "p.toml", epsilon=4.0), report_to=None)
    evaluation = evaluate_database(path, tmp_path / "out")
    assert evaluation.integrity["visits"].share == evaluation.integrity["tests"].share == 1.0
    tests_per_visit, tests_cross = evaluation.degrees["tests"], evaluation.cross["tests"]
    assert tests_per_visit.parent == "visits"
    assert tests_cross.pairs == (("visits.ward", "result"),)
    # ward C visits have four times the tests and ward B's results are high: links carry both
    assert tests_cross.tvds.mean() <= 0.5 * tests_cross.naive_tvds.mean()
    assert tests_per_visit.joint_tvd < tests_per_visit.naive_joint_tvd
    assert "tests per visits" in "\n".join(evaluation.lines())
