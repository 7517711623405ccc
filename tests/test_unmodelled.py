"""Identifier and free-text columns: key shapes, fresh keys, detection under DP, drafted profiles."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import synth
from synth.columns.column import Column
from synth.columns.kinds import Kind
from synth.columns.schema import Schema
from synth.columns.unmodelled import KeyRange, UnmodelledColumn, judge_unique, key_template, looks_like_identifier
from synth.domains.discovery import detect_identifier, discover_columns
from synth.domains.drafting import draft_profile
from synth.domains.profile import load_profile, profile_to_toml, save_profile
from synth.errors import SchemaError
from synth.privacy import Accountant, Budget, SeededNoise
from synth.privacy.curator import CountRelease
from synth.privacy.neighbours import Neighbouring
from synth.progress import SILENT


@pytest.mark.parametrize("text,template", [
    ("N12345", "A99999"), ("ID0001", "AA9999"), ("12345", "99999"), ("ab-07", "aa-99"),
    ("3f2a9c1e-11aa", "xxxxxxxx-xxxx"), ("a1B2", "XXXX"), ("two words", None), ("x" * 65, None), ("é1", None),
])
def test_a_key_template_keeps_the_shape_and_no_value(text, template):
    assert key_template(text) == template


@pytest.mark.parametrize("name,expected", [
    ("id", True), ("patient_id", True), ("PatientID", True), ("CustomerId", True), ("uuid", True),
    ("Unnamed: 0", True), ("rownames", True), ("paid", False), ("kid", False), ("width", False), ("tailnum", False),
])
def test_key_like_names(name, expected):
    assert looks_like_identifier(name) == expected


def test_fresh_keys_have_the_template_shape_are_distinct_and_never_reuse_a_real_key():
    rng = np.random.default_rng(0)
    keys = UnmodelledColumn("k", "id", "A99999").generate(5000, rng)
    assert keys.is_unique and keys.str.fullmatch(r"[A-Z][0-9]{5}").all()
    digits = UnmodelledColumn("k", "id", "9999").generate(20_000, rng)
    # every real key of this shape is below 10,000: the fresh ones start above every one of them
    assert digits.tolist() == list(range(10_000, 30_000))
    small = UnmodelledColumn("k", "id", "A9").generate(1000, rng)  # 260 keys: widened by more letters
    assert small.is_unique and small.str.fullmatch(r"[A-Z]{3}[0-9]").all()  # 26^3 * 10 >= 100 * 1000 > 26 * 26 * 10
    assert UnmodelledColumn("k", "id").generate(3, rng).tolist() == [1, 2, 3]
    text = UnmodelledColumn("c", "text").generate(4, rng)
    assert text.isna().all() and len(text) == 4


@pytest.mark.parametrize("template", [None, "9999", "A99999", "A9", "xx-99.Aa", "XXXXXXXXXXXXXXXXXXXXXXXX"])
def test_fresh_keys_written_in_pieces_are_distinct_across_the_pieces(template):
    """A table written in pieces (``KeyRange``) gets keys that run on from piece to piece: 1, 2, 3 and
    10^L + n continue, random-shape keys never repeat in the whole table, and every key has the shape."""
    column = UnmodelledColumn("k", "id", template)
    total, size = 30_000, 7_000
    pieces = [column.generate(min(size, total - first), np.random.default_rng(first), KeyRange(first, total, 11))
              for first in range(0, total, size)]
    keys = pd.concat(pieces, ignore_index=True)
    assert len(keys) == total and keys.is_unique
    whole = column.generate(total, np.random.default_rng(0))  # in one piece: the shape of the same table's keys
    if template in (None, "9999"):
        assert keys.tolist() == whole.tolist()
    else:  # the template, widened in front as for one piece, character by character
        widened = template[0] * (len(whole[0]) - len(template)) + template
        classes = {"9": "[0-9]", "A": "[A-Z]", "a": "[a-z]", "X": "[0-9A-Z]", "x": "[0-9a-z]"}
        shape = "".join(classes.get(c, re.escape(c)) for c in widened)
        assert keys.str.fullmatch(shape).all() and whole.str.fullmatch(shape).all()
    again = column.generate(size, np.random.default_rng(size), KeyRange(size, total, 11))
    assert again.tolist() == pieces[1].tolist()  # the same piece of the same table: the same keys


def test_keys_spell_a_permutation_of_the_row_numbers():
    from synth.columns.unmodelled import _permuted

    for space in (2, 10, 1000, 4097):
        out = _permuted(np.arange(space, dtype=np.uint64), space, seed=3)
        assert sorted(out.tolist()) == list(range(space))
    first, second = (_permuted(np.arange(1000, dtype=np.uint64), 1000, seed) for seed in (1, 2))
    assert (first != second).mean() > 0.9  # another seed, another permutation
    # consecutive rows land far apart: the keys do not count up
    assert np.abs(np.diff(first.astype(np.int64))).mean() > 200


def test_unmodelled_columns_are_checked():
    with pytest.raises(SchemaError, match="cannot have a template"):
        UnmodelledColumn("c", "text", "A9")
    with pytest.raises(SchemaError, match="no spaces"):
        UnmodelledColumn("c", "id", "A 9")
    with pytest.raises(SchemaError, match="left out of the model"):
        Column("c", Kind.ID)


def test_judge_unique_takes_ids_text_and_leaves_repeated_values():
    assert judge_unique("c", 50, 100, {}, True, "public") is None
    assert judge_unique("c", 95, 100, {"A99": 80, "A9": 15}, True, "public") == UnmodelledColumn("c", "id", "A99")
    assert judge_unique("c", 95, 100, {"Aaa": 20}, True, "public").kind == "text"
    assert judge_unique("n", 100, 100, {"99": 90, "999": 10}, False, "public").template == "999"


def test_a_schema_keeps_unmodelled_columns_in_the_output_order_and_round_trips():
    schema = Schema.ordered([UnmodelledColumn("key", "id", "A99"), Column("x", Kind.INTEGER, lower=0, upper=3, bins=4),
                             UnmodelledColumn("note", "text")])
    assert schema.names == ("x",) and schema.sizes == (5,)
    assert schema.output_names == ("key", "x", "note")
    assert Schema.from_dict(schema.to_dict()) == schema
    out = schema.decode(np.array([[0], [3]]), np.random.default_rng(1))
    assert list(out.columns) == ["key", "x", "note"] and out["note"].isna().all()
    codes, report = schema.encode(pd.DataFrame({"key": ["Q12", "R40"], "x": [1, 2], "note": ["hi", "yo"]}))
    assert codes.shape == (2, 1) and report.ignored_columns == ()


def _counts(epsilon: float = 2.0, seed: int = 1) -> CountRelease:
    return CountRelease(Accountant(Budget(epsilon, 1e-6), delta_reserve=5e-7), SeededNoise(seed), Neighbouring())


def test_discovery_finds_an_identifier_and_free_text_and_spends_nothing_on_their_domains():
    rng = np.random.default_rng(2)
    rows = 3000
    df = pd.DataFrame({
        "customer": [f"C{i:05d}" for i in rng.permutation(rows)],
        "comment": [f"{w} {i} text" for i, w in enumerate(rng.choice(["good", "bad service", "ok then"], rows))],
        "city": rng.choice(["Oslo", "Lima", "Pune"], rows),
        "record_id": rng.permutation(rows) + 1,
        "amount": rng.permutation(rows),  # unique numbers under a name that is no key: a measurement
    })
    counts = _counts()
    found = discover_columns(df, dict.fromkeys(df.columns), counts, 0.04, 5e-7, SILENT)
    assert found.columns["customer"] == UnmodelledColumn("customer", "id", "A99999", "dp-estimated")
    assert found.columns["comment"] == UnmodelledColumn("comment", "text", None, "dp-estimated")
    assert found.columns["record_id"].kind == "id" and found.columns["record_id"].template == "9999"
    assert found.columns["city"].categories == ("Lima", "Oslo", "Pune")
    assert found.columns["amount"].kind == Kind.INTEGER
    queries = [e.query.split(":")[0] for e in counts.accountant.ledger]
    assert "distinct(city)" in queries and "distinct(amount)" not in queries
    assert not any(q in queries for q in ("categories(customer)", "categories(comment)", "bounds(record_id)"))
    verdicts = {f.name: f.verdict for f in found.findings}
    assert verdicts["comment"] == "rough" and verdicts["customer"] == "located"


def test_a_column_of_repeated_values_is_never_taken_for_an_identifier():
    # 3,000 cells, 1,500 values (two rows each): half as many values as cells, far below 80 %
    series = pd.Series([f"v{i % 1500}" for i in range(3000)])
    taken = 0
    for seed in range(20):
        counts = _counts(seed=seed)
        detection = detect_identifier("v", series, True, counts, 0.05, 1e-7, 3000.0)
        column, left = detection.column, detection.left
        taken += column is not None
        assert abs(detection.distinct - 1500) < 5 * 75
        (entry,) = counts.accountant.ledger  # the distinct count only, priced by need: a deviation of 75
        assert entry.noise_scale == pytest.approx(75.0, rel=1e-6) and left == pytest.approx(0.05 - entry.cost.rho)
    assert taken == 0


@pytest.mark.parametrize("accounting", ["zcdp", "pure"])
def test_a_budget_priced_for_a_noise_deviation_gives_that_deviation(accounting):
    from synth.privacy import Notion
    budget = Budget(1.0, 1e-6) if accounting == "zcdp" else Budget(1.0)
    counts = CountRelease(Accountant(budget, Notion.ZCDP if accounting == "zcdp" else Notion.PURE),
                          SeededNoise(0), Neighbouring())
    for std in (0.5, 7.0, 300.0):
        assert counts.calibrate(counts.budget_for_std(std), 1.0, 1.0).std == pytest.approx(std, rel=1e-9)


def test_run_writes_fresh_keys_and_an_empty_text_column(tmp_path):
    rng = np.random.default_rng(3)
    rows = 6000
    df = pd.DataFrame({"patient_id": np.arange(100_000, 100_000 + rows),
                       "note": [f"seen on day {i} by {d}" for i, d in enumerate(rng.choice(["ann", "bo"], rows))],
                       "ward": rng.choice(["A", "B", "C"], rows), "age": rng.integers(20, 80, rows)})
    result = synth.run(df, tmp_path / "out", epsilon=2.0, delta=1e-9, seed=5, report_to=None)
    out = result.synthetic
    assert list(out.columns) == ["patient_id", "note", "ward", "age"]
    assert out["patient_id"].is_unique and out["patient_id"].min() >= 1_000_000  # one digit more than any real key
    assert out["note"].isna().all() and set(out["ward"]) <= {"A", "B", "C", "<OTHER>"}
    assert result.description.privacy["kind_sources"]["patient_id"] == "dp-estimated"


def test_a_drafted_profile_writes_ids_and_text_without_a_single_value(tmp_path):
    rng = np.random.default_rng(4)
    comments = [f"note {i} about {w}" for i, w in enumerate(rng.choice(["rain", "sun"], 200))]
    keys = [f"K{i:04d}" for i in range(200)]
    df = pd.DataFrame({"key": keys, "comment": comments, "colour": rng.choice(["red", "blue"], 200)})
    profile = draft_profile(df)
    text = profile_to_toml(profile)
    assert not any(value in text for value in keys + comments)
    assert profile.schema.output_names == ("key", "comment", "colour")
    assert profile.schema.unmodelled == (UnmodelledColumn("key", "id", "A9999", "data-derived"),
                                         UnmodelledColumn("comment", "text", None, "data-derived"))
    assert load_profile(save_profile(profile, tmp_path / "p.toml")).schema == profile.schema


def test_a_profile_of_only_id_and_text_columns_is_refused_before_spending():
    from synth.domains.profile import Profile
    from synth.errors import ProfileError
    profile = Profile(schema=Schema.ordered([UnmodelledColumn("k", "id"), UnmodelledColumn("t", "text")]),
                      epsilon=1.0, delta=1e-9, engine="independent")
    with pytest.raises(ProfileError, match="nothing to model"):
        synth.describe(pd.DataFrame({"k": [1, 2], "t": ["a", "b"]}), profile)


def test_kinds_declared_id_and_text_in_python_cost_nothing_and_are_written_by_their_rule():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"k": rng.permutation(3000), "t": [f"note {i}" for i in range(3000)],
                       "c": rng.choice(["a", "b"], 3000)})
    description = synth.describe(df, epsilon=1.0, delta=1e-9, seed=2, kinds={"k": "id", "t": "text"}, report_to=None)
    queries = [e.query.split(":")[0] for e in description.ledger]
    assert not any("(k)" in q or "(t)" in q for q in queries)
    assert description.privacy["kind_sources"] == {"k": "public", "t": "public", "c": "dp-estimated"}
    out = synth.generate(description, 50, seed=1)
    assert list(out.columns) == ["k", "t", "c"] and out["k"].tolist() == list(range(1, 51)) and out["t"].isna().all()


def test_evaluate_with_the_description_compares_the_modelled_columns_and_lists_the_rest():
    # The release models "c" and "n", writes "k" as fresh keys and "t" empty, and left "lost" out:
    # evaluation with the Description compares the modelled columns and lists the others.
    from synth.domains.profile import Profile
    from synth.evaluate import evaluate
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"k": np.arange(2000), "c": rng.choice(["a", "b"], 2000), "n": rng.integers(0, 9, 2000),
                       "t": [f"note {i}" for i in range(2000)], "lost": rng.choice(["x", "y"], 2000)})
    schema = Schema.ordered([UnmodelledColumn("k", "id"), Column("c", Kind.CATEGORICAL, categories=("a", "b")),
                             Column("n", Kind.INTEGER, lower=0, upper=8, bins=9), UnmodelledColumn("t", "text")])
    description = synth.describe(df, Profile(schema=schema, epsilon=2.0, delta=1e-9, engine="mst", seed=3))
    synthetic = synth.generate(description, 2000, seed=1)
    report = evaluate(df, synthetic, description.schema)
    notes = " ".join(report.notes)
    assert "Not evaluated: column(s) ['k', 't', 'lost']" in notes
    columns = report.to_dict()["fidelity"]["columns"]
    assert {c["column"] if isinstance(c, dict) else c for c in columns} == {"c", "n"}
    with pytest.raises(Exception, match="do not have the same columns"):
        evaluate(df, synthetic)  # without the Description both tables must match
