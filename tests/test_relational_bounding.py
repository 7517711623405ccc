"""Contribution bounding and person-level sensitivity: each parent keeps at most max_children children
(a random choice, never by value), before anything is measured, and the child part's ledger states
sensitivity max_children while the root part's states 1."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from relational_cases import hospital, write_profile, write_sqlite

from synth.errors import BudgetError, BudgetExhaustedError, ProfileError
from synth.privacy import Accountant, Budget, Cost
from synth.privacy.accounting import PartAccountant
from synth.privacy.neighbours import Neighbouring
from synth.relational.bounding import bound_database
from synth.relational.count_share import COUNT_SHARE
from synth.relational.describer import describe_database
from synth.relational.keys import Structure
from synth.relational.profile import load_relational_profile
from synth.relational.release import structure_of
from synth.relational.source import read_database


def _structure(frames: dict[str, pd.DataFrame]) -> Structure:
    from synth.relational.keys import ForeignKey, TableKeys

    return Structure(TableKeys("patients", "patient_id"),
                     (TableKeys("visits", "visit_id", (ForeignKey("patient_id", "patients", "patient_id"),)),))


def test_each_parent_keeps_at_most_the_bound_and_orphans_are_dropped() -> None:
    frames = hospital(300, rate_m=8.0)
    orphans = pd.DataFrame({"visit_id": [10**6, 10**6 + 1], "patient_id": [10**7, None], "ward": ["A", "A"]})
    frames["visits"] = pd.concat([frames["visits"], orphans], ignore_index=True)
    bounded = bound_database(frames, _structure(frames), {"visits": 3}, np.random.default_rng(0))
    child = bounded.children[0]
    assert child.orphans == 2
    per_parent = frames["visits"]["patient_id"].value_counts()
    expected = sum(min(c, 3) for p, c in per_parent.items() if p in set(frames["patients"]["patient_id"]))
    assert len(child.own) == len(child.joined) == expected
    assert list(child.own.columns) == ["ward"]  # keys are never data
    assert "patient_id" not in bounded.root_with_counts.columns
    counts = bounded.root_with_counts["visits_count"]
    assert counts.max() == 3 and counts.sum() == expected
    assert int(child.over.sum()) == int((per_parent > 3).sum())  # the orphan key (one row) is under the bound
    # each kept child carries its own parent's columns
    assert list(child.joined.columns) == ["patients.sex", "patients.age", "patients.visits_count", "ward"]


def test_which_children_are_kept_is_random_not_chosen_by_value() -> None:
    """A parent with 1 visit to ward A and 9 to ward C keeps 2: ward A survives with probability 2/10
    whatever the rows' order or values (a rule by value or by first rows would keep it always or never)."""
    patients = pd.DataFrame({"patient_id": [1], "sex": ["F"], "age": [30]})
    visits = pd.DataFrame({"visit_id": range(10), "patient_id": [1] * 10, "ward": ["A"] + ["C"] * 9})
    frames = {"patients": patients, "visits": visits}
    kept_a = [int((bound_database(frames, _structure(frames), {"visits": 2}, np.random.default_rng(seed))
                   .children[0].own["ward"] == "A").sum()) for seed in range(600)]
    assert np.mean(kept_a) == pytest.approx(0.2, abs=0.05)  # 3 deviations of 600 draws; a rule by value gives 0 or 1


def test_repeated_root_keys_drop_every_row_of_the_key() -> None:
    patients = pd.DataFrame({"patient_id": [1, 1, 2], "sex": ["F", "M", "F"], "age": [1, 2, 3]})
    visits = pd.DataFrame({"visit_id": [1, 2], "patient_id": [1, 2], "ward": ["A", "B"]})
    frames = {"patients": patients, "visits": visits}
    bounded = bound_database(frames, _structure(frames), {"visits": 5}, np.random.default_rng(0))
    assert bounded.repeated_keys == 2 and len(bounded.root) == 1
    assert bounded.children[0].orphans == 1 and list(bounded.children[0].own["ward"]) == ["B"]


def test_the_bound_scales_histogram_sensitivities_and_is_add_remove_only() -> None:
    bounded = Neighbouring("add-remove", 7)
    assert bounded.histogram_l1 == bounded.histogram_l2 == 7.0
    assert bounded.cells_that_appear == 7 and bounded.rows_in_new_cell == 7
    assert Neighbouring().histogram_l1 == 1.0
    with pytest.raises(ProfileError, match="add-remove relation only"):
        Neighbouring("replace", 2)


