"""Scale benchmark: `synth run` on 1M / 10M-row Parquet tables on each counting backend.

    python benchmarks/scale_benchmark.py [--rows 1000000 10000000] [--backends duckdb spark memory]
                                         [--engine mst] [--folder /tmp/synth-scale] [--no-record]

Builds a realistic table from the demo data (synth/data/adult.csv.gz): rows drawn with
replacement, with ages, hours and survey weights varied around the drawn row's, written to
Parquet in chunks (the 10M-row table is about 0.3 GB). Each case is one fresh `synth run` with the
demo's public profile (adult.toml, so no discovery), the engine asked for, ε = 1, a seed, and
100,000 synthetic rows (the describe side is what scales with the input). Measured: wall time of
the whole command, and the peak of the summed resident memory of its process tree (sampled every
0.1 s; Spark's JVM is a child of the Python process, so it is included). Cases with the same rows
must release the same Description (under a seed): the table says whether each does.
Appends a section to benchmarks/RESULTS.md unless --no-record.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "synth" / "data" / "adult.csv.gz"
PROFILE = ROOT / "synth" / "data" / "adult.toml"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
CHUNK = 1_000_000
SYNTHETIC_ROWS = 100_000


def build_table(rows: int, path: Path, seed: int = 0) -> Path:
    """``rows`` rows drawn from the demo data with variation, written to ``path`` (kept if present)."""
    if path.exists():
        return path
    demo = pd.read_csv(DEMO)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".partial")
    writer = None
    for start in range(0, rows, CHUNK):
        part = demo.iloc[rng.integers(0, len(demo), min(CHUNK, rows - start))].reset_index(drop=True)
        part["age"] = np.clip(part["age"] + rng.integers(-2, 3, len(part)), 17, 90)
        part["hr_per_week"] = np.clip(part["hr_per_week"] + rng.integers(-3, 4, len(part)), 1, 99)
        part["fnlwgt"] = np.round(part["fnlwgt"] * rng.lognormal(0.0, 0.1, len(part))).astype(np.int64)
        table = pa.Table.from_pandas(part, preserve_index=False)
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()
    tmp.rename(path)
    return path


def measured(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak resident MiB of the process tree, and exit status of ``command``."""
    start = time.perf_counter()
    process = psutil.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ,
                                                                                           "OMP_NUM_THREADS": "1"})
    peak = 0
    while process.poll() is None:
        try:
            tree = [process, *process.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.1)
    seconds = time.perf_counter() - start
    if process.returncode:
        print(process.stderr.read().decode(errors="replace")[-2000:], file=sys.stderr)
    return seconds, peak / 2**20, process.returncode


def release(out: Path) -> dict:
    """The Description written by a run, without its time stamp."""
    description = json.loads((out / "description.json").read_text())
    description.pop("created", None)
    return description


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--backends", nargs="+", default=["duckdb", "spark", "memory"])
    parser.add_argument("--engine", default="mst")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/synth-scale"))
    parser.add_argument("--no-record", action="store_true", help="do not append the results to RESULTS.md")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for rows in args.rows:
        data = build_table(rows, args.folder / f"adult_{rows}.parquet")
        first: dict | None = None
        for backend in args.backends:
            out = args.folder / f"run_{rows}_{backend}"
            command = [sys.executable, "-m", "synth.cli", "run", str(data), "-o", str(out), "--profile", str(PROFILE),
                       "--engine", args.engine, "--epsilon", "1", "--seed", "0", "--rows", str(SYNTHETIC_ROWS),
                       "--backend", backend, "--force", "-q"]
            seconds, peak, status = measured(command)
            same = "failed" if status else "—"
            if not status:
                described = release(out)
                first = first or described
                same = "yes" if described == first else "NO"
            line = f"| {rows:,} | {backend} | {args.engine} | {seconds:.0f} | {peak:,.0f} | {same} |"
            print(line, flush=True)
            lines.append(line)
    if args.no_record:
        return
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    cores, memory = os.cpu_count(), psutil.virtual_memory().total / 2**30
    command = f"python benchmarks/scale_benchmark.py --rows {' '.join(map(str, args.rows))} --backends " \
              f"{' '.join(args.backends)} --engine {args.engine}"
    section = [
        f"\n## Counting backends at scale — {stamp}\n",
        f"Machine: {platform.system()} {platform.machine()}, {cores} cores, {memory:.0f} GiB, Python "
        f"{platform.python_version()}. Command: `{command}`. Each case: `synth run` on a Parquet table built "
        f"from the demo data with variation, profile adult.toml, ε = 1, seed 0, {SYNTHETIC_ROWS:,} synthetic rows; "
        "wall time of the whole command and peak resident memory of its process tree (Spark's JVM included). "
        "'Same release' compares the Description with the first backend's at that size.\n",
        "| rows | backend | engine | wall (s) | peak memory (MiB) | same release |",
        "| ---: | --- | --- | ---: | ---: | --- |",
        *lines,
    ]
    with RESULTS.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(section) + "\n")


if __name__ == "__main__":
    main()
