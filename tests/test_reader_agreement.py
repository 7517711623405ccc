"""Every CSV reader reads the same rows and cells: memory (``read_table``, and ``read_table_chunks``
with two rows a chunk), DuckDB and Spark, on a corpus of odd lines (quoted blanks, lines of spaces
or tabs, empty lines, short and long rows, trailing delimiters, a byte-order mark, CRLF, line breaks
inside quotes, a last line without a line break, gzip, tabs). ``--backend auto`` picks a reader by
the file's size, so a reader that kept a row another drops would let one added row change how many
rows the release counts; a seeded release is therefore also the same on memory and DuckDB.

The rule (README, "Reading CSV"): a record whose cells hold nothing but spaces and tabs (or nothing)
is no row, however it is quoted; a record with fewer fields than the header has missing cells for
the rest; one with more is refused (``RowFieldsError``); a line break inside quotes, CRLF or CR,
reads as LF. Spark is skipped only where pyspark or Java is absent (one session serves the run)."""

from __future__ import annotations

import collections
import gzip
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from backend_cases import SPARK_MASTER, release_of

from synth.errors import RowFieldsError
from synth.tables.counting import CountingTable
from synth.tables.source import TableSource, read_table
from synth.tables.tableio import read_table_chunks

MARKERS = ("",)
Row = tuple[str | None, ...]
ONE_TWO_THREE: list[Row] = [("1", "2", "3"), ("4", "5", "6")]

# name: (file name, text, the rows read: None for a missing cell)
CORPUS: dict[str, tuple[str, str, list[Row]]] = {
    "quoted blank first cell, others empty": ("q.csv", 'a,b,c\n1,2,3\n" ",,\n"",,\n"\t",,\n4,5,6\n', ONE_TWO_THREE),
    "quoted blank alone on its line": ("q.csv", 'a,b,c\n1,2,3\n" "\n""\n4,5,6\n', ONE_TWO_THREE),
    "lines of spaces and tabs": ("w.csv", "a,b,c\n1,2,3\n   \n\t\n \t \n4,5,6\n", ONE_TWO_THREE),
    "empty lines": ("e.csv", "a,b,c\n\n1,2,3\n\n\n4,5,6\n\n", ONE_TWO_THREE),
    "delimiters and blanks only": ("d.csv", 'a,b,c\n1,2,3\n,,\n , ,\t\n" ","",\n4,5,6\n', ONE_TWO_THREE),
    "a blank cell in a row that holds something": (
        "k.csv", 'a,b,c\n" ",x,\n,,0\n"\n",,\n', [(None, "x", None), (None, None, "0"), (None, None, None)]),
    "short rows": ("s.csv", 'a,b,c\n7\n8,9\n"",5\n1,2,3\n',
                   [("7", None, None), ("8", "9", None), (None, "5", None), ("1", "2", "3")]),
    "one column": ("o.csv", 'a\n1\n""\n" "\n   \n\n2\n', [("1",), ("2",)]),
    "spaces around cells are kept": ("p.csv", "a,b\n 1 , 2 \n1,2\n", [(" 1 ", " 2 "), ("1", "2")]),
    "byte-order mark and CRLF": ("b.csv", '\ufeffa,b\r\n1,2\r\n\r\n  \r\n"x\r\ny",3\r\n', [("1", "2"), ("x\ny", "3")]),
    "CRLF and CR inside quotes in an LF file": ("c.csv", 'a,b\n"x\r\ny",1\n"p\nq",2\n"r\rs",3\n',
                                                [("x\ny", "1"), ("p\nq", "2"), ("r\ns", "3")]),
    "line breaks inside quotes": ("n.csv", 'a,b\n"x\ny",2\n"a,\n\nb",4\n"\n",\n',
                                  [("x\ny", "2"), ("a,\n\nb", "4"), (None, None)]),
    "CR line endings": ("r.csv", 'a,b\r1,2\r\r  \r" ",\r"x\ry",3', [("1", "2"), ("x\ny", "3")]),
    "last line without a line break": ("l.csv", 'a,b\n1,2\n3,"4"', [("1", "2"), ("3", "4")]),
    "empty lines before the header": ("h.csv", "\n\na,b\n1,2\n", [("1", "2")]),
    "gzip with odd lines": ("g.csv.gz", '\ufeffa,b\r\n1,2\r\n" ",\r\n\r\n"x\r\ny",3', [("1", "2"), ("x\ny", "3")]),
    "tab-separated with blank lines": ("t.tsv", 'a\tb\tc\n1\t2\t3\n\t\t\n \n"\t"\t\t\n4\t5\t6\n', ONE_TWO_THREE),
}
TOO_LONG = {
    "a long row": "a,b,c\n1,2,3\n7,8,9,10\n4,5,6\n",
    "a long first row": "a,b,c\n7,8,9,10\n1,2,3\n",
    "a trailing delimiter on every row": "a,b,c\n1,2,3,\n4,5,6,\n",
    "a long row of blanks": "a,b\n1,2\n,,\n",
}
SECRET = "7,8,9,10"  # the long rows' cells, which no message may quote


