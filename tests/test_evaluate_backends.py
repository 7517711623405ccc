"""`synth evaluate` counted on a backend gives the memory path's evaluation: the same JSON (but for
the notes saying where the tables were counted) for CSV and Parquet, with and without a release's
Description; above the row sample's cap, every count-based score still counts every row, and the
notes say which scores read a sample and how large it is."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from backend_cases import ADULT

from synth import api
from synth.cli import main
from synth.evaluate import counted
from synth.tables.source import TableSource

pytest.importorskip("duckdb")
ROWS = 3000


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """An original (a slice of the demo table with a float, a date and missing cells) and a synthetic
    table unlike it (resampled, a third of its columns shuffled, some values new), as CSV and Parquet,
    and a seeded release of the original."""
    folder = tmp_path_factory.mktemp("evaluate")
    original = pd.read_csv(ADULT, dtype=str, keep_default_na=False).iloc[:ROWS].copy()
    rng = np.random.default_rng(0)
    original["ratio"] = [f"{v:.4f}" for v in rng.gamma(2.0, 1.5, ROWS)]
    original["seen"] = (pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 700, ROWS), unit="D")).astype(str)
    original.loc[::7, "age"] = ""
    synthetic = original.sample(n=2500, replace=True, random_state=1).reset_index(drop=True)
    for name in synthetic.columns[::3]:
        synthetic[name] = synthetic[name].sample(frac=1, random_state=2).to_numpy()
    synthetic.loc[::11, "occupation"] = "Astronaut"
    out: dict[str, Path] = {}
    for which, df in (("original", original), ("synthetic", synthetic)):
        df.to_csv(folder / f"{which}.csv", index=False)
        df.to_parquet(folder / f"{which}.parquet")
        out[f"{which}.csv"], out[f"{which}.parquet"] = folder / f"{which}.csv", folder / f"{which}.parquet"
    api.run(out["original.csv"], folder / "release", epsilon=2.0, engine="independent", seed=0, rows=2000,
            report_to=None)
    out["description"] = folder / "release" / "description.json"
    out["release.csv"] = folder / "release" / "synthetic.csv"
    return out


def evaluation(original: Path, synthetic: Path, backend: str, description: Path | None = None) -> dict[str, Any]:
    wrap = (lambda p: p) if backend == "plain" else (lambda p: TableSource(str(p), backend))
    return api.evaluate(wrap(original), wrap(synthetic), description, target="income", seed=3).to_dict()


def counted_notes(result: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The evaluation without the notes on backends, and those notes."""
    notes = [n for n in result["notes"] if "backend" in n]
    return {**result, "notes": [n for n in result["notes"] if "backend" not in n]}, notes


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_duckdb_gives_the_memory_evaluation(form: str, files: dict[str, Path]) -> None:
    original, synthetic = files[f"original.{form}"], files[f"synthetic.{form}"]
    memory = evaluation(original, synthetic, "plain")
    assert memory == evaluation(original, synthetic, "memory")
    on_duckdb, notes = counted_notes(evaluation(original, synthetic, "duckdb"))
    assert on_duckdb == memory
    assert len(notes) == 2 and all("duckdb backend" in n and "all 3,000" in notes[0] for n in notes)


def test_duckdb_gives_the_memory_evaluation_of_a_release(files: dict[str, Path]) -> None:
    memory = evaluation(files["original.csv"], files["release.csv"], "plain", files["description"])
    assert memory["fidelity"]["release_schema"] is not None
    assert counted_notes(evaluation(files["original.csv"], files["release.csv"], "duckdb", files["description"]))[0] == memory


def test_a_sampled_table_still_counts_every_row(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    memory = evaluation(files["original.parquet"], files["release.csv"], "plain", files["description"])
    monkeypatch.setattr(counted, "ROW_SAMPLE", 1000)
    sampled, notes = counted_notes(evaluation(files["original.parquet"], files["release.csv"], "duckdb",
                                              files["description"]))
    assert sampled["rows"] == memory["rows"] == {"original": ROWS, "synthetic": 2000}
    # on the release's schema, counts of every row: exactly the memory path's (the discretisation drafted
    # from the original is drafted from the sample's rows, so its scores differ by that draft)
    assert sampled["fidelity"]["release_schema"] == memory["fidelity"]["release_schema"]
    assert sampled["fidelity"]["pca"]["fit_rows"] == 1000 < memory["fidelity"]["pca"]["fit_rows"]
    assert sampled["privacy"]["holdout_rows"] == 200  # a fifth of the sample
    assert sampled["privacy"]["reference_rows"] == ROWS - 200  # every other original row
    for name, scores in sampled["fidelity"]["columns"].items():  # each share counts every row of its table
        for which, rows in (("original", ROWS), ("synthetic", 2000)):
            counts = np.asarray(scores["shares"][which]) * rows
            assert np.allclose(counts, np.round(counts), atol=1e-6) and round(counts.sum()) == rows, name
    assert "a uniform random sample of 1,000 of its 3,000 rows" in notes[0]
    assert "a uniform random sample of 1,000 of its 2,000 rows" in notes[1]


def test_an_original_on_a_backend_is_read_once(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from synth.evaluate import tables as tables_module

    passes: list[str] = []
    real = tables_module.read_table_chunks

    def counted_passes(table, rows, markers):  # every pass over a file's rows (a header read is one row)
        if rows > 1:
            passes.append(Path(table).name)
        return real(table, rows, markers)

    monkeypatch.setattr(tables_module, "read_table_chunks", counted_passes)
    monkeypatch.setattr(counted, "ROW_SAMPLE", 1000)
    evaluation(files["original.parquet"], files["synthetic.parquet"], "duckdb")
    assert passes.count("original.parquet") == 1 and passes.count("synthetic.parquet") == 1
    passes.clear()
    evaluation(files["original.parquet"], files["synthetic.parquet"], "plain")  # read into memory: draft, then rows
    assert passes.count("original.parquet") == 2


def test_the_cli_says_which_backend_counts_and_writes_private_files(files: dict[str, Path], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "evaluation.json"
    assert main(["evaluate", str(files["original.csv"]), str(files["synthetic.parquet"]), "--backend", "duckdb",
                 "--json", str(out), "--target", "income", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    assert "counting backend for the original table: duckdb (chosen with --backend)" in captured.err
    assert "counting backend for the synthetic table: duckdb" in captured.err
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert counted_notes(json.loads(out.read_text()))[0] == evaluation(files["original.csv"],
                                                                       files["synthetic.parquet"], "plain")
    assert main(["evaluate", str(files["original.csv"]), str(files["synthetic.csv"]), "--backend", "duckbd"]) == 2
    assert "unknown backend 'duckbd'; choose one of" in capsys.readouterr().err
