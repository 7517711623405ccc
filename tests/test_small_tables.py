"""Small tables are refused cheaply: a noisy check before discovery (``synth.domains.feasibility``) stops a
run that discovery surely cannot serve, having spent a small stated share of the budget, and never
suggests an option that would be refused too (issue 30, item 6)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synth
from synth.cli import main
from synth.columns.kinds import DomainSource, Kind
from synth.domains.discovery import Discovery, discover_columns, needs_delta
from synth.domains.drafting import draft_profile
from synth.domains.feasibility import PRECHECK_SHARE, certificate, check_feasible, column_room, plan_needs
from synth.domains.finding import make_accountant
from synth.domains.profile import Profile
from synth.domains.verdict import Finding
from synth.errors import DiscoveryError
from synth.privacy import SeededNoise
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Neighbouring, Relation
from synth.progress import SILENT
from synth.release.describer import check_discovery
from synth.tables.counting import as_table


def _table(rows: int, seed: int = 0, copies: int = 2) -> pd.DataFrame:
    """A mixed table as a CSV reads, ``copies`` times six columns: ages, a two-value text, a skewed
    amount, a rating, a region, a date."""
    rng = np.random.default_rng(seed)
    columns = {}
    for c in range(copies):
        columns.update({
            f"age{c}": rng.integers(18, 90, rows).astype(str),
            f"sex{c}": rng.choice(["female", "male"], rows),
            f"income{c}": rng.lognormal(10, 1, rows).round(2).astype(str),
            f"rating{c}": rng.integers(1, 6, rows).astype(str),
            f"region{c}": rng.choice(["north", "south", "east", "west", "centre"], rows),
            f"visit{c}": (pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, rows), unit="D")).astype(str),
        })
    return pd.DataFrame(columns)


def _numeric(df: pd.DataFrame) -> pd.DataFrame:
    """Its columns of numbers and dates (text needs δ > 0, so pure DP refuses it on its own)."""
    return df[[c for c in df.columns if not c.startswith(("sex", "region"))]]


def _check(df: pd.DataFrame, seed: int, epsilon: float = 1.0, delta: float = 1e-9, accept_rough: bool = False):
    """The check as ``describe`` runs it for a zero-config run: its result (or the DiscoveryError
    it raised) and the accountant it charged."""
    profile = Profile(schema=None, epsilon=epsilon, delta=delta, seed=seed, accept_rough_domains=accept_rough)
    kinds = dict.fromkeys(df.columns)
    accountant, discovery_delta = make_accountant(profile, needs_delta(kinds))
    counts = CountRelease(accountant, SeededNoise(seed), Neighbouring(Relation.ADD_REMOVE))
    whole = accountant.notion.unit_of(accountant.remaining())
    try:
        result = check_feasible(as_table(df), kinds, counts, whole, whole * profile.discovery_share, discovery_delta,
                                whole * profile.discovery_reserve, accept_rough=accept_rough)
    except DiscoveryError as error:
        return error, accountant
    return result, accountant


@pytest.mark.parametrize("accept_rough", [False, True])
def test_a_small_table_is_refused_before_discovery_spending_under_a_tenth_of_epsilon(accept_rough):
    refused = 0
    for seed in range(20):
        result, accountant = _check(_table(60, seed), seed, accept_rough=accept_rough)
        assert accountant.spent()["epsilon"] <= 0.1  # the check alone: about 8 % of ε
        assert [e.query.split(":")[0] for e in accountant.ledger] == ["feasibility"]
        if isinstance(result, DiscoveryError):
            refused += 1
            message = str(result)
            assert "profile" in message and "epsilon = " in message and "noisy" in message
            assert "accept-rough" not in message
    assert refused >= 19  # 60 rows, 12 columns at ε = 1: discovery finds none of them


def test_a_table_big_enough_to_be_located_is_never_refused_by_the_check():
    df = _table(5000)
    for seed in range(50):
        result, accountant = _check(df, seed)
        assert not isinstance(result, DiscoveryError), result
        assert result is not None and result.room > 0 and result.needed == "every column"
        assert accountant.spent()["epsilon"] <= 0.1


def test_under_pure_dp_a_small_table_is_refused_and_a_big_one_is_not():
    numeric = _numeric(_table(5000, copies=3))
    small = numeric.iloc[:100]
    for seed in range(20):
        result, accountant = _check(small, seed, delta=0.0)
        assert isinstance(result, DiscoveryError), result
        assert accountant.spent()["epsilon"] == pytest.approx(PRECHECK_SHARE)  # pure DP: a share of ε
        assert accountant.ledger[0].mechanism == "discrete_laplace"
        result, _ = _check(numeric, seed, epsilon=10.0, delta=0.0)
        assert not isinstance(result, DiscoveryError), result


def test_where_the_check_refuses_discovery_loses_a_column():
    # The check models discovery's best case, so where it refuses, discovery (run on its own, with
    # other noise) loses a column, and the run would have been refused after spending far more.
    refusals = 0
    for rows, seed in ((60, 3), (150, 4), (300, 5), (300, 6)):
        df = _table(rows, seed)
        result, _ = _check(df, seed)
        if not isinstance(result, DiscoveryError):
            continue
        refusals += 1
        profile = Profile(schema=None, epsilon=1.0, delta=1e-9)
        kinds = dict.fromkeys(df.columns)
        accountant, discovery_delta = make_accountant(profile, True)
        counts = CountRelease(accountant, SeededNoise(seed + 100), Neighbouring(Relation.ADD_REMOVE))
        whole = accountant.notion.unit_of(accountant.remaining())
        found = discover_columns(df, kinds, counts, whole * 0.1, discovery_delta, SILENT, reserve=whole * 0.1)
        assert found.lost, (rows, seed)
        assert accountant.spent()["epsilon"] > 0.4  # what discovery spends before it refuses
    assert refusals >= 2


def test_a_refused_run_through_the_command_line_spends_under_a_tenth_of_epsilon(tmp_path: Path, capsys):
    csv = tmp_path / "small.csv"
    _table(60, 1).to_csv(csv, index=False)
    code = main(["run", str(csv), "--epsilon", "1", "--seed", "1", "-o", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    spent = float(re.search(r"\(epsilon = ([0-9.e-]+),", err).group(1))
    assert spent <= 0.1, err
    assert "on 1 noisy queries" in err and "was not run" in err and "accept-rough" not in err
    assert not (tmp_path / "out" / "synthetic.csv").exists()


def test_the_check_is_ledgered_and_recorded_in_the_description():
    df = _table(5000)
    description = synth.describe(df, Profile(schema=None, epsilon=1.0, delta=1e-9, seed=3, engine="independent"),
                                 report_to=None)
    first = description.ledger[0]
    assert first.query.startswith("feasibility:") and first.sensitivity == 1
    feasibility = description.privacy["feasibility"]
    assert feasibility["share"] == PRECHECK_SHARE and feasibility["needed"] == "every column"
    assert feasibility["noisy_room"] > 0


def test_nothing_is_checked_or_spent_when_nothing_is_discovered():
    df = _table(200)
    schema = draft_profile(df).schema
    public = replace(schema, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in schema.columns))
    description = synth.describe(df, Profile(schema=public, epsilon=1.0, delta=1e-9, seed=1, engine="independent"),
                                 report_to=None)
    assert not any(e.query.startswith("feasibility") for e in description.ledger)
    assert "feasibility" not in description.privacy


def _neighbours(df: pd.DataFrame, rng: np.random.Generator) -> list[pd.DataFrame]:
    """``df`` with one row removed, one added (a copy of another row, or a new odd one) and one
    replaced."""
    i, j = rng.integers(0, len(df), 2)
    odd = pd.DataFrame([{c: rng.choice(["", "yes", "7", "3.5", "2020-01-01", "zz"]) for c in df.columns}])
    removed = df.drop(index=df.index[i])
    return [removed, pd.concat([df, df.iloc[[j]]]), pd.concat([df, odd]), pd.concat([removed, odd])]


def _released(frame: pd.DataFrame, needs: dict, every_column: bool) -> float:
    """What the check releases (before noise) for ``frame``."""
    rooms = {n: column_room(frame[n].reset_index(drop=True), None, None, needs[n]) for n in needs}
    return certificate(rooms, needs, every_column)


@pytest.mark.parametrize("every_column", [True, False])
def test_the_released_value_moves_by_at_most_one_between_neighbours(every_column):
    rng = np.random.default_rng(7)
    for trial in range(25):
        rows = int(rng.integers(20, 400))
        df = _table(rows, trial, copies=1)
        if trial % 5 == 1:  # typed columns, which a neighbour's odd cell turns into objects
            df = df.astype({"age0": "int64", "income0": "float64"})
        if trial % 3 == 0:
            df["id"] = [f"P{k:05d}" for k in range(rows)]  # an identifier: the unique way
        if trial % 4 == 0:
            df.loc[df.sample(frac=0.9, random_state=trial).index, "rating0"] = ""  # mostly missing
        kinds = dict.fromkeys(df.columns)
        accountant, discovery_delta = make_accountant(Profile(schema=None, epsilon=float(rng.choice([0.3, 1, 4])), delta=1e-9),
                                                      True)
        relation = Relation.ADD_REMOVE if trial % 2 else Relation.REPLACE
        counts = CountRelease(accountant, SeededNoise(0), Neighbouring(relation))
        whole = accountant.notion.unit_of(accountant.remaining())
        needs = {n: v for n, v in plan_needs(kinds, counts, whole * 0.1, discovery_delta, whole * 0.1).items()
                 if v is not None}

        here = _released(df, needs, every_column)
        for neighbour in _neighbours(df, rng):
            if relation == Relation.REPLACE and len(neighbour) != len(df):
                continue
            if relation == Relation.ADD_REMOVE and len(neighbour) == len(df):
                continue
            assert abs(_released(neighbour, needs, every_column) - here) <= 1, (trial, relation)


def _discovery(*verdicts: tuple[str, Kind]) -> Discovery:
    findings = tuple(Finding(f"c{i}", kind, verdict, "detail") for i, (verdict, kind) in enumerate(verdicts))
    return Discovery({}, findings)


def test_the_lost_columns_message_suggests_leaving_them_out_only_when_something_would_be_left():
    with pytest.raises(DiscoveryError) as some:
        check_discovery(_discovery(("lost", Kind.INTEGER), ("rough", Kind.FLOAT)), False, [])
    assert "--accept-rough-domains (accept_rough_domains = true" in str(some.value)
    for nothing_left in (_discovery(("lost", Kind.INTEGER), ("lost", Kind.CATEGORICAL)),
                         _discovery(("lost", Kind.INTEGER), ("located", Kind.ID))):
        with pytest.raises(DiscoveryError) as none:
            check_discovery(nothing_left, False, [])
        assert "would be refused too" in str(none.value) and "or pass --accept-rough-domains" not in str(none.value)
    with pytest.raises(DiscoveryError) as given:  # columns whose domains the profile gives are released anyway
        check_discovery(_discovery(("lost", Kind.INTEGER)), False, [], others=True)
    assert "or pass --accept-rough-domains" in str(given.value)
    with pytest.raises(DiscoveryError, match="in a profile"):
        check_discovery(_discovery(("lost", Kind.INTEGER)), True, [])
