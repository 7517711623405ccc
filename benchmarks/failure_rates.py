"""Failure rates of the zero-config road over many seeds (issue 30), for benchmarks/real_tables.py.

One seeded run shows what a seed gives, not how often the road writes garbage with exit 0. Run
from the repository root (each run takes a few seconds on a table of a few thousand rows)::

    python benchmarks/real_tables.py --failure-seeds 30 --epsilon 1 --only flchain --only doctoraus

For every chosen table and budget, this runs ``python -m synth run TABLE.csv --epsilon E --seed S
--engine independent --accept-rough-domains -o OUT`` (the independent variant of the one-seed
benchmark, as a fresh process) for seeds 1..N, and checks each released column against the
original (this reads the original: it is an evaluation, not a DP output). A column fails a check
in a run when:

* **coverage** — its numeric or date range [lower, upper] does not hold the original's 0.5 % and
  99.5 % quantiles (measure: the share of the original's values outside the range);
* **wide** — its range is wider than 3 times the original's span (max - min of the non-missing
  values; one unit, or one day for dates, when the column is constant) (measure: how many times);
* **other** — ``<OTHER>`` cells are written in a category column although every original value is
  in the released category list (measure: ``<OTHER>`` cells);
* **sign** — negative values are written where the original has none (measure: such cells);
* **bounds** — values are written outside the release's own [lower, upper] (measure: such cells);
* **decimals** — numbers are written with more decimals than the most the original's CSV column
  has (measure: the most decimals written);
* **constant** — every synthetic cell is the same (blank included) where the original's are not.

Beside the checks, the report gives, over every numeric or date column discovery judged *located*
in every run, the median share of real values its range clips and how many of those column-runs
clip more than 0.5 % (issue 30's target for located ranges; rough ones say in their verdict that
their tails may be cut).

A run fails **exit** when it exits non-zero. **Left out** (not a failure, for reading the rest):
columns of the original that are not in the release. Identifier and free-text columns synth leaves
out of the model on purpose are not checked.

Per table and budget, the report gives failures / runs per check and the worst column (the one
failing that check in most runs, with its worst measure), then per column the runs it failed each
check in. Each run's findings go as one JSON line to benchmarks/out/real_tables/failures.jsonl.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pandas as pd
import real_scoring as scoring
import real_tables as rt
from run_benchmarks import RESULTS, machine
from startup_benchmark import synth_source

CHECKS = ("coverage", "wide", "other", "sign", "bounds", "decimals", "constant")
NUMERIC_KINDS = ("integer", "float", "datetime")
QUANTILES = (0.005, 0.995)
WIDE_FACTOR = 3.0
DAY = 86400.0


@dataclass(frozen=True)
class Finding:
    """One column failing one check in one run, with how badly (see the module docstring)."""

    check: str
    column: str
    measure: float


@dataclass
class RunFindings:
    """One seeded run: its exit status and what failed."""

    seed: int
    exit: int | str
    seconds: float
    findings: list[Finding] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    error: str = ""
    located_clipped: dict[str, float] = field(default_factory=dict)  # share of real values outside a located range


# --- the checks on one column --------------------------------------------------------------------

def written_decimals(cells: pd.Series) -> int:
    """The most decimals written in a column's numeric cells (``1.50`` has 2, ``1e-05`` has 5)."""
    most = 0
    for text in cells.str.strip().unique():
        try:
            exponent = Decimal(text).as_tuple().exponent
        except InvalidOperation:
            continue
        if isinstance(exponent, int):  # not NaN or infinity
            most = max(most, -exponent)
    return most


def numeric_findings(name: str, original: pd.Series, synthetic: pd.Series, domain: dict) -> list[Finding]:
    """coverage, wide, sign, bounds and decimals of a numeric or date column."""
    convert = scoring.as_seconds if domain["kind"] == "datetime" else scoring.as_numbers
    lower, upper = convert(pd.Series([str(domain["lower"]), str(domain["upper"])]))
    real = convert(original)
    real = real[~np.isnan(real)]
    made = convert(synthetic)
    made = made[~np.isnan(made)]
    findings = []
    if real.size:
        low, high = np.quantile(real, QUANTILES)
        if lower > low or upper < high:
            findings.append(Finding("coverage", name, float(((real < lower) | (real > upper)).mean())))
        span = float(real.max() - real.min()) or (DAY if domain["kind"] == "datetime" else 1.0)
        if upper - lower > WIDE_FACTOR * span:
            findings.append(Finding("wide", name, float((upper - lower) / span)))
        if domain["kind"] != "datetime" and real.min() >= 0 and (made < 0).any():
            findings.append(Finding("sign", name, float((made < 0).sum())))
    outside = int(((made < lower) | (made > upper)).sum())
    if outside:
        findings.append(Finding("bounds", name, float(outside)))
    if domain["kind"] != "datetime":
        allowed, written = written_decimals(original), written_decimals(synthetic)
        if written > allowed:
            findings.append(Finding("decimals", name, float(written)))
    return findings


