"""Run the strong privacy audit and record its figures in benchmarks/RESULTS.md.

Usage (from the repository root):

    PYTHONPATH=. python benchmarks/privacy_audit.py                 # strong audit, every case
    PYTHONPATH=. python benchmarks/privacy_audit.py --default       # the default test run's sizes
    PYTHONPATH=. python benchmarks/privacy_audit.py --only engine   # cases whose name has this text
    PYTHONPATH=. python benchmarks/privacy_audit.py --only mwem --only smalldb   # ... any of these

The cases are those of ``tests/audit/cases.py`` (the same code the test suite runs). For each
mechanism and engine the table gives the claimed (ε, δ), the audited lower bound on ε, the runs
per data set and the confidence, and for each deliberate bug the audited ε of the broken variant
next to what it claims. The table is appended with the machine, date and command; the exit
status is 1 when an honest case breaks its claim or a bug goes unnoticed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
sys.path.insert(0, str(HERE.parent / "tests" / "audit"))

from auditing import AuditResult  # noqa: E402  (after the path to the test helpers)
from cases import CASES, AuditCase  # noqa: E402

MUTATIONS = sorted({case.mutation for case in CASES if case.mutation})


@dataclass(frozen=True)
class Outcome:
    case: AuditCase
    result: AuditResult
    seconds: float

    @property
    def as_expected(self) -> bool:
        """Honest cases within their claim, broken ones caught."""
        return self.result.violates == bool(self.case.mutation)


def machine() -> str:
    load = f", load average {os.getloadavg()[0]:.1f} (shared machine)" if hasattr(os, "getloadavg") else ""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores{load}, Python "
            f"{platform.python_version()}, numpy {np.__version__}, OpenDP {version('opendp')}")


def _claim(result: AuditResult) -> str:
    delta = f", δ {result.claim.delta:g}" if result.claim.delta else ""
    return f"{result.claim.epsilon:.3f}{delta}"


def _mutation_cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return "—"
    r = outcome.result
    return f"{r.epsilon_lb:.3f} ({_claim(r)}) {'caught' if r.violates else 'MISSED'}, {r.samples:,} runs"


def table(outcomes: list[Outcome]) -> list[str]:
    """One row per subject and sampler, with a column per deliberate bug (its audited ε, its claim)."""
    honest = {(o.case.subject, o.case.sampler): o for o in outcomes if not o.case.mutation}
    broken = {(o.case.subject, o.case.sampler, o.case.mutation): o for o in outcomes if o.case.mutation}
    rows = list(dict.fromkeys((o.case.subject, o.case.sampler) for o in outcomes))
    head = ["mechanism / engine", "sampler", "claimed ε", "audited ε ≥", "runs per data set", "confidence",
            *(f"{mutation}: audited ε ≥ (claimed)" for mutation in MUTATIONS)]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + " |"]
    for subject, sampler in rows:
        o = honest.get((subject, sampler))
        r = o.result if o else None
        own = ([_claim(r), f"{r.epsilon_lb:.3f}" + (" BREAKS CLAIM" if r.violates else ""), f"{r.samples:,}",
                f"{r.confidence}"] if r else ["—"] * 4)
        cells = [_mutation_cell(broken.get((subject, sampler, mutation))) for mutation in MUTATIONS]
        lines.append("| " + " | ".join([subject, sampler, *own, *cells]) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--default", action="store_true", help="the default test run's sizes, not the strong audit's")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="only the cases whose name has this text (repeatable: any of the texts)")
    parser.add_argument("--no-write", action="store_true", help="print the table, do not append it to RESULTS.md")
    args = parser.parse_args(argv)
    strong = not args.default
    outcomes = []
    for case in CASES:
        if (args.only and not any(text in case.name for text in args.only)) or (case.strong_only and not strong):
            continue
        start = time.perf_counter()
        result = case.run(strong)
        outcome = Outcome(case, result, time.perf_counter() - start)
        outcomes.append(outcome)
        print(f"{'ok ' if outcome.as_expected else 'BAD'} {outcome.seconds:6.1f}s {case.name}: {result.summary()}",
              flush=True)
    command = "PYTHONPATH=. python benchmarks/" + " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])])
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    bad = [o.case.name for o in outcomes if not o.as_expected]
    section = [
        f"## Privacy audit ({'strong' if strong else 'default'} run) — {stamp}", "",
        f"Machine: {machine()}. Command: `{command}`. Cases: tests/audit/cases.py; method: tests/audit/auditing.py "
        f"(event chosen on half the runs, Clopper–Pearson bounds at the confidence shown on the other half; "
        "ε ≥ log((p_lo − δ)/p'_hi)). The numpy sampler is seeded (reproducible); OpenDP's draws OS entropy. Claims come from synth's accounting (zCDP converted with "
        "zcdp_to_approx_epsilon at the δ shown). Engines: the log-likelihood ratio of every released "
        "measurement, so the selection steps' share of the budget is not seen by the audit (SmallDB: the "
        "database it drew, its noisy count not seen). "
        + ("Every honest case stays within its claim and every deliberate bug is caught." if not bad else
           f"NOT AS EXPECTED: {', '.join(bad)}."), "",
        *table(outcomes), "",
    ]
    print("\n".join(section))
    if not args.no_write:
        with RESULTS.open("a", encoding="utf-8") as results:
            results.write("\n" + "\n".join(section))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
