"""Reading and writing tables: CSV (plain or gzip) and Parquet.

``read_frame`` reads every CSV cell as text, exactly as written (no type guessing, so "007"
stays "007" and a code list of "0", "1" matches its categories), and turns empty cells and the
given missing-value markers into NA. Typing is left to ``schema.encode`` and ``schema.infer_kinds``,
which read text and typed columns alike. The delimiter (comma, semicolon, tab or bar) is detected
from the header line; UTF-8 with or without a byte-order mark is accepted. Parquet keeps its own
column types (it needs pyarrow, the ``parquet`` extra).

Which records of a CSV file are rows is one rule, kept alike by every reader (pandas here, in one
piece or in chunks; DuckDB and Spark in ``synth.tables``), because ``--backend auto`` picks the
reader by the file's size: the header is the first non-empty line; a record whose cells hold nothing
but spaces and tabs, or nothing (``BLANK``: empty lines, lines of blanks, ``,,``, ``" ",,``, ``""``),
is no row, however it is quoted; a record with fewer fields than the header has empty cells for the
rest; one with more (a trailing delimiter counts) is refused (``RowFieldsError``); a line break
inside a quoted cell, CRLF or CR, reads as LF (``kept_rows``). LF, CRLF and CR line endings, a
last line without a line break, and gzip are read alike.

``write_table`` writes atomically (temporary file in the same folder, then rename) and refuses to
replace a file unless ``force`` is given; ``write_chunks`` writes a table given in pieces to one or
more files at once, holding one piece at a time (``TableSink``: one such file).

Errors never quote a cell of the data.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import warnings
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pandas as pd

from synth.errors import DataError, InputFileError, OutputError, RowFieldsError
from synth.files import atomic_write, check_writable

DELIMITERS = (",", ";", "\t", "|")
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".txt.gz")
PARQUET_SUFFIXES = (".parquet",)
_HEADER_CHARS = 1 << 16  # how much text to look at for the header line
BLANK = " \t"  # a CSV record whose cells hold nothing but these (or nothing) is no row


def table_format(path: Path, error: type[Exception] = InputFileError) -> str:
    """"csv" or "parquet", from the file name; ``error`` when it is neither."""
    name = path.name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    raise error(
        f"{path}: unknown file type; synth reads and writes {', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}. "
        "Rename the file or convert it to CSV."
    )


def _open_text(path: Path) -> IO[str]:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _header(path: Path) -> tuple[str, int]:
    """The header record of a CSV file (its first non-empty line, or lines when a quoted name holds a
    line break) and how many empty lines come before it; InputFileError if the file is empty or
    unreadable."""
    try:
        with _open_text(path) as handle:
            head = handle.read(_HEADER_CHARS)
    except UnicodeDecodeError:
        raise InputFileError(f"{path} is not UTF-8 text. Save it as UTF-8 (CSV UTF-8) and try again.") from None
    except (OSError, EOFError) as exc:
        raise InputFileError(
            f"cannot read {path} ({type(exc).__name__}); check that it is a complete, readable file."
        ) from None
    empty = len(re.findall(r"\r\n|\r|\n", head[:len(head) - len(head.lstrip("\r\n"))]))
    head = head.lstrip("\r\n")
    if not head:
        raise InputFileError(f"{path} is empty; pass a CSV file with a header line and rows.")
    quoted = False
    for i, char in enumerate(head):  # the header record ends at the first line break outside quotes
        if char == '"':
            quoted = not quoted
        elif char in "\r\n" and not quoted:
            return head[:i], empty
    return head, empty


def _fields(record: str, delimiter: str) -> list[str]:
    """The fields of one CSV record (which may hold quoted line breaks)."""
    return next(csv.reader(io.StringIO(record, newline=""), delimiter=delimiter), [""])


def _delimiter(header: str) -> str:
    """The candidate delimiter that splits the header into the most fields (comma on a tie)."""
    widths = {d: len(_fields(header, d)) for d in DELIMITERS}
    return max(DELIMITERS, key=lambda d: widths[d])


def mark_missing(df: pd.DataFrame, missing_markers: Iterable[str]) -> pd.DataFrame:
    """Text cells that are blank or equal to a marker (after stripping spaces) become NA."""
    words = list({"", *missing_markers})
    out = df.copy()
    for name in out.columns:
        column = out[name]
        if isinstance(column.dtype, pd.StringDtype):
            out[name] = column.mask(column.str.strip().isin(words))
        elif column.dtype == object:  # mixed cells (Parquet): only the text ones can be markers
            stripped = column.map(lambda v: v.strip() if isinstance(v, str) else v)
            out[name] = column.mask(stripped.isin(words))
    return out


@dataclass(frozen=True)
class CsvLayout:
    """What a CSV file's header says: its delimiter, its column names, and how many empty lines
    come before it (which every reader skips)."""

    delimiter: str
    names: list[str]
    empty_lines: int


def csv_layout(path: Path) -> CsvLayout:
    """The layout of a CSV file's header; DataError when a column has no name or a name is
    repeated."""
    header, empty_lines = _header(path)
    delimiter = _delimiter(header)
    names = _fields(header, delimiter)
    unnamed = [i + 1 for i, name in enumerate(names) if not name.strip()]
    if unnamed:
        shown = {",": "comma", ";": "semicolon", "\t": "tab", "|": "bar"}[delimiter]
        raise DataError(f"{path}: column(s) {unnamed[:10]} of the header (read as {shown}-separated) have no name; "
                        "give every column a name in the header line.")
    repeated = sorted(name for name, times in Counter(names).items() if times > 1)
    if repeated:
        raise DataError(f"{path}: the header names column(s) {repeated} more than once; give each column its own name.")
    return CsvLayout(delimiter, names, empty_lines)


def too_many_fields(path: Path | str, layout: CsvLayout) -> RowFieldsError:
    """The refusal of a row with more fields than the header, the same from every reader."""
    return RowFieldsError(
        f"{path}: a row has more fields than the header's {len(layout.names)}. A row with fewer fields gets "
        "missing cells for the rest, but no field is ever dropped: remove the extra delimiters (one at the end "
        "of a line adds an empty field), quote the cells that hold the delimiter, or name the extra column(s) "
        "in the header."
    )


def kept_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a CSV table read by pandas as every reader keeps them: a row whose cells hold
    nothing but ``BLANK`` is dropped, and a CRLF or CR inside a cell reads as LF (the module docstring)."""
    rows = df.index[df.iloc[:, 0].str.strip(BLANK).eq("").to_numpy()]  # a blank row starts with a blank cell
    for name in df.columns[1:]:
        rows = rows[df.loc[rows, name].str.strip(BLANK).eq("").to_numpy()]
    out = df.drop(index=rows) if len(rows) else df
    for name in out.columns:
        if out[name].str.contains("\r", regex=False).any():
            out = out.assign(**{name: out[name].str.replace("\r\n", "\n", regex=False).str.replace("\r", "\n", regex=False)})
    return out


