"""Static checks of the package, so that CI (which runs only pytest) runs them: mypy type-checks
``synth`` (stricter on the privacy core, see ``[tool.mypy]`` in pyproject.toml) and ruff lints it,
the tests and the benchmarks (``[tool.ruff]``); any finding fails. Both come with the ``test``
extra. Each also runs once on a file with a planted error, so a configuration that checks nothing
cannot pass unnoticed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "synth"


def run_tool(tool: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``python -m tool arguments`` from the repository root (where pyproject.toml configures it)."""
    if importlib.util.find_spec(tool) is None:
        pytest.fail(f"{tool} is not installed; install the test extra: pip install \".[test]\"")
    return subprocess.run([sys.executable, "-m", tool, *arguments], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=600)


def test_mypy_finds_no_error_in_the_package() -> None:
    done = run_tool("mypy", "--config-file", str(ROOT / "pyproject.toml"))
    assert done.returncode == 0, f"mypy found errors in synth:\n{done.stdout}{done.stderr}"
    modules = len(list(PACKAGE.rglob("*.py")))
    assert f"no issues found in {modules} source files" in done.stdout  # the whole package was checked


@pytest.mark.parametrize("folder", ["synth", "tests", "benchmarks"])
def test_ruff_finds_nothing_to_fix(folder: str) -> None:
    done = run_tool("ruff", "check", "--no-cache", str(ROOT / folder))
    assert done.returncode == 0, f"ruff found problems in {folder}:\n{done.stdout}{done.stderr}"


def test_both_checks_catch_a_planted_error(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\n\ndef half(x: int) -> int:\n    return x / 2\n")
    typed = run_tool("mypy", "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental", str(planted))
    assert typed.returncode == 1 and "Incompatible return value type" in typed.stdout
    linted = run_tool("ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(planted))
    assert linted.returncode == 1 and "F401" in linted.stdout  # the unused import
