"""Counting backends are exact twins of the memory path: for odd tables (every kind, missing
markers, odd values; CSV and typed Parquet), every count discovery and the curator read is the
same on each backend, and the same seed gives the same Description. The curator answers the same
from distinct code rows with counts as from the rows. The backends write nothing the user sees."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from backend_cases import (
    MARKERS,
    assert_twins,
    column_counts,
    open_table,
    release_of,
    text_tables,
    typed_tables,
    write_adult,
    write_csv,
)
from hypothesis import HealthCheck, given, settings

from synth.cli import main
from synth.columns.domain import Domain
from synth.domains.drafting import draft_profile
from synth.errors import InputFileError
from synth.privacy import Accountant, Budget, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring
from synth.tables.counting import BackendUnavailable
from synth.tables.source import TableSource, read_table

pytest.importorskip("duckdb")
BACKENDS = ["duckdb"]
ODD = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("backend", BACKENDS)
@ODD
@given(df=text_tables())
def test_csv_counts_are_exact_on_every_backend(backend: str, df: pd.DataFrame, tmp_path_factory) -> None:
    assert_twins(write_csv(df, tmp_path_factory.mktemp("csv") / "odd.csv"), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@ODD
@given(df=typed_tables())
def test_typed_parquet_counts_are_exact_on_every_backend(backend: str, df: pd.DataFrame, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("parquet") / "typed.parquet"
    df.to_parquet(path)
    assert_twins(path, backend)


def test_code_rows_packed_into_several_keys_are_counted_exactly(tmp_path: Path) -> None:
    from synth.tables.duckdb_table import KEY_SPAN, packed_groups

    rng = np.random.default_rng(5)
    df = pd.DataFrame({f"c{j}": rng.integers(0, 60 + j, 3000).astype(str) for j in range(24)})
    df.loc[::13, "c3"] = ""  # missing cells: the last code of that column
    path = write_csv(df, tmp_path / "wide.csv")
    schema = draft_profile(read_table(path, MARKERS), MARKERS).schema
    groups = packed_groups(schema.sizes)
    assert len(groups) >= 2 and [j for group in groups for j, _ in group] == list(range(24))
    for group in groups:  # each key's codes fit it, and its strides are the running products of the sizes
        assert math.prod(schema.sizes[j] for j, _ in group) < KEY_SPAN
        assert [stride for _, stride in group] == [math.prod(schema.sizes[i] for i, _ in group[:q])
                                                   for q in range(len(group))]
    assert_twins(path, "duckdb")


@pytest.fixture(scope="module")
def adult_files(tmp_path_factory) -> dict[str, Path]:
    return write_adult(tmp_path_factory.mktemp("adult"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("engine", ["mst", "aim", "privbayes"])
@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_the_same_seed_gives_the_same_description_on_every_backend(backend: str, engine: str, form: str,
                                                                   adult_files: dict[str, Path]) -> None:
    path = adult_files[form]
    table = open_table(backend, path)
    try:
        assert release_of(table, engine) == release_of(read_table(path, MARKERS), engine)
    finally:
        table.close()


def _curators(seed: int) -> tuple[Curator, Curator]:
    """A curator over 3,000 rows and one over their distinct code rows with counts."""
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, 3, 3000), rng.integers(0, 4, 3000), rng.integers(0, 2, 3000)])
    distinct, weights = np.unique(codes, axis=0, return_counts=True)
    domain = Domain(("a", "b", "c"), (3, 4, 2))
    def curator(rows: np.ndarray, counts: np.ndarray | None) -> Curator:
        return Curator(rows, domain, CountRelease(Accountant(Budget(10.0)), SeededNoise(seed), Neighbouring()),
                       counts)
    return curator(codes, None), curator(distinct, weights)


def test_the_curator_answers_the_same_from_distinct_rows_with_counts() -> None:
    rows, compact = _curators(3)
    merge = {"b": np.array([0, 0, 1, 1])}
    answers = []
    for curator in (rows, compact):
        answers.append((
            curator.noisy_count(0.5).values.tolist(),
            curator.measure_marginal(("a", "b"), 0.5).values.tolist(),
            curator.compressed(merge).measure_marginal(("b", "c"), 0.5).values.tolist(),
            curator.select_marginal([("a",), ("a", "c")], [np.zeros(3), np.zeros(6)], 0.5),
            curator.select_by_dependence([("a", ("b",)), ("c", ("a", "b"))], 0.5),
            curator.select_small_database(np.array([[0, 1], [5, 23]]), [(("a", "b"), None)], 0.5),
        ))
    assert answers[0] == answers[1]


def test_weights_must_give_a_count_for_each_code_row() -> None:
    counts = CountRelease(Accountant(Budget(1.0)), SeededNoise(0), Neighbouring())
    with pytest.raises(ValueError, match="weights"):
        Curator(np.zeros((3, 1), dtype=int), Domain(("a",), (2,)), counts, np.array([1, 2]))


def test_run_on_duckdb_writes_the_memory_release_and_says_which_backend_runs(tmp_path: Path, capsys,
                                                                             adult_files: dict[str, Path]) -> None:
    releases = []
    for backend in ("memory", "duckdb"):
        assert main(["run", str(adult_files["csv"]), "-o", str(tmp_path / backend), "--epsilon", "1", "--seed", "2",
                     "--engine", "mst", "--backend", backend]) == 0
        console = capsys.readouterr().err
        assert ("counting backend: duckdb" in console) == (backend == "duckdb")
        release = json.loads((tmp_path / backend / "description.json").read_text())
        release.pop("created")
        releases.append(release)
    assert releases[0] == releases[1]
    assert (tmp_path / "memory" / "synthetic.csv").read_bytes() == (tmp_path / "duckdb" / "synthetic.csv").read_bytes()


def test_the_backend_is_let_go_of_before_the_model_is_fitted(tmp_path: Path, adult_files: dict[str, Path],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from synth import api
    from synth.tables.duckdb_table import DuckDBTable

    events: list[str] = []
    real_close, real_fit = DuckDBTable.close, api.fit

    def close(self: DuckDBTable) -> None:
        events.append("close")
        real_close(self)

    def fit(*args, **kwargs):
        events.append("fit")
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(DuckDBTable, "close", close)
    monkeypatch.setattr(api, "fit", fit)
    api.run(TableSource(str(adult_files["parquet"]), "duckdb"), tmp_path / "out", epsilon=1.0, delta=1e-6,
            engine="mst", seed=2, report_to=None)
    assert events == ["close", "fit"]  # DuckDB's memory is not held while sampling


def test_auto_counts_large_files_on_duckdb_and_small_ones_in_memory(adult_files: dict[str, Path], monkeypatch) -> None:
    assert TableSource(str(adult_files["csv"])).resolved()[0] == "memory"
    monkeypatch.setattr("synth.tables.source.AUTO_BYTES", {"csv": 1000, "parquet": 1000})
    backend, why = TableSource(str(adult_files["parquet"])).resolved()
    assert backend == "duckdb" and "above" in why


def test_backend_errors_say_what_to_do(adult_files: dict[str, Path], monkeypatch) -> None:
    with pytest.raises(InputFileError, match="unknown backend 'sqlite'; choose one of auto, memory, duckdb, spark"):
        TableSource(str(adult_files["csv"]), "sqlite")
    monkeypatch.setitem(__import__("sys").modules, "duckdb", None)  # as if it were not installed
    with pytest.raises(BackendUnavailable, match=r"pip install 'synth\[duckdb\]'"):
        open_table("duckdb", adult_files["csv"])


def test_duckdb_writes_nothing_beside_the_data_and_cleans_up(tmp_path: Path) -> None:
    path = write_csv(pd.DataFrame({"x": ["a", "b", "a"]}), tmp_path / "data.csv")
    source = TableSource(str(path), "duckdb")
    table = source.open(MARKERS)
    assert table is not None and column_counts(table, "x")["texts"] == {"a": 2, "b": 1}
    folder = Path(table._folder.name)
    assert folder.exists()
    source.close()
    assert not folder.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]
