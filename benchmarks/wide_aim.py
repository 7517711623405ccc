"""Benchmark: `aim` on a 40-column table (adult_coded widened with made-up columns), ε = 1.

Usage (from the repository root, after `pip install .`):

    python benchmarks/wide_aim.py              # ε = 1, δ = 1e-9, seed 0
    python benchmarks/wide_aim.py --epsilon 3 --seed 1

The table is ``pgm_common.widened_adult_coded`` (48,842 rows × 40 columns: the 14 of adult_coded,
13 noisy copies of them and 13 independent columns). The run goes through the engine, the fit and
the sampler as `synth run` does (no CSV reading or writing), in this process; time is wall
time of describe + fit + sample, peak memory the process's maximum resident set. Error: mean
TVD (½ L1 of normalised marginals) over 1,000 3-way marginals drawn at random (seeded) from the
9,880, plus the same for independent columns measured exactly (a floor any engine should beat).
The result is appended to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pgm_common import marginal_counts, tvd, widened_adult_coded  # noqa: E402

RESULTS = HERE / "RESULTS.md"
SAMPLED_MARGINALS = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from synth.columns.domain import Domain
    from synth.engines import make_engine
    from synth.model.compression import compressed_sizes
    from synth.model.matching import sample_codes
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.privacy.curator import CountRelease, Curator
    from synth.privacy.neighbours import Neighbouring
    from synth.progress import Progress

    codes, sizes = widened_adult_coded()
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    accountant = Accountant(Budget(args.epsilon, 1e-9))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(args.seed), Neighbouring()))
    engine = make_engine("aim", {})
    result = engine.describe(curator, Progress(quiet=False))
    described = time.perf_counter() - start
    model_domain = Domain(domain.names, compressed_sizes(domain.names, domain.sizes, result.compression))
    model = engine.build_model(model_domain, result)
    synthetic = sample_codes(model, domain, len(codes), np.random.default_rng(args.seed))  # the default: matched
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    every = list(itertools.combinations(range(codes.shape[1]), 3))
    chosen = np.random.default_rng(2026).choice(len(every), SAMPLED_MARGINALS, replace=False)
    size_list = list(sizes.values())
    rng = np.random.default_rng(args.seed)
    independent = np.column_stack([rng.permutation(codes[:, j]) for j in range(codes.shape[1])])
    errors = {"aim": [], "independent (exact 1-way)": []}
    for index in chosen:
        columns = every[index]
        truth = marginal_counts(codes, size_list, columns)
        errors["aim"].append(tvd(truth, marginal_counts(synthetic, size_list, columns)))
        errors["independent (exact 1-way)"].append(tvd(truth, marginal_counts(independent, size_list, columns)))
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"\n## `aim` on a 40-column table — {stamp}\n",
        f"Machine: {platform.system()} {platform.machine()}, 2 cores, Python {platform.python_version()}. "
        f"Command: `python benchmarks/wide_aim.py {' '.join(sys.argv[1:])}`. Table: adult_coded widened to "
        f"40 columns (pgm_common.widened_adult_coded), {len(codes):,} rows; ε = {args.epsilon:g}, δ = 1e-9, "
        f"seed {args.seed}, default aim options. Error: mean TVD over {SAMPLED_MARGINALS} random 3-way marginals.\n",
        "| engine | mean 3-way TVD | rounds | describe (s) | total incl. fit + sample (s) | peak memory (MiB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        f"| aim | {np.mean(errors['aim']):.4f} | {result.output['rounds']} | {described:.0f} | {seconds:.0f} | {peak:.0f} |",
        f"| independent (exact 1-way, no noise) | {np.mean(errors['independent (exact 1-way)']):.4f} | | | | |",
        "",
    ]
    with RESULTS.open("a") as handle:
        handle.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
