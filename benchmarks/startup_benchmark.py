"""Benchmark the command line's start-up: wall time of `synth --help` and `synth --version`.

Usage (from the repository root, after `pip install .`):

    python benchmarks/startup_benchmark.py
    python benchmarks/startup_benchmark.py --python /path/to/old-venv/bin/python --python .venv/bin/python

Each command runs as a fresh process (the `synth` script installed beside each interpreter; by
default the one running this script), once to warm the file cache and then ``--runs`` times
(default 10); the median, minimum and maximum wall times are appended to benchmarks/RESULTS.md
with the machine, date and command, and where the timed synth package lives (its folder and git
commit), so that the start-up of two versions can be compared side by side.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_benchmarks import append_results, machine  # noqa: E402

COMMANDS = (["--help"], ["--version"])


def synth_source(python: str) -> str:
    """The folder of the synth package that ``python`` imports, and its git commit."""
    done = subprocess.run([python, "-P", "-c",  # -P: not the working folder's synth/, the installed one
                           "import pathlib, synth; print(pathlib.Path(synth.__file__).parent.parent)"],
                          capture_output=True, text=True, check=True)
    folder = done.stdout.strip()
    commit = subprocess.run(["git", "-C", folder, "describe", "--always", "--dirty"], capture_output=True,
                            text=True, check=False).stdout.strip()
    return f"{folder} ({commit or 'not a git checkout'})"


def wall_times(argv: list[str], runs: int) -> tuple[list[float], int]:
    """Wall times of ``argv`` as a fresh process, ``runs`` times after one warm-up run, and its exit
    status (a version without the option exits 2, after the same start-up)."""
    times, statuses = [], set()
    for run in range(runs + 1):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        statuses.add(done.returncode)
        if run:
            times.append(seconds)
    if len(statuses) > 1:
        raise SystemExit(f"{' '.join(argv)} exited with different statuses: {sorted(statuses)}")
    return times, statuses.pop()


def main(pythons: list[str], runs: int, command: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"\n## `synth --help` and `synth --version` start-up — {stamp}\n",
             f"Machine: {machine()}. Command: `{command}`. Each command is a fresh process (the `synth` "
             f"script), timed {runs} times after one warm-up run.\n",
             "| command | synth package (folder, commit) | exit status | median (s) | min (s) | max (s) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for python in pythons:
        script = str(Path(python).parent / "synth")
        source = synth_source(python)
        for argv in COMMANDS:
            times, status = wall_times([script, *argv], runs)
            label = " ".join(["synth", *argv])
            row = (f"| `{label}` | {source} | {status} | {statistics.median(times):.3f} | {min(times):.3f} "
                   f"| {max(times):.3f} |")
            print(row, flush=True)
            lines.append(row)
    append_results(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", metavar="PATH",
                        help="an interpreter whose environment's `synth` script to time (repeatable; default: "
                             "this one)")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command (default 10)")
    options = parser.parse_args()
    main(options.python or [sys.executable], options.runs,
         " ".join(["python benchmarks/startup_benchmark.py", *sys.argv[1:]]))