def _csv_options(layout: CsvLayout) -> dict:
    """pandas.read_csv arguments for a CSV file: its delimiter, every cell as text, nothing guessed,
    and no column taken for an index when rows are longer than the header."""
    return {"sep": layout.delimiter, "dtype": str, "keep_default_na": False, "na_filter": False, "index_col": False,
            "encoding": "utf-8-sig", "compression": "infer"}


@contextmanager
def _csv_errors(path: Path, layout: CsvLayout) -> Iterator[None]:
    """Turn pandas' reading errors into InputFileError with a hint (RowFieldsError for a row longer
    than the header, which pandas reports as an error or, on the first row, as a warning)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            yield
    except pd.errors.ParserWarning:
        raise too_many_fields(path, layout) from None
    except UnicodeDecodeError:
        raise InputFileError(f"{path} is not UTF-8 text. Save it as UTF-8 (CSV UTF-8) and try again.") from None
    except pd.errors.ParserError as exc:
        if re.search(r"Expected \d+ fields", str(exc)):
            raise too_many_fields(path, layout) from None
        raise InputFileError(
            f"{path} is not a well-formed {layout.delimiter!r}-separated file ({exc}). Check that quotes are closed."
        ) from None
    except (OSError, EOFError, pd.errors.EmptyDataError) as exc:
        raise InputFileError(f"cannot read {path} ({type(exc).__name__}); check that it is a complete CSV file.") from None


def _read_csv(path: Path) -> pd.DataFrame:
    layout = csv_layout(path)
    with _csv_errors(path, layout):
        df = pd.read_csv(path, **_csv_options(layout))
    return kept_rows(df).reset_index(drop=True)


def parquet_available() -> bool:
    """Whether pyarrow is installed (the ``parquet`` extra), so Parquet files can be read and written."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _require_pyarrow(path: Path) -> None:
    if not parquet_available():
        raise InputFileError(
            f"reading {path} needs pyarrow. Install it (pip install 'synth[parquet]') or convert the file to CSV."
        )


