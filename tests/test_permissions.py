"""File permissions (issue 15, item 5): the files of a release are meant to be shared, so they are
created as any tool creates files, under the user's umask (-rw-r--r-- under umask 022); what reads
the original data (an evaluation, a profile drafted from the data) stays readable by its owner only."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import mixed_table
from tests.test_cli import run_cli


@contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "mixed.csv"
    mixed_table().to_csv(path, index=False)
    return path


RELEASE = ["synthetic.csv", "synthetic.parquet", "description.json", "description.model.npz", "manifest.json"]


@pytest.mark.parametrize("mask,expected", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_release_files_follow_the_umask(capsys, tmp_path, data, mask, expected):
    out = tmp_path / "release"
    with umask(mask):
        assert run_cli(capsys, "run", str(data), "--epsilon", "1", "--seed", "1", "--engine", "independent",
                       "-o", str(out), "--quiet")[0] == 0
        description = out / "description.json"
        commands = [
            ["describe", str(data), "--epsilon", "1", "--seed", "1", "--engine", "independent", "-o",
             str(tmp_path / "d.json")],
            ["generate", str(description), "--rows", "10", "-o", str(tmp_path / "s.csv.gz")],
            ["inspect", str(description), "--report", str(tmp_path / "inspect.html")],
        ]
        for argv in commands:
            assert run_cli(capsys, *argv, *(["--quiet"] if argv[0] != "inspect" else []))[0] == 0
    shared = [out / name for name in RELEASE] + [tmp_path / n for n in ("d.json", "s.csv.gz", "inspect.html")]
    assert {p.name: oct(mode(p)) for p in shared} == {p.name: oct(expected) for p in shared}


def test_what_reads_the_original_data_stays_private_whatever_the_umask(capsys, tmp_path, data):
    release = tmp_path / "release"
    with umask(0o022):
        assert run_cli(capsys, "run", str(data), "--epsilon", "1", "--seed", "1", "--engine", "independent",
                       "-o", str(release), "--quiet")[0] == 0
        assert run_cli(capsys, "evaluate", str(data), str(release / "synthetic.csv"), "--json",
                       str(tmp_path / "e.json"), "--report", str(tmp_path / "e.html"), "--quiet")[0] == 0
        assert run_cli(capsys, "profile", str(data), "-o", str(tmp_path / "p.toml"), "--quiet")[0] == 0
    for name in ("e.json", "e.html", "p.toml"):
        assert mode(tmp_path / name) == 0o600, name
    assert mode(release / "synthetic.csv") == 0o644
