"""Attacks on a release: anonymeter and membership on a small real table against a bootstrap (leaks), a
shuffle and a fresh sample of the population (do not), the JSON contract, the verdict, the CLI."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synth.evaluate import attacks as attacks_module
from synth.evaluate.anonymeter_attacks import ATTACKS, Risk
from synth.evaluate.attacks import Attacks, run_attacks, training_rows
from synth.evaluate.membership import MembershipResult
from synth.evaluate.tables import load_tables, read_alike
from tests.conftest import run_cli

pytest.importorskip("anonymeter", reason="the attacks need anonymeter (pip install 'synth[attacks]')")


def adult() -> pd.DataFrame:
    with resources.as_file(resources.files("synth") / "data" / "adult.csv.gz") as path:
        return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def attacked() -> Attacks:
    """Adult: 4,000 training rows, 1,000 holdout rows; the "release" is 4,000 fresh rows of the population.
    About 15 s of it is numba compiling anonymeter's neighbour search, once per process."""
    data = adult()
    order = np.random.default_rng(11).permutation(len(data))
    training, holdout, fresh = (data.iloc[order[a:b]] for a, b in ((0, 4000), (4000, 5000), (5000, 9000)))
    tables = load_tables(training, fresh)
    return run_attacks(tables, read_alike(holdout, training, tables, "holdout"), release_epsilon=1.0, target="income",
                       n_attacks=100)


def test_the_bootstrap_leaks_and_the_shuffle_and_a_fresh_sample_do_not(attacked):
    boot = {name: attacked.anonymeter[name]["bootstrap"] for name in ATTACKS}
    assert all(isinstance(r, Risk) for r in boot.values())
    assert boot["singling_out"].risk_ci[0] > 0 or boot["linkability"].risk_ci[0] > 0
    for name in ("linkability", "inference"):
        shuffled, leaky = attacked.anonymeter[name]["shuffled"], boot[name]
        assert isinstance(shuffled, Risk) and shuffled.risk < leaky.risk / 2
    assert attacked.membership["bootstrap"].auc > 0.65 and attacked.membership["bootstrap"].epsilon_lower_bound > 0.5
    for table in ("release", "shuffled"):  # neither was made from the training rows' records
        assert abs(attacked.membership[table].auc - 0.5) < 0.07  # 500 + 500 targets: standard error ~0.018
        assert attacked.membership[table].epsilon_lower_bound == 0.0
    assert attacked.flagged("bootstrap") and "membership" not in attacked.flagged("release")


def test_the_json_section_keeps_the_contract(attacked):
    out = json.loads(json.dumps(attacked.to_dict()))
    assert set(out) == {"notice", "rows", "sampling", "release_epsilon", "tables", "anonymeter", "membership",
                        "verdict", "seconds"}
    assert out["tables"] == ["release", "bootstrap", "shuffled"] and out["release_epsilon"] == 1.0
    assert set(out["rows"]) == {"training", "holdout", "synthetic", "attacked"}
    assert out["rows"]["training"] <= 4000 and out["rows"]["holdout"] == 1000 and out["rows"]["attacked"] == 1000
    for name in ATTACKS:
        for table in out["tables"]:
            r = out["anonymeter"][name][table]
            assert set(r) == {"risk", "risk_ci", "attack_rate", "baseline_rate", "control_rate", "n_attacks", "reading"}
            assert r["risk_ci"][0] <= r["risk"] <= r["risk_ci"][1]
    assert "DOMIAS" in out["membership"]["attack"] and "random split" in out["membership"]["attack"]
    for table in out["tables"]:
        assert set(out["membership"][table]) == {"auc", "tpr", "fpr", "threshold", "epsilon_lower_bound",
                                                 "confidence", "reading"}


def _risk(lo: float) -> Risk:
    return Risk("linkability", lo + 0.01, (lo, lo + 0.02), 0.1, 0.01, 0.09, 100, "a setting")


def _attacks(release_lo: float, bound: float, epsilon: float | None, bootstrap_lo: float = 0.1) -> Attacks:
    member = {t: MembershipResult(0.5, 0.1, 0.1, 0.0, b, 100, 50) for t, b in
              (("release", bound), ("bootstrap", 2.0), ("shuffled", 0.0))}
    anonymeter = {name: {"release": _risk(release_lo), "bootstrap": _risk(bootstrap_lo), "shuffled": _risk(0.0)}
                  for name in ATTACKS}
    return Attacks({}, "", epsilon, anonymeter, member, 0.0)  # type: ignore[arg-type]


