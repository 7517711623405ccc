"""DP domain discovery: threshold arithmetic, what is found, what is charged."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synth.columns.kinds import DomainSource, Kind
from synth.domains.categories import (
    TAIL_MARGIN,
    Found,
    appearance_threshold,
    discover_categories,
)
from synth.domains.discovery import discover_columns
from synth.errors import BudgetError
from synth.privacy import Accountant, Budget, DiscreteGaussian, DiscreteLaplace, SeededNoise
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT


def test_discrete_gaussian_tail_matches_direct_sum():
    sigma = 3.0
    k = np.arange(-200, 201)
    w = np.exp(-k.astype(float) ** 2 / (2 * sigma**2))
    for t in (1, 5, 12):
        assert DiscreteGaussian(1.0, sigma).tail(t) == pytest.approx(w[k >= t].sum() / w.sum(), rel=1e-9)


def test_discrete_laplace_tail_matches_direct_sum():
    b = 2.5
    k = np.arange(-400, 401)
    w = np.exp(-np.abs(k) / b)
    for t in (1, 4, 20):
        assert DiscreteLaplace(1.0, b).tail(t) == pytest.approx(w[k >= t].sum() / w.sum(), rel=1e-9)


@pytest.mark.parametrize("noise", [DiscreteGaussian(1.0, 4.0), DiscreteLaplace(1.0, 3.0)])
def test_threshold_is_the_smallest_that_keeps_delta(noise):
    delta = 1e-9
    tau, prob = appearance_threshold(noise, delta)
    target = delta * (1 - TAIL_MARGIN)  # room for the float rounding of the computed tail
    assert prob <= target and prob == noise.tail(tau - 1)
    assert noise.tail(tau - 2) > target


def test_singleton_appears_rarely_with_the_computed_threshold():
    # With a loose delta the threshold is small enough to observe: a count of 1 clears it with
    # probability about delta.
    tau, prob = appearance_threshold(DiscreteGaussian(1.0, 2.0), 0.05)
    noise = SeededNoise(11).discrete_gaussian(np.ones(200_000, dtype=np.int64), 2.0)
    assert np.mean(noise >= tau) == pytest.approx(prob, abs=4 * math.sqrt(prob / 200_000))


def _counts(epsilon=4.0, delta=1e-6, reserve=5e-7, relation="add-remove"):
    accountant = Accountant(Budget(epsilon, delta), delta_reserve=reserve)
    return CountRelease(accountant, SeededNoise(5), Neighbouring(relation))


def test_categories_keep_frequent_values_and_drop_rare_ones():
    rng = np.random.default_rng(0)
    values = list(rng.choice(["a", "b", "c"], size=5000)) + [f"rare{i}" for i in range(300)]
    counts = _counts()
    column, finding, _ = discover_categories("x", pd.Series(values), counts, 0.05, 2e-7)
    assert finding.verdict == "located"
    assert column.categories == ("a", "b", "c")
    assert column.source == DomainSource.DP_ESTIMATED
    entry = counts.accountant.ledger[-1]
    assert entry.cost.rho == pytest.approx(0.05, rel=1e-9)


@pytest.mark.parametrize("relation", ["add-remove", "replace"])
def test_a_thresholded_histogram_is_charged_its_whole_delta_share(relation):
    # The charge is the δ₀ allotted to the column, not the computed tail (which sits below it and
    # whose float rounding could understate the loss); the tail itself stays under δ₀ per cell.
    counts = _counts(relation=relation)
    discover_categories("x", pd.Series(["a", "b"] * 2000), counts, 0.05, 2e-7)
    entry = counts.accountant.ledger[-1]
    assert entry.cost.delta == 2e-7
    cells = counts.neighbouring.cells_that_appear
    tau, tail = appearance_threshold(DiscreteGaussian(entry.sensitivity, entry.noise_scale), 2e-7 / cells)
    assert f"threshold {tau}" in entry.note and tail * cells < 2e-7




def _even_values(values: int, rows_each: int) -> pd.DataFrame:
    return pd.DataFrame({"t": [f"v{i:02d}" for i in range(values) for _ in range(rows_each)]})


def test_a_text_column_lost_on_the_first_pass_is_found_by_the_reserve():
    # 40 values of 30 rows each: the first pass (ρ = 0.002, σ ≈ 16) sets a threshold near 80 rows
    # and finds none; the reserve (ρ = 0.05, σ ≈ 3) brings it near 17, and all 40 are found.
    df, kinds = _even_values(40, 30), {"t": Kind.CATEGORICAL}
    without = discover_columns(df, kinds, _counts(), 0.002, 5e-7, SILENT)
    assert [f.verdict for f in without.findings] == ["lost"] and without.second_pass == ()
    counts = _counts()
    found = discover_columns(df, kinds, counts, 0.002, 5e-7, SILENT, reserve=0.05)
    assert found.columns["t"].categories == tuple(f"v{i:02d}" for i in range(40))
    assert found.findings[0].verdict == "located" and found.second_pass == ("t",)
    ledger = counts.accountant.ledger
    assert [e.query.split(":")[0] for e in ledger] == ["categories(t)", "categories, second pass(t)"]
    assert [e.cost.rho for e in ledger] == pytest.approx([0.002, 0.05], rel=1e-9)
    assert [e.cost.delta for e in ledger] == [2.5e-7, 2.5e-7]  # each pass has half the column's δ


def test_the_reserve_is_not_spent_on_a_column_the_first_pass_located():
    counts = _counts()
    found = discover_columns(_even_values(5, 400), {"t": Kind.CATEGORICAL}, counts, 0.002, 5e-7, SILENT, reserve=0.05)
    assert len(found.columns["t"].categories) == 5 and found.second_pass == ()
    assert [e.query.split(":")[0] for e in counts.accountant.ledger] == ["categories(t)"]


def test_the_reserve_is_shared_by_the_text_columns_left_rough_or_lost():
    df = pd.DataFrame({"a": _even_values(40, 30)["t"], "b": _even_values(40, 30)["t"].str.upper(),
                       "c": _even_values(5, 400)["t"]})
    counts = _counts()
    found = discover_columns(df, dict.fromkeys(df.columns, Kind.CATEGORICAL), counts, 0.006, 5e-7, SILENT, reserve=0.1)
    assert found.second_pass == ("a", "b") and list(found.columns) == ["a", "b", "c"]
    second = [e for e in counts.accountant.ledger if "second pass" in e.query]
    assert [e.cost.rho for e in second] == pytest.approx([0.05, 0.05], rel=1e-9)
    assert sum(e.cost.rho for e in counts.accountant.ledger) == pytest.approx(0.106, rel=1e-9)


def test_two_passes_merge_by_inverse_variance():
    first = Found(pd.Series({"a": 100.0}), 80, 10.0)
    second = Found(pd.Series({"b": 30.0, "a": 110.0}), 20, 5.0)
    merged = first.merged(second)
    assert merged.counts.to_dict() == pytest.approx({"a": (100 / 100 + 110 / 25) / (1 / 100 + 1 / 25), "b": 30.0})
    assert list(merged.counts.index) == ["a", "b"] and merged.threshold == 20 and merged.std == 10.0


def test_text_columns_need_delta():
    counts = CountRelease(Accountant(Budget(1.0, 0.0)), SeededNoise(0), Neighbouring())
    with pytest.raises(BudgetError, match="delta > 0"):
        discover_columns(pd.DataFrame({"t": ["a"]}), {"t": Kind.CATEGORICAL}, counts, 0.1, 0.0,
                         progress=SILENT)


def test_discovery_charges_every_paid_column_and_stays_in_budget():
    df = pd.DataFrame({"t": ["a", "b"] * 500, "n": np.arange(1000), "f": [True, False] * 500})
    counts = _counts()
    kinds = {"t": Kind.CATEGORICAL, "n": Kind.INTEGER, "f": Kind.BOOLEAN}
    columns = discover_columns(df, kinds, counts, 0.1, 5e-7, SILENT).columns
    assert set(columns) == {"t", "n", "f"}
    assert columns["f"].source == DomainSource.PUBLIC
    queries = [e.query.split(":")[0] for e in counts.accountant.ledger]
    assert queries == ["categories(t)", "bounds(n)", "bounds(n)", "shape(f)"]  # the boolean pays for its spelling only
    assert sum(e.cost.rho for e in counts.accountant.ledger) <= 0.1
    assert sum(e.cost.delta for e in counts.accountant.ledger) <= 5e-7


def test_classify_cells_reads_each_cell():
    from synth.columns.cells import CELL_CLASSES, classify_cells

    series = pd.Series(["yes", "12", "007", "1.5", "2020-01-31", "Lyon", "", None, "1e3"])
    kinds = [CELL_CLASSES[c] if c >= 0 else None for c in classify_cells(series)]
    assert kinds == [Kind.BOOLEAN, Kind.INTEGER, Kind.CATEGORICAL, Kind.FLOAT, Kind.DATETIME,
                     Kind.CATEGORICAL, None, None, Kind.INTEGER]


@pytest.mark.parametrize("values,expected", [
    ([str(i % 90) for i in range(3000)] + ["n/a", "unknown"], Kind.INTEGER),  # odd cells do not flip it
    ([f"{i / 7:.3f}" for i in range(3000)], Kind.FLOAT),
    ([f"2021-05-0{1 + i % 9}" for i in range(3000)], Kind.DATETIME),
    (["yes", "no"] * 1500, Kind.BOOLEAN),
    (["red", "green", "blue"] * 1000 + ["7"], Kind.CATEGORICAL),
])
def test_vote_kind_decides_from_noisy_counts(values, expected):
    from synth.domains.votes import vote_kind

    counts = _counts()
    assert vote_kind("c", pd.Series(values), counts, 0.01).kind == expected
    entry = counts.accountant.ledger[-1]
    assert entry.query.startswith("kind(c)") and entry.cost.rho == pytest.approx(0.01, rel=1e-9)


def test_undeclared_text_columns_are_voted_then_measured():
    df = pd.DataFrame({"n": [str(i) for i in range(2000)], "t": ["a", "b"] * 1000})
    counts = _counts()
    columns = discover_columns(df, {"n": None, "t": None}, counts, 0.1, 5e-7, SILENT).columns
    assert columns["n"].kind == Kind.INTEGER and columns["t"].categories == ("a", "b")
    queries = [e.query.split(":")[0] for e in counts.accountant.ledger]
    assert queries == ["kind(n)", "kind(t)", "bounds(n)", "bounds(n)", "distinct(t)", "categories(t)"]
    assert sum(e.cost.rho for e in counts.accountant.ledger) <= 0.1


def test_vote_on_a_tiny_column_falls_back_to_text_with_a_note():
    from synth.domains.votes import vote_kind

    notes: list[str] = []
    kind = vote_kind("tiny", pd.Series(["1.5", "2.5", "3.5"]), _counts(), 0.001, notes=notes).kind
    assert kind == Kind.CATEGORICAL and notes and "too few rows" in notes[0]


@pytest.mark.parametrize("series", [
    pd.Series([3, -7, 0, 2**40], dtype="int64"),
    pd.Series([1.0, 2.5, np.nan, -0.0, np.inf, -np.inf, 1e20, 0.1], dtype="float64"),
    pd.Series([4, None, 9], dtype="Int64"),
    pd.Series([True, False, True]),
    pd.Series([True, None, False], dtype="boolean"),
    pd.Series(pd.to_datetime(["2020-01-31 00:00", None, "1999-12-31 10:00"])),
    pd.Series(pd.to_datetime(["2020-01-31 12:00", None]).tz_localize("Europe/Oslo")),
])
def test_typed_cells_are_classed_as_their_text_would_be(series):
    # A typed column's cells are classified without going through text, with the same result as
    # the same cells given as Python objects (the text path): the dtype itself decides nothing.
    from synth.columns.cells import classify_cells

    as_objects = pd.Series(list(series.astype(object)), dtype=object)
    assert classify_cells(series).tolist() == classify_cells(as_objects).tolist()


def test_a_whole_number_column_never_becomes_float_by_noise():
    from synth.domains.votes import vote_kind

    column = pd.Series([str(i % 50) for i in range(400)])
    kinds = set()
    for seed in range(300):  # σ ≈ 22: the 400 numbers stand clear, the non-integral count is pure noise
        counts = CountRelease(Accountant(Budget(4.0, 1e-6), delta_reserve=5e-7), SeededNoise(seed), Neighbouring())
        kinds.add(vote_kind("n", column, counts, 1e-3).kind)
    assert kinds == {Kind.INTEGER}


def test_a_few_percent_of_decimals_make_a_float_column_when_they_clear_the_noise():
    # 1.7 % of the cells have decimals: certainly there at this budget, so the column is float (a
    # fixed 5 % share would have rounded them away).
    from synth.domains.votes import vote_kind

    values = [str(i % 300) for i in range(20_000)]
    values[::59] = [f"{i}.5" for i in range(len(values[::59]))]
    assert 0.016 < np.mean(["." in v for v in values]) < 0.018
    assert vote_kind("x", pd.Series(values), _counts(), 0.05).kind == Kind.FLOAT


def test_a_close_split_between_kinds_is_text_with_a_note():
    from synth.domains.votes import vote_kind

    # An even split: the lead is pure noise, which clears 2 deviations about 5 % of the time.
    values = pd.Series([str(i) for i in range(1500)] + [f"word{i % 20}" for i in range(1500)])
    decided = []
    for seed in range(40):
        notes: list[str] = []
        counts = CountRelease(Accountant(Budget(4.0, 1e-6), delta_reserve=5e-7), SeededNoise(seed), Neighbouring())
        kind = vote_kind("mix", values, counts, 0.0005, notes=notes).kind
        decided.append(kind)
        assert kind == Kind.CATEGORICAL or not notes  # a note only with the fallback to text
        assert not notes or "does not stand clear of the noise" in notes[0]
    assert decided.count(Kind.CATEGORICAL) >= 34


def test_a_missing_code_exists_only_when_the_noisy_missing_count_clears_the_noise():
    # 2,000 rows: "full" has no missing cell, "holed" a quarter missing. Over 200 seeded votes the
    # full column gets a missing code at about the rate of a 3-deviation tail (≤ 2 %), the holed
    # one always; the mutation "always keep the missing code" would give the full column 100 %.
    from synth.domains.votes import vote_kind
    full = pd.Series(np.arange(2000).astype(str))
    holed = pd.Series(np.where(np.arange(2000) % 4 == 0, "", full))
    with_code = {"full": 0, "holed": 0}
    for seed in range(200):
        counts = _counts()
        counts.noise = SeededNoise(seed)
        with_code["full"] += vote_kind("full", full, counts, 0.01).missing
        with_code["holed"] += vote_kind("holed", holed, counts, 0.01).missing
    assert with_code["full"] <= 4 and with_code["holed"] == 200


def test_discovered_columns_carry_the_vote_on_missing_cells():
    df = pd.DataFrame({"n": np.arange(3000) % 50, "t": np.where(np.arange(3000) % 3 == 0, "", "ab"),
                       "b": ["yes", "no"] * 1500})
    found = discover_columns(df, {"n": None, "t": None, "b": None}, _counts(epsilon=8.0), 0.3, 1e-7, SILENT)
    assert not found.columns["n"].missing and found.columns["t"].missing and not found.columns["b"].missing
    declared = discover_columns(df, {"n": Kind.INTEGER}, _counts(epsilon=8.0), 0.3, 0.0, SILENT)
    assert declared.columns["n"].missing  # not voted: the code stays, whatever the data


def test_delta_goes_only_to_the_columns_the_votes_call_text():
    # Three columns undecided before the votes; only "t" turns out to be text, so the whole δ of
    # discovery is its own (splitting it three ways before the votes would waste two thirds).
    df = pd.DataFrame({"n": np.arange(3000) % 40, "m": np.arange(3000) % 7, "t": ["a", "b", "c"] * 1000})
    counts = _counts()
    discover_columns(df, {"n": None, "m": None, "t": None}, counts, 0.1, 3e-7, SILENT)
    (entry,) = [e for e in counts.accountant.ledger if e.query.startswith("categories(t)")]
    assert entry.cost.delta == pytest.approx(3e-7, rel=1e-12)


def test_a_distinct_count_too_noisy_to_tell_is_not_quoted():
    # 30,000 cells of 300 values: the distinct count's deviation (2.5 % of the cells: 750) dwarfs
    # 300, so the message quotes no "values, rows each"; with 10,000 values of 3 rows it does.
    for values, quoted in ((300, False), (10_000, True)):
        df = pd.DataFrame({"v": [f"x{i % values}" for i in range(30_000)]})
        found = discover_columns(df, {"v": None}, _counts(), 0.00002, 5e-7, SILENT)
        (finding,) = found.findings
        assert finding.verdict == "lost" and ("it holds about" in finding.detail) == quoted


def test_a_category_list_is_complete_only_when_the_values_found_hold_every_cell():
    # Post-processing of the vote's noisy count of present cells and the values' noisy counts: no
    # OTHER code when nothing is left over beyond the noise, one when rare values hold 10 % of cells.
    rng = np.random.default_rng(4)
    closed = rng.choice(["Lyon", "Oslo", "Quito"], 3000)
    open_ = np.where(rng.random(3000) < 0.1, [f"rare{i}" for i in range(3000)], closed)
    counts = _counts()
    found = discover_columns(pd.DataFrame({"closed": closed, "open": open_}), {"closed": None, "open": None},
                             counts, 0.2, 5e-7, SILENT).columns
    assert found["closed"].complete and found["closed"].other_code == -1
    assert not found["open"].complete and found["open"].categories == ("Lyon", "Oslo", "Quito")
    assert [e.query.split(":")[0] for e in counts.accountant.ledger] == [  # the decision costs nothing more
        "kind(closed)", "kind(open)", "distinct(closed)", "categories(closed)", "distinct(open)", "categories(open)"]


def test_an_all_missing_column_is_written_empty_from_the_vote_alone():
    # Issue 30, item 7: a column of blanks was "lost" and refused the release. Its kind vote's
    # noisy missing count clears the noise and its noisy present count does not: it is released
    # empty (left out of the model), with nothing more measured for it; a column with a few
    # present cells, too few to clear the noise, is released the same way (no exact emptiness).
    n = np.arange(3000) % 50
    for cells in ([""] * 3000, ["x"] * 3 + [""] * 2997):
        df = pd.DataFrame({"n": n, "e": cells})
        counts = _counts()
        found = discover_columns(df, {"n": None, "e": None}, counts, 0.1, 5e-7, SILENT)
        column, finding = found.columns["e"], found.findings[1]
        assert column.kind == Kind.TEXT and column.source == DomainSource.DP_ESTIMATED
        assert finding.verdict == "located" and "all missing" in finding.detail
        assert not found.lost and found.columns["n"].kind == Kind.INTEGER
        assert [e.query.split(":")[0] for e in counts.accountant.ledger if "(e)" in e.query] == ["kind(e)"]
    # a tenth of the cells present clears the noise: the column is measured as usual
    df = pd.DataFrame({"n": n, "e": np.where(n % 10 == 0, "a", "")})
    found = discover_columns(df, {"n": None, "e": None}, _counts(), 0.1, 5e-7, SILENT)
    assert found.columns["e"].kind == Kind.CATEGORICAL and found.columns["e"].categories == ("a",)


def test_a_column_half_missing_is_voted_by_its_values_not_written_empty():
    # acs12's hours worked: 959 numbers among 2,000 cells, voted at the budget one column of fourteen
    # gets at ε = 1 (noise deviation about 110 a class). The present cells' count over the five
    # classes carries the noise of the four empty classes too, and fell under its margin in 54 of
    # these 400 runs (the column then written empty); the numbers' own count clears its margin in all.
    from synth.domains.votes import vote_kind

    rng = np.random.default_rng(0)
    hours = np.where(rng.random(2000) < 0.48, rng.integers(1, 100, 2000), -1)
    cells = pd.Series(["" if h < 0 else f"{h}.0" for h in hours])
    blanks = pd.Series([""] * 2000)
    empty = {"hours": 0, "blanks": 0}
    for seed in range(400):
        for name, column in (("hours", cells), ("blanks", blanks)):
            counts = CountRelease(Accountant(Budget(4.0, 1e-6), delta_reserve=5e-7), SeededNoise(seed), Neighbouring())
            empty[name] += vote_kind(name, column, counts, 4.1e-5).kind == Kind.TEXT
    assert empty["hours"] <= 4  # under 1 %
    assert empty["blanks"] >= 396  # a column of blanks still shows values by noise in under 1 % of runs


def test_all_missing_or_one_present_cell_give_the_same_outcomes_up_to_noise():
    # Neighbours: a column of 16 blanks, and the same with one cell present. At this budget the
    # missing count clears its margin (about 15 cells) only some of the time, so both outcomes
    # occur; the decision is made from the noisy vote only, so their shares over 400 seeds match
    # up to noise (about 20 % written empty, the rest lost as too small), never 0 for one of them.
    share = {}
    for name, cells in (("none", [""] * 16), ("one", ["x"] + [""] * 15)):
        empty = 0
        for seed in range(400):
            counts = CountRelease(Accountant(Budget(4.0, 1e-6), delta_reserve=5e-7), SeededNoise(seed), Neighbouring())
            found = discover_columns(pd.DataFrame({"e": cells}), {"e": None}, counts, 0.02, 5e-7, SILENT)
            empty += (found.findings[0].kind, found.findings[0].verdict) == (Kind.TEXT, "located")
        share[name] = empty / 400
    assert 0.1 < share["none"] < 0.35 and 0.1 < share["one"] < 0.35 and abs(share["none"] - share["one"]) < 0.1


SURVEY_ANSWERS = ["did not drive", "0", "1-2", "3-5", "6-9", "10-19", "20-29", "30"]


def _survey_column(rows: int, seed: int = 0) -> pd.Series:
    """Answers to "on how many days did you text while driving", as a questionnaire codes them: a
    number for some answers, a range or words for others (about 40 % numbers)."""
    shares = [0.37, 0.38, 0.07, 0.04, 0.03, 0.03, 0.02, 0.06]
    return pd.Series(np.random.default_rng(seed).choice(SURVEY_ANSWERS, rows, p=shares))


def test_a_column_of_numbers_and_words_is_voted_text_not_numbers():
    # Numbers are the largest class here (44 %), yet reading the column as integers would write the
    # other 56 % as missing. The vote asks numbers to hold KIND_SHARE (95 %) of the present cells.
    from synth.domains.votes import KIND_SHARE, vote_kind

    column = _survey_column(10_000)
    notes: list[str] = []
    vote = vote_kind("texting", column, _counts(), 0.01, notes=notes)
    assert vote.kind == Kind.CATEGORICAL and vote.mixed == Kind.INTEGER
    assert vote.mixed_cells == pytest.approx(0.44 * 10_000, rel=0.05) and vote.cells == pytest.approx(10_000, rel=0.02)
    assert notes and "read as categories" in notes[0]
    # 3 % of words (under 1 − KIND_SHARE) leave a number column as it was
    words = pd.Series([str(i % 90) for i in range(9_700)] + ["refused"] * 300)
    assert 1 - 300 / 10_000 > KIND_SHARE
    assert vote_kind("n", words, _counts(), 0.01).kind == Kind.INTEGER


def test_dates_mixed_with_words_are_voted_text():
    from synth.domains.votes import vote_kind

    dates = pd.Series([f"2021-05-{1 + i % 28:02d}" for i in range(8_000)] + ["unknown"] * 2_000)
    vote = vote_kind("when", dates, _counts(), 0.01)
    assert vote.kind == Kind.CATEGORICAL and vote.mixed == Kind.DATETIME


def test_a_mixed_column_with_few_values_keeps_every_answer_as_a_category():
    df = pd.DataFrame({"texting": _survey_column(20_000)})
    found = discover_columns(df, {"texting": None}, _counts(epsilon=8.0), 0.3, 1e-7, SILENT)
    column = found.columns["texting"]
    assert column.kind == Kind.CATEGORICAL and set(column.categories) == set(SURVEY_ANSWERS)


def test_a_mixed_column_with_too_many_values_to_list_reads_as_numbers():
    # Incomes (thousands of distinct values) with 12 % "Refused": no list can hold them, so the
    # column is read as whole numbers after all, its words written as missing (it keeps a missing
    # code), with the budget the listing left.
    rng = np.random.default_rng(3)
    income = np.round(rng.lognormal(10.5, 0.8, 20_000)).astype(int).astype(str).astype(object)
    income[rng.random(20_000) < 0.12] = "Refused"
    counts = _counts()
    found = discover_columns(pd.DataFrame({"income": income}), {"income": None}, counts, 0.003, 1e-9, SILENT)
    column, (finding,) = found.columns["income"], found.findings
    assert column.kind == Kind.INTEGER and column.missing and column.lower is not None
    assert "too many values to list as categories" in finding.detail
    assert sum(e.cost.rho for e in counts.accountant.ledger) <= 0.003 * (1 + 1e-9)
    queries = [e.query.split(":")[0] for e in counts.accountant.ledger]
    assert queries[0] == "kind(income)" and "categories(income)" in queries and queries[-1] == "bounds(income)"


def test_without_delta_a_mixed_column_reads_as_numbers():
    # Listing values needs δ; a mixed column then keeps its numbers rather than failing the release.
    df = pd.DataFrame({"texting": _survey_column(5_000)})
    found = discover_columns(df, {"texting": None}, _counts(epsilon=8.0), 0.3, 0.0, SILENT)
    assert found.columns["texting"].kind == Kind.INTEGER and found.columns["texting"].missing


def test_yes_no_and_a_third_answer_keep_every_answer():
    # "don't know" in 12 % of the cells: a boolean reading would write it as missing.
    rng = np.random.default_rng(5)
    answers = pd.Series(rng.choice(["yes", "no", "don't know"], 20_000, p=[0.5, 0.38, 0.12]))
    from synth.domains.votes import vote_kind

    vote = vote_kind("answer", answers, _counts(), 0.01)
    assert vote.kind == Kind.CATEGORICAL and vote.mixed is None  # nothing to fall back to: a short list
    found = discover_columns(pd.DataFrame({"answer": answers}), {"answer": None}, _counts(epsilon=8.0), 0.3, 1e-7,
                             SILENT)
    assert set(found.columns["answer"].categories) == {"yes", "no", "don't know"}
    # 2 % of "don't know" (under 1 − KIND_SHARE) leaves a boolean column
    rare = pd.Series(["yes", "no"] * 4_900 + ["don't know"] * 200)
    assert vote_kind("answer", rare, _counts(), 0.01).kind == Kind.BOOLEAN
