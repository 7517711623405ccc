"""The accuracy suite (issue 31): synth's aim and mst against Private-PGM (mbi 2.0) on nineteen coded
public tables, through the user's path.

One command, from the repository root (synth installed with the realdata and suite extras, in an
environment of its own: see benchmarks/accuracy_suite.md; the tables are coded by
benchmarks/suite_tables.py on first use):

    python benchmarks/accuracy_suite.py --epsilons 0.3 1 3 --seeds 3

runs synth's side for every table, engine (aim, mst), ε and seed not yet recorded, then reports
every run recorded against mbi's cached runs. mbi's side is computed separately, once, and kept:

    python benchmarks/accuracy_suite.py --references --epsilons 1 0.3 3 --seeds 3   # missing mbi runs only

(it needs the reference venv /work/venvs/mbi, see benchmarks/reference_requirements.txt; mbi's
AIM takes minutes to hours a run, so run it in the background, niced, one process at a time).
Other options: ``--tables`` (a subset, or the tables outside the suite that no default was chosen
on: ``outside_tables.py``, reported in a column of their own), ``--engines``, ``--timeout`` (seconds per synth run,
recorded as "timeout" when exceeded), ``--reference-timeout``, ``--report-only``, ``--no-summary``, and
``--variant NAME=OPTIONS``: synth runs with engine options added to every profile (a JSON object, e.g.
``compress='{"compress": true}'``), recorded under NAME and reported against the defaults on the seeds
both ran, per table and as a geometric mean per half: how a candidate default is tried on the tuning
half and then checked on the other.

synth's side. Each run is a fresh process (``--child``, one BLAS thread) that writes the coded
table as a text CSV and its complete public profile (every column categorical with its codes as
categories, ``pgm_benchmark.coded_profile``; δ = 1e-9), and runs, as a user types it,

    python -m synth run TABLE.csv --profile TABLE.toml --epsilon E --engine aim|mst --seed S -o OUT -q

as its own child: the time is that command's wall clock, the peak memory its maximum resident set
(``getrusage`` of the child). The synthetic CSV is then scored against the coded original (mean
3-way TVD), and so is the fitted model the run saved beside its Description
(description.model.npz: its exact marginals; the model error). Runs are appended to
benchmarks/out/accuracy_suite/synth_runs.jsonl (not committed; rerun when synth changes).

mbi's side: benchmarks/reference_mbi.py in the reference venv, AIM and MST with mbi's default
sampler (``--sampling round``: ``MarkovRandomField.synthetic_data``'s default), on the same coded
CSV. One JSON line per (table, mechanism, ε, seed) in benchmarks/accuracy_suite/reference_runs.jsonl,
committed with the suite: computed only when missing, never again when synth changes. A run that
exceeds ``--reference-timeout`` is recorded as "timeout" (and the other seeds of that table,
mechanism and ε are skipped in that pass); ``--retry`` computes timed-out and failed runs again.

A second, optional reference: ``--references --reference-tool dpsynth`` runs Google's DPSynth (AIM and
MST with its own defaults, benchmarks/reference_dpsynth.py in the venv /work/venvs/dpsynth, see
benchmarks/dpsynth_requirements.txt) the same way, into benchmarks/accuracy_suite/dpsynth_runs.jsonl
(committed); when that file has runs, the report gains a DPSynth aim and a DPSynth mst column.

Error: mean total-variation distance (½ L1) between the normalised 3-way marginals of the coded
original and of the synthetic table (as many rows), over all 3-way marginals, or on a table with
more than 2,000 of them over a fixed seeded sample of 2,000 (pgm_common.scored_column_sets: the
same sets for synth and mbi). The report (per table and ε: synthetic and model error of synth aim,
mbi aim, synth mst, mbi mst, time, peak MiB; per ε and half: the geometric mean of synth / mbi
over the tables where both have runs) is printed and appended to benchmarks/RESULTS.md; the ratio
to mbi per table and ε is drawn in docs/accuracy_suite.png.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from outside_tables import OUTSIDE  # noqa: E402
from pgm_benchmark import (  # noqa: E402
    DELTA,
    DPSYNTH_PYTHON,
    REFERENCE_PYTHON,
    coded_profile,
    model_column,
    read_coded_synthetic,
)
from pgm_common import describe_column_sets, kway_tvds, load_coded, scored_column_sets  # noqa: E402
from run_benchmarks import RESULTS, cpu_model, machine  # noqa: E402
from startup_benchmark import synth_source  # noqa: E402
from suite_tables import BY_NAME as SUITE_TABLES  # noqa: E402
from suite_tables import HALVES as SUITE_HALVES  # noqa: E402
from suite_tables import TABLES, write_table  # noqa: E402

SUITE = HERE / "accuracy_suite"
REFERENCE_RUNS = SUITE / "reference_runs.jsonl"  # committed: mbi's runs, computed once
DPSYNTH_RUNS = SUITE / "dpsynth_runs.jsonl"  # committed: DPSynth's runs (--reference-tool dpsynth), computed once
#: each reference tool: its venv's Python, its driver, where its runs are kept, how to make the venv,
#: and the driver's options beyond the common ones
REFERENCE_TOOLS = {
    "mbi": (REFERENCE_PYTHON, "reference_mbi.py", REFERENCE_RUNS, "reference_requirements.txt",
            ["--sampling", "round"]),
    "dpsynth": (DPSYNTH_PYTHON, "reference_dpsynth.py", DPSYNTH_RUNS, "dpsynth_requirements.txt", []),
}
SYNTH_RUNS = HERE / "out" / "accuracy_suite" / "synth_runs.jsonl"  # not committed: rerun when synth changes
FIGURE = HERE.parent / "docs" / "accuracy_suite.png"
ENGINES = ("aim", "mst")
#: the order in which tables are taken: cheap before costly, so that a pass fills most of the
#: table first (mbi's AIM on the two wide tables may not finish at all)
COST_ORDER = ("insteval", "cpssw9204", "smokeban", "military", "cpssw8", "mpls_stops", "nass_cds", "fertility",
              "diamonds", "flchain", "hdma", "gss_wages", "flights", "adult_coded", "doctoraus", "baseball", "schooling",
              "car", "caravan")
assert sorted(COST_ORDER) == sorted(SUITE_TABLES)
# the suite's halves, then the tables no default was chosen on (outside_tables), which run last
BY_NAME = {**SUITE_TABLES, **{table.name: table for table in OUTSIDE}}
HALVES = {**SUITE_HALVES, "outside": [table.name for table in OUTSIDE]}
RUN_ORDER = COST_ORDER + tuple(HALVES["outside"])
HALF_TITLES = {"tuning": "tuning half", "checking": "checking half", "outside": "outside tables (never tuned on)"}
WIDE = ("car", "caravan")  # mbi's AIM takes hours on them (16 rounds a column, tens of thousands of candidates)


def run_env(fixed_hashing: bool = False) -> dict[str, str]:
    """One BLAS thread (on 2 cores a multithreaded BLAS stalls when anything else runs);
    ``fixed_hashing``: Python's string hashing fixed too (PYTHONHASHSEED=0), without which DPSynth's
    seeded runs differ from process to process (its iteration over sets of column names)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return {**env, "PYTHONHASHSEED": "0"} if fixed_hashing else env


