"""Benchmark `synth generate` on the demo's Description with and without its saved model.

Usage (from the repository root, after `pip install .`):

    python benchmarks/generate_benchmark.py            # --runs 5 --rows 1000 by default

It makes the demo release once (`synth demo --seed 1`: the demo profile, engine aim, ε = 1) in
benchmarks/out/generate-demo/ (not committed), then times `synth generate description.json --rows
1000` as the user runs it, each run a fresh process of the installed `synth` script: without a
saved model (the model file is deleted before each run, so the command fits and saves it), with
the saved model (it is read instead of fitted), and with the saved model under two conditions.
The median, minimum and maximum wall times, with the machine's load, are appended to
benchmarks/RESULTS.md with the machine, date and command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_benchmarks import OUT, append_results, machine  # noqa: E402

FOLDER = OUT / "generate-demo"
SYNTH = str(Path(sys.executable).parent / "synth")


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(argv)}\n{done.stderr}")
    return seconds


def main(runs: int, rows: int, command: str) -> None:
    FOLDER.parent.mkdir(parents=True, exist_ok=True)
    print("making the demo release (synth demo --seed 1) ...", flush=True)
    timed([SYNTH, "demo", "--seed", "1", "-o", str(FOLDER), "--force", "--quiet"])
    description, kept = FOLDER / "description.json", FOLDER / "description.model.npz"
    generate = [SYNTH, "generate", str(description), "--rows", str(rows), "-o", str(FOLDER / "generated.csv"),
                "--force", "--quiet"]
    cases = [
        ("without a saved model (fits and saves it)", generate, True),
        ("with the saved model", generate, False),
        ("with the saved model, `--condition sex=Female --condition age=30..40`",
         [*generate, "--condition", "sex=Female", "--condition", "age=30..40"], False),
    ]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"\n## `synth generate --rows {rows:,}` on the demo's Description, with and without its saved model "
             f"— {stamp}\n",
             f"Machine: {machine()}. Command: `{command}`. The demo release is `synth demo --seed 1` (demo profile, "
             f"engine aim, ε = 1); each run is a fresh process of `synth generate description.json --rows {rows}` "
             f"(`-o generated.csv --force --quiet`), timed {runs} times; \"without\" deletes description.model.npz "
             "before each run. Load: the 1-minute load average before the case.\n",
             "| case | median (s) | min (s) | max (s) | load |", "| --- | ---: | ---: | ---: | ---: |"]
    for label, argv, refit in cases:
        load = os.getloadavg()[0]
        times = []
        for _ in range(runs):
            if refit:
                kept.unlink(missing_ok=True)
            times.append(timed(argv))
        assert kept.is_file()
        row = f"| {label} | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} | {load:.2f} |"
        print(row, flush=True)
        lines.append(row)
    append_results(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--rows", type=int, default=1000, help="rows to generate (default 1000)")
    args = parser.parse_args()
    main(args.runs, args.rows, " ".join(["python benchmarks/generate_benchmark.py", *sys.argv[1:]]))
