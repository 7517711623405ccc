"""Benchmark `synth run`: wall time and peak memory on the demo data and on a 1,000,000-row table
(and `synth describe` on that table widened to 50 columns).

Usage (from the repository root, after `pip install .`):

    python benchmarks/run_benchmarks.py
    python benchmarks/run_benchmarks.py --only privbayes     # the cases whose label has this text

Each case runs in a fresh Python process (so peak memory is that run's alone) through the CLI's
``main``; the results are appended to benchmarks/RESULTS.md with the machine, date and command.
Working files go to benchmarks/out/ (not committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
RESULTS = HERE / "RESULTS.md"
MILLION = 1_000_000


def child(argv: list[str]) -> None:
    """Run one CLI command in this process and print its time and peak memory as JSON."""
    from synth.cli import main

    start = time.perf_counter()
    code = main(argv)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"exit": code, "seconds": seconds, "peak_mib": usage.ru_maxrss / 1024,
                      "cpu_seconds": usage.ru_utime + usage.ru_stime}))


def measure(argv: list[str]) -> dict:
    """Run one case in a fresh process: its in-process time, whole-process time, processor time (user +
    system, all threads), peak memory, and the machine's 1-minute load average when it started."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", *argv], capture_output=True, text=True, check=False)
    process_seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"benchmark case failed: {' '.join(argv)}\n{done.stderr}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_seconds": process_seconds, "load": load}


TIMING_HEAD = ["| case | command (s) | whole process incl. imports (s) | processor time (s) | peak memory (MiB) |",
               "| --- | ---: | ---: | ---: | ---: |"]


def timing_row(label: str, result: dict) -> str:
    """One row of a RESULTS.md timing table (see TIMING_HEAD)."""
    return (f"| {label} | {result['seconds']:.1f} | {result['process_seconds']:.1f} | {result['cpu_seconds']:.1f} "
            f"| {result['peak_mib']:.0f} |")


