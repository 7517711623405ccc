"""Side-by-side benchmark of synth's marginal engines and the Private-PGM reference on adult_coded.

Usage (from the repository root, after `pip install .`; the reference needs its own venv, see
benchmarks/reference_requirements.txt):

    python benchmarks/pgm_benchmark.py --epsilons 0.1 0.3 1 3 10 --seeds 5
    python benchmarks/pgm_benchmark.py --epsilons 1 --seeds 2 --cases synth-mst mbi-mst   # a subset

Cases: synth-mst, synth-aim (3-way workload), synth-aim-2way, synth-aim-compressed (3-way, on codes
merged by noisy 1-way counts), mbi-mst, mbi-aim, mbi-aim-2way.
Every run is a fresh process (its peak memory is its own; a synth run's is read when its synthetic
table is drawn, before the scoring, since the model's exact marginals of 364 triples can take
gigabytes on a large model). Error: mean over all 364 3-way marginals of the total-variation
distance (half the L1 distance) between the normalised
marginals of the original table and of a synthetic table with as many rows (pgm_common). A synth
run also scores the fitted model's exact marginals (the error a perfect sampler would reach) and
tables sampled from the same model with rounded draws only and i.i.d., so that a sampler
regression shows as a gap between the model column and the sampled ones (the time and memory are
those of the default, matched, sampler). The model column is computed within 12 GiB of address
space; a model whose exact marginals need more gets none, and the run says why.
Runs get OPENBLAS_NUM_THREADS=1. Runs already recorded are skipped (resumable; --redo repeats them).
Each run appends one JSON line to benchmarks/out/pgm_runs.jsonl; the summary (mean ± standard
error over seeds) of everything in that file is appended to benchmarks/RESULTS.md.
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
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pgm_common import kway_tvds, load_adult_coded, mean_kway_tvd_model  # noqa: E402

OUT = HERE / "out"
RUNS = OUT / "pgm_runs.jsonl"
RESULTS = HERE / "RESULTS.md"
REFERENCE_PYTHON = Path("/work/venvs/mbi/bin/python")
DPSYNTH_PYTHON = Path("/work/venvs/dpsynth/bin/python")  # the second reference (benchmarks/dpsynth_requirements.txt)
DELTA = 1e-9
MODEL_COLUMN_MAX_BYTES = 12 << 30  # address space of a run while it scores its model's exact marginals
ERROR_METRIC = ("Error: mean over all 364 3-way marginals of the total-variation distance (½ L1) between "
                "normalised marginals of the original (48,842 rows) and a synthetic table of as many rows;")
CASES = {
    "synth-mst": ("synth", "mst", {}),
    "synth-aim": ("synth", "aim", {"workload": "3-way"}),
    "synth-aim-2way": ("synth", "aim", {"workload": "2-way"}),
    "synth-aim-compressed": ("synth", "aim", {"workload": "3-way", "compress": True}),
    "run-aim": ("cli", "aim", {}),
    "run-aim-compressed": ("cli", "aim", {"compress": True}),
    "run-mst": ("cli", "mst", {}),
    "mbi-mst": ("mbi", "mst", ["--mechanism", "mst"]),
    "mbi-aim": ("mbi", "aim", ["--mechanism", "aim", "--workload", "3way"]),
    "mbi-aim-2way": ("mbi", "aim", ["--mechanism", "aim", "--workload", "2way"]),
}


def run_synth(case: str, epsilon: float, seed: int) -> dict:
    """One synth run in this process: describe under DP, fit, sample, score."""
    from synth.columns.domain import Domain
    from synth.engines import make_engine
    from synth.model.compression import compressed_sizes
    from synth.model.matching import sample_codes
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.privacy.curator import CountRelease, Curator
    from synth.privacy.neighbours import Neighbouring
    from synth.progress import SILENT

    _, engine_name, options = CASES[case]
    codes, sizes = load_adult_coded()
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    accountant = Accountant(Budget(epsilon, DELTA))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring()))
    engine = make_engine(engine_name, options)
    result = engine.describe(curator, SILENT)
    model_domain = Domain(domain.names, compressed_sizes(domain.names, domain.sizes, result.compression))
    model = engine.build_model(model_domain, result)
    synthetic = sample_codes(model, domain, len(codes), np.random.default_rng(seed))  # the default: matched
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # synth's path, before the scoring
    spent = accountant.spent()
    columns = list(sizes.values())
    rounded = sample_codes(model, domain, len(codes), np.random.default_rng(seed), "rounded")
    iid = sample_codes(model, domain, len(codes), np.random.default_rng(seed), "iid")
    return {
        "tool": "synth", "case": case, "mechanism": engine_name, "epsilon": epsilon, "seed": seed,
        "tvd_3way": float(kway_tvds(codes, synthetic, columns, 3).mean()),
        "tvd_3way_rounded": float(kway_tvds(codes, rounded, columns, 3).mean()),
        "tvd_3way_iid": float(kway_tvds(codes, iid, columns, 3).mean()),
        **model_column(codes, columns, model, domain),
        "seconds": seconds, "peak_mib": peak_mib,
        "spent_epsilon": spent["epsilon"], "measurements": len(result.measurements),
    }


def model_column(codes: np.ndarray, columns: list[int], model: Any, domain: Any,
                 sets: Sequence[tuple[int, ...]] | None = None) -> dict:
    """The model column (``tvd_3way_model``: the model's exact marginals against the original's, over
    all 3-way marginals or the column ``sets`` given), or why it was left out: variable elimination over a large aim model's separators can take tens of
    gigabytes (one model at ε = 3 was killed by the out-of-memory killer at 23 GB, taking the
    machine's other jobs' memory with it), so this run's address space is held to
    ``MODEL_COLUMN_MAX_BYTES`` while it is computed, and running out leaves the column out."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MODEL_COLUMN_MAX_BYTES if hard == resource.RLIM_INFINITY else min(MODEL_COLUMN_MAX_BYTES, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        return {"tvd_3way_model": mean_kway_tvd_model(codes, columns, 3,
                                                      lambda cols: model.marginal([domain.names[c] for c in cols]),
                                                      sets)}
    except MemoryError:
        return {"model_column_skipped": f"the model's exact marginals need more than {limit / 2**30:.0f} GiB"}
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def coded_profile(sizes: dict[str, int], epsilon: float, engine: str, options: dict) -> str:
    """A complete public profile of adult_coded: each column categorical, its codes 0..size-1 as
    every category (``complete``, ``missing = false``); the engine's options as given."""
    lines = ["[release]", f"epsilon = {epsilon!r}", f"delta = {DELTA!r}", f'engine = "{engine}"', "",
             "[engine_options]", *(f"{key} = {json.dumps(value)}" for key, value in options.items()), ""]
    for name, size in sizes.items():
        lines += [f'[columns."{name}"]', 'kind = "categorical"', f"categories = {json.dumps([str(code) for code in range(size)])}",
                  "complete = true", "missing = false", ""]
    return "\n".join(lines)