def test_the_verdict_reads_the_release_against_the_control_and_its_epsilon():
    assert _attacks(0.0, 0.0, 1.0).verdict() == ("No attack advantage distinguishable from the control; measured "
                                                 "leakage (epsilon >= 0.00 at 95% confidence) is below the "
                                                 "release's epsilon = 1.")
    flagged = _attacks(0.05, 0.4, 1.0).verdict()
    assert "singling out, linkability, inference, membership" in flagged and "is below" in flagged
    assert "EXCEEDS the release's epsilon = 1" in _attacks(0.0, 1.3, 1.0).verdict()
    assert "no release epsilon" in _attacks(0.0, 0.0, None).verdict()
    assert "too weak" not in _attacks(0.0, 0.0, 1.0, bootstrap_lo=0.0).verdict()  # membership flags the bootstrap
    weak = _attacks(0.0, 0.0, 1.0, bootstrap_lo=0.0)
    weak.membership["bootstrap"] = MembershipResult(0.5, 0.1, 0.1, 0.0, 0.0, 100, 50)
    assert "too weak on this table to be evidence" in weak.verdict()



@pytest.fixture
def split_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    data = adult().iloc[:1200]
    paths = tmp_path / "training.csv", tmp_path / "holdout.csv", tmp_path / "synthetic.csv"
    data.iloc[:800].to_csv(paths[0], index=False)
    data.iloc[800:1000].to_csv(paths[1], index=False)
    data.iloc[1000:].to_csv(paths[2], index=False)
    return paths


def test_attacks_without_a_holdout_say_why_and_how_to_get_one(capsys, split_files):
    training, _, synthetic = split_files
    code, _, err = run_cli(capsys, "evaluate", str(training), str(synthetic), "--attacks", "-q")
    assert code == 2 and "Traceback" not in err
    assert "control set" in err and "--holdout FILE" in err and "synth run DATA --holdout 10%" in err
    code, _, err = run_cli(capsys, "evaluate", str(training), str(synthetic), "--holdout", str(split_files[1]), "-q")
    assert code == 2 and "--attacks" in err


def test_a_holdout_with_other_columns_is_refused(capsys, split_files, tmp_path):
    training, holdout, synthetic = split_files
    other = tmp_path / "other.csv"
    pd.read_csv(holdout, dtype=str).drop(columns=["income"]).to_csv(other, index=False)
    code, _, err = run_cli(capsys, "evaluate", str(training), str(synthetic), "--attacks", "--holdout", str(other), "-q")
    assert code == 2 and "Traceback" not in err and "columns differ" in err and "income" in err


def test_one_original_row_is_taken_out_per_holdout_row_never_every_copy():
    original = np.array([7, 7, 7, 8, 9, 5])
    assert training_rows(original, np.array([7, 8])).tolist() == [1, 2, 4, 5]  # one 7 and the 8 were held out
    assert training_rows(original, np.array([7, 7, 8, 5])).tolist() == [2, 4]
    assert training_rows(original, np.array([7, 6])).tolist() == list(range(6))  # 6 absent: no holdout in it
    assert training_rows(original, np.array([8, 8])).tolist() == list(range(6))  # more copies held than there are


def test_repeated_rows_do_not_make_a_fresh_sample_look_like_members():
    """A small-domain table where most rows repeat, the original holding its holdout: the training rows
    are the original minus the holdout, and a fresh sample of the population shows no membership."""
    rng = np.random.default_rng(5)
    sizes, weights = (4, 6, 5, 3), (0.6, 0.5, 0.4, 0.3)  # skewed category frequencies: 360 cells, many repeats

    def population(rows: int) -> pd.DataFrame:
        return pd.DataFrame({f"c{j}": rng.choice([f"v{k}" for k in range(size)], size=rows,
                                                 p=(p := weight ** np.arange(size)) / p.sum())
                             for j, (size, weight) in enumerate(zip(sizes, weights))})

    training, holdout, fresh = population(3000), population(1000), population(3000)
    tables = load_tables(pd.concat([training, holdout], ignore_index=True), fresh)
    attacks = run_attacks(tables, read_alike(holdout, training, tables, "holdout"), release_epsilon=1.0, n_attacks=50)
    assert attacks.rows["training"] == 3000
    assert abs(attacks.membership["release"].auc - 0.5) < 0.07  # 500 + 500 targets: standard error ~0.018
    assert attacks.membership["release"].epsilon_lower_bound == 0.0


def test_a_synthetic_table_read_in_part_is_said_to_under_report_copies(attacked, monkeypatch):
    assert "under-reported" not in attacked.sampling  # 4,000 synthetic rows: every one was read
    monkeypatch.setattr(attacks_module, "MEMBERSHIP_SYNTHETIC", 100)
    monkeypatch.setattr(attacks_module, "ANONYMETER_SYNTHETIC", 200)
    data = adult().iloc[:1000]
    tables = load_tables(data.iloc[:400], data.iloc[500:])  # 500 synthetic rows, at most 100 read by membership
    result = run_attacks(tables, read_alike(data.iloc[400:500], data.iloc[:400], tables, "holdout"), n_attacks=20)
    assert "release has 500 rows and the attacks read at most 100 of them" in result.sampling
    assert "about 20%" in result.sampling and "under-reported" in result.sampling
