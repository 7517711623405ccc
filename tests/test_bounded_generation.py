"""Generation and writing in bounded memory: a table written in chunks holds one chunk at a time,
however many rows it has; `run` samples a large table once for both of its files; the files are the
table the one-piece writer would have written (row count, columns, written forms), all or nothing."""

from __future__ import annotations

import gc
import importlib
import tracemalloc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import synth
from synth.errors import OutputError
from synth.generation.generate import FittedModel, fit
from synth.tables.source import read_table
from synth.tables.tableio import write_chunks, write_table

ADULT = Path(synth.__file__).parent / "data" / "adult.csv.gz"


@pytest.fixture(scope="module")
def fitted() -> FittedModel:
    table = pd.read_csv(ADULT, dtype=str).iloc[:3000]
    return fit(synth.describe(table, epsilon=2.0, delta=1e-6, engine="mst", seed=4, report_to=None), 50)


class Watched:
    """Chunks passed on from ``chunks``, noting how many earlier ones were still alive (referenced
    anywhere) each time the next one was drawn."""

    def __init__(self, chunks: Iterator[pd.DataFrame]) -> None:
        self.chunks, self.alive, self.drawn = chunks, [], 0

    def __iter__(self) -> Iterator[pd.DataFrame]:
        refs: list[weakref.ref[pd.DataFrame]] = []
        for chunk in self.chunks:
            gc.collect()
            self.alive.append(sum(ref() is not None for ref in refs))
            refs.append(weakref.ref(chunk))
            self.drawn += 1
            yield chunk
            del chunk  # this generator keeps no chunk across its yield


def test_no_chunk_is_held_while_the_next_is_drawn(fitted: FittedModel, tmp_path: Path) -> None:
    chunks = Watched(fitted.sample_chunks(5000, seed=1, sampling="rounded", chunk_rows=1000))
    assert write_chunks(chunks, [tmp_path / "s.csv", tmp_path / "s.parquet"]) == 5000
    assert chunks.drawn == 5 and chunks.alive == [0, 0, 0, 0, 0]


def _peak_bytes(fitted: FittedModel, rows: int, folder: Path) -> int:
    """tracemalloc's peak while ``rows`` rows are sampled in chunks of 2,000 and written to CSV and
    Parquet (numpy's arrays are traced, so a held chunk or a gathered table shows)."""
    folder.mkdir()
    gc.collect()
    tracemalloc.start()
    try:
        chunks = fitted.sample_chunks(rows, seed=2, sampling="rounded", chunk_rows=2000)
        write_chunks(chunks, [folder / "s.csv", folder / "s.parquet"])
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_of_sampling_and_writing_does_not_grow_with_the_rows(fitted: FittedModel, tmp_path: Path) -> None:
    small = _peak_bytes(fitted, 6_000, tmp_path / "small")
    large = _peak_bytes(fitted, 60_000, tmp_path / "large")
    # ten times the rows: a table gathered whole (or every chunk kept) would peak several times higher
    assert large < 1.3 * small, (small, large)
    assert len(read_table(tmp_path / "large" / "s.csv")) == 60_000


def test_fresh_keys_run_on_across_the_chunks(tmp_path: Path) -> None:
    table = pd.read_csv(ADULT, dtype=str).iloc[:3000]
    table.insert(0, "row_id", [str(i) for i in range(3000)])
    table.insert(1, "ticket", [f"T{i:05d}-{chr(65 + i % 26)}" for i in range(3000)])
    profile = tmp_path / "profile.toml"
    profile.write_text('[release]\nepsilon = 2.0\ndelta = 1e-6\n\n[columns.row_id]\nkind = "id"\n\n'
                       '[columns.ticket]\nkind = "id"\ntemplate = "A99999-A"\n\n'
                       '[columns.age]\nkind = "integer"\nlower = 17\nupper = 90\nbins = 8\n\n'
                       '[columns.sex]\nkind = "categorical"\ncategories = ["Female", "Male"]\nmissing = false\n')
    described = synth.describe(table[["row_id", "ticket", "age", "sex"]], profile=profile, engine="mst", seed=4,
                               report_to=None)
    assert {c.name for c in described.schema.unmodelled} == {"row_id", "ticket"}
    chunks = list(fit(described, 20).sample_chunks(2500, seed=5, chunk_rows=1000))
    written = pd.concat(chunks, ignore_index=True)
    assert len(chunks) == 3 and written["row_id"].tolist() == list(range(1, 2501))
    assert written["ticket"].is_unique and written["ticket"].str.fullmatch(r"[A-Z]+[0-9]{5}-[A-Z]").all()


