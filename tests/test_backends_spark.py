"""The spark backend (local mode) is an exact twin of the memory path: the same counts for odd
CSV and typed Parquet tables, the same Description under a seed. Skipped only where Java is absent
(one Spark session serves the whole test run)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from backend_cases import (
    MARKERS,
    SPARK_MASTER,
    assert_twins,
    open_table,
    release_of,
    text_tables,
    typed_tables,
    write_adult,
    write_csv,
)
from hypothesis import HealthCheck, given, settings

from synth.tables.counting import BackendUnavailable
from synth.tables.source import read_table
from synth.tables.spark_table import spark_session

pytest.importorskip("pyspark")
pytestmark = pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                                reason="Spark needs Java")
SPARK_ODD = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def adult_files(tmp_path_factory) -> dict[str, Path]:
    spark_session(SPARK_MASTER)  # started once here, so a slow start is not charged to a hypothesis example
    return write_adult(tmp_path_factory.mktemp("adult"))


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_spark_gives_the_memory_description_under_a_seed(form: str, adult_files: dict[str, Path]) -> None:
    path = adult_files[form]
    table = open_table("spark", path)
    try:
        assert release_of(table, "mst") == release_of(read_table(path, MARKERS), "mst")
    finally:
        table.close()


@SPARK_ODD
@given(df=text_tables())
def test_spark_csv_counts_are_exact(df: pd.DataFrame, adult_files: dict[str, Path], tmp_path_factory) -> None:
    assert_twins(write_csv(df, tmp_path_factory.mktemp("csv") / "odd.csv"), "spark")


@SPARK_ODD
@given(df=typed_tables())
def test_spark_typed_parquet_counts_are_exact(df: pd.DataFrame, adult_files: dict[str, Path],
                                              tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("parquet") / "typed.parquet"
    df.to_parquet(path)
    assert_twins(path, "spark")


def test_an_unreachable_spark_connect_server_is_named(adult_files: dict[str, Path]) -> None:
    with pytest.raises(BackendUnavailable, match=r"sc://127\.0\.0\.1:1"):
        spark_session("sc://127.0.0.1:1")
