"""A fitted model you keep (issue 15, items 3 and 4): the model of every engine saves to an .npz
file without pickle and loads back to the same model; ``synth run`` writes it with the release,
``synth generate`` reuses it while it matches the Description and the iterations, refits (with a
note) when it is stale or damaged, and checks its output before any work; concise reprs."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synth
import synth.api
from synth.columns.column import Column
from synth.columns.schema import Schema
from synth.domains.profile import Profile
from synth.errors import ModelFileError
from synth.generation.generate import FittedModel, description_digest, fit, load_model
from synth.model.store import read_model
from synth.release.description import load_description, save_description
from tests.conftest import mixed_table
from tests.test_cli import assert_clean_error, run_cli


def small_table(n: int = 2000) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(3)
    sex = rng.choice(["Female", "Male"], n)
    income = np.where((sex == "Male") & (rng.random(n) < 0.5), ">50K", "<=50K")
    schema = Schema((Column("sex", "categorical", categories=("Female", "Male"), complete=True, missing=False),
                     Column("income", "categorical", categories=("<=50K", ">50K"), complete=True, missing=False)))
    return pd.DataFrame({"sex": sex, "income": income}), schema


def small_description(engine: str, delta: float = 0.0, **options):
    df, schema = small_table()
    return synth.describe(df, Profile(schema=schema, epsilon=3.0, delta=delta, engine=engine, seed=2,
                                      engine_options=options), report_to=None)


DESCRIPTIONS = {  # engine -> a seeded Description whose model is of each stored kind
    "independent": lambda: synth.describe(mixed_table(), epsilon=1.0, seed=1, engine="independent", report_to=None),
    "random": lambda: synth.describe(mixed_table(), epsilon=1.0, seed=1, engine="random", rows=50, report_to=None),
    "mst (compressed graphical)": lambda: synth.describe(mixed_table(), epsilon=1.0, seed=1, engine="mst",
                                                         report_to=None),
    "aim (graphical)": lambda: synth.describe(mixed_table(), epsilon=3.0, seed=1, engine="aim", report_to=None),
    "privbayes (network)": lambda: synth.describe(mixed_table(), epsilon=3.0, seed=1, engine="privbayes",
                                                  report_to=None),
    "mwem (histogram)": lambda: small_description("mwem", representation="histogram"),
    "smalldb (database)": lambda: small_description("smalldb", size=6),
}


@pytest.fixture(scope="module")
def descriptions():
    return {name: make() for name, make in DESCRIPTIONS.items()}


@pytest.mark.parametrize("name", DESCRIPTIONS)
def test_every_model_saves_and_loads_back_to_the_same_model(tmp_path, descriptions, name):
    description = descriptions[name]
    fitted = fit(description, iterations=200)
    path = fitted.save(tmp_path / "model.npz")
    loaded = load_model(path)
    assert type(loaded.model) is type(fitted.model) and repr(loaded) == repr(fitted)
    assert loaded.digest == description_digest(description) and loaded.iterations == 200
    assert description_digest(loaded.description) == loaded.digest  # the Description saved with it
    pd.testing.assert_frame_equal(loaded.sample(300, seed=4), fitted.sample(300, seed=4))
    for column in description.schema.names:
        np.testing.assert_array_equal(loaded.model.marginal([column]), fitted.model.marginal([column]))
    with zipfile.ZipFile(path) as archive:  # plain arrays: nothing numpy would need pickle to read
        assert all(name.endswith(".npy") for name in archive.namelist())
    assert synth.generate(description, 300, seed=4, iterations=200).equals(fitted.sample(300, seed=4))


def test_the_digest_survives_a_round_trip_through_the_file_and_changes_with_any_edit(tmp_path, descriptions):
    description = descriptions["independent"]
    path = save_description(description, tmp_path / "d.json")
    assert description_digest(load_description(path)) == description_digest(description)
    data = json.loads(path.read_text())
    data["rows"] = 7
    path.write_text(json.dumps(data, indent=4))
    assert description_digest(load_description(path)) != description_digest(description)


def test_a_damaged_or_foreign_model_file_is_a_clean_error(tmp_path, descriptions):
    path = fit(descriptions["independent"]).save(tmp_path / "m.npz")
    whole = path.read_bytes()
    cases = {
        "truncated": whole[: len(whole) // 2],
        "bytes flipped": whole[:200] + bytes(b ^ 0xFF for b in whole[200:260]) + whole[260:],
        "not an archive": b"hello",
    }
    for content in cases.values():
        path.write_bytes(content)
        with pytest.raises(ModelFileError, match="damaged or not a synth model file"):
            load_model(path)
    np.savez(path, other=np.arange(3))
    with pytest.raises(ModelFileError):
        load_model(path)
    np.savez(path, x=np.array([{"a": 1}], dtype=object))  # an array only pickle can read is refused
    with pytest.raises(ModelFileError):
        read_model(path)
    with pytest.raises(ModelFileError, match="no saved model"):
        load_model(tmp_path / "none.npz")


@pytest.fixture
def release(tmp_path) -> Path:
    data = tmp_path / "mixed.csv"
    mixed_table().to_csv(data, index=False)
    synth.run(data, tmp_path / "release", epsilon=1.0, seed=1, engine="mst", report_to=None)
    return tmp_path / "release"


def _no_fit(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the model was fitted again")

    monkeypatch.setattr(synth.api, "fit", refuse)


def test_run_keeps_the_model_and_generate_reuses_it_without_fitting(capsys, tmp_path, monkeypatch, release):
    manifest = json.loads((release / "manifest.json").read_text())
    assert "description.model.npz" in [f["name"] for f in manifest["files"]]
    kept = load_model(release / "description.model.npz")
    assert kept.digest == description_digest(load_description(release / "description.json"))
    assert repr(fit(release / "description.json")) == repr(kept)  # fit takes a Description's path too
    _no_fit(monkeypatch)
    code, _, err = run_cli(capsys, "generate", str(release / "description.json"), "--rows", "500", "--seed", "3",
                           "-o", str(tmp_path / "s.csv"))
    assert code == 0 and "using the fitted model saved in" in err, err
    expected = kept.sample(500, seed=3)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "s.csv"), pd.read_csv(_written(expected, tmp_path)))


def _written(table: pd.DataFrame, folder: Path) -> Path:
    from synth.tables.tableio import write_table

    return write_table(table, folder / "expected.csv", force=True)


def test_generate_fits_and_saves_the_model_once_then_reuses_it(capsys, tmp_path, monkeypatch, descriptions):
    path = save_description(descriptions["mst (compressed graphical)"], tmp_path / "d.json")
    code, _, err = run_cli(capsys, "generate", str(path), "--rows", "10", "-o", str(tmp_path / "a.csv"))
    assert code == 0 and "saved the fitted model to" in err and (tmp_path / "d.model.npz").is_file()
    assert "fitting the model" in err and "it/s" in err  # a progress bar while fitting
    _no_fit(monkeypatch)
    code, _, err = run_cli(capsys, "generate", str(path), "--rows", "10", "-o", str(tmp_path / "b.csv"), "--quiet")
    assert code == 0 and err == ""


@pytest.mark.parametrize("change,needle", [
    ("description", "fitted to another Description"),
    ("iterations", "fitted with 1000 iterations, not 300"),
    ("damage", "damaged or not a synth model file"),
])
def test_a_stale_or_damaged_model_is_refitted_with_a_note_and_replaced(capsys, tmp_path, release, change, needle):
    description, kept = release / "description.json", release / "description.model.npz"
    argv = ["generate", str(description), "--rows", "20", "-o", str(tmp_path / "s.csv")]
    if change == "description":
        data = json.loads(description.read_text())
        data["rows"] = 20  # an edit that changes no measurement still changes the Description
        description.write_text(json.dumps(data))
    elif change == "iterations":
        argv += ["--iterations", "300"]
    else:
        kept.write_bytes(kept.read_bytes()[:100])
    code, _, err = run_cli(capsys, *argv)
    assert code == 0 and "is not used" in err and needle in err, err
    refitted = load_model(kept)
    assert refitted.digest == description_digest(load_description(description))
    assert refitted.iterations == (300 if change == "iterations" else 1000)


def test_a_model_that_cannot_be_saved_is_used_with_a_note(capsys, tmp_path, monkeypatch, descriptions):
    path = save_description(descriptions["independent"], tmp_path / "d.json")

    def read_only(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(FittedModel, "save", read_only)
    code, _, err = run_cli(capsys, "generate", str(path), "--rows", "10", "-o", str(tmp_path / "s.csv"))
    assert code == 0 and "could not be saved" in err and len(pd.read_csv(tmp_path / "s.csv")) == 10


@pytest.mark.parametrize("name,needle", [("s.xlsx", "unknown file type"), ("missing/s.csv", "does not exist")])
def test_generate_checks_its_output_before_any_work(capsys, tmp_path, monkeypatch, descriptions, name, needle):
    path = save_description(descriptions["independent"], tmp_path / "d.json")
    _no_fit(monkeypatch)
    code, _, err = run_cli(capsys, "generate", str(path), "-o", str(tmp_path / name))
    assert_clean_error(code, err, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]


def test_reprs_are_short_and_say_what_matters(tmp_path, descriptions):
    data = tmp_path / "mixed.csv"
    mixed_table().to_csv(data, index=False)
    result = synth.run(data, tmp_path / "out", epsilon=1.0, seed=1, engine="independent", report_to=None)
    for obj, needles in ((result.description, ["independent", "5 columns", "epsilon=1", "SEEDED"]),
                         (result, ["synthetic rows × 5 columns", "description.model.npz", "epsilon=1"]),
                         (fit(result.description), ["independent columns", "5 columns", "Description "])):
        text = repr(obj)
        assert len(text) < 320 and "\n" not in text and all(n in text for n in needles), text
    aim = repr(fit(descriptions["aim (graphical)"], iterations=50))
    assert "graphical model on" in aim and "fitted in" in aim and "MiB" in aim


def test_inspect_reports_on_the_kept_model_without_fitting(capsys, tmp_path, monkeypatch, release):
    import synth.inspect.report as report

    fitted = []
    original_fit = report.fit_model
    monkeypatch.setattr(report, "fit_model", lambda *a, **k: fitted.append(1) or original_fit(*a, **k))
    description = release / "description.json"
    code, _, err = run_cli(capsys, "inspect", str(description), "--report", str(tmp_path / "r.html"))
    assert code == 0 and "using the fitted model saved beside the Description" in err and not fitted, err
    (release / "description.model.npz").unlink()  # without a kept model the report fits one, and writes none
    code, _, err = run_cli(capsys, "inspect", str(description), "--report", str(tmp_path / "r2.html"))
    assert code == 0 and fitted == [1] and not (release / "description.model.npz").exists(), err
