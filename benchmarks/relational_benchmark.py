"""The relational benchmark (issue 33): synth's per-person releases of public databases, against the
naive release and a join-as-units baseline, scored by ``synth.evaluate.relational``.

For each database (benchmarks/relational_tables.py), ε and seed it:

a. runs ``synth run DB.sqlite --profile P.toml --epsilon E --seed S -o OUT`` as a subprocess (the
   user's path; the profiles are benchmarks/relational_profiles/NAME.toml), timing it and reading
   its peak resident memory from the kernel's accounting of that process (``os.wait4`` in a small
   launcher, so that the benchmark's own memory is not counted);
b. builds the **join-as-units baseline**: each child table joined with its parent's columns (named
   ``ROOT.col``, as synth names them) as one CSV, with a single-table profile holding the same
   public domains, and runs ``synth run join.csv --profile join.toml --epsilon E --seed S``. That
   release treats each child row as the privacy unit; one person with k child rows is a group of
   k, so under zCDP its person-level cost is k²ρ for the ρ it spent. The table reports that true
   guarantee, converted to ε at the same δ with synth's own conversion
   (``synth.privacy.composition.zcdp_to_approx_epsilon``), for k = the most child rows one root
   row has in this database (in general k is unbounded, and so is the baseline's ε);
c. scores both with ``synth.evaluate.relational`` (``score_release`` and ``score_join`` below are
   the only calls into it; the scores are left blank while that module does not exist);
d. prints a results table, and appends it to benchmarks/RESULTS.md with ``--write-results``.

Runs write under benchmarks/out/relational/ (not committed); every run's figures also go to
benchmarks/out/relational/results.jsonl. Seeded releases carry no privacy guarantee: benchmark only.

    python benchmarks/relational_benchmark.py                                   # every database, ε = 1, seed 0
    python benchmarks/relational_benchmark.py --epsilons 1 3 --seeds 3 --datasets flights males
    python benchmarks/relational_benchmark.py --max-children dp --datasets flights   # override the profiles' bound
    python benchmarks/relational_benchmark.py --write-results                   # also append to RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import tomli_w

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from relational_tables import BUILDERS, OUT_DIR, RelationalData, build  # noqa: E402

from synth.privacy.composition import zcdp_to_approx_epsilon  # noqa: E402

PROFILES_DIR = HERE / "relational_profiles"
RUNS_DIR = OUT_DIR / "runs"
RESULTS_JSONL = OUT_DIR / "results.jsonl"
RESULTS_MD = HERE / "RESULTS.md"


# --------------------------------------------------------------------------------------------
# Scoring: the only calls into synth.evaluate.relational
# --------------------------------------------------------------------------------------------

_MISSING_EVALUATION: list[str] = []


def _evaluation() -> Any | None:
    """The module ``synth.evaluate.relational``, or None (once said on the console) while it does not exist."""
    try:
        from synth.evaluate import relational as evaluation
    except ImportError as error:
        if not _MISSING_EVALUATION:
            print(f"warning: synth.evaluate.relational cannot be imported ({error}); scores are left blank.")
            _MISSING_EVALUATION.append(str(error))
        return None
    return evaluation


def score_release(database: Path, release: Path, seed: int) -> dict[str, Any] | None:
    """``evaluate_database(database, release, seed=seed).to_dict()``: per-table, children-per-parent,
    cross-relation and referential-integrity scores of a relational release (None: no evaluation)."""
    evaluation = _evaluation()
    if evaluation is None:
        return None
    return evaluation.evaluate_database(database, release, seed=seed).to_dict()


def score_join(database: Path, release: Path, child: str, joined: pd.DataFrame) -> float | None:
    """``cross_relation_tvd(database, release, child, joined)``: the join baseline's synthetic table
    (``ROOT.col`` and ``child``'s columns) scored on the cross-relation pairs synth's release is
    scored on (``release``: that synth release's folder). None: no evaluation."""
    evaluation = _evaluation()
    if evaluation is None:
        return None
    return float(evaluation.cross_relation_tvd(database, release, child, joined))


# --------------------------------------------------------------------------------------------
# Running synth as the user does
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One finished ``synth run``: wall time, peak resident memory (MiB), exit code, console log."""

    seconds: float
    peak_mib: float
    returncode: int
    log: Path


def synth_command() -> list[str]:
    """The ``synth`` command of this Python environment (its console script, else ``python -m synth``)."""
    script = Path(sys.executable).with_name("synth")
    return [str(script)] if script.exists() else [sys.executable, "-m", "synth"]


# Runs a command in a process forked from this small launcher and writes the command's own peak
# memory (ru_maxrss, KiB) to the file named first. A process forked straight from the benchmark
# would count the benchmark's own memory at the fork in its ru_maxrss (Linux keeps the high-water
# mark across exec), and the benchmark holds the evaluations.
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_synth(arguments: Sequence[str], log: Path) -> Run:
    """Run ``synth ARGUMENTS`` in a fresh process, its output to ``log``; time it and read its own peak
    memory through ``LAUNCHER``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    peak = log.with_suffix(".peak_kib")
    with log.open("w", encoding="utf-8") as sink:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", LAUNCHER, str(peak), *synth_command(), *arguments],
                              stdout=sink, stderr=subprocess.STDOUT, check=False)
        seconds = time.perf_counter() - start
    kib = float(peak.read_text(encoding="utf-8")) if peak.exists() else float("nan")
    return Run(seconds, kib / 1024, done.returncode, log)


def _check(run: Run, what: str) -> None:
    if run.returncode != 0:
        tail = run.log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise RuntimeError(f"{what} failed (exit {run.returncode}); last lines of {run.log}:\n" + "\n".join(tail))


# --------------------------------------------------------------------------------------------
# Profiles: the reviewed relational one, and the join baseline's single-table one
# --------------------------------------------------------------------------------------------


def load_profile(name: str) -> dict[str, Any]:
    return tomllib.loads((PROFILES_DIR / f"{name}.toml").read_text(encoding="utf-8"))


def with_bound(profile: Mapping[str, Any], max_children: str | None) -> dict[str, Any]:
    """``profile`` with every child table's ``max_children`` replaced (an integer or "dp"); None: as it is."""
    copy = json.loads(json.dumps(profile))
    if max_children is not None:
        bound: int | str = max_children if max_children == "dp" else int(max_children)
        for table in copy["tables"].values():
            if "foreign_key" in table:
                table["max_children"] = bound
    return copy


def join_profile(profile: Mapping[str, Any], root: str, child: str) -> dict[str, Any]:
    """A single-table profile for the join of ``child`` with ``root``: the same ``[release]`` and
    engine options, the root's columns as ``ROOT.col`` and the child's columns, with the same domains."""
    single: dict[str, Any] = {"release": dict(profile["release"])}
    if "engine_options" in profile:
        single["engine_options"] = dict(profile["engine_options"])
    columns = {f"{root}.{c}": dict(spec) for c, spec in profile["tables"][root].get("columns", {}).items()}
    columns.update({c: dict(spec) for c, spec in profile["tables"][child].get("columns", {}).items()})
    single["columns"] = columns
    return single


def join_table(data: RelationalData, profile: Mapping[str, Any], child: str) -> pd.DataFrame:
    """``child``'s rows with their parent's profiled columns (``ROOT.col``) first, keys left out."""
    root_columns = list(profile["tables"][data.root].get("columns", {}))
    child_columns = list(profile["tables"][child].get("columns", {}))
    keys = data.child(child).foreign_key
    parents = data.frames[data.root][[data.root_key, *root_columns]].set_index(data.root_key)
    parents.columns = [f"{data.root}.{c}" for c in root_columns]
    rows = data.frames[child][[keys, *child_columns]]
    joined = rows.join(parents, on=keys, how="inner")
    return joined[[*parents.columns, *child_columns]].reset_index(drop=True)


def most_children(data: RelationalData, child: str) -> int:
    """k: the most rows of ``child`` that one root row has in this database."""
    return int(data.frames[child].groupby(data.child(child).foreign_key).size().max())


def true_epsilon(rho: float, k: int, delta: float) -> float:
    """The person-level ε at ``delta`` of a release spending ``rho`` per child row, for a person with
    k rows: a group of k under zCDP costs k²ρ."""
    return zcdp_to_approx_epsilon(k * k * rho, delta)


# --------------------------------------------------------------------------------------------
# One dataset, ε and seed
# --------------------------------------------------------------------------------------------


@dataclass
class Result:
    """Everything measured for one dataset, ε and seed (written as one line of results.jsonl)."""

    dataset: str
    epsilon: float
    seed: int
    max_children: dict[str, Any]
    synth_seconds: float
    synth_peak_mib: float
    synthetic_rows: dict[str, int]
    parents_over_bound: dict[str, float]
    join_seconds: dict[str, float]
    join_peak_mib: dict[str, float]
    join_k: dict[str, int]
    join_rho: dict[str, float]
    join_true_epsilon: dict[str, float]
    scores: dict[str, Any] | None
    join_cross_relation_tvd: dict[str, float | None] = field(default_factory=dict)


def _table_rows(path: Path) -> dict[str, int]:
    connection = sqlite3.connect(path)
    try:
        names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: int(connection.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0]) for n in names}
    finally:
        connection.close()


