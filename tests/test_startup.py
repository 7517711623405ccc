"""Start-up stays light: ``import synth`` and ``synth --help``/``--version`` load neither pandas
nor the evaluation stack (scikit-learn, scipy.stats, matplotlib); the public names still work as
before, and Ctrl-C while a command imports its modules is a one-line exit. Each check runs in a
fresh interpreter, since this one has imported everything already. (Timings are a benchmark, not
a test: benchmarks/startup_benchmark.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import synth

ROOT = Path(__file__).resolve().parents[1]
EVALUATION_STACK = ("sklearn", "scipy.stats", "matplotlib")
TABLE_STACK = ("pandas", "numpy")

REPORT_LOADED = f"""
import json, sys
print(json.dumps(sorted(m for m in {EVALUATION_STACK + TABLE_STACK!r} if m in sys.modules)))
"""


def python(code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=120)


def loaded_after(code: str) -> list[str]:
    done = python(code + REPORT_LOADED)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_synth_loads_neither_pandas_nor_the_evaluation_stack() -> None:
    assert loaded_after("import synth") == []


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"], ["evaluate", "--help"]])
def test_help_and_version_load_neither_pandas_nor_the_evaluation_stack(argv: list[str]) -> None:
    code = f"""
import contextlib, io
from synth.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main({argv!r})
    except SystemExit as exit_:
        assert exit_.code == 0, exit_.code
assert out.getvalue().startswith("synth " if {argv!r} == ["--version"] else "usage: synth")
"""
    assert loaded_after(code) == []


def test_the_release_verbs_do_not_load_the_evaluation_stack() -> None:
    loaded = loaded_after("import synth\nsynth.run, synth.describe, synth.generate, synth.load_profile")
    assert not set(loaded) & set(EVALUATION_STACK), loaded


def test_public_names_are_the_verbs_whatever_was_imported_first() -> None:
    """``synth.evaluate`` is also a subpackage's name: importing it (directly, or through the api or
    inspect), or the module that defines ``generate``, must not replace the functions."""
    code = """
import synth, synth.api, synth.generation.generate, synth.evaluate, synth.inspect
from synth import evaluate, generate
from synth.evaluate import fidelity
assert callable(synth.generate) and synth.generate is generate is synth.api.generate, synth.generate
assert callable(synth.evaluate) and synth.evaluate is evaluate is synth.api.evaluate, synth.evaluate
assert synth.Profile.__module__ == "synth.domains.profile" and issubclass(synth.SynthError, Exception)
assert set(synth.__all__) <= set(dir(synth)) and synth.__version__
"""
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        synth.nope  # noqa: B018


def test_ctrl_c_while_a_command_imports_its_modules_is_a_one_line_exit(tmp_path: Path) -> None:
    """A KeyboardInterrupt raised while ``synth run`` imports the api (as Ctrl-C during start-up
    does): status 130, one line on stderr, no traceback, nothing written."""
    code = """
import sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "synth.api":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
from synth.cli import main
sys.exit(main(["run", "data.csv", "--epsilon", "1", "-o", "out"]))
"""
    done = python(code, cwd=tmp_path)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "synth run: interrupted; no partial output was written.\n"
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_the_text_inspector_loads_neither_scikit_learn_nor_matplotlib() -> None:
    # `synth inspect` without --report: the inspector's one evaluation piece (Cramér's V) comes
    # without the rest of the evaluation package.
    loaded = loaded_after("from synth.inspect import inspect_text\nimport synth.inspect.views")
    assert "sklearn" not in loaded and "matplotlib" not in loaded
