"""Scale benchmark: `synth run` (and `synth evaluate`) on 1M / 10M / 100M-row Parquet tables on each counting backend.

    python benchmarks/scale_benchmark.py [--rows 1000000 10000000 100000000] [--backends duckdb spark memory]
                                         [--engines mst aim] [--synthetic-rows same 1000000 | --same-rows]
                                         [--phases] [--evaluate] [--folder /tmp/synth-scale] [--no-record]

Builds a realistic table from the demo data (synth/data/adult.csv.gz): rows drawn with
replacement, with ages, hours and survey weights varied around the drawn row's, written to
Parquet in chunks (the 10M-row table is about 0.3 GB). Each case is one fresh `synth run` with the
demo's public profile (adult.toml, so no discovery), each engine asked for, ε = 1, a seed, and
each number of synthetic rows asked for (``--synthetic-rows``: numbers, or ``same`` for as many as the
input has; default 100,000; ``--same-rows`` is ``--synthetic-rows same``). Measured:
wall time of the whole command, and the peak of the summed resident memory of its process tree
(sampled every 0.1 s with psutil; Spark's JVM is a child of the Python process, so it is included;
without psutil, the largest single process's peak from the kernel). Cases with the same rows must
release the same Description (under a seed): the table says whether each does.

``--phases`` runs each case as ``synth.run`` in a child process that times its phases and takes
each one's peak resident memory (the kernel's high-water mark, reset at every phase boundary;
Linux only): read (opening the table, the schema), count (encoding and counting on the backend),
measure (the engine's measurements), fit, sample (drawing and decoding the chunks), write CSV,
write Parquet, save (the model and the manifest). Sampling and writing alternate chunk by chunk:
their figures are summed over the chunks. The boundaries come from the run's own progress
messages, and the sampling and writing functions wrapped with a timer.
``--evaluate`` also runs ``synth evaluate DATA OUT/synthetic.parquet --backend duckdb`` on each case's
output (wall time and peak memory of that process), then deletes the case's synthetic files (at
100M rows they take gigabytes). Appends a section to benchmarks/RESULTS.md unless --no-record.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
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


def measured(command: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, peak resident MiB of the process tree, exit status and standard output of
    ``command`` (the peak of the largest single process, from the kernel, without psutil)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # this checkout's synth
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        try:
            import psutil
        except ImportError:
            child = subprocess.Popen(command, stdout=out, stderr=err, env=env)
            _, status, usage = os.wait4(child.pid, 0)  # this child's peak (and its waited-for children's)
            returncode, peak = os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024
        else:
            process = psutil.Popen(command, stdout=out, stderr=err, env=env)
            peak = 0
            while process.poll() is None:
                try:
                    tree = [process, *process.children(recursive=True)]
                    peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
                except psutil.Error:
                    pass
                time.sleep(0.1)
            returncode = process.returncode
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if returncode:
            print(err.read().decode(errors="replace")[-2000:], file=sys.stderr)
        return seconds, peak / 2**20, returncode, out.read().decode(errors="replace")


def _peak_method(phases: bool) -> str:
    """How the peak memory of the table was taken, in words."""
    if phases:
        return "peak resident memory of the run's process (the largest of its phases' peaks)"
    try:
        import psutil  # noqa: F401
    except ImportError:
        return "peak resident memory of the command's process (the kernel's; psutil is not installed)"
    return "peak resident memory of its process tree (Spark's JVM included)"


def release(out: Path) -> dict:
    """The Description written by a run, without its time stamp."""
    description = json.loads((out / "description.json").read_text())
    description.pop("created", None)
    return description


PHASES = ("read", "count", "measure", "fit", "sample", "write CSV", "write Parquet", "save")


class PhaseClock:
    """Wall seconds and peak resident MiB per phase of one process; the peak is the kernel's
    high-water mark (VmHWM), reset at every switch of phase (Linux: /proc/self/clear_refs)."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.peaks = dict.fromkeys(PHASES, 0.0)
        self.phase, self.since = "read", time.perf_counter()
        self._reset()

    @staticmethod
    def _reset() -> None:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")

    @staticmethod
    def _high_water() -> float:
        with open("/proc/self/status") as handle:
            line = next(line for line in handle if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024

    def switch(self, phase: str) -> str:
        """Close the current phase and enter ``phase``; the phase left."""
        now = time.perf_counter()
        left = self.phase
        self.seconds[left] += now - self.since
        self.peaks[left] = max(self.peaks[left], self._high_water())
        self.phase, self.since = phase, now
        self._reset()
        return left

    def timed(self, phase: str, function):
        """``function`` wrapped to count as ``phase`` while it runs."""
        def wrapper(*args, **kwargs):
            left = self.switch(phase)
            try:
                return function(*args, **kwargs)
            finally:
                self.switch(left)
        return wrapper


def phase_run(data: str, out: str, engine: str, backend: str, synthetic_rows: int) -> None:
    """``synth.run`` with its phases timed (``PhaseClock``); prints them as JSON."""
    clock = PhaseClock()
    import synth
    from synth import api
    from synth.generation import generate
    from synth.progress import Progress
    from synth.tables import tableio
    from synth.tables.source import TableSource

    class Phases(Progress):
        """Quiet progress that moves the clock on the run's own messages and bars."""

        def message(self, text: str) -> None:
            if text.startswith("encoding and counting"):
                clock.switch("count")
            elif text.startswith("sampling synthetic rows"):
                clock.switch("sample")
            elif clock.phase == "count":
                clock.switch("measure")

        def counter(self, description: str, total: int):
            if description.startswith("fitting the model"):
                clock.switch("fit")
            elif clock.phase == "count":
                clock.switch("measure")
            return super().counter(description, total)

        def track(self, items, description: str, total: int | None = None):
            if clock.phase == "count":
                clock.switch("measure")
            return super().track(items, description, total)

    sink_write = tableio.TableSink.write

    def write(sink, chunk):
        phase = "write Parquet" if sink.parquet else "write CSV"
        return clock.timed(phase, sink_write)(sink, chunk)

    generate.FittedModel.sample = clock.timed("sample", generate.FittedModel.sample)
    tableio.TableSink.write = write
    generate.FittedModel.save = clock.timed("save", generate.FittedModel.save)
    api.build_manifest = clock.timed("save", api.build_manifest)  # hashes the files written
    start = time.perf_counter()
    synth.run(TableSource(data, backend, None), out, PROFILE, engine=engine, epsilon=1, seed=0, rows=synthetic_rows,
              force=True, progress=Phases(), report_to=None)
    clock.switch(clock.phase)  # closes the last phase
    print(json.dumps({"seconds": clock.seconds, "peaks": clock.peaks, "total": time.perf_counter() - start}))


def evaluated(data: Path, out: Path) -> tuple[float, float]:
    """Wall seconds and peak MiB of ``synth evaluate DATA OUT/synthetic.parquet --backend duckdb``."""
    command = [sys.executable, "-m", "synth.cli", "evaluate", str(data), str(out / "synthetic.parquet"), "--backend",
               "duckdb", "--json", str(out / "evaluation.json"), "-q"]
    seconds, peak, status, _ = measured(command)
    return (math.nan, math.nan) if status else (seconds, peak)


def output_rows(spec: str, rows: int) -> int:
    """Synthetic rows for an input of ``rows``: ``same`` or a number."""
    return rows if spec == "same" else int(spec)


def main() -> None:
    if sys.argv[1:2] == ["--phase-run"]:
        data, out, engine, backend, synthetic_rows = sys.argv[2:]
        phase_run(data, out, engine, backend, int(synthetic_rows))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--backends", nargs="+", default=["duckdb", "spark", "memory"])
    parser.add_argument("--engines", "--engine", nargs="+", default=["mst"])
    parser.add_argument("--synthetic-rows", nargs="+", default=[str(SYNTHETIC_ROWS)],
                        help="synthetic rows per case: numbers, or 'same' (as many as the input has)")
    parser.add_argument("--same-rows", action="store_true", help="as many synthetic rows as the input has")
    parser.add_argument("--phases", action="store_true", help="time and peak memory per phase (Linux)")
    parser.add_argument("--evaluate", action="store_true",
                        help="also time `synth evaluate` of each synthetic table against its input on duckdb")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/synth-scale"))
    parser.add_argument("--no-record", action="store_true", help="do not append the results to RESULTS.md")
    args = parser.parse_args()
    specs = ["same"] if args.same_rows else args.synthetic_rows
    args.folder.mkdir(parents=True, exist_ok=True)
    lines, phase_lines = [], []
    for rows in args.rows:
        data = build_table(rows, args.folder / f"adult_{rows}.parquet")
        for engine in args.engines:
            for synthetic in sorted({output_rows(spec, rows) for spec in specs}, reverse=True):
                first: dict | None = None
                for backend in args.backends:
                    line, phase_line, described = run_case(args, data, rows, engine, synthetic, backend, first)
                    first = first or described
                    print(line, flush=True)
                    lines.append(line)
                    if phase_line:
                        print(phase_line, flush=True)
                        phase_lines.append(phase_line)
    if not args.no_record:
        record(args, specs, lines, phase_lines)


def run_case(args: argparse.Namespace, data: Path, rows: int, engine: str, synthetic: int, backend: str,
             first: dict | None) -> tuple[str, str, dict | None]:
    """One `synth run` (and, with --evaluate, its evaluation): the results row, the phases row, and
    the Description it released (None when it failed)."""
    out = args.folder / f"run_{rows}_{engine}_{synthetic}_{backend}"
    if args.phases:
        command = [sys.executable, str(Path(__file__).resolve()), "--phase-run", str(data), str(out),
                   engine, backend, str(synthetic)]
    else:
        command = [sys.executable, "-m", "synth.cli", "run", str(data), "-o", str(out), "--profile",
                   str(PROFILE), "--engine", engine, "--epsilon", "1", "--seed", "0", "--rows",
                   str(synthetic), "--backend", backend, "--force", "-q"]
    seconds, peak, status, output = measured(command)
    phases = json.loads(output.strip().splitlines()[-1]) if args.phases and not status else None
    if phases is not None:  # the kernel's peak was reset at each phase: the largest phase's is the run's
        peak = max(phases["peaks"].values())
    same, described = "failed", None
    if not status:
        described = release(out)
        same = "yes" if first is None or described == first else "NO"
    evaluation = evaluated(data, out) if args.evaluate and not status else None
    cells = "" if evaluation is None else f" {evaluation[0]:.0f} | {evaluation[1]:,.0f} |"
    line = f"| {rows:,} | {synthetic:,} | {backend} | {engine} | {seconds:.0f} | {peak:,.0f} | {same} |{cells}"
    phase_line = ""
    if phases is not None:
        timings = " | ".join(f"{phases['seconds'][p]:.1f} s, {phases['peaks'][p]:,.0f}" for p in PHASES)
        extra = "" if evaluation is None else f" {evaluation[0]:.1f} s, {evaluation[1]:,.0f} |"
        phase_line = f"| {rows:,} | {synthetic:,} | {backend} | {engine} | {timings} |{extra}"
    if args.evaluate:  # the synthetic tables of 10M rows and more take gigabytes: keep only the release's record
        for name in ("synthetic.csv", "synthetic.parquet"):
            (out / name).unlink(missing_ok=True)
    return line, phase_line, described


def record(args: argparse.Namespace, specs: list[str], lines: list[str], phase_lines: list[str]) -> None:
    """Append the results to RESULTS.md."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    cores = os.cpu_count()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    command = (f"python benchmarks/scale_benchmark.py --rows {' '.join(map(str, args.rows))} --backends "
               f"{' '.join(args.backends)} --engines {' '.join(args.engines)} --synthetic-rows {' '.join(specs)}"
               f"{' --phases' if args.phases else ''}{' --evaluate' if args.evaluate else ''}")
    evaluate_head = " evaluate (s) | evaluate peak (MiB) |" if args.evaluate else ""
    section = [
        f"\n## Counting backends at scale — {stamp}\n",
        f"Machine: {platform.system()} {platform.machine()}, {cores} cores, {memory:.0f} GiB, Python "
        f"{platform.python_version()}; commit {commit}. Command: `{command}`. Each case: `synth run` on a Parquet "
        "table built from the demo data with variation, profile adult.toml, ε = 1, seed 0; wall time of the whole "
        f"command and {_peak_method(args.phases)}. 'Same release' compares the Description with the first "
        "backend's of that case."
        + (" Evaluate: `synth evaluate DATA OUT/synthetic.parquet --backend duckdb` of the case's synthetic "
           "table against its input, wall time and peak memory of its process." if args.evaluate else "") + "\n",
        f"| rows | synthetic rows | backend | engine | wall (s) | peak memory (MiB) | same release |{evaluate_head}",
        f"| ---: | ---: | --- | --- | ---: | ---: | --- |{' ---: | ---: |' if args.evaluate else ''}",
        *lines,
    ]
    if phase_lines:
        section += [
            "\nPer phase (`synth.run` in a child process; seconds, then peak resident MiB of the phase):\n",
            f"| rows | synthetic rows | backend | engine | {' | '.join(PHASES)} |{' evaluate |' if args.evaluate else ''}",
            f"| ---: | ---: | --- | --- |{' ---: |' * (len(PHASES) + int(args.evaluate))}",
            *phase_lines,
        ]
    with RESULTS.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(section) + "\n")


if __name__ == "__main__":
    main()