def run_case(data: RelationalData, database: Path, profile: dict[str, Any], epsilon: float, seed: int,
             run_dir: Path, *, join: bool = True) -> Result:
    """Steps a-c of the module docstring for one dataset, ε and seed."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    profile_path = run_dir / "profile.toml"
    profile_path.write_text(tomli_w.dumps(profile), encoding="utf-8")
    release = run_dir / "synth"
    common = ["--epsilon", f"{epsilon:g}", "--seed", str(seed)]
    run = run_synth(["run", str(database), "--profile", str(profile_path), *common, "-o", str(release)],
                    run_dir / "synth.log")
    _check(run, f"synth run on {database.name}")
    record = json.loads((release / "relational.json").read_text(encoding="utf-8"))
    children = [t for t in record["tables"] if "foreign_key" in t]
    result = Result(
        dataset=data.name, epsilon=epsilon, seed=seed,
        max_children={t["table"]: {"value": t["max_children"], "source": t["max_children_source"]} for t in children},
        synth_seconds=run.seconds, synth_peak_mib=run.peak_mib,
        synthetic_rows=_table_rows(release / "synthetic.sqlite"),
        parents_over_bound={t["table"]: t["parents_over_bound"]["noisy"] for t in children},
        join_seconds={}, join_peak_mib={}, join_k={}, join_rho={}, join_true_epsilon={},
        scores=score_release(database, release, seed))
    for child in (c.name for c in data.children) if join else ():
        folder = run_dir / f"join_{child}"
        folder.mkdir()
        csv, single = folder / "join.csv", folder / "join.toml"
        join_table(data, profile, child).to_csv(csv, index=False)
        single.write_text(tomli_w.dumps(join_profile(profile, data.root, child)), encoding="utf-8")
        joined_run = run_synth(["run", str(csv), "--profile", str(single), *common, "-o", str(folder / "release")],
                               folder / "synth.log")
        _check(joined_run, f"synth run on the join of {child}")
        description = json.loads((folder / "release" / "description.json").read_text(encoding="utf-8"))
        spent = description["privacy"]["spent"]
        k = most_children(data, child)
        result.join_seconds[child] = joined_run.seconds
        result.join_peak_mib[child] = joined_run.peak_mib
        result.join_k[child] = k
        result.join_rho[child] = float(spent["rho"])
        result.join_true_epsilon[child] = true_epsilon(float(spent["rho"]), k, float(spent["delta"]))
        synthetic = pd.read_csv(folder / "release" / "synthetic.csv", keep_default_na=False, na_values=[""])
        result.join_cross_relation_tvd[child] = score_join(database, release, child, synthetic)
    return result


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def machine() -> str:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()[0]
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (load {load:.1f} at the start), "
            f"{memory:.0f} GiB, Python {platform.python_version()}")


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True).stdout.strip()
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{git('rev-parse', '--abbrev-ref', 'HEAD')} {git('rev-parse', '--short', 'HEAD')}{dirty}"


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.mean(present)) if present else None


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _score(result: Result, *path: str) -> float | None:
    node: Any = result.scores
    for step in path:
        if not isinstance(node, Mapping) or step not in node:
            return None
        node = node[step]
    return None if node is None else float(node)


def table_rows(results: Sequence[Result], data: Mapping[str, RelationalData]) -> list[str]:
    """One markdown row per dataset, ε and child table: means over seeds."""
    lines = []
    groups: dict[tuple[str, float], list[Result]] = {}
    for r in results:
        groups.setdefault((r.dataset, r.epsilon), []).append(r)
    for (name, epsilon), runs in groups.items():
        db = data[name]
        for child in (c.name for c in db.children):
            bound = runs[0].max_children[child]

            def mean(*path: str, runs: list[Result] = runs) -> str:
                return _fmt(_mean([_score(r, *path) for r in runs]))

            per_table = "; ".join(f"{t} {mean('tables', t, '2_way_mean_tvd')} "
                                  f"({mean('tables', t, 'release_schema', '2_way_mean_tvd')})" for t in (db.root, child))
            join_tvd = _fmt(_mean([r.join_cross_relation_tvd.get(child) for r in runs]))
            true_eps = _mean([r.join_true_epsilon.get(child) for r in runs])
            k = runs[0].join_k.get(child)
            join_seconds = _mean([r.join_seconds.get(child) for r in runs])
            join_run = "–" if join_seconds is None else (
                f"{join_seconds:.1f} s, {_mean([r.join_peak_mib.get(child) for r in runs]):.0f} MiB")
            lines.append(
                f"| {name}: {db.root} → {child} | {epsilon:g} | {len(runs)} | {bound['value']} ({bound['source']}) "
                f"| {_mean([r.synth_seconds for r in runs]):.1f} | {_mean([r.synth_peak_mib for r in runs]):.0f} "
                f"| {mean('cross_relation', child, 'mean_tvd')} | {mean('cross_relation', child, 'naive_mean_tvd')} "
                f"| {join_tvd} | {mean('children_per_parent', child, 'tvd')} "
                f"| {mean('children_per_parent', child, 'naive_tvd')} | {per_table} "
                f"| {mean('referential_integrity', child)} "
                f"| {_fmt(_mean([r.parents_over_bound[child] for r in runs]), 0)} "
                f"| {'–' if true_eps is None else f'{true_eps:,.1f} (k = {k})'} | {join_run} |")
    return lines


HEADER = ("| database: root → child | ε | seeds | max_children | synth run (s) | peak memory (MiB) "
          "| cross-relation 2-way TVD: synth | naive | join baseline | children per parent TVD: synth | naive "
          "| per-table 2-way TVD (on the release's bins) | RI | parents over the bound (noisy) | join baseline's true ε per person "
          "| join baseline's synth run |\n"
          "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")


def report(results: Sequence[Result], data: Mapping[str, RelationalData], command: str) -> str:
    """The results section: machine, date, commit, command, then the table and how to read it."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        f"## Relational benchmark (issue 33) — {now}", "",
        f"Machine: {machine()}. Commit: {commit()}. Command: `{command}`. Databases: "
        "benchmarks/relational_tables.py; profiles: benchmarks/relational_profiles/ (sources: benchmarks/relational.md).",
        "",
        HEADER, *table_rows(results, data), "",
        "synth run: the whole `synth run DB.sqlite --profile P.toml` process (fresh process, its peak resident "
        "memory). TVDs are means over seeds from `synth.evaluate.relational` (naive: its naive release; join "
        "baseline: each child row joined with its parent's columns released as one table, each row a unit, scored on "
        "the same pairs). Per-table 2-way TVD: on the evaluation's own bins (cut at the original's quantiles, finer "
        "than a profile's public bins, so values drawn within a public bin count as error), and in brackets on the "
        "release's bins (its schema's codes: what the release measured). RI: share of synthetic child rows whose key names a synthetic parent. The join baseline "
        "spends ρ per child row; a person with k rows is a group of k, so per person it spends k²ρ, shown as ε at "
        "the same δ for k = the most child rows one parent has here (k is unbounded in general). Seeded releases: "
        "no privacy guarantee, benchmark only.", ""])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", choices=sorted(BUILDERS), default=list(BUILDERS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0])
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 .. N-1 (default 1)")
    parser.add_argument("--max-children", default=None,
                        help='override every child table\'s max_children (a whole number or "dp")')
    parser.add_argument("--no-join", action="store_true", help="skip the join-as-units baseline")
    parser.add_argument("--write-results", action="store_true", help="append the results table to benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    command = "python benchmarks/relational_benchmark.py " + " ".join(sys.argv[1:] if argv is None else argv)

    data: dict[str, RelationalData] = {}
    results: list[Result] = []
    for name in args.datasets:
        data[name], database = build(name)
        profile = with_bound(load_profile(name), args.max_children)
        for epsilon in args.epsilons:
            for seed in range(args.seeds):
                run_dir = RUNS_DIR / name / f"eps{epsilon:g}" / f"seed{seed}"
                result = run_case(data[name], database, profile, epsilon, seed, run_dir, join=not args.no_join)
                results.append(result)
                with RESULTS_JSONL.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps({"command": command, "commit": commit(), **asdict(result)}) + "\n")
                print(f"{name} ε={epsilon:g} seed {seed}: synth run {result.synth_seconds:.1f} s, "
                      f"{result.synth_peak_mib:.0f} MiB; join baseline's true ε {result.join_true_epsilon}")
    text = report(results, data, command)
    print()
    print(text)
    if args.write_results:
        with RESULTS_MD.open("a", encoding="utf-8") as sink:
            sink.write("\n" + text)
        print(f"appended to {RESULTS_MD}")


if __name__ == "__main__":
    main()
