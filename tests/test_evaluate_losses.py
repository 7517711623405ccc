"""An evaluation that sees losses: scores on a discretisation drafted from the original, and on the
release's own schema beside them, for releases that lost a column to OTHER or left columns out."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import synth
from synth.columns.column import Column
from synth.columns.kinds import Kind
from synth.columns.schema import Schema
from synth.columns.unmodelled import UnmodelledColumn
from synth.domains.profile import Profile
from synth.evaluate import evaluate
from tests.conftest import mixed_table
from tests.test_cli import run_cli

CITIES = [f"town {i:02d}" for i in range(60)]


def _towns(n: int, values: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` cells over ``values`` towns with falling frequencies (the first is the most common)."""
    weights = 1.0 / np.arange(1, values + 1) ** 0.7
    return rng.choice(CITIES[:values], size=n, p=weights / weights.sum())


def _lost_town_release(values: int, n: int = 4000) -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    """An original with a ``values``-value town column and a synthetic table in which every town is
    the release's OTHER label, as a release whose category list missed every value writes it."""
    rng = np.random.default_rng(values)
    original = pd.DataFrame({"town": _towns(n, values, rng), "size": rng.integers(0, 100, n)})
    schema = Schema((Column("town", Kind.CATEGORICAL, categories=("nowhere",)),
                     Column("size", Kind.INTEGER, lower=0, upper=99, bins=10)))
    synthetic = pd.DataFrame({"town": ["<OTHER>"] * 3000, "size": rng.integers(0, 100, 3000)})
    return original, synthetic, schema


@pytest.mark.parametrize("values", [40, 60])
def test_a_column_lost_to_other_scores_its_loss_on_the_drafted_discretisation(values):
    original, synthetic, schema = _lost_town_release(values)
    result = evaluate(original, synthetic, schema)
    town = next(c for c in result.columns if c.name == "town")
    # On exact values the loss is total: no synthetic cell holds a town of the original (TVD 1). The
    # drafted discretisation keeps the 50 most frequent towns and puts the rest with OTHER, so it
    # sees all of the loss but the share of the original's rows outside those 50 towns.
    counts = original["town"].value_counts()
    tail = counts.iloc[50:].sum() / len(original)
    assert (tail == 0) == (values <= 50) and tail < 0.1
    assert town.tvd == pytest.approx(1.0 - tail, abs=1e-12)
    assert result.release_schema is not None
    on_release = next(c for c in result.release_schema.columns if c.name == "town")
    assert on_release.tvd == pytest.approx(0.0, abs=1e-12)  # every cell is OTHER on the release's codes
    data = result.to_dict()
    assert data["fidelity"]["columns"]["town"]["tvd"] == pytest.approx(1.0 - tail)
    assert data["fidelity"]["release_schema"]["columns"]["town"]["tvd"] == pytest.approx(0.0, abs=1e-12)
    assert "drafted from the original" in data["discretisations"]["drafted"]["what"]
    assert "release's own schema" in data["discretisations"]["release"]["what"]


def test_a_lost_column_is_compared_without_a_description_too():
    original, synthetic, _ = _lost_town_release(40)
    result = evaluate(original, synthetic)  # used to refuse: OTHER is not among the original's categories
    assert next(c for c in result.columns if c.name == "town").tvd == pytest.approx(1.0)
    assert result.release_schema is None and result.to_dict()["discretisations"]["release"] is None


def test_a_release_whose_profile_missed_the_towns_scores_near_its_true_loss_through_the_pipeline(tmp_path):
    """describe + generate + evaluate, as a user runs them: the profile lists one town the data never
    holds, so the release writes OTHER for (nearly) every town."""
    rng = np.random.default_rng(11)
    n = 5000
    original = pd.DataFrame({"town": _towns(n, 40, rng), "size": rng.integers(0, 100, n)})
    schema = Schema((Column("town", Kind.CATEGORICAL, categories=("nowhere",)),
                     Column("size", Kind.INTEGER, lower=0, upper=99, bins=10)))
    description = synth.describe(original, Profile(schema=schema, epsilon=1.0, delta=1e-9, engine="mst", seed=4),
                                 report_to=None)
    synthetic = synth.generate(description, n, seed=5)
    assert (synthetic["town"] == "<OTHER>").mean() > 0.95
    paths = {"original": tmp_path / "o.csv", "synthetic": tmp_path / "s.csv", "json": tmp_path / "m.json",
             "report": tmp_path / "r.html"}
    original.to_csv(paths["original"], index=False)
    synthetic.to_csv(paths["synthetic"], index=False)
    result = synth.evaluate(paths["original"], paths["synthetic"], description, json_path=paths["json"],
                            report=paths["report"])
    drafted = {c.name: c.tvd for c in result.columns}
    assert result.release_schema is not None
    on_release = {c.name: c.tvd for c in result.release_schema.columns}
    assert drafted["town"] > 0.95 and on_release["town"] < 0.05  # the true loss is 1
    assert drafted["size"] < 0.06 and on_release["size"] < 0.04  # a column kept well scores well on both
    data = json.loads(paths["json"].read_text())
    assert data["summary"]["mean_column_tvd"] == pytest.approx(np.mean(list(drafted.values())))
    assert data["summary"]["release_schema"]["mean_column_tvd"] == pytest.approx(np.mean(list(on_release.values())))
    text = paths["report"].read_text(encoding="utf-8")
    assert "drafted from the original" in text and "release&#x27;s own schema" in text
    assert f"{drafted['town']:.4f}" in text and f"{on_release['town']:.4f}" in text


