"""Failure rates of the zero-config road under pure DP (discrete Laplace noise), on one CSV.

    python benchmarks/pure_dp_rates.py TABLE.csv SEEDS LABEL

runs ``python -m synth run TABLE.csv --epsilon 1 --delta 0 --seed S --engine independent
--accept-rough-domains`` for seeds 1..SEEDS as fresh processes in the file's folder (so the synth
installed there is measured) and counts failing runs per check of ``failure_rates.release_findings``.
Pure DP refuses text columns (their categories need δ > 0), so it takes all-numeric tables, e.g.
the numeric columns of a table that ``real_tables.py`` exports.
"""

import collections
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import failure_rates as fr
import real_scoring as scoring

csv, seeds, label = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
original = scoring.read_cells(csv)
fails: collections.Counter = collections.Counter()
exits: collections.Counter = collections.Counter()
worst: dict[str, float] = {}
for seed in range(1, seeds + 1):
    out = csv.parent / f"{csv.stem}-{label}-{seed}"
    done = subprocess.run([sys.executable, "-m", "synth", "run", csv.name, "--epsilon", "1", "--delta", "0", "--seed", str(seed),
                           "--engine", "independent", "--accept-rough-domains", "-o", out.name, "--force", "-q"],
                          cwd=csv.parent, capture_output=True, text=True)
    exits[done.returncode] += 1
    if done.returncode:
        print(seed, done.stderr[-200:])
        continue
    synthetic, domains, other = scoring.read_release(out)
    findings, left = fr.release_findings(original, synthetic, domains, other)
    for check in {f.check for f in findings}:
        fails[check] += 1
    for f in findings:
        if f.check == "wide":
            worst[f.column] = max(worst.get(f.column, 0), f.measure)
print(label, csv.stem, "exits", dict(exits), "failing runs per check", dict(fails), "wide worst", {k: f"{v:.3g}" for k, v in sorted(worst.items(), key=lambda kv: -kv[1])[:4]})