def write(folder: Path, name: str, text: str) -> Path:
    """``text`` as the file ``name`` (UTF-8, line endings as given; gzip for .gz)."""
    path = folder / name
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def spark_ready() -> bool:
    """Whether a local Spark session can run here (pyspark installed, and Java)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


READERS = ["memory", "chunks", "duckdb",
           pytest.param("spark", marks=pytest.mark.skipif(not spark_ready(), reason="Spark needs pyspark and Java"))]


def opened(reader: str, path: Path) -> CountingTable:
    table = TableSource(str(path), reader, SPARK_MASTER if reader == "spark" else None).open(MARKERS)
    assert table is not None and table.backend == reader
    return table


def cell(value: object) -> str | None:
    return None if pd.isna(value) else str(value)


def frame_tally(df: pd.DataFrame) -> tuple[int, dict[str, collections.Counter]]:
    return len(df), {name: collections.Counter(map(cell, df[name])) for name in df.columns}


def read_by(reader: str, path: Path) -> tuple[int, dict[str, collections.Counter]]:
    """The row count and each column's cells with their counts, as ``reader`` reads ``path``."""
    if reader == "memory":
        return frame_tally(read_table(path, MARKERS))
    if reader == "chunks":
        return frame_tally(pd.concat(list(read_table_chunks(path, 2, MARKERS)), ignore_index=True))
    table = opened(reader, path)
    try:
        tally = {}
        for name in table.columns:
            cells = table.column_cells(name)
            counter: collections.Counter = collections.Counter()
            for value, weight in zip(cells.values, cells.weights if cells.weights is not None else [1] * cells.rows):
                counter[cell(value)] += int(weight)
            tally[name] = counter
        return table.row_count(), tally
    finally:
        table.close()


def expected_tally(text: str, rows: list[Row]) -> tuple[int, dict[str, collections.Counter]]:
    header = text.lstrip("\ufeff\r\n").splitlines()[0]
    names = header.split("\t" if "\t" in header else ",")
    return len(rows), {name: collections.Counter(row[j] for row in rows) for j, name in enumerate(names)}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(CORPUS))
def test_every_reader_reads_the_same_rows_and_cells(case: str, reader: str, tmp_path: Path) -> None:
    name, text, rows = CORPUS[case]
    assert read_by(reader, write(tmp_path, name, text)) == expected_tally(text, rows)


def attempt(reader: str, path: Path) -> Callable[[], object]:
    if reader == "memory":
        return lambda: read_table(path, MARKERS)
    if reader == "chunks":
        return lambda: list(read_table_chunks(path, 2, MARKERS))
    return lambda: read_by(reader, path)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(TOO_LONG))
def test_every_reader_refuses_a_row_longer_than_the_header(case: str, reader: str, tmp_path: Path) -> None:
    with pytest.raises(RowFieldsError, match="more fields than the header") as refused:
        attempt(reader, write(tmp_path, "long.csv", TOO_LONG[case]))()
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize("reader", READERS)
def test_a_file_of_blank_rows_has_no_rows_on_every_reader(reader: str, tmp_path: Path) -> None:
    # a table of no rows, with its header's columns: no reader refuses it (the exit would tell 0 rows from 1)
    path = write(tmp_path, "blank.csv", 'a,b\n" ",\n,\n""\n  \n')
    assert read_by(reader, path) == (0, {"a": collections.Counter(), "b": collections.Counter()})


def odd_table(extra: str = "") -> str:
    """300 rows of two related columns with odd lines among them (quoted blanks, spaces, short rows)."""
    lines = ["city,size,kind"]
    for i in range(300):
        lines.append(f"{['Lyon', 'Oslo', 'Porto'][i % 3]},{i % 7},{'ab'[i % 2]}")
        if i % 40 == 0:
            lines += ['" ",,', '""', "   ", "", f"{['Lyon', 'Oslo'][i % 2]}", '"Lyon\r\nnord",3,a']
    return "\r\n".join(lines) + extra


@pytest.mark.parametrize("backend", ["duckdb", "auto"])
def test_a_seeded_release_of_an_odd_file_is_the_same_on_memory_and_duckdb(backend: str, tmp_path: Path,
                                                                          monkeypatch) -> None:
    """Two neighbouring files on either side of auto's size threshold: the larger is counted on
    DuckDB, the smaller in memory, and each gives the release memory gives it."""
    monkeypatch.setattr("synth.tables.source.AUTO_BYTES", {"csv": len(odd_table().encode()), "parquet": 1})
    smaller = write(tmp_path, "smaller.csv", odd_table())
    larger = write(tmp_path, "larger.csv", odd_table('\r\n" ",,\r\nOslo,3,b'))
    assert TableSource(str(smaller)).resolved()[0] == "memory" and TableSource(str(larger)).resolved()[0] == "duckdb"
    for path in (smaller, larger):
        source = TableSource(str(path), backend)
        try:
            assert release_of(read_table(source, MARKERS), "mst") == release_of(read_table(path, MARKERS), "mst")
        finally:
            source.close()
