"""The Description: round trip, validation, tamper detection, and what it must never contain."""

from __future__ import annotations

import json

import pytest

from synth.api import describe
from synth.description import load_description, save_description
from synth.errors import DescriptionError, InputFileError, OutputError
from tests.conftest import mixed_table


@pytest.fixture(scope="module")
def description():
    return describe(mixed_table(), epsilon=1.0, seed=3, engine="independent", report_to=None)  # it measures the count


def test_round_trip(tmp_path, description):
    path = save_description(description, tmp_path / "d.json")
    loaded = load_description(path)
    assert loaded.to_dict() == description.to_dict()


def test_totals_equal_the_ledger_and_fit_the_budget(description):
    data = description.to_dict()
    totals = data["privacy"]["ledger_totals"]
    assert totals["rho"] == pytest.approx(sum(e["cost"]["rho"] for e in data["privacy"]["ledger"]))
    assert data["privacy"]["spent"]["epsilon"] <= data["privacy"]["budget"]["epsilon"]
    assert data["privacy"]["spent"]["delta"] <= data["privacy"]["budget"]["delta"]


def test_no_exact_row_count_is_released(description):
    data = description.to_dict()
    text = json.dumps(data)
    assert '"rows": null' in text
    count = next(m for m in data["measurements"] if m["attrs"] == [])
    assert count["values"] != [2000]  # noisy (this seed moves it; a bug releasing it exactly would not)


def _tamper(tmp_path, description, edit):
    data = description.to_dict()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("edit,needle", [
    (lambda d: d["privacy"]["ledger"].pop(), "ledger adds up"),
    (lambda d: d["privacy"]["ledger_totals"].update(rho=0.0001), "ledger adds up"),
    (lambda d: d.update(format_version=99), "format version"),
    (lambda d: d.update(format="other"), "not a synth Description"),
    (lambda d: d["measurements"][0]["values"].append(3), "cells"),
    (lambda d: d["measurements"][0].update(attrs=["ghost"]), "lacks"),
    (lambda d: d.pop("schema"), "malformed"),
])
def test_tampered_files_are_rejected(tmp_path, description, edit, needle):
    with pytest.raises(DescriptionError, match=needle):
        load_description(_tamper(tmp_path, description, edit))


def test_unreadable_files(tmp_path):
    with pytest.raises(InputFileError):
        load_description(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(DescriptionError, match="not valid JSON"):
        load_description(broken)


def test_existing_file_is_not_replaced_without_force(tmp_path, description):
    path = save_description(description, tmp_path / "d.json")
    with pytest.raises(OutputError, match="force"):
        save_description(description, path)
    save_description(description, path, force=True)