def column_findings(name: str, original: pd.Series, synthetic: pd.Series, domain: dict,
                    other_label: str) -> list[Finding]:
    """Every check of one released column against the original's cells (text, as in the CSV)."""
    findings = []
    if domain["kind"] in NUMERIC_KINDS:
        findings += numeric_findings(name, original, synthetic, domain)
    elif "categories" in domain:
        present = original.str.strip()
        present = present[present != ""]
        others = int((synthetic.str.strip() == other_label).sum())
        if others and present.isin(set(domain["categories"])).all():
            findings.append(Finding("other", name, float(others)))
    if synthetic.str.strip().nunique() == 1 and original.str.strip().nunique() > 1:
        findings.append(Finding("constant", name, 1.0))
    return findings


def release_findings(original: pd.DataFrame, synthetic: pd.DataFrame, domains: dict[str, dict],
                     other_label: str) -> tuple[list[Finding], list[str]]:
    """The findings of every released column, and the original's columns left out of the release."""
    findings: list[Finding] = []
    left_out = []
    for name in original.columns:
        domain = domains.get(name)
        if domain is None or name not in synthetic.columns:
            left_out.append(name)
        elif domain["kind"] not in scoring.UNMODELLED:
            findings += column_findings(name, original[name], synthetic[name], domain, other_label)
    return findings, left_out


def clipped_share(original: pd.Series, domain: dict) -> float:
    """The share of the original's values outside a numeric or date column's released [lower, upper]."""
    convert = scoring.as_seconds if domain["kind"] == "datetime" else scoring.as_numbers
    lower, upper = convert(pd.Series([str(domain["lower"]), str(domain["upper"])]))
    real = convert(original)
    real = real[~np.isnan(real)]
    return float(((real < lower) | (real > upper)).mean()) if real.size else 0.0


def located_clipped(original: pd.DataFrame, domains: dict[str, dict], verdicts: dict[str, str]) -> dict[str, float]:
    """For each numeric or date column discovery judged *located*, the share of real values its range clips
    (issue 30's target: at most 0.5 % per column, median at most 0.1 %)."""
    return {name: clipped_share(original[name], domain) for name, domain in domains.items()
            if domain["kind"] in NUMERIC_KINDS and verdicts.get(name) == "located" and name in original.columns}


def release_verdicts(out: Path) -> dict[str, str]:
    """Discovery's verdict per column (located, rough or lost), from the release's Description."""
    description = json.loads((out / "description.json").read_text(encoding="utf-8"))
    return description.get("privacy", {}).get("domain_verdicts", {})


# --- running the seeds ---------------------------------------------------------------------------

def first_error(notes: list[str]) -> str:
    errors = [n for n in notes if "error" in n or n.startswith("Traceback")]
    return (errors or notes[-1:] or ["no message"])[0]


def table_runs(table: rt.Table, epsilon: float, seeds: Sequence[int]) -> tuple[pd.DataFrame, list[RunFindings]]:
    """The original's cells and every seed's findings on one table at one budget."""
    csv = rt.export_csv(table, rt.WORK / table.name)
    original = scoring.read_cells(csv)
    runs = []
    for seed in seeds:
        run = rt.run_synth(csv, "independent", table, epsilon, seed)
        result = RunFindings(seed, run.exit, round(run.seconds, 1))
        if run.exit == 0:
            synthetic, domains, other_label = scoring.read_release(run.out)
            result.findings, result.left_out = release_findings(original, synthetic, domains, other_label)
            result.located_clipped = located_clipped(original, domains, release_verdicts(run.out))
        else:
            result.error = first_error(run.notes)
        runs.append(result)
        failed = sorted({f.check for f in result.findings})
        print(f"{table.name} eps={epsilon:g} seed={seed}: exit {run.exit}, {run.seconds:.1f} s"
              + (f", fails {', '.join(failed)}" if failed else "")
              + (f", left out {', '.join(result.left_out)}" if result.left_out else ""), flush=True)
    return original, runs


# --- the report ----------------------------------------------------------------------------------

MEASURES = {"coverage": "{:.1%} clipped", "wide": "{:.3g}x the span", "other": "{:.0f} cells",
            "sign": "{:.0f} cells", "bounds": "{:.0f} cells", "decimals": "{:.0f} decimals", "constant": ""}


def failing_runs(runs: Sequence[RunFindings], check: str, column: str | None = None) -> int:
    """How many runs fail a check (in any column, or in the one given)."""
    return sum(any(f.check == check and column in (None, f.column) for f in r.findings) for r in runs)


def check_cell(runs: Sequence[RunFindings], check: str) -> str:
    """``failures/runs`` of one check, with the worst column and its worst measure."""
    findings = [f for r in runs for f in r.findings if f.check == check]
    failures = failing_runs(runs, check)
    if not findings:
        return f"0/{len(runs)}"
    columns = {f.column for f in findings}
    worst = max(columns, key=lambda c: (failing_runs(runs, check, c), max(f.measure for f in findings if f.column == c)))
    measure = max(f.measure for f in findings if f.column == worst)
    shown = MEASURES[check].format(measure)
    return f"{failures}/{len(runs)} ({worst}: {failing_runs(runs, check, worst)}" + (f", {shown})" if shown else ")")


