"""aim's final fit from its last model against a fit from the uniform distribution (issue 31).

For one suite table (benchmarks/accuracy_suite.py) and ε, it describes the coded table once with aim
(seed 0, its complete public profile), then fits the same measurements twice, as `synth run` does
and as it did before: from the model aim fitted last (``Description.fit_start``) and from the uniform
distribution (1,000 iterations). It prints one JSON line: each fit's time, loss and iterations, the
iteration where the warm fit reached the cold fit's final loss, and the mean 3-way TVD of each
model's exact marginals against the coded original (the suite's model error, on its scored sets);
``--iterations K ...`` also times and scores warm fits given K iterations (of which a fit from aim's
model runs ``WARM_SHARE``).

    python benchmarks/aim_final_fit.py adult_coded 3 >> benchmarks/out/aim_final_fit.jsonl
    python benchmarks/aim_final_fit.py insteval 1 --iterations 600 1000

Run with one BLAS thread (OPENBLAS_NUM_THREADS=1) for times comparable with the suite's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import accuracy_suite as suite  # noqa: E402
from pgm_benchmark import model_column  # noqa: E402
from pgm_common import scored_column_sets  # noqa: E402

from synth import api  # noqa: E402
from synth.columns.domain import Domain  # noqa: E402
from synth.generation.generate import released_by  # noqa: E402
from synth.release.description import Description  # noqa: E402


def fitted(description: Description, iterations: int) -> tuple[object, list[float], float]:
    """The release's model of ``description`` fitted with ``iterations``, its losses and seconds."""
    engine = released_by(description.engine, description.engine_options)
    losses: list[float] = []
    start = time.perf_counter()
    model = engine.build_model(description.model_domain, description.result, iterations,
                               lambda i, loss: losses.append(loss))
    return model, losses, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", choices=[t.name for t in suite.TABLES])
    parser.add_argument("epsilon", type=float)
    parser.add_argument("--iterations", type=int, nargs="*", default=[], help="warm fits with these iterations too")
    args = parser.parse_args()
    csv, domain_file = suite.coded(args.table)
    codes, sizes = suite.load_coded(csv, domain_file)
    profile = HERE / "out" / f"aim_final_fit_{args.table}_{args.epsilon:g}.toml"
    profile.write_text(suite.coded_profile(sizes, args.epsilon, "aim", {}))
    sets = scored_column_sets(len(sizes), 3)
    domain = Domain(tuple(sizes), tuple(sizes.values()))

    def error(model: object) -> float | None:
        return model_column(codes, list(sizes.values()), model, domain, sets).get("tvd_3way_model")

    start = time.perf_counter()
    description = api.describe(csv, profile, epsilon=args.epsilon, seed=0, report_to=None)
    out: dict = {"table": args.table, "eps": args.epsilon, "describe_s": round(time.perf_counter() - start, 1)}
    cold, cold_losses, cold_s = fitted(dataclasses.replace(description, fit_start=None), 1000)
    out.update(cold_iters=len(cold_losses), cold_loss=cold_losses[-1] if cold_losses else None,
               cold_s=round(cold_s, 1), cold_tvd=error(cold))
    warm, warm_losses, warm_s = fitted(description, 1000)
    out.update(warm_iters=len(warm_losses), warm_loss=warm_losses[-1] if warm_losses else None,
               warm_s=round(warm_s, 1), warm_start_loss=warm_losses[0] if warm_losses else None,
               warm_tvd=error(warm),
               reach=next((i + 1 for i, loss in enumerate(warm_losses) if cold_losses and loss <= cold_losses[-1]), None))
    for iterations in args.iterations:
        model, losses, seconds = fitted(description, iterations)
        out[f"warm{iterations}"] = {"iterations_run": len(losses), "tvd": error(model), "s": round(seconds, 1)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