def test_chunked_files_are_the_one_piece_files(fitted: FittedModel, tmp_path: Path) -> None:
    chunks = list(fitted.sample_chunks(2500, seed=3, chunk_rows=1000))
    whole = pd.concat(chunks, ignore_index=True)
    names = ["c.csv", "c.tsv", "c.parquet"]
    assert write_chunks(iter(chunks), [tmp_path / n for n in names], missing_text="NA") == 2500
    for name in names:
        write_table(whole, tmp_path / f"whole_{name}", missing_text="NA")
    for name in ("c.csv", "c.tsv"):  # the same text, byte for byte: header once, same written forms
        assert (tmp_path / name).read_bytes() == (tmp_path / f"whole_{name}").read_bytes()
    chunked, one = pq.read_table(tmp_path / "c.parquet"), pq.read_table(tmp_path / "whole_c.parquet")
    assert chunked.schema.equals(one.schema, check_metadata=True) and chunked.equals(one)
    assert chunked.num_rows == 2500 and chunked.column_names == list(fitted.description.schema.output_names)


def test_one_chunk_is_written_as_write_table_writes_it(fitted: FittedModel, tmp_path: Path) -> None:
    table = fitted.sample(700, seed=5)
    assert write_chunks([table], [tmp_path / "a.csv", tmp_path / "a.parquet"]) == 700
    write_table(table, tmp_path / "b.csv")
    write_table(table, tmp_path / "b.parquet")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))


def test_a_failure_midway_leaves_no_file(fitted: FittedModel, tmp_path: Path) -> None:
    def failing() -> Iterator[pd.DataFrame]:
        yield from fitted.sample_chunks(2000, seed=1, sampling="rounded", chunk_rows=1000)
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_chunks(failing(), [tmp_path / "s.csv", tmp_path / "s.parquet"])
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_refused_before_any_chunk_is_drawn(fitted: FittedModel, tmp_path: Path) -> None:
    (tmp_path / "s.parquet").write_text("kept")
    chunks = Watched(fitted.sample_chunks(2000, seed=1, sampling="rounded", chunk_rows=1000))
    with pytest.raises(OutputError, match="exists"):
        write_chunks(chunks, [tmp_path / "s.csv", tmp_path / "s.parquet"])
    assert chunks.drawn == 0 and not (tmp_path / "s.csv").exists()
    with pytest.raises(ValueError, match="no table"):
        write_chunks([], [tmp_path / "t.csv"])
    assert not (tmp_path / "t.csv").exists()


def test_run_samples_a_large_table_once_for_both_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate = importlib.import_module("synth.generation.generate")
    monkeypatch.setattr(generate, "CHUNK_ROWS", 1000)
    sampled: list[int] = []
    sample = generate.FittedModel.sample

    def counted(self: FittedModel, rows: int | None = None, *args: object, **kwargs: object) -> pd.DataFrame:
        table = sample(self, rows, *args, **kwargs)
        sampled.append(len(table))
        return table

    monkeypatch.setattr(generate.FittedModel, "sample", counted)
    table = pd.read_csv(ADULT, dtype=str).iloc[:3000]
    result = synth.run(table, tmp_path / "out", epsilon=2.0, delta=1e-6, engine="mst", rows=2500, seed=7,
                       report_to=None)
    assert sampled == [1000, 1000, 500]  # once, not once per file
    csv, parquet = read_table(result.files["synthetic"]), pd.read_parquet(result.files["parquet"])
    assert len(csv) == len(parquet) == result.rows == 2500
    assert csv.astype(str).equals(parquet.astype(str).replace({"<NA>": ""}).set_axis(csv.index))
    # the same rows, under the seed, as the chunks sample_chunks gives
    monkeypatch.setattr(generate.FittedModel, "sample", sample)
    again = pd.concat(generate.load_model(result.files["model"]).sample_chunks(seed=7), ignore_index=True)
    pd.testing.assert_frame_equal(pd.read_parquet(result.files["parquet"]), again, check_dtype=False)