def test_a_part_accountant_stays_within_its_share_and_charges_the_whole() -> None:
    whole = Accountant(Budget(1.0))
    part = PartAccountant(whole, 0.25)
    assert part.remaining().epsilon == 0.25
    part.charge(Cost(epsilon=0.2), mechanism="laplace", query="q", sensitivity=1, noise_scale=5)
    with pytest.raises(BudgetExhaustedError, match="this part of the release"):
        part.charge(Cost(epsilon=0.1), mechanism="laplace", query="q2", sensitivity=1, noise_scale=10)
    assert len(whole.ledger) == 1 and whole.spent()["epsilon"] == pytest.approx(0.2)
    part.charge(part.remaining(), mechanism="laplace", query="rest", sensitivity=1, noise_scale=10)
    assert whole.remaining().epsilon == pytest.approx(0.75)


def _release(tmp_path, frames, max_children: int, epsilon: float = 1.0):
    path = write_sqlite(frames, tmp_path / "h.sqlite")
    profile = load_relational_profile(write_profile(tmp_path / "p.toml", epsilon=epsilon, max_children=max_children))
    database = read_database(path)
    report = io.StringIO()
    release = describe_database(database, profile, structure_of(database, profile), report_to=report)
    return release, report.getvalue()


def test_the_ledger_states_person_level_sensitivities_and_the_parts_add_up(tmp_path) -> None:
    release, report = _release(tmp_path, hospital(200), max_children=4)
    root, child = release.part("patients"), release.part("visits")
    assert {e.sensitivity for e in root.description.ledger} == {1.0}
    child_entries = child.description.ledger
    assert child_entries[0].sensitivity == 1.0 and "more than 4 visits" in child_entries[0].query  # units over the bound
    assert {e.sensitivity for e in child_entries[1:] if e.mechanism != "exponential"} == {4.0}
    assert [e.index for e in release.ledger] == list(range(len(release.ledger)))
    assert len(release.ledger) == len(root.description.ledger) + len(child_entries)
    assert release.spent["rho"] <= release.budget["rho"] * (1 + 1e-12)
    assert "noise deviation" in report and "visits rows (profile bound)" in report


def test_rows_beyond_the_bound_are_dropped_before_measuring(tmp_path) -> None:
    """At a huge budget the child part's measured total is the kept rows, not every row."""
    frames = hospital(400, rate_f=6.0, rate_m=6.0)
    release, _ = _release(tmp_path, frames, max_children=2, epsilon=1e4)
    kept = frames["visits"]["patient_id"].value_counts().clip(upper=2).sum()
    child = release.part("visits").description
    total = max(m.values.sum() for m in child.measurements if m.attrs == ("ward",) or len(m.attrs) == 1)
    assert total == pytest.approx(kept, abs=5)
    assert kept < 0.5 * len(frames["visits"])
    over = release.over_bound["visits"]["noisy"]
    assert over == pytest.approx((frames["visits"]["patient_id"].value_counts() > 2).sum(), abs=5)


def test_max_children_chosen_under_dp_is_a_noisy_quantile_charged_on_the_child_part(tmp_path) -> None:
    frames = hospital(2000, rate_f=2.0, rate_m=6.0, seed=3)
    path = write_sqlite(frames, tmp_path / "h.sqlite")
    profile_path = write_profile(tmp_path / "p.toml", epsilon=20.0)
    profile_path.write_text(profile_path.read_text(encoding="utf-8").replace("max_children = 5", 'max_children = "dp"'),
                            encoding="utf-8")
    profile = load_relational_profile(profile_path)
    database = read_database(path)
    release = describe_database(database, profile, structure_of(database, profile))
    child = release.part("visits")
    degrees = frames["visits"].groupby("patient_id").size()
    assert child.bound_source == "dp"
    # the 95 % quantile of the children per parent (with any) falls in the bucket 9..12: its top is the bound
    assert 9 <= np.quantile(degrees, 0.95) <= 12
    assert child.max_children == 12
    entry = child.description.ledger[0]
    assert entry.query.startswith("histogram of visits rows per patients row") and entry.sensitivity == 1.0
    assert {e.sensitivity for e in child.description.ledger[2:] if e.mechanism != "exponential"} == {12.0}


