"""CI runs the README's test command verbatim: .ci/run runs the line that .ci/readme-test-command
finds in the README's quick start, that line is the command the README shows, and plain ``pytest``
(not only ``python -m pytest``) can import the tests' shared helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FINDER = ROOT / ".ci" / "readme-test-command"
README_TEST_COMMAND = 'pip install ".[test]" && pytest'


def find_command(readme: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(FINDER), str(readme)], capture_output=True, text=True, check=False)


def test_ci_runs_the_readme_test_command() -> None:
    found = find_command(ROOT / "README.md")
    assert found.returncode == 0, found.stderr
    assert found.stdout == README_TEST_COMMAND + "\n"
    assert "bash .ci/readme-test-command README.md" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("quick_start,count", [
    ("```sh\npip install . && synth demo\n```\n", 0),
    ("```sh\npip install . && pytest\n```\n\n```sh\npip install \".[test]\" && pytest\n```\n", 2),
    ("pip install \".[test]\" && pytest\n", 0),  # outside a code block
])
def test_the_finder_fails_unless_the_quick_start_has_exactly_one_test_command(tmp_path: Path, quick_start: str,
                                                                                count: int) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n## Quick start\n\n{quick_start}\n## Testing\n\n```sh\nfoo && pytest\n```\n")
    found = find_command(readme)
    assert found.returncode == 1 and found.stdout == ""
    assert f"found {count}" in found.stderr and "Quick start" in found.stderr


def test_plain_pytest_imports_the_shared_test_helpers() -> None:
    """``pytest`` does not put the working folder on sys.path as ``python -m pytest`` does (``-P``
    here); the tests' ``from tests.conftest import ...`` must work all the same."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-P", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "tests/test_cli.py", "tests/test_mwem.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
