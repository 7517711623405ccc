"""The ``spark`` counting backend: a CSV or Parquet path counted where a Spark session reads it.

Inside the privacy boundary. The rows stay in Spark; what travels to the driver (this process)
is what ``DuckDBTable`` hands over: each column's distinct cells with their row counts, and the
counts of the distinct code rows after encoding. The codes are made here by ``synth.columns.encoding``
for each distinct cell, sent back to Spark as a small table (the cell's rank among the distinct
cells → its code) and joined to the rows, so every row gets the code the in-memory path gives it.
Noise, the accountant and everything after stay in this process; nothing is written.

The session: ``master`` (``--spark-master``), else $SPARK_REMOTE (Spark Connect), else $MASTER,
else ``local[*]``; an existing session is reused. Its time zone is set to UTC, so timestamps
read as the memory path reads them. This process is the driver (client mode): its heap holds what
travels to it. On a cluster master (spark://, yarn, ...) only Spark SQL runs on the executors, so
they need no synth and no Python; a master on this machine's loopback address (127.0.0.1, localhost)
gets a driver that listens there too, so its executors can reach it. The data path must be one every
executor can read: a shared filesystem, HDFS, object storage (s3a://, with the cluster's connector).
A local folder is one Parquet table in part files (as Spark and pyarrow write a dataset); a URL is
CSV when its name says so, else Parquet (a file or a folder). CSV cells are read as text with the
delimiter and header of ``synth.tables.tableio`` (a URL such as hdfs://... is read comma-separated
with Spark's header names), by its rule for odd records: a record whose cells hold nothing but
spaces and tabs is no row, a short record has missing cells, a long one is refused (found from the
raw text Spark keeps of each record whose length differs from the header's: ``_fields``), a CRLF or
CR inside a cell reads as LF. The parsed rows are cached in Spark, so the file is parsed once, when
the table is opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.encoding import EncodingReport
from synth.columns.schema import Schema
from synth.errors import InputFileError, SynthError
from synth.tables.counting import (
    NO_NULL_TEXT,
    BackendUnavailable,
    DistinctCellsTable,
    EncodedRows,
    encode_distinct,
    parquet_dtypes,
)
from synth.tables.tableio import (
    BLANK,
    CSV_SUFFIXES,
    CsvLayout,
    checked_path,
    csv_layout,
    table_format,
    too_many_fields,
)

LOCAL_MASTER = "local[*]"
LOCAL_PARTITIONS = 4
DRIVER_MEMORY = "2g"
RAW = "_synth_record"  # the column that holds the raw text of a record whose length differs from the header's


def spark_session(master: str | None = None):
    """The Spark session to count on (see the module docstring); BackendUnavailable when pyspark
    is missing or Spark cannot be started or reached."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise BackendUnavailable(
            "the spark backend needs pyspark: pip install 'synth[spark]' (and Java 17 for a local session), or "
            "use --backend duckdb."
        ) from None
    target = master or os.environ.get("SPARK_REMOTE") or os.environ.get("MASTER") or LOCAL_MASTER
    builder = SparkSession.builder.appName("synth")
    if target.startswith("sc://"):  # Spark Connect: the server's driver, configured there
        builder = builder.remote(target)
    else:  # this process drives: a heap that holds the counts of distinct code rows on their way to Python
        builder = builder.master(target).config("spark.driver.memory", DRIVER_MEMORY)
    if target.startswith("local"):  # one machine: a few shuffle partitions, not a cluster's 200
        builder = builder.config("spark.sql.shuffle.partitions", str(LOCAL_PARTITIONS))
    elif _loopback(target):  # executors on this machine reach the driver where the master listens
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    try:
        session = (builder.config("spark.sql.session.timeZone", "UTC")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                   .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as error:  # pyspark raises many kinds (no Java, no cluster, a refused connection)
        raise BackendUnavailable(
            f"Spark could not be started or reached at {target} ({type(error).__name__}: "
            f"{_first_line(error)}). Check --spark-master (or $SPARK_REMOTE, "
            "$MASTER), that the cluster is up, and for a local session that Java 17 is installed."
        ) from None
    session.conf.set("spark.sql.session.timeZone", "UTC")  # also on a session that already existed
    return session


class SparkTable(DistinctCellsTable):
    """A CSV or Parquet path counted by Spark (see the module docstring)."""

    backend = "spark"

    def __init__(self, path: str, missing_markers: tuple[str, ...] = ("",), master: str | None = None) -> None:
        super().__init__(missing_markers)
        local = None if "://" in path else _local_table(path)  # checked before Spark starts
        self._spark = spark_session(master)
        try:
            rows, names = self._read(path, local)
        except SynthError:
            raise
        except Exception as error:  # pyspark's AnalysisException, Py4J's errors: a path Spark cannot read
            raise InputFileError(
                f"Spark cannot read {path} ({type(error).__name__}: {_first_line(error)}). Check the path, that every "
                "executor can read it, and for object storage (s3a://, gs://, abfss://) that the cluster has the "
                "storage's connector jars and credentials.") from None
        self._rows = rows
        self._columns = tuple(names)
        self._distinct: dict[str, Any] = {}  # cached Spark DataFrames

    def _read(self, path: str, local: Path | None) -> tuple[Any, list[str]]:
        """The rows (a Spark DataFrame with columns c0, c1, ...) and the column names of ``path``: a URL
        is read as Spark finds it (CSV by its name, else Parquet: a file or a dataset's folder), a local
        file or folder at its absolute file:// URL, the same on every executor whatever the cluster's
        default filesystem."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        if local is None:
            source, form = path, "csv" if path.lower().rstrip("/").endswith(CSV_SUFFIXES) else "parquet"
        else:
            source, form = f"file://{local.resolve()}", "parquet" if local.is_dir() else table_format(local)
        if form == "parquet":
            rows = self._spark.read.parquet(source)
            if local is not None:
                self._dtypes = parquet_dtypes(str(_first_part(local) if local.is_dir() else local))
            return rows.toDF(*[f"c{j}" for j in range(len(rows.columns))]), rows.columns
        reader = self._spark.read.options(header=True, quote='"', escape='"', multiLine=True, nullValue=NO_NULL_TEXT,
                                          emptyValue="", encoding="UTF-8", columnNameOfCorruptRecord=RAW)
        layout = (csv_layout(local) if local is not None
                  else CsvLayout(",", reader.options(inferSchema=False).csv(source).columns, 0))
        keys = [f"c{j}" for j in range(len(layout.names))]
        parsed = reader.options(sep=layout.delimiter).schema(
            StructType([StructField(key, StringType()) for key in keys] + [StructField(RAW, StringType())])).csv(source)
        long = F.coalesce(_fields(F.col(RAW), layout.delimiter) > len(keys), F.lit(False))
        blank = F.lit(True)
        for key in keys:
            blank = blank & F.coalesce(F.col(key), F.lit("")).rlike(f"\\A[{BLANK}]*\\z")
        rows = parsed.where(~blank | long).select(
            *[_line_breaks_as_lf(F.col(key)).alias(key) for key in keys],
            long.alias("long")).cache()  # parsed once, here, not once per count
        if rows.where("long").limit(1).count():
            rows.unpersist()
            raise too_many_fields(path, layout)
        return rows.drop("long"), list(layout.names)

    @property
    def columns(self) -> tuple[str, ...]:
        return self._columns

    def _key(self, name: str) -> str:
        return f"c{self._columns.index(name)}"

    def row_count(self) -> int:
        return int(self._rows.count())

    def _distinct_table(self, name: str):
        """``name``'s distinct cells, cached in Spark: value v, rows n, and id (its rank by value)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        table = self._distinct.get(name)
        if table is None:
            counted = self._rows.groupBy(F.col(self._key(name)).alias("v")).agg(F.count(F.lit(1)).alias("n"))
            table = counted.withColumn("id", F.row_number().over(Window.orderBy(F.col("v").asc_nulls_first())) - 1)
            table = table.cache()
            self._distinct[name] = table
        return table

    def _distinct_cells(self, name: str) -> tuple[pd.Series, np.ndarray]:
        fetched = self._distinct_table(name).orderBy("id").select("v", "n").toPandas()
        return fetched["v"], fetched["n"].to_numpy()

    def encode(self, schema: Schema) -> tuple[EncodedRows, EncodingReport]:
        from pyspark.sql import functions as F

        codes, report = encode_distinct(schema, self._columns, self.column_cells)
        rows = self._rows
        for j, (column, column_codes) in enumerate(zip(schema.columns, codes, strict=True)):
            mapping = self._spark.createDataFrame(pd.DataFrame({  # typed: a table of no rows has no cells
                "id": np.arange(len(column_codes), dtype=np.int64), "code": column_codes.astype(np.int32)}),
                schema="id long, code int")
            coded = (self._distinct_table(column.name).join(mapping, "id")
                     .select(F.col("v").alias(f"v{j}"), F.col("code").alias(f"code{j}")))
            rows = rows.join(coded, rows[self._key(column.name)].eqNullSafe(coded[f"v{j}"]))
        counted = rows.groupBy(*[f"code{j}" for j in range(len(schema.columns))]).count().toPandas()
        matrix = np.empty((len(counted), len(schema.columns)), dtype=np.int32, order="F")
        for j in range(len(schema.columns)):
            matrix[:, j] = counted[f"code{j}"].to_numpy()
        return EncodedRows(matrix, counted["count"].to_numpy(dtype=np.int64)), report

    def close(self) -> None:
        self._rows.unpersist()
        for table in self._distinct.values():
            table.unpersist()
        self._distinct.clear()


def _loopback(master: str) -> bool:
    """Whether a master URL (spark://host:port, also a list of hosts for standby masters) names only
    this machine's loopback address."""
    hosts = master.partition("://")[2].split(",")
    return bool(master.partition("://")[2]) and all(
        h.rpartition(":")[0] in ("127.0.0.1", "localhost", "[::1]") for h in hosts)


def _local_table(path: str) -> Path:
    """A local table: a file (``checked_path``), or a folder of Parquet part files; InputFileError otherwise."""
    folder = Path(path)
    if not folder.is_dir():
        return checked_path(path)
    _first_part(folder)
    return folder


def _first_part(folder: Path) -> Path:
    """The first Parquet part file of a folder (Spark skips names starting with _ or .); InputFileError if none."""
    parts = sorted(p for p in folder.rglob("*.parquet") if p.is_file() and p.stat().st_size
                   and not any(n.startswith(("_", ".")) for n in p.relative_to(folder).parts))
    if not parts:
        raise InputFileError(
            f"{folder} is a folder without Parquet part files; the spark backend reads a folder as one Parquet "
            "table in parts (part-*.parquet, as Spark or pyarrow write it). Pass a CSV or Parquet file, or such a folder.")
    return parts[0]


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else "no detail"


def _fields(record: Any, delimiter: str) -> Any:
    """Spark's count of the fields in a raw CSV record: its delimiters outside quoted parts, plus one."""
    from pyspark.sql import functions as F

    bare = F.regexp_replace(record, '"[^"]*"', "")
    return F.length(bare) - F.length(F.replace(bare, F.lit(delimiter), F.lit(""))) + 1


def _line_breaks_as_lf(cell: Any) -> Any:
    """A text column with each CRLF or CR read as LF."""
    from pyspark.sql import functions as F

    return F.replace(F.replace(cell, F.lit("\r\n"), F.lit("\n")), F.lit("\r"), F.lit("\n"))
