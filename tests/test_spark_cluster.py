"""The spark backend on a real standalone cluster: a master and two workers, each its own OS process
(``tests/spark_cluster.py``), count a Parquet folder of several part files for ``synth run`` typed as
a user types it (with no Python for the executors), and the release equals the memory path's on the
same rows under one seed: the Description byte for byte but its creation time, and the synthetic
table byte for byte. The tasks ran on both workers' executors, and no JVM outlives the test.

The data folder is a local path: the workers run on this machine, so they read it where the driver
does (on a real cluster it would be a shared filesystem, HDFS or object storage).

Skipped only where pyspark or Java is missing, and then failed instead under CI or with
SYNTH_REQUIRE_SPARK_CLUSTER=1. The cluster test takes one to two minutes on 2 cores (three JVMs,
then the run's driver and two executors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import spark_cluster
from backend_cases import MARKERS, SPARK_MASTER, column_counts

from synth.errors import InputFileError
from synth.tables.counting import MemoryTable
from synth.tables.tableio import mark_missing

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "synth" / "data" / "adult.csv.gz"
ROWS, PARTS, SEED = 3000, 4, 11
PROFILE = """
[release]
epsilon = 1.0
delta = 1e-9
engine = "mst"

[columns.age]
kind = "integer"
lower = 17
upper = 90
bins = 15
missing = true
source = "public"

[columns.education]
kind = "categorical"
categories = ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
              "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"]
missing = false
source = "public"

[columns.race]
kind = "categorical"
categories = ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"]
missing = false
source = "public"

[columns.sex]
kind = "categorical"
categories = ["Female", "Male"]
missing = false
source = "public"

[columns.hr_per_week]
kind = "integer"
lower = 1
upper = 99
bins = 10
missing = false
source = "public"
"""


def cluster_home() -> Path:
    """The installed pyspark's folder; skips the test when pyspark or Java is missing, or fails it
    where the cluster test is required (``spark_cluster.cluster_required``)."""
    found = spark_cluster.spark_home()
    if isinstance(found, str):
        if spark_cluster.cluster_required():
            pytest.fail(f"{found}; it is required here (CI or {spark_cluster.REQUIRE}=1 is set).", pytrace=False)
        pytest.skip(found)
    return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[spark_cluster.StandaloneCluster]:
    running = spark_cluster.StandaloneCluster(cluster_home(), tmp_path_factory.mktemp("spark-cluster"))
    try:
        running.start()
        yield running
    finally:
        left = running.stop()
        assert not left, f"Spark processes outlived the cluster (process groups {left})"


def adult_rows() -> pd.DataFrame:
    """A slice of the demo table, typed as Parquet keeps it: a nullable integer column with missing
    ages (its pandas dtype travels in each part file), an integer column, and text."""
    df = pd.read_csv(ADULT, usecols=["age", "education", "race", "sex", "hr_per_week"]).iloc[:ROWS]
    df["age"] = df["age"].astype("Int64")
    df.loc[np.arange(ROWS) % 13 == 0, "age"] = pd.NA
    return df


def run_synth(out: Path, data: Path, profile: Path, *backend: str) -> subprocess.CompletedProcess[str]:
    """``python -m synth run DATA --profile P --seed S -o OUT BACKEND...`` in a fresh process, whose
    executors would find no Python (synth runs only Spark SQL there)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MASTER", "SPARK_REMOTE")}
    env["PYSPARK_PYTHON"] = str(out.parent / "no-python-on-executors")
    command = [sys.executable, "-m", "synth", "run", str(data), *backend, "--profile", str(profile),
               "--seed", str(SEED), "-o", str(out), "-q"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr[-3000:]}"
    return done


def without_created(description: Path) -> bytes:
    """The Description file's bytes with its one line that names when it was made taken out."""
    lines = description.read_bytes().splitlines(keepends=True)
    created = [line for line in lines if line.lstrip().startswith(b'"created":')]
    assert len(created) == 1
    return b"".join(line for line in lines if line not in created)


