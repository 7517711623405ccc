"""No decision reads an exact count (issue 29, item 2): a table of no rows and its neighbour of one
row go the same way, decided from noisy values only; PrivBayes's mutual-information scores
decide nothing from the row count."""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synth.api
from synth.cli import main
from synth.columns.domain import Domain
from synth.columns.kinds import DomainSource
from synth.domains.drafting import draft_profile
from synth.domains.profile import Profile, save_profile
from synth.engines import make_engine
from synth.errors import DiscoveryError
from synth.privacy import Accountant, Budget, SeededNoise
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.measurement import table_cells
from synth.privacy.neighbours import Neighbouring
from synth.privacy.selection_scores import Dependence
from synth.progress import SILENT
from synth.tables.source import read_table
from synth.tables.tableio import parquet_available, read_table_chunks
from tests.conftest import mixed_table
from tests.test_engines import chain_data


def _public_profile(df: pd.DataFrame, engine: str, seed: int = 3) -> Profile:
    """``df``'s drafted profile with every domain marked public (as a user who knows them would)."""
    drafted = draft_profile(df)
    assert drafted.schema is not None
    schema = replace(drafted.schema, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in drafted.schema.columns))
    return replace(drafted, schema=schema, engine=engine, seed=seed)


def _neighbours(tmp_path: Path, form: str) -> tuple[object, object]:
    """The first row of ``mixed_table`` and no row of it (its header only), as ``form`` gives them."""
    df = mixed_table(200)
    one, zero = df.iloc[:1], df.iloc[:0]
    if form == "frame":
        return zero, one
    for name, part in (("zero", zero), ("one", one)):
        if form == "csv":
            part.to_csv(tmp_path / f"{name}.csv", index=False)
        else:
            part.astype(str).to_parquet(tmp_path / f"{name}.parquet")
    suffix = "csv" if form == "csv" else "parquet"
    return tmp_path / f"zero.{suffix}", tmp_path / f"one.{suffix}"


def _ledger(description) -> list[tuple[str, str]]:
    return [(e.mechanism, e.query) for e in description.ledger]


@pytest.mark.parametrize("form", ["frame", "csv", pytest.param("parquet", marks=pytest.mark.skipif(
    not parquet_available(), reason="needs pyarrow"))])
@pytest.mark.parametrize("engine", ["independent", "privbayes", "aim"])
def test_no_rows_and_one_row_with_a_public_profile_are_released_alike(tmp_path, form, engine):
    zero, one = _neighbours(tmp_path, form)
    profile = _public_profile(mixed_table(200), engine)
    results = [synth.api.run(data, tmp_path / name, profile, report_to=None)
               for name, data in (("out0", zero), ("out1", one))]
    for result in results:
        assert result.rows >= 1 and list(result.synthetic.columns) == list(mixed_table(1).columns)
        assert result.description.end_to_end_dp
    assert _ledger(results[0].description) == _ledger(results[1].description)
    assert results[0].description.privacy["spent"] == results[1].description.privacy["spent"]


def test_no_rows_and_one_row_through_the_cli_exit_alike(tmp_path, capsys):
    zero, one = _neighbours(tmp_path, "csv")
    save_profile(_public_profile(mixed_table(200), "mst"), tmp_path / "profile.toml")
    for name, data in (("zero", zero), ("one", one)):
        assert main(["run", str(data), "--profile", str(tmp_path / "profile.toml"), "-o", str(tmp_path / name),
                     "-q"]) == 0
        description = tmp_path / f"{name}.json"
        assert main(["describe", str(data), "--profile", str(tmp_path / "profile.toml"), "-o", str(description),
                     "-q"]) == 0
        assert main(["generate", str(description), "--rows", "50", "-o", str(tmp_path / f"{name}_synthetic.csv"),
                     "-q"]) == 0
        assert len(pd.read_csv(tmp_path / f"{name}_synthetic.csv")) == 50
    capsys.readouterr()


@pytest.mark.parametrize("seed", [1, 2])
def test_discovery_on_no_rows_refuses_as_on_one_row(tmp_path, seed):
    zero, one = _neighbours(tmp_path, "frame")
    outcomes = []
    for data in (zero, one):
        with pytest.raises(DiscoveryError) as caught:
            synth.api.describe(data, epsilon=1.0, seed=seed, report_to=None)
        outcomes.append(str(caught.value).split("This run had already spent")[1])
    assert outcomes[0] == outcomes[1]  # the same charges, the same refusal: from noisy counts only


def test_a_header_without_rows_is_read_as_a_table_of_no_rows(tmp_path):
    (tmp_path / "head.csv").write_text("a,b\n")
    assert read_table(tmp_path / "head.csv").shape == (0, 2)
    chunks = list(read_table_chunks(tmp_path / "head.csv", 10))
    assert len(chunks) == 1 and list(chunks[0].columns) == ["a", "b"] and chunks[0].empty