def coded(table: str) -> tuple[Path, Path]:
    """The coded CSV and domain JSON of a suite or outside table (written once)."""
    return write_table(BY_NAME[table])


def read_runs(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def append_run(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    record["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    with path.open("a") as handle:
        handle.write(json.dumps(record) + "\n")


def tagged(record: dict, variant: str, options: dict | None) -> dict:
    """``record`` with the variant's name and engine options, when a variant is named."""
    return {**record, "variant": variant, "options": options or {}} if variant else record


def key(record: dict) -> tuple[str, str, float, int, str]:
    return (record["table"], record["mechanism"], float(record["epsilon"]), int(record["seed"]),
            record.get("variant", ""))


# --------------------------------------------------------------------------------------------
# synth's side
# --------------------------------------------------------------------------------------------

def synth_command(csv: Path, sizes: dict[str, int], engine: str, epsilon: float, seed: int, folder: Path,
                  options: dict | None = None) -> tuple[list[str], Path]:
    """`python -m synth run` on a coded table's CSV with its complete public profile (written into
    ``folder``; ``options`` in its [engine_options]), as a user types it, and the output folder it names."""
    profile, out = folder / f"{csv.stem}.toml", folder / "out"
    profile.write_text(coded_profile(sizes, epsilon, engine, options or {}))
    return [sys.executable, "-m", "synth", "run", str(csv), "--profile", str(profile), "--epsilon", str(epsilon),
            "--engine", engine, "--seed", str(seed), "-o", str(out), "-q"], out


def synth_child(table: str, engine: str, epsilon: float, seed: int, timeout: float, variant: str = "",
                options: dict | None = None) -> dict:
    """One synth run through the user's path (module docstring), scored; runs in a fresh process.
    ``variant``: a name for ``options``, engine options added to the profile's [engine_options]."""
    csv, domain_file = coded(table)
    codes, sizes = load_coded(csv, domain_file)
    sets = scored_column_sets(len(sizes), 3)
    record = tagged({"tool": "synth", "table": table, "mechanism": engine, "epsilon": epsilon, "seed": seed,
                     "cpu": cpu_model(), "scored": describe_column_sets(len(sizes), 3, sets)}, variant, options)
    with tempfile.TemporaryDirectory(prefix=f"suite-{table}-") as folder:
        command, out = synth_command(csv, sizes, engine, epsilon, seed, Path(folder), options)
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=run_env(),
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return {**record, "status": "timeout", "seconds": timeout}
        record["seconds"] = time.perf_counter() - start
        record["peak_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if done.returncode != 0:
            return {**record, "status": "failed", "exit": done.returncode, "message": done.stderr[-2000:]}
        synthetic, outside = read_coded_synthetic(out / "synthetic.csv", sizes)
        widened = [size + 1 for size in sizes.values()]
        record.update(status="ok", tvd_3way=float(kway_tvds(codes, synthetic, widened, 3, sets).mean()),
                      rows_outside_domain=float(outside.any(axis=1).mean()), synthetic_rows=len(synthetic))
        record.update(synth_model_error(codes, sizes, out / "description.model.npz", sets))
    return record


def synth_model_error(codes: np.ndarray, sizes: dict[str, int], path: Path, sets: list) -> dict:
    """The saved model's error over the scored sets (pgm_benchmark.model_column), when the model's
    columns are the table's with the same codes; else why not."""
    from synth.columns.domain import Domain
    from synth.model.store import read_model

    model, _, _ = read_model(path)
    names = tuple(sizes)
    shapes = [np.shape(model.marginal([name])) for name in names]
    if list(model.names) != list(names) or any(shape != (size,) for shape, size in zip(shapes, sizes.values())):
        return {"model_column_skipped": f"the model's columns/codes differ from the table's: {shapes[:5]}..."}
    return model_column(codes, list(sizes.values()), model, Domain(names, tuple(sizes.values())), sets)


def run_in_group(command: list[str], timeout: float,
                 fixed_hashing: bool = False) -> subprocess.CompletedProcess | None:
    """Run ``command`` in a session of its own (``run_env(fixed_hashing)``); after ``timeout`` seconds
    stop it and everything it started (its process group) and return None."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=run_env(fixed_hashing), start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def child_command(table: str, engine: str, epsilon: float, seed: int, timeout: float, variant: str = "",
                  options: dict | None = None) -> list[str]:
    """The command that runs ``synth_child`` in a fresh process (its peak memory its own); it prints the
    run's record as the last line of its output."""
    return [sys.executable, str(Path(__file__).resolve()), "--child", table, engine, str(epsilon), str(seed),
            str(timeout), variant, json.dumps(options or {})]


def synth_side(tables: Sequence[str], engines: Sequence[str], epsilons: Sequence[float], seeds: int,
               timeout: float, retry: bool, variant: str = "", options: dict | None = None) -> None:
    """Every synth run not yet recorded (``retry``: also those that timed out or failed), with the
    engine ``options`` of ``variant`` when one is named."""
    done = {key(r) for r in read_runs(SYNTH_RUNS) if r.get("status") == "ok" or not retry}
    for epsilon in epsilons:
        for seed in range(seeds):
            for table in tables:
                for engine in engines:
                    if (table, engine, float(epsilon), seed, variant) in done:
                        continue
                    command = child_command(table, engine, epsilon, seed, timeout, variant, options)
                    finished = run_in_group(command, timeout + 1800)  # + the scoring
                    if finished is None or finished.returncode != 0:
                        why = "scoring did not finish" if finished is None else finished.stderr[-2000:]
                        record = tagged({"tool": "synth", "table": table, "mechanism": engine, "epsilon": epsilon,
                                         "seed": seed, "status": "failed", "message": why}, variant, options)
                    else:
                        record = json.loads(finished.stdout.strip().splitlines()[-1])
                    append_run(SYNTH_RUNS, record)
                    print(progress_line(record), flush=True)


def progress_line(record: dict) -> str:
    name = record["mechanism"] + (f" [{record['variant']}]" if record.get("variant") else "")
    head = f"{record['tool']:5s} {record['table']:12s} {name} eps={record['epsilon']:<4g} seed={record['seed']}"
    if record.get("status") != "ok":
        detail = record.get("message", "").strip().splitlines()[-1:] or [f"{record.get('seconds', 0):.0f} s"]
        return f"{head} {record.get('status')}: {detail[0]}"
    model = f" model {record['tvd_3way_model']:.4f}" if "tvd_3way_model" in record else ""
    return f"{head} tvd {record['tvd_3way']:.4f}{model} {record['seconds']:.1f} s {record['peak_mib']:.0f} MiB"


# --------------------------------------------------------------------------------------------
# mbi's side (cached)
# --------------------------------------------------------------------------------------------

def reference_command(tool: str, table: str, engine: str, epsilon: float, seed: int) -> list[str]:
    """The command that runs the reference ``tool``'s ``engine`` on a coded suite table."""
    python, driver, _, requirements, options = REFERENCE_TOOLS[tool]
    if not python.exists():
        raise SystemExit(f"{python} is missing; create the reference venv first (see benchmarks/{requirements})")
    csv, domain_file = coded(table)
    return [str(python), str(HERE / driver), "--mechanism", engine, "--epsilon", str(epsilon), "--delta", str(DELTA),
            "--seed", str(seed), *options, "--data", str(csv), "--domain", str(domain_file)]


def reference_side(tables: Sequence[str], engines: Sequence[str], epsilons: Sequence[float], seeds: int,
                   timeout: float, retry: bool, tool: str = "mbi") -> None:
    """Every missing run of the reference ``tool`` (mbi, or DPSynth), in the order: ε as given, then
    mechanism as given; within those, every seed of the narrow tables (seed, then table, cheap first)
    before the wide ones (``WIDE``), whose AIM may run for hours. A run that times out skips the other
    seeds of its table, mechanism and ε."""
    runs = REFERENCE_TOOLS[tool][2]
    for epsilon in epsilons:
        for engine in engines:
            narrow_first = [(seed, table) for wide in (False, True) for seed in range(seeds)
                            for table in sorted(tables, key=RUN_ORDER.index) if (table in WIDE) == wide]
            for seed, table in narrow_first:
                recorded = read_runs(runs)  # read again: another pass may be writing too
                done = {key(r) for r in recorded if r.get("status") == "ok" or not retry}
                stalled = {key(r)[:3] for r in recorded if r.get("status") == "timeout" and not retry}
                if (table, engine, float(epsilon), seed, "") in done or (table, engine, float(epsilon)) in stalled:
                    continue
                command = reference_command(tool, table, engine, epsilon, seed)
                record = {"tool": tool, "table": table, "mechanism": engine, "epsilon": epsilon, "seed": seed,
                          "cpu": cpu_model()}
                start = time.perf_counter()
                finished = run_in_group(command, timeout, fixed_hashing=True)
                if finished is None:
                    record.update(status="timeout", seconds=timeout)
                elif finished.returncode != 0:
                    record.update(status="failed", seconds=time.perf_counter() - start,
                                  message=finished.stderr[-2000:])
                else:
                    record.update(json.loads(finished.stdout.strip().splitlines()[-1]), status="ok")
                    record["epsilon"] = epsilon
                append_run(runs, record)
                print(progress_line(record), flush=True)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def grouped(records: Iterable[dict]) -> dict[tuple[str, str, float], list[dict]]:
    groups: dict[tuple[str, str, float], list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["table"], r["mechanism"], float(r["epsilon"]))].append(r)
    return groups


def summary(runs: list[dict]) -> dict | None:
    """Mean errors, mean time and max peak of the finished runs, or a word for why there are none."""
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return {"word": sorted({r.get("status", "?") for r in runs})[0]} if runs else None
    models = [r["tvd_3way_model"] for r in ok if "tvd_3way_model" in r]
    return {"tvd": float(np.mean([r["tvd_3way"] for r in ok])), "model": float(np.mean(models)) if models else None,
            "runs": len(ok), "seconds": float(np.mean([r["seconds"] for r in ok])),
            "peak": float(max(r["peak_mib"] for r in ok))}


def cell(entry: dict | None) -> str:
    if entry is None:
        return "—"
    if "word" in entry:
        return entry["word"]
    model = f" ({entry['model']:.4f})" if entry["model"] is not None else ""
    return f"{entry['tvd']:.4f}{model} ×{entry['runs']}"


def resources(entry: dict | None) -> str:
    return "—" if entry is None or "word" in entry else f"{entry['seconds']:,.0f} s, {entry['peak']:,.0f}"


def report(tables: Sequence[str], epsilons: Sequence[float]) -> tuple[list[str], dict]:
    """The markdown report and the ratios {(ε, engine): {table: synth/mbi}}."""
    synth = grouped(r for r in read_runs(SYNTH_RUNS) if not r.get("variant"))
    mbi = grouped(read_runs(REFERENCE_RUNS))
    dpsynth = grouped(read_runs(DPSYNTH_RUNS))  # the second reference: two columns more when it has runs
    shapes = {}
    for table in tables:
        csv, domain_file = coded(table)
        shapes[table] = (sum(1 for _ in csv.open()) - 1, len(json.loads(domain_file.read_text())))
    lines = ["| half | table | rows × cols | ε | synth aim | mbi aim | synth mst | mbi mst | aim time, peak MiB: "
             "synth / mbi | mst time, peak MiB: synth / mbi |" + (" DPSynth aim | DPSynth mst |" if dpsynth else ""),
             "| --- | --- | --- | ---: | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if dpsynth else "")]
    ratios: dict[tuple[float, str], dict[str, float]] = defaultdict(dict)
    for epsilon in epsilons:
        for table in tables:
            entries = {(tool, engine): summary(side.get((table, engine, float(epsilon)), []))
                       for tool, side in (("synth", synth), ("mbi", mbi), ("dpsynth", dpsynth)) for engine in ENGINES}
            if all(e is None for e in entries.values()):
                continue
            rows, cols = shapes[table]
            lines.append(f"| {BY_NAME[table].half} | {table} | {rows:,} × {cols} | {epsilon:g} | "
                         + " | ".join(cell(entries[(tool, engine)]) for engine in ENGINES for tool in ("synth", "mbi"))
                         + " | " + " | ".join(f"{resources(entries[('synth', engine)])} / {resources(entries[('mbi', engine)])}"
                                              for engine in ENGINES) + " |"
                         + "".join(f" {cell(entries[('dpsynth', engine)])} |" for engine in ENGINES if dpsynth))
            for engine in ENGINES:
                ours, theirs = entries[("synth", engine)], entries[("mbi", engine)]
                if ours and theirs and "tvd" in ours and "tvd" in theirs:
                    ratios[(epsilon, engine)][table] = ours["tvd"] / theirs["tvd"]
    halves = [half for half in HALVES if half != "outside" or any(t in tables for t in HALVES[half])]
    lines += ["", "Geometric mean of synth / mbi (mean 3-way TVD of the synthetic tables; n = tables with runs of both):",
              "", "| ε | engine | " + " | ".join(HALF_TITLES[h] for h in halves) + " |",
              "| ---: | --- |" + " --- |" * len(halves)]
    for epsilon in epsilons:
        for engine in ENGINES:
            found = ratios.get((epsilon, engine), {})
            parts = []
            for half in halves:
                values = [found[t] for t in HALVES[half] if t in found and t in tables]
                parts.append(f"{math.exp(np.mean(np.log(values))):.3f} (n = {len(values)})" if values else "—")
            lines.append(f"| {epsilon:g} | {engine} | " + " | ".join(parts) + " |")
    return lines, ratios


def variant_report(tables: Sequence[str], epsilons: Sequence[float]) -> list[str]:
    """Each variant recorded (``--variant``) against synth's defaults, on the seeds both have run:
    mean 3-way TVD per table and ε, and the geometric mean of variant / default per half."""
    runs = read_runs(SYNTH_RUNS)
    variants = sorted({r["variant"] for r in runs if r.get("variant")})
    if not variants:
        return []
    ok = {key(r): r["tvd_3way"] for r in runs if r.get("status") == "ok"}
    lines = ["", "Variants against synth's defaults (mean 3-way TVD over the seeds both ran; ratio variant / default):",
             "", "| variant | engine | ε | table | half | default | variant | ratio |",
             "| --- | --- | ---: | --- | --- | --- | --- | ---: |"]
    means: dict[tuple[str, str, float, str], list[float]] = defaultdict(list)
    for variant in variants:
        for engine in ENGINES:
            for epsilon in epsilons:
                for table in tables:
                    seeds = [k[3] for k in ok if k[:3] == (table, engine, float(epsilon)) and k[4] == variant
                             and (table, engine, float(epsilon), k[3], "") in ok]
                    if not seeds:
                        continue
                    base = float(np.mean([ok[(table, engine, float(epsilon), s, "")] for s in seeds]))
                    mine = float(np.mean([ok[(table, engine, float(epsilon), s, variant)] for s in seeds]))
                    half = BY_NAME[table].half
                    means[(variant, engine, epsilon, half)].append(mine / base)
                    lines.append(f"| {variant} | {engine} | {epsilon:g} | {table} | {half} | {base:.4f} ×{len(seeds)} | "
                                 f"{mine:.4f} | {mine / base:.3f} |")
    lines += ["", "| variant | engine | ε | tuning half | checking half |", "| --- | --- | ---: | --- | --- |"]
    for (variant, engine, epsilon) in sorted({k[:3] for k in means}):
        parts = [f"{math.exp(np.mean(np.log(v))):.3f} (n = {len(v)})" if (v := means.get((variant, engine, epsilon, h)))
                 else "—" for h in ("tuning", "checking")]
        lines.append(f"| {variant} | {engine} | {epsilon:g} | {parts[0]} | {parts[1]} |")
    return lines


def plot(ratios: dict, tables: Sequence[str], epsilons: Sequence[float]) -> None:
    """docs/accuracy_suite.png: synth / mbi per table, one panel per ε, aim and mst."""
    from matplotlib.figure import Figure

    order = [t for half in HALVES for t in HALVES[half] if t in tables]
    figure = Figure(figsize=(max(6.0, 0.55 * len(order) + 2), 3.0 * len(epsilons)))
    for panel, epsilon in enumerate(epsilons, 1):
        axes = figure.add_subplot(len(epsilons), 1, panel)
        for shift, engine, marker in ((-0.12, "aim", "o"), (0.12, "mst", "s")):
            found = ratios.get((epsilon, engine), {})
            xs = [i + shift for i, t in enumerate(order) if t in found]
            axes.scatter(xs, [found[t] for t in order if t in found], marker=marker, label=f"synth {engine} / mbi {engine}")
        axes.axhline(1.0, color="black", linewidth=0.8)
        axes.axhline(0.9, color="grey", linewidth=0.6, linestyle="--")
        for half in ("tuning", "checking"):  # a line after each half
            axes.axvline(len([t for t in order if BY_NAME[t].half in ("tuning", half)]) - 0.5, color="grey",
                         linewidth=0.6)
        axes.set_xticks(range(len(order)), order, rotation=30, ha="right", fontsize=7)
        axes.set_yscale("log")
        axes.set_ylabel("synth / mbi (3-way TVD)")
        axes.set_title(f"ε = {epsilon:g} (between the lines, from the left: tuning half, checking half, outside "
                       "tables)", fontsize=8)
        axes.legend(fontsize=6)
    figure.tight_layout()
    FIGURE.parent.mkdir(exist_ok=True)
    figure.savefig(FIGURE, dpi=96)
    print(f"plot: {FIGURE}")


def append_results(lines: list[str], note: str = "") -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = f"python benchmarks/{Path(sys.argv[0]).name} " + " ".join(sys.argv[1:])
    text = [f"\n## Accuracy suite (issue 31) — {stamp}\n",
            f"Machine: {machine()}. synth: {synth_source(sys.executable)}. Command: `{command}`. "
            "Each cell: mean 3-way TVD of the synthetic table (the fitted model's, in brackets) over the "
            "seeds run (×n); mbi 2.0 from benchmarks/accuracy_suite/reference_runs.jsonl (cached; "
            "benchmarks/reference_mbi.py, sampler \"round\"); synth through `python -m synth run` with a "
            f"complete public profile, δ = {DELTA:g}. Tables with more than 2,000 3-way marginals are scored "
            "on a fixed seeded sample of 2,000 (the same for both). Time: wall clock of the run; peak: its max "
            "RSS in MiB. mbi's times are those of its cached runs, made on the machine each record names "
            "(`cpu`; records without one come from earlier machines, the last an AMD EPYC VM on which mbi ran about "
            "three times slower than on an Intel Xeon one), so for speed ratios on one machine see "
            "benchmarks/speed_check.py. Tables and their bins: benchmarks/accuracy_suite.md." + (f" {note}" if note else "") + "\n",
            *lines, ""]
    with RESULTS.open("a") as handle:
        handle.write("\n".join(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=[t.name for t in TABLES], choices=list(BY_NAME),
                        help="the suite's tables (default), or some of them and of the outside tables")
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per synth run")
    parser.add_argument("--references", action="store_true",
                        help="compute the missing runs of the reference tool (only)")
    parser.add_argument("--reference-tool", choices=list(REFERENCE_TOOLS), default="mbi",
                        help="with --references: mbi (Private-PGM 2.0) or dpsynth (Google's DPSynth)")
    parser.add_argument("--reference-timeout", type=float, default=3 * 3600.0, help="seconds per reference run")
    parser.add_argument("--retry", action="store_true", help="run again the runs that timed out or failed")
    parser.add_argument("--report-only", action="store_true", help="no runs: report what is recorded")
    parser.add_argument("--no-summary", action="store_true", help="do not append to RESULTS.md nor draw the plot")
    parser.add_argument("--variant", default="", metavar="NAME=OPTIONS",
                        help='synth runs with these engine options, recorded under NAME and reported against the '
                             'defaults, e.g. compress=\'{"compress": true}\'')
    parser.add_argument("--note", default="", help="a sentence added to the RESULTS.md entry (e.g. how the runs were made)")
    args = parser.parse_args()
    if args.references:
        reference_side(args.tables, args.engines, args.epsilons, args.seeds, args.reference_timeout, args.retry,
                       args.reference_tool)
        return
    variant, _, options = args.variant.partition("=")
    if variant and not options:
        parser.error("--variant needs NAME=OPTIONS, the options as a JSON object")
    if not args.report_only:
        synth_side(args.tables, args.engines, args.epsilons, args.seeds, args.timeout, args.retry, variant,
                   json.loads(options) if options else None)
    lines, ratios = report(args.tables, args.epsilons)
    lines += variant_report(args.tables, args.epsilons)
    print("\n".join(lines))
    if not args.no_summary:
        append_results(lines, args.note)
        plot(ratios, args.tables, args.epsilons)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        table, engine, epsilon, seed, timeout, variant, options = sys.argv[2:9]
        print(json.dumps(synth_child(table, engine, float(epsilon), int(seed), float(timeout), variant,
                                     json.loads(options))))
    else:
        main()
