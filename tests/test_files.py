"""Outputs are never half-written (issue 7, item 4): a write that fails mid-way leaves the previous
file as it was and no temporary file behind, for every writer the commands use; a release is
moved into place whole or not at all."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

import synth.files
from synth.api import describe, run
from synth.domains.drafting import draft_profile
from synth.domains.profile import save_profile
from synth.files import atomic_write
from synth.inspect import inspect_report
from synth.release.description import save_description
from synth.release.manifest import build_manifest, save_manifest
from synth.tables.tableio import write_table
from tests.conftest import mixed_table

FAILURES = [OSError("disk full"), KeyboardInterrupt()]
PREVIOUS = "previous contents\n"


def _only(folder: Path, *names: str) -> bool:
    """The folder holds exactly these files (no temporary or staging leftovers)."""
    return sorted(p.name for p in folder.iterdir()) == sorted(names)


@pytest.mark.parametrize("failure", FAILURES, ids=["error", "interrupt"])
def test_a_write_that_fails_midway_keeps_the_previous_file(tmp_path, failure):
    path = tmp_path / "out.json"
    path.write_text(PREVIOUS)

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text('{"half": ')
        raise failure

    with pytest.raises(type(failure)):
        atomic_write(path, half_then_fail, force=True)
    assert path.read_text() == PREVIOUS and _only(tmp_path, "out.json")


@pytest.fixture(scope="module")
def description():
    return describe(mixed_table(), epsilon=1.0, seed=3, engine="independent", report_to=None)


WRITERS: dict[str, tuple[str, Callable]] = {  # output name, writer(description, path)
    "description": ("d.json", lambda d, path: save_description(d, path, force=True)),
    "csv": ("s.csv", lambda d, path: write_table(mixed_table(50), path, force=True)),
    "csv.gz": ("s.csv.gz", lambda d, path: write_table(mixed_table(50), path, force=True)),
    "profile": ("p.toml", lambda d, path: save_profile(draft_profile(mixed_table(50)), path, force=True)),
    "manifest": ("m.json", lambda d, path: save_manifest(build_manifest(d, path, []), path, force=True)),
    "inspect report": ("r.html", lambda d, path: inspect_report(d, path, force=True)),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_goes_through_a_temporary_file(tmp_path, monkeypatch, description, writer):
    """The rename into place fails: a writer that wrote to the target itself would have replaced
    the previous contents; each one leaves them, and no temporary file."""
    name, write = WRITERS[writer]
    path = tmp_path / name
    path.write_text(PREVIOUS)

    def failing_replace(source: os.PathLike[str], target: os.PathLike[str]) -> None:
        assert Path(source).stat().st_size > 0  # the whole output was written, elsewhere
        raise OSError("the disk went away")

    monkeypatch.setattr(synth.files.os, "replace", failing_replace)
    with pytest.raises(OSError, match="went away"):
        write(description, path)
    assert path.read_text() == PREVIOUS and _only(tmp_path, name)


@pytest.mark.parametrize("failure", FAILURES, ids=["error", "interrupt"])
def test_a_release_that_fails_while_being_written_keeps_the_previous_release(tmp_path, monkeypatch, failure):
    data = tmp_path / "mixed.csv"
    mixed_table().to_csv(data, index=False)
    out = tmp_path / "release"
    run(data, out, epsilon=1.0, seed=1, report_to=None)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken_manifest(*args, **kwargs):
        raise failure

    monkeypatch.setattr("synth.api.save_manifest", broken_manifest)
    with pytest.raises(type(failure)):
        run(data, out, epsilon=1.0, seed=2, force=True, report_to=None)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no staging folder left either


def test_an_interrupt_while_a_release_moves_into_place_lands_after_the_last_file(monkeypatch, tmp_path):
    names = ["synthetic.csv", "description.json", "manifest.json"]
    moved: list[str] = []
    real_replace = os.replace

    def replace_then_interrupt(source, target):
        real_replace(source, target)
        moved.append(Path(target).name)
        if len(moved) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C between the first and second file

    monkeypatch.setattr(synth.files.os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        with synth.files.staged_release(tmp_path, names) as stage:
            for name in names:
                (stage / name).write_text(name)
    assert moved == names and _only(tmp_path, *names)  # every file in place, no staging folder
    assert all((tmp_path / name).read_text() == name for name in names)
