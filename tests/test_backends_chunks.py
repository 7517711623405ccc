"""Generation at scale: rows sampled and written in chunks (CSV, gzip CSV, Parquet), the same rows
as one sample when they fit in one chunk, reproducible under a seed, and `synth generate` writing
a table of many chunks."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synth
from synth.cli import main
from synth.generation.generate import FittedModel, fit
from synth.release.description import save_description
from synth.tables.source import read_table
from synth.tables.tableio import write_table_chunks


@pytest.fixture(scope="module")
def fitted() -> FittedModel:
    table = pd.read_csv(Path(synth.__file__).parent / "data" / "adult.csv.gz", dtype=str).iloc[:3000]
    return fit(synth.describe(table, epsilon=2.0, delta=1e-6, engine="mst", seed=4, report_to=None), 50)


def test_rows_that_fit_one_chunk_are_one_sample(fitted: FittedModel) -> None:
    chunks = list(fitted.sample_chunks(700, seed=3, chunk_rows=1000))
    assert len(chunks) == 1
    pd.testing.assert_frame_equal(chunks[0], fitted.sample(700, seed=3))


def test_chunks_are_reproducible_and_hold_every_row(fitted: FittedModel) -> None:
    chunks = list(fitted.sample_chunks(2500, seed=3, chunk_rows=1000))
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    again = list(fitted.sample_chunks(2500, seed=3, chunk_rows=1000))
    for one, other in zip(chunks, again, strict=True):
        pd.testing.assert_frame_equal(one, other)
    assert not chunks[0].equals(chunks[1].set_axis(chunks[0].index))  # each chunk draws its own rows


@pytest.mark.parametrize("name", ["out.csv", "out.csv.gz", "out.tsv", "out.parquet"])
def test_chunks_are_written_as_one_table(fitted: FittedModel, name: str, tmp_path: Path) -> None:
    chunks = list(fitted.sample_chunks(2500, seed=5, chunk_rows=1000))
    assert write_table_chunks(iter(chunks), tmp_path / name) == 2500
    written = read_table(tmp_path / name)
    expected = read_table_of(pd.concat(chunks, ignore_index=True), tmp_path / f"whole.{name}")
    assert written.shape == (2500, len(chunks[0].columns))
    pd.testing.assert_frame_equal(written, expected)


def read_table_of(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``df`` written as one table and read back (what the chunked file must equal)."""
    write_table_chunks(iter([df]), path)
    return read_table(path)


def test_generate_writes_many_chunks(fitted: FittedModel, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys.modules["synth.generation.generate"], "CHUNK_ROWS", 400)
    description = save_description(fitted.description, tmp_path / "description.json")
    assert main(["generate", str(description), "--rows", "1500", "--seed", "2", "-o", str(tmp_path / "s.parquet")]) == 0
    assert "wrote 1,500 synthetic rows" in capsys.readouterr().out
    assert len(read_table(tmp_path / "s.parquet")) == 1500


@pytest.mark.parametrize("seed", [5, None])
def test_synth_run_writes_a_table_of_many_chunks_without_holding_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    seed: int | None) -> None:
    """Above CHUNK_ROWS, `run` samples and writes chunk by chunk: it returns no table, counts the
    rows, and its CSV and Parquet files hold the same rows (one seed for both, even unseeded)."""
    monkeypatch.setattr(importlib.import_module("synth.generation.generate"), "CHUNK_ROWS", 1000)  # the module, not synth.generate()
    table = pd.read_csv(Path(synth.__file__).parent / "data" / "adult.csv.gz", dtype=str).iloc[:3000]
    result = synth.run(table, tmp_path / "out", epsilon=2.0, delta=1e-6, engine="mst", rows=2500, seed=seed,
                       report_to=None)
    assert result.synthetic is None and result.rows == 2500
    assert "2,500 synthetic rows" in repr(result)
    csv = read_table(result.files["synthetic"])
    assert len(csv) == 2500
    if "parquet" in result.files:
        parquet = pd.read_parquet(result.files["parquet"])
        assert csv.astype(str).equals(parquet.astype(str).replace({"<NA>": ""}).set_axis(csv.index))


def test_synth_run_returns_the_table_when_it_fits_one_chunk(tmp_path: Path) -> None:
    table = pd.read_csv(Path(synth.__file__).parent / "data" / "adult.csv.gz", dtype=str).iloc[:3000]
    result = synth.run(table, tmp_path / "out", epsilon=2.0, delta=1e-6, engine="mst", rows=800, seed=5,
                       report_to=None)
    assert result.synthetic is not None and len(result.synthetic) == result.rows == 800


def test_a_column_that_can_be_missing_has_one_dtype_in_every_chunk(tmp_path: Path) -> None:
    # An integer column with a missing code whose first chunk drew no missing cell was int64 there
    # and Int64 later: Parquet kept the first chunk's dtype, so the file read back as floats (40.0)
    # where the CSV said 40 (an unseeded run of the test above failed so, now and then).
    from synth.columns.column import Column
    from synth.columns.encoding import decode_column
    from synth.columns.kinds import Kind

    rng = np.random.default_rng(0)
    number = Column("n", Kind.INTEGER, lower=0, upper=9, bins=10, missing=True)
    flag = Column("f", Kind.BOOLEAN, missing=True)
    chunks = [pd.DataFrame({"n": decode_column(number, np.array(codes), rng, "OTHER"),
                            "f": decode_column(flag, np.array(flags), rng, "OTHER")})
              for codes, flags in (([1, 2, 3], [0, 1, 1]), ([4, number.missing_code, 5], [1, 0, flag.missing_code]))]
    assert write_table_chunks(iter(chunks), tmp_path / "s.parquet") == 6
    write_table_chunks(iter(chunks), tmp_path / "s.csv")
    parquet, csv = pd.read_parquet(tmp_path / "s.parquet"), read_table(tmp_path / "s.csv")
    assert str(parquet["n"].dtype) == "Int64" and str(parquet["f"].dtype) == "boolean"
    assert csv.astype(str).equals(parquet.astype(str).replace({"<NA>": ""}).set_axis(csv.index))
