"""The checks of the many-seed benchmark (benchmarks/failure_rates.py) on a hand-made original,
synthetic table and released domain: each failure is found once, and nothing else is."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from failure_rates import Finding, release_findings, written_decimals

ORIGINAL = pd.DataFrame({
    "x": ["0.5", "1.25", "2", "3"],  # non-negative, two decimals
    "y": ["10", "20", "30", "40"],
    "c": ["a", "b", "a", ""],  # every value released
    "d": ["a", "z", "a", "a"],  # "z" missed: <OTHER> is honest there
    "k": ["1", "2", "1", "2"],
    "gone": ["p", "q", "p", "q"],
})
SYNTHETIC = pd.DataFrame({
    "x": ["-0.125", "1.5", "9", "2.12"],  # a negative, a value above the bounds, three decimals
    "y": ["15", "20", "30", "200"],
    "c": ["a", "<OTHER>", "b", "<OTHER>"],
    "d": ["a", "<OTHER>", "a", "a"],
    "k": ["1", "1", "1", "1"],
})
DOMAINS = {
    "x": {"kind": "float", "lower": -1.0, "upper": 4.0},
    "y": {"kind": "integer", "lower": 15, "upper": 200},  # misses 10; 185 wide over a span of 30
    "c": {"kind": "categorical", "categories": ["a", "b"]},
    "d": {"kind": "categorical", "categories": ["a"]},
    "k": {"kind": "integer", "lower": 1, "upper": 2},
}


def test_each_failure_is_found_once_and_nothing_else() -> None:
    findings, left_out = release_findings(ORIGINAL, SYNTHETIC, DOMAINS, "<OTHER>")
    assert left_out == ["gone"]
    assert sorted(findings, key=lambda f: (f.column, f.check)) == [
        Finding("other", "c", 2.0),
        Finding("constant", "k", 1.0),
        Finding("bounds", "x", 1.0),
        Finding("decimals", "x", 3.0),
        Finding("sign", "x", 1.0),
        Finding("coverage", "y", 0.25),
        Finding("wide", "y", 185 / 30),
    ]


def test_a_release_that_fits_fails_nothing() -> None:
    fits = {"x": {"kind": "float", "lower": 0.0, "upper": 4.0}, "k": {"kind": "integer", "lower": 1, "upper": 2}}
    synthetic = pd.DataFrame({"x": ["0.25", "3.5", "", "1"], "k": ["2", "1", "1", "2"]})
    assert release_findings(ORIGINAL[["x", "k"]], synthetic, fits, "<OTHER>") == ([], [])


def test_written_decimals_reads_the_text() -> None:
    assert written_decimals(pd.Series(["12", "1.50", "", "x"])) == 2
    assert written_decimals(pd.Series(["1e-05", "3"])) == 5
    assert written_decimals(pd.Series(["1.2e+03", "nan"])) == 0