TABLE_HEAD = ["| table | ε | rows × cols | exit ≠ 0 | " + " | ".join(CHECKS)
              + " | located ranges: clipped (median; over 0.5 %) | left out (most) | seconds per run |",
              "| --- | ---: | --- | ---: | " + " | ".join("---" for _ in CHECKS) + " | --- | --- | ---: |"]


def clipped_cell(runs: Sequence[RunFindings]) -> str:
    """Over every located numeric column of every run: the median share of real values clipped, and
    how many column-runs clip more than 0.5 %."""
    shares = [share for r in runs for share in r.located_clipped.values()]
    if not shares:
        return "—"
    over = sum(share > 0.005 for share in shares)
    return f"{float(np.median(shares)):.2%}; {over}/{len(shares)}"


def table_row(name: str, epsilon: float, original: pd.DataFrame, runs: Sequence[RunFindings]) -> str:
    failed = [r for r in runs if r.exit != 0]
    left = max((r.left_out for r in runs if r.exit == 0), key=len, default=[])
    seconds = float(np.median([r.seconds for r in runs]))
    return (f"| {name} | {epsilon:g} | {len(original):,} × {original.shape[1]} | {len(failed)}/{len(runs)} | "
            + " | ".join(check_cell(runs, c) for c in CHECKS)
            + f" | {clipped_cell(runs)} | {', '.join(left) or '—'} | {seconds:.1f} |")


def column_lines(name: str, epsilon: float, original: pd.DataFrame, runs: Sequence[RunFindings]) -> list[str]:
    """Per column (in the table's order), the runs it failed each check in; then the distinct errors
    of failed runs."""
    lines = []
    failing = {f.column for r in runs for f in r.findings}
    for column in (c for c in original.columns if c in failing):
        counts = ", ".join(f"{c} {failing_runs(runs, c, column)}" for c in CHECKS if failing_runs(runs, c, column))
        lines.append(f"- {name} ε={epsilon:g} `{column}`: {counts} (of {len(runs)} runs)")
    for error in dict.fromkeys(r.error for r in runs if r.exit != 0):
        seeds = [r.seed for r in runs if r.exit != 0 and r.error == error]
        lines.append(f"- {name} ε={epsilon:g} exit ≠ 0 (seeds {', '.join(map(str, seeds))}): `{error}`")
    return lines


def synth_version() -> str:
    """The synth package the runs import (folder and commit) and the commit that last changed synth/."""
    source = synth_source(sys.executable)
    synth_dir = Path(source.split(" (")[0])
    last_change = subprocess.run(["git", "-C", str(synth_dir), "log", "-1", "--format=%h", "--", "synth"],
                                 capture_output=True, text=True, check=False).stdout.strip() or "unknown"
    return f"{source}, synth/ last changed in {last_change}"


def report(results: Sequence[tuple[str, float, pd.DataFrame, list[RunFindings]]], seeds: int,
           command: str, version: str) -> list[str]:
    """The RESULTS.md section: heading, machine, command, one row per table and budget, per column."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## Failure rates of the zero-config road over {seeds} seeds — {stamp}\n",
        f"Machine: {machine()}. Command: `{command}`. synth package (when the runs began): {version}. Each run is `python -m synth run TABLE.csv --epsilon E --seed S --engine independent "
        "--accept-rough-domains -o OUT` as a fresh process, seeds 1..N; checks in benchmarks/failure_rates.py "
        "(coverage: range misses the real 0.5–99.5 % quantiles; wide: range > 3× the real span; other: `<OTHER>` "
        "in a column whose values were all released; sign: negatives the original lacks; bounds: values outside "
        "the release's own range; decimals: more than the input's; constant: one value where the input has more; "
        "located ranges: over every numeric column discovery called located, the median share of real values "
        "its range clips and the column-runs clipping over 0.5 %). "
        "Cells: failing runs / runs (worst column: its failing runs, its worst measure).\n",
        *TABLE_HEAD,
        *(table_row(name, eps, original, runs) for name, eps, original, runs in results),
        "\nPer column, failing runs per check; errors of failed runs:\n",
    ]
    for name, eps, original, runs in results:
        lines += column_lines(name, eps, original, runs)
    return lines


def main(tables: Sequence[rt.Table], epsilons: Sequence[float], seeds: int, append: bool, command: str) -> None:
    """Run every table at every budget over seeds 1..seeds, print the report, append it unless told not to."""
    rt.WORK.mkdir(parents=True, exist_ok=True)
    version = synth_version()
    results = []
    with (rt.WORK / "failures.jsonl").open("a", encoding="utf-8") as log:
        for table in tables:
            for epsilon in epsilons:
                original, runs = table_runs(table, epsilon, range(1, seeds + 1))
                results.append((table.name, epsilon, original, runs))
                for run in runs:
                    log.write(json.dumps({"table": table.name, "epsilon": epsilon, **asdict(run)}) + "\n")
    lines = report(results, seeds, command, version)
    print("\n".join(lines))
    if append:
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        print(f"appended to {RESULTS}")
