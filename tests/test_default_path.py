"""The default path never refuses on a table's shape: aim's workload falls back on smaller
marginals (and says so), explicit options that cannot be met say where they are set, and the
default-path engines run on all-numeric, all-text, wide and tiny tables."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import synth
from synth.columns.domain import Domain
from synth.columns.kinds import DomainSource
from synth.domains.drafting import draft_profile
from synth.domains.profile import Profile
from synth.engines.aim import resolve_workload
from synth.errors import EngineError


def test_aim_falls_back_on_2_way_marginals_when_no_3_way_one_fits():
    domain = Domain(("a", "b", "c", "d"), (33, 33, 33, 33))  # 33³ > 10,000 ≥ 33²
    workload, note = resolve_workload("3-way", domain, 10_000, explicit=False)
    assert sorted(workload) == sorted([("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")])
    assert note is not None and "no 3-way marginal" in note and "[engine_options]" in note


def test_an_explicit_workload_that_cannot_be_met_names_where_it_is_set():
    domain = Domain(("a", "b", "c"), (33, 33, 33))
    with pytest.raises(EngineError, match=r"\[engine_options\].*leave both unset"):
        resolve_workload("3-way", domain, 10_000, explicit=True)


def test_every_column_stays_in_the_workload_through_the_largest_marginals_that_fit():
    # "big" fits in no 3-way or 2-way marginal: only its own 1-way marginal; "mid" only in pairs.
    domain = Domain(("x", "y", "z", "mid", "big"), (10, 10, 10, 400, 20_000))
    workload, note = resolve_workload("3-way", domain, 10_000, explicit=False)
    assert ("x", "y", "z") in workload and ("big",) in workload
    assert ("x", "mid") in workload and not any("big" in q and len(q) > 1 for q in workload)
    assert {a for q in workload for a in q} == set(domain.names)
    assert "['mid', 'big']" in note
    full, none = resolve_workload("3-way", Domain(("x", "y", "z"), (10, 10, 10)), 10_000, explicit=False)
    assert full == [("x", "y", "z")] and none is None


def _shapes() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    dates = pd.date_range("2010-01-01", periods=574, freq="D").strftime("%Y-%m-%d")
    return {
        "tiny": pd.DataFrame({"a": rng.integers(0, 5, 40).astype(str), "b": rng.choice(["x", "y"], 40)}),
        "all-numeric": pd.DataFrame({"day": dates, **{f"n{i}": rng.normal(100 * (i + 1), 10, 574).round(2).astype(str)
                                                      for i in range(5)}}),
        "all-text": pd.DataFrame({f"t{i}": rng.choice(["alpha", "beta", "gamma", "delta"], 3000) for i in range(4)}),
        "wide": pd.DataFrame({f"c{i}": rng.choice(["a", "b", "c"], 400) for i in range(52)}),
    }


SHAPES = _shapes()


def _public_profile(df: pd.DataFrame, engine: str) -> Profile:
    """The drafted profile with every domain taken as public: the engines alone are under test."""
    schema = draft_profile(df).schema
    public = replace(schema, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in schema.columns))
    return Profile(schema=public, epsilon=1.0, delta=1e-9, engine=engine, seed=1)


@pytest.mark.parametrize("engine", ["aim", "mst", "independent"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_default_path_engines_run_on_every_shape(shape, engine):
    df = SHAPES[shape]
    console = io.StringIO()
    description = synth.describe(df, _public_profile(df, engine), report_to=console)
    synthetic = synth.generate(description, 50, seed=1)
    assert list(synthetic.columns) == list(df.columns) and len(synthetic) == 50
    if shape == "all-numeric" and engine in ("aim", "mst"):  # 33+ codes a column, most of them rare
        assert {c for c in df.columns if c.startswith("n")} <= set(description.compression)  # merged by default


def test_aim_says_on_the_console_when_no_3_way_marginal_fits():
    df = SHAPES["all-numeric"]  # 33+ codes a column: with every code kept, no 3-way marginal fits
    profile = replace(_public_profile(df, "aim"), engine_options={"compress": False})
    console = io.StringIO()
    synth.describe(df, profile, report_to=console)
    assert "note: aim: no 3-way marginal has at most max_cells" in console.getvalue()


def test_a_small_all_numeric_table_runs_without_a_profile_when_rough_domains_are_accepted():
    # 574 rows, a date and five numbers, zero-config at ε = 1: the date's years do not clear the
    # noise (lost: the run would stop and say so); accepted, it is left out, the numbers' rough
    # bounds are used and aim merges their rare codes (compression, on by default).
    console = io.StringIO()
    description = synth.describe(SHAPES["all-numeric"], epsilon=1.0, seed=2, accept_rough_domains=True,
                                 report_to=console)
    notes = console.getvalue()
    assert description.engine == "aim" and "domains found under DP" in notes and description.compression
    assert len(synth.generate(description, 20, seed=1)) == 20