def test_parts_of_a_zcdp_budget_can_each_be_spent_in_full_and_add_up_to_the_whole() -> None:
    from synth.privacy import Notion, split_budget

    whole = Accountant(Budget(1.0, 1e-9), Notion.ZCDP)
    limits = split_budget(whole.remaining().rho, [1.0, 1.0, 1.0])
    parts = [PartAccountant(whole, limit) for limit in limits]
    for part in parts:
        part.charge(Cost(rho=part.remaining().rho), mechanism="gaussian", query="all of it", sensitivity=1,
                    noise_scale=1)
        assert part.remaining().rho == 0.0
        assert part.spent()["rho"] == pytest.approx(part.limit)
    assert whole.remaining().rho == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(BudgetExhaustedError):
        parts[0].charge(Cost(rho=1e-12), mechanism="gaussian", query="more", sensitivity=1, noise_scale=1)
    with pytest.raises(BudgetError, match="basic composition"):
        PartAccountant(Accountant(Budget(1.0, 1e-6), Notion.APPROX, composition="advanced"), 0.5)


def test_a_parents_count_of_children_is_kept_up_to_max_count_while_only_max_children_rows_are_measured() -> None:
    frames = hospital(300, rate_m=8.0)
    bounded = bound_database(frames, _structure(frames), {"visits": 2}, np.random.default_rng(0), count_caps={"visits": 12})
    child = bounded.children[0]
    per_parent = frames["visits"]["patient_id"].value_counts()
    truth = frames["patients"]["patient_id"].map(per_parent).fillna(0).clip(upper=12).to_numpy()
    assert (bounded.root_with_counts["visits_count"].to_numpy() == truth).all()  # the count is the parent's own
    assert child.count_cap == 12 and child.rows_per_unit == 2  # the sensitivity follows max_children only
    assert len(child.own) == int(np.minimum(truth, 2).sum())


def test_a_large_count_cap_is_coded_in_public_buckets_and_a_small_one_count_by_count() -> None:
    from synth.relational.describer import count_column_domain

    small, large = count_column_domain("n", 8), count_column_domain("n", 1000)
    assert small.size == 9 and list(small.edges) == list(range(10))  # a panel of 8 keeps its 8
    assert list(large.edges[:10]) == [0, 1, 2, 3, 4, 5, 7, 9, 13, 17] and large.edges[-1] == 1001
    assert large.size == 19


def test_max_count_is_public_at_least_max_children_and_only_for_a_child(tmp_path) -> None:
    base = write_profile(tmp_path / "p.toml").read_text(encoding="utf-8")
    cases = {"max_count = 3\n": "below max_children", "max_count = 0\n": "at least 1", 'max_count = "dp"\n': "whole number"}
    for line, message in cases.items():
        path = tmp_path / "bad.toml"
        path.write_text(base.replace("max_children = 5\n", "max_children = 5\n" + line), encoding="utf-8")
        with pytest.raises(ProfileError, match=message):
            load_relational_profile(path)
    path = tmp_path / "root.toml"
    path.write_text(base.replace('primary_key = "patient_id"\n', 'primary_key = "patient_id"\nmax_count = 9\n', 1),
                    encoding="utf-8")
    with pytest.raises(ProfileError, match="apply to a child table"):
        load_relational_profile(path)
    path.write_text(base.replace("max_children = 5\n", "max_children = 5\nmax_count = 40\n"), encoding="utf-8")
    assert load_relational_profile(path).max_count == {"visits": 40}


def test_budget_weights_split_the_budget_between_tables_and_are_checked(tmp_path) -> None:
    path = write_profile(tmp_path / "p.toml")
    text = path.read_text(encoding="utf-8").replace('[tables.visits]\n', '[tables.visits]\nbudget_weight = 3\n')
    path.write_text(text, encoding="utf-8")
    profile = load_relational_profile(path)
    assert profile.budget_weight("visits") == 3.0 and profile.budget_weight("patients") == 1.0
    database = read_database(write_sqlite(hospital(400), tmp_path / "h.sqlite"))
    release = describe_database(database, profile, structure_of(database, profile))
    limits = {p.table: p.limit for p in release.parts}
    moved = release.part("visits").count_share  # then COUNT_SHARE of the child's part measures its count column
    assert moved == pytest.approx(COUNT_SHARE * (limits["visits"] + moved))
    assert limits["visits"] + moved == pytest.approx(3 * (limits["patients"] - moved))
    assert release.record({"patients": "", "visits": ""})["budget_split"]["weights"] == {"patients": 1.0, "visits": 3.0}
    for bad in ("0", "-1", '"a lot"'):
        path.write_text(text.replace("budget_weight = 3", f"budget_weight = {bad}"), encoding="utf-8")
        with pytest.raises(ProfileError, match="budget_weight must be a positive number"):
            load_relational_profile(path)
