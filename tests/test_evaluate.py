"""Evaluation metrics against independent computations on small tables, and the evaluation's behaviour
on whole tables (identical, shuffled, bad input)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp, pearsonr, spearmanr

from synth.errors import DataError
from synth.evaluate import evaluate, fidelity
from synth.evaluate import tables as tables_module
from synth.evaluate.association import correlation_ratio, cramers_v
from synth.evaluate.fidelity import choose_marginals, kmarginal_score, ks_statistic, marginal_tvd, tvds
from synth.evaluate.tables import holdout_split, load_tables
from synth.progress import SILENT
from tests.conftest import SHARED_DATA, mixed_table


def test_ks_statistic_matches_scipy():
    rng = np.random.default_rng(0)
    for a, b in [(rng.normal(size=300), rng.normal(0.3, 1, size=500)),
                 (rng.integers(0, 5, 200).astype(float), rng.integers(0, 6, 100).astype(float))]:
        assert ks_statistic(a, b) == pytest.approx(ks_2samp(a, b).statistic, abs=1e-12)


def test_marginal_tvd_by_hand():
    original = np.array([[0, 0], [0, 1], [1, 1], [1, 1]])
    synthetic = np.array([[0, 0], [0, 0], [0, 0], [1, 1]])
    sizes = (2, 2)
    # 1-way on column 0: (0.5, 0.5) vs (0.75, 0.25) -> 0.25
    assert marginal_tvd(original, synthetic, sizes, [0]) == pytest.approx(0.25)
    # 2-way: cells (00, 01, 10, 11) = (.25, .25, 0, .5) vs (.75, 0, 0, .25) -> 0.5 * (.5 + .25 + .25) = 0.5
    assert marginal_tvd(original, synthetic, sizes, [0, 1]) == pytest.approx(0.5)
    assert tvds(original, synthetic, sizes, [(0, 1)]).tolist() == pytest.approx([0.5])


def _hand_two_way(original: list[tuple[str, ...]], synthetic: list[tuple[str, ...]]) -> list[float]:
    """TVD of every pair of columns, by counting value pairs in plain Python."""
    out = []
    for i, j in itertools.combinations(range(len(original[0])), 2):
        a = Counter((row[i], row[j]) for row in original)
        b = Counter((row[i], row[j]) for row in synthetic)
        out.append(0.5 * sum(abs(a[c] / len(original) - b[c] / len(synthetic)) for c in set(a) | set(b)))
    return out


@pytest.mark.skipif(not (SHARED_DATA / "adult.csv").exists(), reason="shared Adult data not available")
def test_two_way_tvd_and_kmarginal_score_on_adult_agree_with_a_hand_computation():
    adult = pd.read_csv(SHARED_DATA / "adult.csv", dtype=str, keep_default_na=False)
    small = adult[["sex", "race", "income", "relationship"]].iloc[:200]
    rng = np.random.default_rng(4)
    other = pd.DataFrame({c: rng.permutation(adult[c].to_numpy()[200:500]) for c in small.columns})
    result = evaluate(small, other)
    hand = _hand_two_way(list(small.itertuples(index=False)), list(other.itertuples(index=False)))
    two_way = result.marginal(2)
    assert two_way is not None and two_way.tvds.size == 6
    assert two_way.tvds.tolist() == pytest.approx(hand, abs=1e-12)
    # SDNist: (2 - mean L1 distance of the 2-way marginal densities) * 500
    assert result.kmarginal_score == pytest.approx((2 - np.mean([2 * t for t in hand])) * 500, abs=1e-9)
    assert result.to_dict()["fidelity"]["kmarginal"]["score"] == pytest.approx(result.kmarginal_score)


def test_wide_marginals_are_counted_over_occupied_cells_with_the_same_tvd(monkeypatch):
    rng = np.random.default_rng(3)
    original, synthetic = rng.integers(0, 40, (500, 3)), rng.integers(0, 30, (300, 3))
    marginals = [(0, 1), (0, 1, 2), (1, 2)]
    dense = tvds(original, synthetic, (40, 40, 40), marginals)
    monkeypatch.setattr(fidelity, "DENSE_CELLS", 100)  # every marginal above: sparse counting
    assert tvds(original, synthetic, (40, 40, 40), marginals) == pytest.approx(dense, abs=1e-12)


def test_kmarginal_score_scale():
    assert kmarginal_score(np.zeros(3)) == 1000.0
    assert kmarginal_score(np.ones(3)) == 0.0
    assert kmarginal_score(np.array([0.1, 0.3])) == pytest.approx(800.0)


def test_marginal_caps_sample_long_tables_but_keep_every_pair():
    assert fidelity.marginal_cap(60_000, 3) == 500  # Adult-sized: all 455 3-way marginals
    assert fidelity.marginal_cap(2_000_000, 3) == 100  # two 1M-row tables
    assert fidelity.marginal_cap(10**9, 3) == fidelity.MIN_MARGINALS
    assert fidelity.marginal_cap(2_000_000, 2) == 500  # the k-marginal score sees every pair


def test_choose_marginals_caps_with_a_uniform_sample():
    rng = np.random.default_rng(0)
    assert choose_marginals(5, 3, rng) == list(itertools.combinations(range(5), 3))
    sample = choose_marginals(30, 3, rng, cap=50)
    assert len(sample) == len(set(sample)) == 50 and sample == sorted(sample)
    assert all(len(set(m)) == 3 for m in sample)


def test_cramers_v_and_correlation_ratio_by_hand():
    assert cramers_v(np.outer([0.2, 0.8], [0.5, 0.3, 0.2])) == pytest.approx(0.0, abs=1e-12)
    assert cramers_v(np.diag([3.0, 5.0, 2.0])) == pytest.approx(1.0)
    assert np.isnan(cramers_v(np.array([[4.0, 6.0], [0.0, 0.0]])))
    codes = np.array([0, 0, 1, 1, 2, 2])
    values = np.array([1.0, 3.0, 5.0, 7.0, 2.0, 4.0])
    # group means 2, 6, 3 around 11/3: between = 2 * ((2 - 11/3)^2 + (6 - 11/3)^2 + (3 - 11/3)^2)
    between = 2 * ((2 - 11 / 3) ** 2 + (6 - 11 / 3) ** 2 + (3 - 11 / 3) ** 2)
    total = float(((values - values.mean()) ** 2).sum())
    assert correlation_ratio(codes, values, 3) == pytest.approx(math.sqrt(between / total))
    assert np.isnan(correlation_ratio(codes, np.full(6, 2.0), 3))


def test_identical_tables_score_perfectly_and_shuffled_ones_lose_only_joint_structure():
    original = mixed_table(1500, seed=1)
    same = evaluate(original, original.copy())
    assert same.mean_column_tvd == 0 and all(m.tvds.max() == 0 for m in same.marginals)
    assert same.kmarginal_score == 1000.0
    assert same.queries.errors.max() == 0
    assert np.nanmax(np.abs(same.associations.difference)) == pytest.approx(0, abs=1e-12)
    rng = np.random.default_rng(2)
    shuffled = original.apply(lambda c: rng.permutation(c.to_numpy()))
    result = evaluate(original, shuffled)
    assert result.mean_column_tvd == pytest.approx(0, abs=1e-12)  # same 1-way marginals
    assert all(c.ks == pytest.approx(0, abs=1e-12) for c in result.columns if c.ks is not None)
    assert result.marginal(2).tvds.mean() > 0.02 and result.marginal(3).tvds.mean() > result.marginal(2).tvds.mean()
    a = result.associations
    age, income = a.names.index("age"), a.names.index("income")
    assert a.original.main[age, income] > 0.9 and abs(a.synthetic.main[age, income]) < 0.1


def test_associations_match_scipy_on_numeric_pairs():
    original = mixed_table(800, seed=3)
    a = evaluate(original, original).associations
    age, income = a.names.index("age"), a.names.index("income")
    values = pd.to_numeric(original["income"].replace("", np.nan))
    keep = values.notna().to_numpy()
    ages = original["age"].to_numpy(dtype=float)[keep]
    assert a.original.main[age, income] == pytest.approx(pearsonr(ages, values[keep]).statistic, abs=1e-9)
    complete = original[keep].reset_index(drop=True)  # Spearman is exact when nothing is missing
    ranked = evaluate(complete, complete).associations
    assert ranked.original.spearman[age, income] == pytest.approx(spearmanr(ages, values[keep]).statistic, abs=1e-9)
    assert a.measures[age][income] == "pearson"
    assert a.measures[a.names.index("city")][age] == "correlation_ratio"
    assert a.measures[a.names.index("city")][a.names.index("member")] == "cramers_v"


def test_json_has_a_schema_version_and_the_sample_sizes():
    original = mixed_table(600, seed=4)
    data = evaluate(original, mixed_table(700, seed=5), target="member").to_dict()
    assert data["schema_version"] == 3 and "not differentially private" in data["notice"]
    assert data["rows"] == {"original": 600, "synthetic": 700}
    assert data["fidelity"]["marginals"]["3"]["scored"] == data["fidelity"]["marginals"]["3"]["of"] == 10
    assert data["utility"]["ml"]["test_rows"] == 120 and data["utility"]["ml"]["task"] == "classification"
    assert set(data["utility"]["ml"]["models"]) == {"linear", "gradient-boosted trees"}
    assert data["privacy"]["holdout_rows"] == 120 and data["privacy"]["reference_rows"] == 480
    assert "not the privacy guarantee" in data["privacy"]["notice"]


def test_regression_target_reports_r2():
    original = mixed_table(1000, seed=6)
    result = evaluate(original, original, target="income")
    assert result.utility is not None and result.utility.task == "regression"
    linear = result.utility.score("linear", "original")
    assert linear["r2"] > 0.8  # income = 1000 + 40 * age + noise: nearly linear


def test_privacy_diagnostics_flag_a_copy_of_the_original():
    original = mixed_table(1500, seed=7)
    copied = evaluate(original, original, target=None)
    fresh = evaluate(original, mixed_table(1500, seed=8))
    # every reference row (80 %), and the held-out rows (20 %) as often as they match a reference row
    holdout = copied.privacy.exact_match["holdout"]
    assert copied.privacy.exact_match["synthetic"] == pytest.approx(0.8 + 0.2 * holdout, abs=1e-12) and holdout < 0.1
    assert fresh.privacy.exact_match["synthetic"] == pytest.approx(fresh.privacy.exact_match["holdout"], abs=0.05)
    assert np.median(copied.privacy.dcr["synthetic"]) == 0 and np.median(fresh.privacy.dcr["synthetic"]) > 0
    assert copied.privacy.rare_reproduced["synthetic"] > fresh.privacy.rare_reproduced["synthetic"]


def test_holdout_split_partitions_the_rows():
    split = holdout_split(1000, np.random.default_rng(0))
    assert split.holdout.size == 200 and np.union1d(split.holdout, split.reference).tolist() == list(range(1000))
    assert holdout_split(10**6, np.random.default_rng(0)).holdout.size == tables_module.MAX_HOLDOUT_ROWS


def test_refuses_mismatched_columns_empty_tables_and_other_kinds():
    with pytest.raises(DataError, match="same columns"):
        evaluate(pd.DataFrame({"a": ["x"]}), pd.DataFrame({"b": ["x"]}))
    with pytest.raises(DataError, match="no rows"):
        evaluate(pd.DataFrame({"a": ["x", "y"]}), pd.DataFrame({"a": pd.Series([], dtype=str)}))
    with pytest.raises(DataError, match="fewer than 10 rows"):
        evaluate(pd.DataFrame({"a": list("xyxyxyxyx")}), pd.DataFrame({"a": ["x"]}))
    tiny = evaluate(pd.DataFrame({"a": list("xyxyxyxyxy"), "b": list("1234512345")}), pd.DataFrame({"a": ["x"], "b": ["1"]}),
                    target="a")
    assert tiny.privacy.holdout_rows == 2 and tiny.utility is not None and tiny.utility.test_rows == 2
    original = mixed_table(300, seed=9)
    other = original.copy()
    other["age"] = ["young", "old"] * 150
    with pytest.raises(DataError, match=r"'age' is integer .* differ in the kind"):
        evaluate(original, other)
    numbers = original.assign(city=np.arange(300).astype(str))
    with pytest.raises(DataError, match="'city' in the synthetic table are not among its categories"):
        evaluate(original, numbers)


def test_refuses_a_target_that_is_absent_or_constant():
    original = mixed_table(300, seed=10)
    with pytest.raises(DataError, match="'salary' is not a column"):
        evaluate(original, original, target="salary")
    constant = original.assign(member=True)
    with pytest.raises(DataError, match="single value"):
        evaluate(constant, constant, target="member")


def test_large_tables_are_read_in_chunks_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setattr(tables_module, "CHUNK_ROWS", 250)
    monkeypatch.setattr(tables_module, "DRAFT_ROWS", 400)
    original = mixed_table(1000, seed=11)
    path = tmp_path / "original.csv"
    original.to_csv(path, index=False)
    chunked = load_tables(path, path, seed=0)
    assert chunked.original.chunks == 4 and chunked.original.rows == 1000
    assert any("4 pieces" in note for note in chunked.notes)
    assert any("random sample of 400" in note for note in chunked.notes)
    whole = load_tables(original, original)
    given = load_tables(path, path, schema=whole.schema)  # a schema given: read on it and on the drafted one
    assert given.release is not None and given.release.original.chunks == 4
    for codes in (given.original.codes, given.release.original.codes):
        assert np.array_equal(codes, whole.original.codes)
    numeric = [j for j in given.original.values]  # read alike on both schemas: parsed and held once
    assert numeric and all(given.release.original.values[j] is given.original.values[j] for j in numeric)
    pytest.importorskip("pyarrow")
    parquet = tmp_path / "original.parquet"
    pd.read_csv(path, dtype=str, keep_default_na=False).to_parquet(parquet)  # the CSV's text cells
    from_parquet = load_tables(parquet, path, schema=whole.schema)
    assert from_parquet.release is not None and from_parquet.release.original.chunks == 4
    assert np.array_equal(from_parquet.release.original.codes, whole.original.codes)


def test_the_draft_sample_is_uniform_and_holds_at_most_its_size_and_a_piece(monkeypatch):
    monkeypatch.setattr(tables_module, "DRAFT_ROWS", 100)
    table = pd.DataFrame({"row": np.arange(1000), "other": np.arange(1000) % 7})
    held: list[int] = []
    real_concat = pd.concat

    def concat(frames, **kwargs):  # the rows held while the pieces go by
        joined = real_concat(frames, **kwargs)
        held.append(len(joined))
        return joined

    monkeypatch.setattr(pd, "concat", concat)
    tenths = np.zeros(10)
    for seed in range(300):
        pieces = (table.iloc[start:start + 50] for start in range(0, 1000, 50))
        sample, source = tables_module._draft_sample(pieces, ["row"], np.random.default_rng(seed), SILENT)
        rows = sample["row"].to_numpy()
        assert list(sample.columns) == ["row"] and rows.size == 100 and np.all(np.diff(rows) > 0)
        assert source == "a random sample of 100 original rows"
        tenths += np.bincount(rows // 100, minlength=10)
    assert max(held) <= 100 + 50
    # each tenth of the rows holds a tenth of the sample: 3,000 of 30,000 drawn (sd about 50)
    assert np.all(np.abs(tenths - 3000) < 200), tenths
    whole, source = tables_module._draft_sample([table.iloc[:60], table.iloc[60:90]], ["row", "other"],
                                                np.random.default_rng(0), SILENT)
    assert source == "all rows of the original" and whole["row"].tolist() == list(range(90))


@pytest.mark.skipif(not (SHARED_DATA / "adult.csv").exists(), reason="shared Adult data not available")
def test_train_on_real_accuracy_for_adult_income_is_in_the_published_range():
    adult = pd.read_csv(SHARED_DATA / "adult.csv", dtype=str, keep_default_na=False)
    tables = load_tables(adult, adult, target="income")
    from synth.evaluate.utility import ml_utility

    rng = np.random.default_rng(0)
    utility = ml_utility(tables, holdout_split(tables.original.rows, rng), "income", rng)
    for model in ("linear", "gradient-boosted trees"):
        assert 0.83 <= utility.score(model, "original")["accuracy"] <= 0.87
    assert utility.score("gradient-boosted trees", "original")["auc"] > 0.88
    assert utility.baseline["accuracy"] == pytest.approx(0.75, abs=0.02)  # share of "<=50K"