def _read_parquet(path: Path) -> pd.DataFrame:
    _require_pyarrow(path)
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise InputFileError(f"cannot read {path} as Parquet ({type(exc).__name__}); check that it is a complete Parquet file.") from None


def checked_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"no file at {p}; check the path.")
    if p.stat().st_size == 0:
        raise InputFileError(f"{p} is empty; pass a file with a header line and rows.")
    return p


def _checked_frame(df: pd.DataFrame, p: Path, missing_markers: Iterable[str]) -> pd.DataFrame:
    if df.shape[1] == 0:
        raise DataError(f"{p} has no columns; pass a table with a header line.")
    return mark_missing(df, missing_markers)


def read_frame(path: str | os.PathLike[str], missing_markers: Iterable[str] = ("",)) -> pd.DataFrame:
    """Read a CSV (text cells, NA for missing) or Parquet file into pandas.

    ``synth.tables.source.read_table`` reads a path the same way, and opens a ``TableSource`` on
    another backend there instead.

    A header without rows gives a table of no rows: whether the private table is empty is never
    decided here (describe measures it under noise like any other table).

    InputFileError: no such file, unreadable, empty, unknown file type. DataError: no columns, or a
    column named twice.
    """
    p = checked_path(path)
    df = _read_parquet(p) if table_format(p, InputFileError) == "parquet" else _read_csv(p)
    return _checked_frame(df, p, missing_markers)


def _raw_chunks(p: Path, chunk_rows: int) -> Iterator[pd.DataFrame]:
    """The file's rows, at most ``chunk_rows`` at a time, as read (no missing-value marking)."""
    if table_format(p, InputFileError) == "parquet":
        _require_pyarrow(p)
        import pyarrow.parquet as pq

        try:
            for batch in pq.ParquetFile(p).iter_batches(batch_size=chunk_rows):
                yield batch.to_pandas()
        except (OSError, ValueError) as exc:
            raise InputFileError(f"cannot read {p} as Parquet ({type(exc).__name__}); check that it is a complete Parquet file.") from None
        return
    layout = csv_layout(p)
    with _csv_errors(p, layout):
        reader = pd.read_csv(p, chunksize=chunk_rows, **_csv_options(layout))
    with reader:
        while True:
            with _csv_errors(p, layout):  # not held across a yield: the warnings filter is global
                frame = next(reader, None)
            if frame is None:
                return
            yield kept_rows(frame)


def read_table_chunks(path: str | os.PathLike[str], chunk_rows: int,
                      missing_markers: Iterable[str] = ("",)) -> Generator[pd.DataFrame, None, None]:
    """The rows of a CSV or Parquet file as consecutive tables of at most ``chunk_rows`` rows each,
    read as ``read_frame`` reads them, so a table larger than memory can be processed piece by piece.
    A file with a header but no rows gives one table of no rows (its columns).

    Raises what ``read_frame`` raises.
    """
    p = checked_path(path)
    markers = tuple(missing_markers)
    first = True
    for frame in _raw_chunks(p, chunk_rows):
        if frame.shape[0] == 0:  # every row of the chunk was blank
            continue
        yield _checked_frame(frame, p, markers) if first else mark_missing(frame, markers)
        first = False
    if first:
        yield _checked_frame(_read_parquet(p) if table_format(p) == "parquet" else _read_csv(p), p, markers)


def check_table_output(path: str | os.PathLike[str], force: bool = False) -> None:
    """OutputError if ``write_table`` would refuse ``path``: the file exists and ``force`` is False,
    its folder is missing, the file type is unknown, or Parquet is asked for without pyarrow. For
    a command to check before its work."""
    p = Path(path)
    if table_format(p, OutputError) == "parquet" and not parquet_available():
        raise OutputError(f"writing {p} needs pyarrow. Install it (pip install 'synth[parquet]') or write CSV.")
    check_writable(p, force)