def run_cli(case: str, epsilon: float, seed: int) -> dict:
    """One run through the user's path: ``synth run`` on adult_coded.csv with a complete public
    profile (coded_profile), the synthetic CSV scored like the other runs. A cell holding anything
    but a code of its column (OTHER, missing) is scored as one extra value of that column."""
    import tempfile

    from pgm_common import DATA_DIR

    _, engine_name, options = CASES[case]
    codes, sizes = load_adult_coded()
    with tempfile.TemporaryDirectory() as folder:
        profile = Path(folder) / "adult_coded.toml"
        profile.write_text(coded_profile(sizes, epsilon, engine_name, options))
        command = [str(Path(sys.executable).with_name("synth")), "run", str(Path(DATA_DIR) / "adult_coded.csv"),
                   "--profile", str(profile), "--seed", str(seed), "-o", str(Path(folder) / "out"), "-q"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{case} at epsilon={epsilon}, seed={seed} failed:\n{done.stderr[-3000:]}")
        (table,) = [path for path in (Path(folder) / "out").glob("*.csv")]
        synthetic, outside = read_coded_synthetic(table, sizes)
    widened = [size + 1 for size in sizes.values()]
    return {"tool": "synth run", "case": case, "mechanism": engine_name, "epsilon": epsilon, "seed": seed,
            "tvd_3way": float(kway_tvds(codes, synthetic, widened, 3).mean()),
            "rows_outside_domain": float(outside.any(axis=1).mean()), "synthetic_rows": len(synthetic),
            "seconds": seconds, "peak_mib": float("nan")}


def read_coded_synthetic(path: Path, sizes: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The codes of a synthetic CSV that ``synth run`` wrote from a coded table with its complete
    profile (``coded_profile``), and a mask of the cells outside the domain: a cell holding anything
    but a code of its column (OTHER, missing) is given the code ``size``, one extra value of that
    column, so score it with the sizes widened by one."""
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    synthetic = np.column_stack([pd.to_numeric(frame[name], errors="coerce").to_numpy() for name in sizes])
    upper = np.array(list(sizes.values()))
    outside = ~np.isfinite(synthetic) | (synthetic < 0) | (synthetic >= upper)
    return np.where(outside, upper, np.nan_to_num(synthetic)).astype(np.int64), outside


def run_case(case: str, epsilon: float, seed: int) -> dict:
    tool, _, arguments = CASES[case]
    if tool == "cli":
        return run_cli(case, epsilon, seed)
    if tool == "synth":
        command = [sys.executable, __file__, "--child", case, str(epsilon), str(seed)]
    else:
        if not REFERENCE_PYTHON.exists():
            raise SystemExit(f"{REFERENCE_PYTHON} is missing; create the reference venv first "
                             "(see benchmarks/reference_requirements.txt)")
        command = [str(REFERENCE_PYTHON), str(HERE / "reference_mbi.py"), *arguments,
                   "--epsilon", str(epsilon), "--delta", str(DELTA), "--seed", str(seed)]
    # one BLAS thread: on 2 cores a multithreaded BLAS stalls when anything else runs
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{case} at epsilon={epsilon}, seed={seed} failed:\n{done.stderr[-3000:]}")
    record = json.loads(done.stdout.strip().splitlines()[-1])
    record["case"] = case
    return record


def run_child(python: str, script: str, case: str, epsilon: float, seed: int, timeout: float | None = None) -> dict:
    """Run ``script --child case epsilon seed`` with ``python`` in a fresh process (one BLAS thread:
    on 2 cores a multithreaded BLAS stalls when anything else runs) and return the JSON record it
    prints last; after ``timeout`` seconds the run is stopped and recorded as not finished."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    try:
        done = subprocess.run([python, script, "--child", case, str(epsilon), str(seed)], capture_output=True,
                              text=True, check=False, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"case": case, "epsilon": epsilon, "seed": seed, "timed_out": True, "seconds": timeout,
                "peak_mib": float("nan")}
    if done.returncode != 0:
        raise SystemExit(f"{case} at epsilon={epsilon}, seed={seed} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def grid_main(doc: str, runs: Path, cases: Sequence[str], default_cases: Sequence[str],
              run_case: Callable[[str, float, int], dict], show: Callable[[dict], str], title: str,
              method: str, figure: Path | None = None) -> None:
    """The command line of a grid benchmark: options for ε values, seeds, cases, --redo and
    --no-summary; then the grid (``run_grid``), its summary (``append_summary``) and, given a
    ``figure`` path, the error-against-ε curves of every run recorded (``plot_error_curves``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--cases", nargs="+", default=list(default_cases), choices=list(cases))
    parser.add_argument("--redo", action="store_true", help=f"run again the runs already in {runs.name}")
    parser.add_argument("--no-summary", action="store_true", help="record runs but do not append to RESULTS.md")
    args = parser.parse_args()
    run_grid(runs, args.epsilons, args.seeds, args.cases, args.redo, run_case, show)
    if not args.no_summary:
        append_summary(runs, title, method)
        if figure is not None:
            plot_error_curves(runs, figure, title)


def plot_error_curves(runs: Path, figure_path: Path, title: str) -> None:
    """A PNG of mean error (± s.e.) against ε, one panel per data set (the part of the case name
    before ``/``), one line per case, from every finished run in ``runs``."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator

    groups: dict[str, dict[str, dict[float, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for record in map(json.loads, runs.read_text().splitlines()):
        if not record.get("timed_out"):
            data, _, case = record["case"].rpartition("/")
            groups[data][case][float(record["epsilon"])].append(record["tvd_3way"])
    names = sorted({case for cases in groups.values() for case in cases})
    colours = {case: colormaps["tab20"](i % 20) for i, case in enumerate(names)}  # one colour a case everywhere
    columns = min(2, len(groups))
    rows = -(-len(groups) // columns)
    figure = Figure(figsize=(5.5 * columns, 4.2 * rows))
    for panel, (data, cases) in enumerate(sorted(groups.items()), 1):
        axes = figure.add_subplot(rows, columns, panel)
        for case, by_epsilon in sorted(cases.items()):
            epsilons = sorted(by_epsilon)
            means = [np.mean(by_epsilon[e]) for e in epsilons]
            errors = [np.std(by_epsilon[e], ddof=1) / np.sqrt(len(by_epsilon[e])) if len(by_epsilon[e]) > 1 else 0
                      for e in epsilons]
            axes.errorbar(epsilons, means, yerr=errors, marker="o", markersize=3, capsize=2, label=case,
                          color=colours[case])
        ticks = sorted({e for by_epsilon in cases.values() for e in by_epsilon})
        axes.set(xscale="log", yscale="log", xlabel="ε", title=data or title)
        axes.set_xticks(ticks, [f"{e:g}" for e in ticks])
        axes.xaxis.set_minor_locator(NullLocator())
        axes.set_ylabel("mean 3-way TVD")
        axes.legend(fontsize=6)
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(figure_path, dpi=96)
    print(f"error curves: {figure_path}")


def _mean_se(values: Sequence[float]) -> str:
    """``mean ± standard error`` (nan for one value), or — when there is none."""
    if not values:
        return "—"
    array = np.asarray(values, dtype=float)
    se = array.std(ddof=1) / np.sqrt(array.size) if array.size > 1 else float("nan")
    return f"{array.mean():.4f} ± {se:.4f}"


def summary_table(records: list[dict]) -> list[str]:
    """Mean ± s.e. per case and ε; when runs also scored their model, a rounded and an i.i.d. sample
    (``tvd_3way_model``, ``tvd_3way_rounded``, ``tvd_3way_iid``), those columns beside the sampled error."""
    groups: dict[tuple[str, float], list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["case"], float(r["epsilon"]))].append(r)
    scored = [key for key in ("tvd_3way_model", "tvd_3way_rounded", "tvd_3way_iid") if any(key in r for r in records)]
    titles = {"tvd_3way_model": "model's exact marginals", "tvd_3way_rounded": "rounded sample",
              "tvd_3way_iid": "i.i.d. sample"}
    lines = ["| case | ε | runs | mean 3-way TVD ± s.e. | " + "".join(f"{titles[k]} | " for k in scored)
             + "time (s) | peak memory (MiB) |",
             "| --- | ---: | ---: | --- | " + "--- | " * len(scored) + "---: | ---: |"]
    for (case, epsilon), runs in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
        unfinished = [r for r in runs if r.get("timed_out")]
        runs = [r for r in runs if not r.get("timed_out")]
        if unfinished:
            lines.append(f"| {case} | {epsilon:g} | {len(unfinished)} | did not finish in "
                         f"{min(r['seconds'] for r in unfinished):,.0f} s (stopped) | " + "— | " * len(scored)
                         + "— | — |")
        if not runs:
            continue
        seconds = np.mean([r["seconds"] for r in runs])
        peak = max(r["peak_mib"] for r in runs)
        extra = "".join(f"{_mean_se([r[k] for r in runs if k in r])} | " for k in scored)
        lines.append(f"| {case} | {epsilon:g} | {len(runs)} | {_mean_se([r['tvd_3way'] for r in runs])} | {extra}"
                     f"{seconds:.1f} | {peak:.0f} |")
    return lines


def run_grid(runs: Path, epsilons: Sequence[float], seeds: int, cases: Sequence[str], redo: bool,
             run_case: Callable[[str, float, int], dict], show: Callable[[dict], str]) -> None:
    """Run every (ε, seed, case) not yet recorded in ``runs`` (all of them with ``redo``), appending
    each record, dated, as one JSON line as soon as it finishes (so an interrupted grid resumes)."""
    runs.parent.mkdir(exist_ok=True)
    done = set() if redo or not runs.exists() else {
        (r["case"], float(r["epsilon"]), int(r["seed"])) for r in map(json.loads, runs.read_text().splitlines())}
    for epsilon in epsilons:
        for seed in range(seeds):
            for case in cases:
                if (case, float(epsilon), seed) in done:
                    continue
                record = run_case(case, epsilon, seed)
                record["date"] = datetime.now(UTC).isoformat(timespec="seconds")
                with runs.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
                outcome = "did not finish" if record.get("timed_out") else show(record)
                print(f"{case:15s} eps={epsilon:<5g} seed={seed} {outcome} "
                      f"{record['seconds']:.1f} s {record['peak_mib']:.0f} MiB", flush=True)


def append_summary(runs: Path, title: str, method: str) -> None:
    """Append to RESULTS.md (and print) a dated summary of every run in ``runs``: the machine, the
    command, ``method`` (what was measured and how) and the table of mean ± s.e. per case and ε."""
    records = [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.system()} {platform.machine()}, 2 cores, Python {platform.python_version()}"
    command = f"python benchmarks/{Path(sys.argv[0]).name} " + " ".join(sys.argv[1:])
    text = [f"\n## {title} — {stamp}\n",
            f"Machine: {machine}. Command: `{command}` (all runs recorded in {runs.name} are summarised). "
            f"{method}\n",
            *summary_table(records), ""]
    with RESULTS.open("a") as handle:
        handle.write("\n".join(text))
    print("\n".join(text))


def show_run(record: dict) -> str:
    """One run's errors for the progress line: sampled, and for synth its model, rounded and i.i.d. samples."""
    parts = [f"{name} {record[key]:.4f}" for key, name in (("tvd_3way_model", "model"), ("tvd_3way_rounded", "rounded"),
                                                              ("tvd_3way_iid", "i.i.d.")) if key in record]
    if "model_column_skipped" in record:
        parts.insert(0, f"model not scored: {record['model_column_skipped']}")
    return f"tvd={record['tvd_3way']:.4f}" + (f" ({', '.join(parts)})" if parts else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--redo", action="store_true",
                        help="run again (case, ε, seed) triples already in pgm_runs.jsonl; by default they are skipped")
    parser.add_argument("--no-summary", action="store_true", help="record runs but do not append to RESULTS.md")
    parser.add_argument("--runs-file", type=Path, default=RUNS,
                        help="JSON-lines file the runs are recorded in and summarised from (default: %(default)s); "
                             "e.g. a separate file for timing runs on an otherwise idle machine")
    parser.add_argument("--title", default="Marginal engines vs Private-PGM (mbi 2.0) on adult_coded",
                        help="heading of the summary appended to RESULTS.md")
    args = parser.parse_args()
    run_grid(args.runs_file, args.epsilons, args.seeds, args.cases, args.redo, run_case,
             show_run)
    if not args.no_summary:
        append_summary(args.runs_file, args.title, f"{ERROR_METRIC} δ = {DELTA:g}; time is mechanism + fit + "
                       "sampling; mbi runs in its own venv (benchmarks/reference_requirements.txt) through "
                       "benchmarks/reference_mbi.py.")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(run_synth(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()
