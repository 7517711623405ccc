"""aim's options swept on adult_coded through the Curator: which settings lower the error.

Usage (from the repository root, after `pip install .`):

    python benchmarks/aim_sweep.py --label default --seeds 0 1 2 3 4
    python benchmarks/aim_sweep.py --label rounds120 --options '{"rounds": 120}' --seeds 0 1 2 3 4
    python benchmarks/aim_sweep.py --label share95 --measure-share 0.95 --epsilon 0.3

Each seed is one describe (δ = 1e-9) + fit + rounded sample of as many rows as the table; it prints
one JSON line: the mean 3-way TVD of the sampled table and of the model's exact marginals (the
metric of pgm_benchmark.py), the seconds and the number of measurements. ``--measure-share``
overrides aim's 90 % measure / 10 % select split of each round (a module constant, not an
option). ``--out FILE`` also appends the lines to FILE; ``--summary FILE`` prints mean ± standard
error per (label, ε) of every line in FILE.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pgm_common import kway_tvds, load_adult_coded, mean_kway_tvd_model

DELTA = 1e-9


def run(epsilon: float, seed: int, options: dict, measure_share: float | None, label: str) -> dict:
    import synth.engines.aim_plan as aim_plan
    from synth.columns.domain import Domain
    from synth.engines import make_engine
    from synth.model.compression import compressed_sizes
    from synth.model.matching import sample_codes
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.privacy.curator import CountRelease, Curator
    from synth.privacy.neighbours import Neighbouring
    from synth.progress import SILENT

    if measure_share is not None:
        aim_plan.MEASURE_SHARE = measure_share
    codes, sizes = load_adult_coded()
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    curator = Curator(codes, domain, CountRelease(Accountant(Budget(epsilon, DELTA)), SeededNoise(seed),
                                                  Neighbouring()))
    engine = make_engine("aim", options)
    result = engine.describe(curator, SILENT)
    model = engine.build_model(Domain(domain.names, compressed_sizes(domain.names, domain.sizes, result.compression)),
                               result)
    synthetic = sample_codes(model, domain, len(codes), np.random.default_rng(seed))  # the default: matched
    columns = list(sizes.values())
    return {"label": label, "epsilon": epsilon, "seed": seed, "options": options, "measure_share": measure_share,
            "tvd_3way": float(kway_tvds(codes, synthetic, columns, 3).mean()),
            "tvd_3way_model": mean_kway_tvd_model(codes, columns, 3,
                                                  lambda cols: model.marginal([domain.names[c] for c in cols])),
            "seconds": round(time.perf_counter() - start, 1), "measurements": len(result.measurements)}


def summary(path: Path) -> None:
    groups: dict[tuple[str, float], list[dict]] = defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        groups[(record["label"], record["epsilon"])].append(record)

    def mean_se(values: list[float]) -> str:
        se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
        return f"{statistics.mean(values):.4f} ± {se:.4f}"

    print("| label | ε | seeds | sampled (rounded) | model | seconds |")
    print("| --- | ---: | ---: | --- | --- | ---: |")
    for (label, epsilon), records in groups.items():
        print(f"| {label} | {epsilon:g} | {len(records)} | {mean_se([r['tvd_3way'] for r in records])} | "
              f"{mean_se([r['tvd_3way_model'] for r in records])} | "
              f"{statistics.mean(r['seconds'] for r in records):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", default="default")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--options", default="{}", help="aim's options as JSON, e.g. '{\"coarse_groups\": 0}'")
    parser.add_argument("--measure-share", type=float, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--summary", type=Path, default=None, help="summarise FILE and exit")
    args = parser.parse_args()
    if args.summary is not None:
        summary(args.summary)
        return
    for seed in args.seeds:
        line = json.dumps(run(args.epsilon, seed, json.loads(args.options), args.measure_share, args.label))
        print(line, flush=True)
        if args.out is not None:
            with open(args.out, "a") as handle:
                handle.write(line + "\n")


if __name__ == "__main__":
    main()