def test_a_standalone_cluster_gives_the_memory_release_on_a_parquet_folder(
        cluster: spark_cluster.StandaloneCluster, tmp_path: Path) -> None:
    rows = adult_rows()
    folder = write_parts(rows, tmp_path / "adult")  # one table in part files, as Spark or pyarrow write a dataset
    whole = tmp_path / "adult.parquet"  # the same rows in one file, for the memory path
    rows.to_parquet(whole, index=False)
    profile = tmp_path / "profile.toml"
    profile.write_text(PROFILE)

    run_synth(tmp_path / "cluster", folder, profile, "--backend", "spark", "--spark-master", cluster.master_url)
    run_synth(tmp_path / "memory", whole, profile, "--backend", "memory")

    spark_release, memory_release = tmp_path / "cluster" / "description.json", tmp_path / "memory" / "description.json"
    differing = {k for k, v in json.loads(spark_release.read_text()).items()
                 if json.loads(memory_release.read_text()).get(k) != v}
    assert differing == {"created"}
    assert without_created(spark_release) == without_created(memory_release)
    assert (tmp_path / "cluster" / "synthetic.csv").read_bytes() == (tmp_path / "memory" / "synthetic.csv").read_bytes()

    apps = [app for app in cluster.state()["completedapps"] if app["name"] == "synth"]
    assert len(apps) == 1 and apps[0]["cores"] == 2, apps  # the run's application, with both workers' cores
    for i in range(len(cluster.worker_web_ports)):  # each worker ran an executor of it, and tasks on that executor
        executors = [e for e in cluster.worker_state(i)["finishedexecutors"] if e["appid"] == apps[0]["id"]]
        assert len(executors) == 1, (i, executors)
        log = cluster.worker_dir(i) / apps[0]["id"] / str(executors[0]["id"]) / "stderr"
        assert "Running task" in log.read_text(errors="replace"), f"worker {i}'s executor ran no task:\n{cluster.logs()}"


def write_parts(rows: pd.DataFrame, folder: Path) -> Path:
    """``rows`` as a Parquet dataset: ``PARTS`` part files and Spark's empty _SUCCESS marker."""
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(rows)), PARTS)):
        rows.iloc[part].to_parquet(folder / f"part-{i:05d}.parquet", index=False)
    (folder / "_SUCCESS").write_bytes(b"")  # not a part
    return folder


def test_a_folder_url_reads_as_one_parquet_table_and_an_unreadable_url_is_named(tmp_path: Path) -> None:
    cluster_home()
    from synth.tables.spark_table import SparkTable

    rows = adult_rows()
    url = f"file://{write_parts(rows, tmp_path / 'adult')}"  # a URL, as an object store's path is given
    table = SparkTable(url, MARKERS, SPARK_MASTER)
    try:
        memory = MemoryTable(mark_missing(rows, MARKERS))
        assert table.columns == memory.columns
        for name in memory.columns:
            assert column_counts(table, name) == column_counts(memory, name), name
    finally:
        table.close()
    with pytest.raises(InputFileError, match=r"Spark cannot read nosuchstore://bucket/claims .*connector jars"):
        SparkTable("nosuchstore://bucket/claims", MARKERS, SPARK_MASTER)


def test_a_folder_without_parquet_parts_is_refused_before_spark_starts(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from synth.tables.spark_table import SparkTable

    (tmp_path / "notes.csv").write_text("a\n1\n")
    (tmp_path / "_hidden").mkdir()
    (tmp_path / "_hidden" / "part-0.parquet").write_bytes(b"PAR1")  # Spark skips folders named _...
    with pytest.raises(InputFileError, match="folder without Parquet part files"):
        SparkTable(str(tmp_path))


def test_a_missing_java_skips_the_cluster_test_and_fails_it_where_required(monkeypatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(spark_cluster.REQUIRE, raising=False)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(spark_cluster.shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match="Java 17"):
        cluster_home()
    for variable, value in (("CI", "true"), (spark_cluster.REQUIRE, "1")):
        with monkeypatch.context() as env:
            env.setenv(variable, value)
            with pytest.raises(pytest.fail.Exception, match="Java 17"):
                cluster_home()
    monkeypatch.setenv("CI", "false")  # set, but to "no": a local run still skips
    with pytest.raises(pytest.skip.Exception):
        cluster_home()


@pytest.mark.parametrize("master,loopback", [
    ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True), ("spark://127.0.0.1:7077,localhost:7078", True),
    ("spark://10.0.0.5:7077", False), ("spark://127.0.0.1:7077,10.0.0.5:7077", False), ("yarn", False),
    ("spark://", False), ("k8s://https://127.0.0.1:6443", False),
])
def test_only_a_master_on_the_loopback_address_gets_a_loopback_driver(master: str, loopback: bool) -> None:
    pytest.importorskip("pyspark")
    from synth.tables.spark_table import _loopback

    assert _loopback(master) is loopback
