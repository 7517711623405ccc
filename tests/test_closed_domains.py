"""Closed domains: a complete category list has no OTHER code, ``missing = false`` no MISSING code,
cells without a code follow the documented per-cell rule and are counted, and a release with a
closed profile never writes OTHER or empty cells the original never had."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synth
from synth.columns.column import MISSING_LABEL, Column
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.domains.drafting import draft_profile
from synth.domains.profile import Profile, load_profile, save_profile
from synth.errors import SchemaError


def test_a_complete_list_has_no_other_code_and_unlisted_values_go_to_missing():
    column = Column("c", Kind.CATEGORICAL, categories=("a", "b"), complete=True)
    assert (column.size, column.other_code, column.missing_code) == (3, -1, 2)
    assert column.labels() == ("a", "b", MISSING_LABEL)
    codes, report = Schema((column,)).encode(pd.DataFrame({"c": ["a", "zz", "", "b", "zz"]}))
    assert codes[:, 0].tolist() == [0, 2, 2, 1, 2]
    assert report.counts("c").other == 2
    assert report.lines() == ["c: 2 values not in the category list encoded as <MISSING>"]


def test_a_closed_column_without_missing_code_writes_the_first_code_and_counts_it():
    column = Column("c", Kind.CATEGORICAL, categories=("a", "b"), complete=True, missing=False)
    assert (column.size, column.missing_code) == (2, -1)
    codes, report = Schema((column,)).encode(pd.DataFrame({"c": ["b", "zz", None, "b"]}))
    assert codes[:, 0].tolist() == [1, 0, 0, 1]
    assert report.counts("c").unplaced == 1 and report.counts("c").other == 1
    assert "c: 1 missing cell(s) written as a" in report.lines()[1]
    numbers = Column("n", Kind.INTEGER, lower=0, upper=9, bins=10, missing=False)
    codes, report = Schema((numbers,)).encode(pd.DataFrame({"n": ["3", "", "x", "9"]}))
    assert codes[:, 0].tolist() == [3, 0, 0, 9]
    counts = report.counts("n")
    assert (counts.unplaced, counts.invalid, counts.invalid_to) == (1, 1, "0")


def test_decoding_a_closed_column_never_writes_other_or_missing():
    schema = Schema((Column("c", Kind.CATEGORICAL, categories=("a", "b"), complete=True, missing=False),
                     Column("f", Kind.BOOLEAN, missing=False),
                     Column("x", Kind.FLOAT, lower=0, upper=1, bins=4, missing=False)))
    assert schema.sizes == (2, 2, 4)
    codes = np.array([[0, 0, 0], [1, 1, 3]] * 50)
    out = schema.decode(codes, np.random.default_rng(0))
    assert set(out["c"]) == {"a", "b"} and out["f"].dtype == bool and out["x"].notna().all()
    with pytest.raises(Exception, match=r"lie outside 0\.\.1"):
        schema.decode(np.array([[2, 0, 0]]), np.random.default_rng(0))


def test_only_a_categorical_column_can_be_complete():
    with pytest.raises(SchemaError, match="only a categorical column can be complete"):
        Column("n", Kind.INTEGER, lower=0, upper=9, bins=10, complete=True)
    with pytest.raises(SchemaError, match="missing must be true or false"):
        Column("n", Kind.BOOLEAN, missing="no")


def test_closed_domains_survive_a_profile_round_trip(tmp_path):
    schema = Schema((Column("c", Kind.CATEGORICAL, categories=("a", "b"), complete=True, missing=False),
                     Column("n", Kind.INTEGER, lower=0, upper=9, bins=10, missing=False),
                     Column("o", Kind.CATEGORICAL, categories=("x",))))
    path = save_profile(Profile(schema=schema, epsilon=1.0), tmp_path / "p.toml")
    text = path.read_text()
    assert "complete = true" in text and "missing = false" in text
    assert load_profile(path).schema == schema


def test_a_drafted_profile_proposes_closed_domains_where_the_data_shows_them():
    df = pd.DataFrame({"c": ["a", "b"] * 10, "d": ["a", ""] * 10, "n": range(20), "m": [1, None] * 10})
    columns = {c.name: c for c in draft_profile(df).schema.columns}
    assert columns["c"].complete and not columns["c"].missing
    assert columns["d"].complete and columns["d"].missing
    assert not columns["n"].missing and columns["m"].missing
    assert all(c.source == DomainSource.DATA_DERIVED for c in columns.values())


def test_a_release_with_a_closed_profile_holds_no_other_and_no_empty_cells():
    # The original has three regions and no blanks; with the list marked complete and no missing
    # code the model has no code for OTHER or MISSING, so no synthetic row can hold them. The
    # same profile left open gives them a code, and the noise then places rows there.
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"region": rng.choice(["north", "south", "east"], 400),
                       "size": rng.integers(0, 10, 400).astype(str)})
    def profile(closed: bool) -> Profile:
        return Profile(schema=Schema((
            Column("region", Kind.CATEGORICAL, categories=("east", "north", "south"), complete=closed, missing=not closed),
            Column("size", Kind.INTEGER, lower=0, upper=9, bins=10, missing=not closed))),
            epsilon=0.3, delta=1e-9, engine="mst", seed=4)
    closed = synth.generate(synth.describe(df, profile(True)), 2000, seed=1)
    assert set(closed["region"]) == {"east", "north", "south"} and closed.notna().all().all()
    opened = synth.generate(synth.describe(df, profile(False)), 2000, seed=1)
    assert (opened["region"] == "<OTHER>").any() or opened.isna().any().any()