def test_a_three_value_target_the_release_lost_is_still_a_target():
    """The release's schema puts all three grades in OTHER; the original still has three, so ML
    utility is measured (it used to refuse: "a single value (or none) in the original")."""
    rng = np.random.default_rng(12)
    n = 1500
    original = pd.DataFrame({"grade": rng.choice(["low", "mid", "high"], n), "score": rng.integers(0, 50, n)})
    original["score"] += np.where(original["grade"] == "high", 50, 0)
    schema = Schema((Column("grade", Kind.CATEGORICAL, categories=("none",)),
                     Column("score", Kind.INTEGER, lower=0, upper=99, bins=20)))
    synthetic = original.assign(grade="<OTHER>")
    result = evaluate(original, synthetic, schema, target="grade")
    assert result.utility is not None and result.utility.task == "classification"
    assert result.utility.score("gradient-boosted trees", "original")["accuracy"] > 0.55  # "high" is learnt
    assert any("single class" in note for note in result.utility.notes)  # the synthetic side lost the grades


def test_quiet_hides_progress_but_not_the_results(capsys, tmp_path):
    original = mixed_table(600, seed=13)
    paths = [tmp_path / "o.csv", tmp_path / "s.csv"]
    original.to_csv(paths[0], index=False)
    mixed_table(500, seed=14).to_csv(paths[1], index=False)
    code, out, err = run_cli(capsys, "evaluate", str(paths[0]), str(paths[1]), "--quiet")
    assert code == 0 and err == ""
    assert "city" in out and "2-way marginals: mean TVD" in out and "not differentially private" in out


def test_columns_that_are_not_scored_are_listed_with_the_reason():
    rng = np.random.default_rng(13)
    n = 600
    original = pd.DataFrame({"key": np.arange(n), "grade": rng.choice(["a", "b"], n),
                             "note": [f"visit {i} went well" for i in range(n)], "lost": rng.choice(["x", "y"], n)})
    schema = Schema.ordered([UnmodelledColumn("key", "id"), Column("grade", Kind.CATEGORICAL, categories=("a", "b")),
                             UnmodelledColumn("note", "text")])
    synthetic = pd.DataFrame({"key": np.arange(n) + 1000, "grade": rng.choice(["a", "b"], n), "note": [""] * n})
    result = evaluate(original, synthetic, schema)
    assert [c.name for c in result.columns] == ["grade"]
    assert result.not_scored == {"key": "an identifier: the release writes fresh keys",
                                 "note": "free text: the release writes it empty",
                                 "lost": "not in the release (left out by its profile, or its domain was not found "
                                         "under DP)"}
    assert result.to_dict()["fidelity"]["not_scored"] == result.not_scored
    assert any(line.startswith("lost") and "not scored: not in the release" in line for line in result.lines())
    # without the release's schema, identifiers and free text are recognised in the original and set apart
    alone = evaluate(original.drop(columns="lost"), synthetic.assign(note=[f"visit {i}" for i in range(n)]))
    assert [c.name for c in alone.columns] == ["grade"] and set(alone.not_scored) == {"key", "note"}


def test_the_headline_says_how_many_of_the_originals_columns_it_scores(tmp_path):
    # Issue 30, item 9: a release that lost columns must not look as good as one that kept them all.
    from synth.evaluate.report import write_report

    rng = np.random.default_rng(14)
    n = 800
    original = pd.DataFrame({c: rng.choice(["a", "b", "c"], n) for c in ("p", "q", "r", "lost1", "lost2")})
    schema = Schema(tuple(Column(c, Kind.CATEGORICAL, categories=("a", "b", "c")) for c in ("p", "q", "r")))
    result = evaluate(original, original[["p", "q", "r"]].sample(frac=1.0, random_state=1), schema)
    assert result.summary()["columns_scored"] == 3 and result.summary()["columns_of_original"] == 5
    headline = [line for line in result.lines() if "-way marginals: mean TVD" in line]
    assert headline and all("3 of the original's 5 columns scored" in line for line in headline)
    page = write_report(result, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "mean 1-way TVD (0 = identical) (3 of the original&#x27;s 5 columns scored)" in page
    complete = evaluate(original[["p", "q", "r"]], original[["p", "q", "r"]], schema)
    assert complete.scored_share == "" and not any("columns scored" in line for line in complete.lines())
