"""Benchmark `synth evaluate` on the 1,000,000-row table: wall time and peak memory (target: < 60 s, < 4 GB).

Usage (from the repository root, after `pip install .`, or with PYTHONPATH pointing at it):

    python benchmarks/evaluate_benchmark.py

The original is run_benchmarks.py's 1,000,000-row table (the demo data repeated). The synthetic
table (1,000,000 rows) is generated once from a Description of the demo data (engine independent,
ε = 1, seeded: a benchmark input, not a release). Each case runs `synth evaluate` in a fresh
process through run_benchmarks.py's harness, with --target income and both the HTML report and the
JSON written; the sample sizes the evaluation used are read back from its JSON. Results are
appended to benchmarks/RESULTS.md with the machine, date and command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_benchmarks import (  # noqa: E402
    MILLION,
    OUT,
    RESULTS,
    demo_paths,
    measure,
    million_row_table,
    print_timing,
    timing_heading,
    timing_row,
)


def synthetic_table(csv: Path, profile: Path) -> tuple[Path, Path]:
    """A 1,000,000-row synthetic table and its Description (made once, then reused)."""
    from synth.cli import main

    description, synthetic = OUT / "evaluate_description.json", OUT / "evaluate_synthetic_1m.csv"
    if not description.exists():
        main(["describe", str(csv), "--profile", str(profile), "--engine", "independent", "--seed", "1",
              "-o", str(description), "--quiet"])
    if not synthetic.exists():
        main(["generate", str(description), "--rows", str(MILLION), "--seed", "2", "-o", str(synthetic), "--quiet"])
    return synthetic, description


def main() -> None:
    OUT.mkdir(exist_ok=True)
    csv, profile = demo_paths()
    big = million_row_table(csv)
    synthetic, description = synthetic_table(csv, profile)
    outputs = ["--target", "income", "--force", "--quiet"]
    cases = [
        ("with --description (drafted discretisation, and the release's schema beside it)",
         ["evaluate", str(big), str(synthetic), "--description", str(description), "--report",
          str(OUT / "evaluate_1m.html"), "--json", str(OUT / "evaluate_1m.json"), *outputs], OUT / "evaluate_1m.json"),
        ("without --description (drafted discretisation only)",
         ["evaluate", str(big), str(synthetic), "--report", str(OUT / "evaluate_1m_draft.html"), "--json",
          str(OUT / "evaluate_1m_draft.json"), *outputs], OUT / "evaluate_1m_draft.json"),
    ]
    rows = []
    for label, argv, metrics in cases:
        result = measure(argv)
        data = json.loads(metrics.read_text())
        rows.append((label, result, data))
        print_timing(label, result)
    data = rows[0][2]
    marginals = data["fidelity"]["marginals"]
    ml, privacy = data["utility"]["ml"], data["privacy"]
    lines = [
        *timing_heading("`synth evaluate` on 1,000,000 × 15 rows",
                        "`python benchmarks/evaluate_benchmark.py` (each case: `synth evaluate adult_1m.csv "
                        "synthetic_1m.csv [--description d.json] --target income --report r.html --json m.json`, "
                        "a fresh process; peak memory is its maximum resident set size). Target: under 60 s and 4 GB."),
        *[timing_row(label, r) for label, r, _ in rows],
        "",
        "Load average (1 minute) on this 2-core machine, shared with other work, when each case started: "
        + ", ".join(f"{r['load']:.1f}" for _, r, _ in rows) + "; processor time is what the evaluation itself used.",
        "",
        "Sample sizes (from the JSON): "
        + ", ".join(f"{k}-way marginals {m['scored']} of {m['of']}" for k, m in marginals.items())
        + f" on all rows; PCA fitted on {data['fidelity']['pca']['fit_rows']:,} rows; "
        f"{data['utility']['queries']['queries']} queries on all rows; models trained on {ml['train_rows']:,} rows per "
        f"side, tested on {ml['test_rows']:,} held-out rows; privacy: {privacy['holdout_rows']:,} held-out rows, "
        f"distances for {privacy['distance_to_closest_record']['synthetic']['rows']:,} rows per side against "
        f"{privacy['distance_to_closest_record']['reference_sample_rows']:,} reference rows; tables read in pieces of "
        "200,000 rows.",
        "",
        f"Results (with --description): mean 2-way TVD {data['summary']['2_way_mean_tvd']:.4f}, k-marginal score "
        f"{data['summary']['kmarginal_score']:.0f}, income accuracy (trees) {data['summary']['utility']['train_on_original']:.3f} "
        f"trained on original vs {data['summary']['utility']['train_on_synthetic']:.3f} on synthetic.\n",
    ]
    with RESULTS.open("a") as handle:
        handle.write("\n".join(lines))
    print(f"appended to {RESULTS}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
