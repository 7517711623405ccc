"""Fuzzing the whole path, file → describe → generate → files, with generated tables.

Every generated input must give either a correct release (outputs with the input's columns, in
their order) or a ``SynthError`` with a message; never another exception. Inputs are written as
real CSV files in the dialects synth reads: comma, semicolon, tab or bar delimited, with or
without a byte-order mark, cells quoted where needed (so quoted newlines occur), headers that may
be empty or repeated, cells that are empty, unicode, NaN, ±inf, huge integers or a mix of kinds.
The number of examples is hypothesis's profile: ``HYPOTHESIS_PROFILE=thorough`` tries 2,000
tables and a 10,000-column one (see conftest).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from synth import api
from synth.errors import SynthError
from synth.tables.tableio import DELIMITERS

SPECIAL_CELLS = ["", " ", "NaN", "nan", "inf", "-inf", "Infinity", "1e308", "-0", "007",
                 "123456789012345678901234567890", "-99999999999999999999", "3.14", "true", "FALSE",
                 "2024-02-29", "2024-13-45", "a\nb", 'say "hi"', "x;y", "tab\there", "é", "日本", "🙂",
                 "\u200b", "NULL", "?"]
cells = st.one_of(st.sampled_from(SPECIAL_CELLS), st.integers(-10**6, 10**6).map(str),
                  st.floats(allow_nan=True, allow_infinity=True).map(repr),
                  st.text(max_size=6))
headers = st.one_of(st.sampled_from(["", "a", "a", "age", "Âge", "x y", "1", '"q"', "日本"]),
                    st.text(min_size=0, max_size=5))


@st.composite
def csv_tables(draw: st.DrawFn) -> tuple[str, list[str], str]:
    """CSV text in a random dialect, its header as written, and the delimiter written."""
    n_columns = draw(st.integers(1, 5))
    n_rows = draw(st.integers(1, 25))
    header = [draw(headers).replace("\r", "") for _ in range(n_columns)]
    kinds = [draw(st.sampled_from(["mixed", "int", "float", "text"])) for _ in range(n_columns)]
    column_cells = {"mixed": cells, "int": st.integers(-300, 300).map(str),
                    "float": st.floats(-1e6, 1e6, allow_nan=False).map(repr), "text": st.sampled_from("abcde")}
    rows = [[draw(column_cells[kind]).replace("\r", "") for kind in kinds] for _ in range(n_rows)]
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    bom = "\ufeff" if draw(st.booleans()) else ""
    return bom + out.getvalue(), header, delimiter


def _release(text: str, folder: Path, engine: str) -> api.RunResult:
    data = folder / "data.csv"
    data.write_text(text, encoding="utf-8")
    return api.run(data, folder / "out", epsilon=2.0, delta=1e-6, engine=engine, rows=20, seed=0,
                   force=True, report_to=None)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(table=csv_tables(), engine=st.sampled_from(["independent", "privbayes", "mst"]))
def test_any_table_gives_a_release_or_a_synth_error(tmp_path_factory, table, engine):
    text, header, delimiter = table
    folder = tmp_path_factory.mktemp("fuzz")
    try:
        result = _release(text, folder, engine)
    except SynthError as error:
        event(f"refused: {type(error).__name__}")
        assert str(error).strip()  # a message for a person
        assert not (folder / "out" / "synthetic.csv").exists()  # nothing half-written
        return
    event("released")
    written = pd.read_csv(result.files["synthetic"], dtype=str, keep_default_na=False)
    assert len(written) == 20
    names = list(result.description.schema.names)
    assert list(result.synthetic.columns) == list(written.columns) == names
    assert all(name.strip() for name in names)  # no column made up a name
    if not any(other in text for other in DELIMITERS if other != delimiter):  # only one way to read it
        assert names == header


def test_very_wide_tables(tmp_path):
    # 2,000 columns take about 9 s; the thorough profile tries the 10,000 (about a minute)
    columns = 10_000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 2_000
    text = ",".join(f"c{j}" for j in range(columns)) + "\n" + "\n".join(
        ",".join(str((i * j) % 3) for j in range(columns)) for i in range(5)) + "\n"
    try:
        result = _release(text, tmp_path, "independent")
    except SynthError as error:
        assert str(error).strip()
        return
    assert result.synthetic.shape == (20, columns)
