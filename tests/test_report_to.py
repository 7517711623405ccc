"""The API's console notes go to the standard error of the moment of the call, not the one synth
was imported under: a caller (or a test runner) that replaces ``sys.stderr`` later gets them, and a
stream closed since import is never written to."""

from __future__ import annotations

import io
import sys

import pandas as pd

import synth
import synth.api  # imported (its defaults bound) before any test below replaces sys.stderr


def _profile(tmp_path):
    path = tmp_path / "profile.toml"
    path.write_text('[release]\nepsilon = 1.0\ndelta = 1e-9\nengine = "independent"\n\n'
                    '[columns.x]\nkind = "integer"\nlower = 0\nupper = 10\nbins = 5\nmissing = false\n'
                    'source = "public"\n', encoding="utf-8")
    return path


def test_describe_writes_its_notes_to_the_stderr_of_the_call(tmp_path, monkeypatch):
    table = pd.DataFrame({"x": [1, 2, 3, 50] * 50})  # 50 rows above the public upper bound: clipped, and noted
    console = io.StringIO()
    monkeypatch.setattr(sys, "stderr", console)
    synth.describe(table, _profile(tmp_path), seed=0)
    assert "note (private, not released): x: 50 values above 10 clipped" in console.getvalue()


def test_each_call_writes_to_the_stderr_of_its_own_moment(tmp_path, monkeypatch):
    table = pd.DataFrame({"x": [1, 2, 3, 50] * 50})
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    synth.describe(table, _profile(tmp_path), seed=0)
    first.close()  # the first caller's stream is gone: the second call must not write to it
    monkeypatch.setattr(sys, "stderr", second)
    synth.describe(table, _profile(tmp_path), seed=1)
    assert "note (private, not released): x: 50 values above 10 clipped" in second.getvalue()