def timing_heading(title: str, command: str) -> list[str]:
    """The heading of a RESULTS.md section (title, UTC date, machine, command) and its table head."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [f"\n## {title} — {stamp}\n", f"Machine: {machine()}. Command: {command}\n", *TIMING_HEAD]


def print_timing(label: str, result: dict) -> None:
    print(f"{label}: {result['seconds']:.1f} s ({result['process_seconds']:.1f} s with start-up, "
          f"{result['cpu_seconds']:.1f} s of processor time, load {result['load']:.1f}), "
          f"peak {result['peak_mib']:.0f} MiB", flush=True)


def demo_paths() -> tuple[Path, Path]:
    data = resources.files("synth") / "data"
    return Path(str(data / "adult.csv.gz")), Path(str(data / "adult.toml"))


def million_row_table(source: Path) -> Path:
    """The demo table repeated (and cut) to exactly 1,000,000 rows."""
    path = OUT / "adult_1m.csv"
    if not path.exists():
        df = pd.read_csv(source, dtype=str, keep_default_na=False)
        repeats = -(-MILLION // len(df))
        pd.concat([df] * repeats, ignore_index=True).iloc[:MILLION].to_csv(path, index=False)
    return path


def wide_million_table(million: Path) -> Path:
    """The 1,000,000-row table widened to 50 columns: its 15 columns three times, then 5 more."""
    path = OUT / "adult_1m_50.csv"
    if not path.exists():
        df = pd.read_csv(million, dtype=str, keep_default_na=False)
        parts = [df.add_suffix(f"_{i}") for i in range(3)] + [df.iloc[:, :5].add_suffix("_3")]
        pd.concat(parts, axis=1).to_csv(path, index=False)
    return path


def append_results(lines: list[str]) -> None:
    """Append a section (its lines) to RESULTS.md and say so."""
    with RESULTS.open("a", encoding="utf-8") as results:
        results.write("\n".join(lines) + "\n")
    print(f"appended to {RESULTS}")


def machine() -> str:
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.system()} {platform.machine()} ({cpu_model()}), {os.cpu_count()} cores, {mem_gib:.0f} GiB, "
            f"Python {platform.python_version()}")


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (else what ``platform`` knows): times from two machine
    kinds are not comparable, and two tools' speeds can differ between them in different proportions."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else platform.processor() or platform.machine()


def main(only: str | None) -> None:
    OUT.mkdir(exist_ok=True)
    csv, profile = demo_paths()
    big = million_row_table(csv)
    wide = wide_million_table(big)
    cases = [
        ("demo data (30,162 × 15), profile adult.toml, engine independent, ε=1",
         ["run", str(csv), "--profile", str(profile), "-o", str(OUT / "demo"), "--force", "--quiet", "--seed", "1"]),
        ("demo data, no profile (domains estimated under DP), ε=1, δ=1e-9",
         ["run", str(csv), "--epsilon", "1", "-o", str(OUT / "demo_noprofile"), "--force", "--quiet", "--seed", "1"]),
        ("demo data, profile, OpenDP samplers (no seed)",
         ["run", str(csv), "--profile", str(profile), "-o", str(OUT / "demo_secure"), "--force", "--quiet"]),
        ("1,000,000 × 15 (demo repeated), profile adult.toml, ε=1",
         ["run", str(big), "--profile", str(profile), "-o", str(OUT / "million"), "--force", "--quiet", "--seed", "1"]),
        ("1,000,000 × 15, no profile, ε=1, δ=1e-9",
         ["run", str(big), "--epsilon", "1", "-o", str(OUT / "million_noprofile"), "--force", "--quiet", "--seed", "1"]),
        ("1,000,000 × 15, profile, engine mst, ε=1, δ=1e-9",
         ["run", str(big), "--profile", str(profile), "--engine", "mst", "-o", str(OUT / "million_mst"), "--force",
          "--quiet", "--seed", "1"]),
        ("demo data, profile, engine aim, ε=1, δ=1e-9",
         ["run", str(csv), "--profile", str(profile), "--engine", "aim", "-o", str(OUT / "demo_aim"), "--force",
          "--quiet", "--seed", "1"]),
        ("1,000,000 × 15, profile, engine privbayes, ε=1, δ=1e-9",
         ["run", str(big), "--profile", str(profile), "--engine", "privbayes", "-o", str(OUT / "million_privbayes"),
          "--force", "--quiet", "--seed", "1"]),
        ("describe 1,000,000 × 50, no profile (domains estimated under DP), engine independent, ε=1, δ=1e-9",
         ["describe", str(wide), "-o", str(OUT / "million_50.json"), "--epsilon", "1", "--engine", "independent",
          "--force", "--quiet", "--seed", "1"]),
    ]
    if only is not None:
        cases = [case for case in cases if only in case[0]]
        if not cases:
            raise SystemExit(f"no case's label contains {only!r}")
    rows = []
    for label, argv in cases:
        result = measure(argv)
        rows.append((label, result))
        print_timing(label, result)
    evaluated = any(str(OUT / "demo") in argv for _, argv in cases)  # the evaluation scores that case's output
    evaluation = None if not evaluated else measure(["evaluate", str(csv), str(OUT / "demo" / "synthetic.csv"), "--description",
                          str(OUT / "demo" / "description.json"), "--json", str(OUT / "demo_eval.json"),
                          "--force", "--quiet"])
    lines = [
        *timing_heading("`synth run` time and peak memory",
                        f"`python benchmarks/{' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])}`. Each case is a "
                        "fresh process; peak memory is its maximum resident set size (includes the Python "
                        "interpreter, pandas and OpenDP)."),
        *[timing_row(label, r) for label, r in rows],
    ]
    if evaluation is not None:
        metrics = json.loads((OUT / "demo_eval.json").read_text())
        summary, two_way = metrics["summary"], metrics["fidelity"]["marginals"]["2"]
        lines += [
            timing_row("evaluate (demo original vs synthetic)", evaluation),
            "",
            f"Utility of the first case (engine independent, ε = 1): mean 1-way TVD "
            f"{summary['mean_column_tvd']:.4f}, mean 2-way TVD {two_way['mean_tvd']:.4f} "
            f"(max {two_way['max_tvd']:.4f}) over {two_way['scored']} marginals, "
            "on the profile's discretisation.",
        ]
    lines.append("")
    if not RESULTS.exists():
        RESULTS.write_text("# Benchmark results\n\nFigures measured on this project's machines; newest last.\n")
    with RESULTS.open("a") as handle:
        handle.write("\n".join(lines))
    print(f"appended to {RESULTS}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:
        parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--only", help="run only the cases whose label contains this text")
        main(parser.parse_args().only)