def write_table(df: pd.DataFrame, path: str | os.PathLike[str], force: bool = False, missing_text: str = "") -> Path:
    """Write ``df`` as CSV (gzip when the name ends in .gz; missing cells as ``missing_text``) or
    Parquet (missing cells as nulls).

    Refused (OutputError) as ``check_table_output`` says.
    """
    p = Path(path)
    check_table_output(p, force)
    if table_format(p, OutputError) == "parquet":
        return atomic_write(p, lambda tmp: df.to_parquet(tmp, index=False), force, shared=True)
    sep, compression = _csv_output(p)
    return atomic_write(p, lambda tmp: df.to_csv(tmp, index=False, sep=sep, compression=compression,
                                                 na_rep=missing_text), force, shared=True)


def _csv_output(p: Path) -> tuple[str, str | None]:
    """The delimiter and compression a CSV output's name asks for (tab for .tsv, gzip for .gz)."""
    return "\t" if p.name.lower().endswith((".tsv", ".tsv.gz")) else ",", "gzip" if p.name.lower().endswith(".gz") else None


def write_table_chunks(chunks: Iterable[pd.DataFrame], path: str | os.PathLike[str], force: bool = False,
                       missing_text: str = "") -> int:
    """Write consecutive tables of the same columns as one CSV or Parquet file (``write_chunks``
    with one path); the number of rows written."""
    return write_chunks(chunks, [path], force, missing_text)


def write_chunks(chunks: Iterable[pd.DataFrame], paths: Sequence[str | os.PathLike[str]], force: bool = False,
                 missing_text: str = "") -> int:
    """Write consecutive tables of the same columns as one table to each of ``paths`` (CSV or Parquet,
    each as its name says, in the forms of ``write_table``), atomically: each table is written to
    every file before the next is drawn from ``chunks``, and none is kept, so memory holds one table
    at a time however many rows are written; the number of rows written (ValueError if ``chunks``
    gives no table: there would be no header).

    Refused (OutputError) as ``check_table_output`` says, before the first table is drawn."""
    targets = [Path(path) for path in paths]
    for target in targets:
        check_table_output(target, force)
    rows, tables = 0, 0

    def write(tmps: list[Path]) -> None:
        nonlocal rows, tables
        with ExitStack() as stack:
            sinks = [stack.enter_context(TableSink(tmp, target, missing_text)) for tmp, target in zip(tmps, targets)]
            for chunk in chunks:
                for sink in sinks:
                    sink.write(chunk)
                rows, tables = rows + len(chunk), tables + 1
                del chunk  # the next table is drawn with this one gone
        if not tables:
            raise ValueError("write_chunks was given no table to write")

    _atomically(targets, write, force)
    return rows


def _atomically(targets: list[Path], write: Callable[[list[Path]], None], force: bool,
                tmps: tuple[Path, ...] = ()) -> None:
    """``write`` the temporary files of ``targets`` (one each, ``atomic_write``), then rename them all
    into place; on an error none is renamed and the temporary files are removed."""
    if len(tmps) == len(targets):
        write(list(tmps))
        return
    atomic_write(targets[len(tmps)], lambda tmp: _atomically(targets, write, force, (*tmps, tmp)), force, shared=True)


class TableSink:
    """One file being written a table at a time (``write_chunks``, and a synthetic database's files):
    ``tmp`` in the format ``target``'s name says, CSV (its header before the first table; missing cells
    as ``missing_text``) or Parquet (one row group per table, the column types of the first), in the
    forms of ``write_table``. A context manager: leaving it closes the file."""

    def __init__(self, tmp: Path, target: Path, missing_text: str) -> None:
        self.tmp, self.missing_text = tmp, missing_text
        self.parquet = table_format(target, OutputError) == "parquet"
        self.sep, self.compression = _csv_output(target)
        self.handle: IO[str] | None = None
        self.writer: Any = None  # a pyarrow ParquetWriter, opened with the first table's schema
        self.schema: Any = None

    def __enter__(self) -> TableSink:
        return self

    def write(self, chunk: pd.DataFrame) -> None:
        if not self.parquet:
            header = self.handle is None
            if self.handle is None:
                self.handle = (gzip.open(self.tmp, "wt", encoding="utf-8", newline="") if self.compression
                               else open(self.tmp, "w", encoding="utf-8", newline=""))
            chunk.to_csv(self.handle, index=False, header=header, sep=self.sep, na_rep=self.missing_text)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.writer is None:
            self.schema = pa.Schema.from_pandas(chunk, preserve_index=False)
            self.writer = pq.ParquetWriter(self.tmp, self.schema)
        self.writer.write_table(pa.Table.from_pandas(chunk, schema=self.schema, preserve_index=False))

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()
        if self.writer is not None:
            self.writer.close()