# --- PrivBayes's mutual-information scores and max_rows ------------------------------------------

ADD_REMOVE = Neighbouring("add-remove")


def _mi(codes: np.ndarray, domain: Domain, attrs: tuple[str, ...], max_rows: int) -> float:
    """The mi score of one pair on ``codes`` (exact counts), as the curator computes it."""
    def exact(columns: tuple[str, ...], groups: dict) -> np.ndarray:
        flat, sizes = table_cells(codes, domain, columns, groups)
        return np.bincount(flat, minlength=math.prod(sizes))

    return float(Dependence("mi", [attrs], {}, max_rows, domain).values(exact, len(codes))[0])


@pytest.mark.parametrize("rows_read", [0, 299, 300, 10**12])
def test_mi_decides_nothing_from_the_exact_row_count(rows_read):
    # 300 rows above max_rows = 299 were refused after count(*) was spent. Now the selection goes
    # on and charges the same whatever the exact count reads (mutation: the count replaced).
    codes, domain = chain_data(300)
    curator = Curator(codes, domain, CountRelease(Accountant(Budget(1.0)), SeededNoise(0), ADD_REMOVE))
    curator._rows = rows_read  # what a decision on the exact count would read
    curator.select_by_dependence([("a", ("b",)), ("c", ("b",))], 0.5, max_rows=299)
    (entry,) = curator.accountant.ledger
    assert entry.sensitivity == pytest.approx(math.log(300) + 1 + math.log(4))


def test_privbayes_mi_releases_a_table_above_max_rows():
    codes, domain = chain_data(300)
    curator = Curator(codes, domain, CountRelease(Accountant(Budget(50.0)), SeededNoise(0), ADD_REMOVE))
    result = make_engine("privbayes", {"max_rows": 100, "score": "mi"}).describe(curator, SILENT)
    assert len(result.output.network) == len(domain.names)


def test_mi_sensitivity_holds_for_tables_on_both_sides_of_max_rows():
    rng = np.random.default_rng(4)
    domain, bound = Domain(("x", "p"), (4, 3)), 20
    sensitivity = Dependence("mi", [("x", "p")], {}, bound, domain).sensitivity(ADD_REMOVE, 0)
    assert sensitivity == pytest.approx(math.log(21) + 1 + math.log(3))
    worst = 0.0
    for trial in range(400):
        n = int(rng.integers(bound - 3, 3 * bound))
        codes = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 3, n)])
        codes[:, 0] = np.where(rng.random(n) < 0.6, codes[:, 1], codes[:, 0])
        row = np.array([3, 2]) if trial % 2 else np.array([rng.integers(0, 4), rng.integers(0, 3)])
        change = abs(_mi(np.vstack([codes, row]), domain, ("x", "p"), bound) - _mi(codes, domain, ("x", "p"), bound))
        assert change < sensitivity
        worst = max(worst, change / sensitivity)
    assert worst > 0.3  # the tables reach a good part of the bound: the test could see a wrong one


def test_scaled_mi_needs_the_information_term():
    # n = max_rows = 10,000: x0 and p0 hold 4,500 rows each, never together, and 1,000 rows pair
    # values seen once. Adding the row (x0, p0) moves the scaled score by more than log(n + 1) + 1,
    # the bound of unscaled n·I, and less than the sensitivity with L = log(1,002).
    values = 1002
    x = np.concatenate([np.zeros(4500), np.ones(4500), np.arange(2, values)]).astype(np.int64)
    p = np.concatenate([np.ones(4500), np.zeros(4500), np.arange(2, values)]).astype(np.int64)
    codes, domain = np.column_stack([x, p]), Domain(("x", "p"), (values, values))
    n = len(codes)
    change = abs(_mi(np.vstack([codes, [0, 0]]), domain, ("x", "p"), n) - _mi(codes, domain, ("x", "p"), n))
    assert math.log(n + 1) + 1 < change < Dependence("mi", [("x", "p")], {}, n, domain).sensitivity(ADD_REMOVE, 0)


@pytest.mark.parametrize("backend", ["duckdb", pytest.param("spark", marks=pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="Spark needs Java"))])
def test_no_rows_and_one_row_are_released_alike_on_every_backend(tmp_path, backend):
    # Spark's code table of a column with no cells had no schema to infer, and the run failed on
    # zero rows only: the neighbours were told apart by the error.
    pytest.importorskip(backend if backend == "duckdb" else "pyspark")
    from synth.tables.source import TableSource

    zero, one = _neighbours(tmp_path, "csv")
    profile = _public_profile(mixed_table(200), "independent")
    descriptions = []
    for path in (zero, one):
        source = TableSource(str(path), backend, "local[2]" if backend == "spark" else None)
        try:
            descriptions.append(synth.api.describe(source, profile, report_to=None))
        finally:
            source.close()
    assert _ledger(descriptions[0]) == _ledger(descriptions[1])
