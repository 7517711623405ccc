"""Second reference driver: Google's DPSynth (AIM and MST) on a coded table, scored as mbi's driver is.

Runs ONLY inside its own environment /work/venvs/dpsynth (Python 3.12; see
benchmarks/dpsynth_requirements.txt: DPSynth is not on the package registry, a snapshot of its public
repository is installed beside mbi, JAX and dp-accounting); it never imports synth. Same command
line and same one-JSON-line output as benchmarks/reference_mbi.py:

    /work/venvs/dpsynth/bin/python benchmarks/reference_dpsynth.py --mechanism mst --epsilon 1 --seed 0 \
        --data TABLE.csv --domain TABLE-domain.json        # default: adult_coded

prints tool ("dpsynth"), table, mechanism, epsilon, seed, tvd_3way (mean total-variation distance
over the scored 3-way marginals, original vs synthetic: pgm_common.scored_column_sets, the same sets
as mbi's and synth's runs), tvd_3way_model (the same against the fitted model's own marginals, when
the model is on the table's own codes), seconds (mechanism + sampling, wall clock), peak_mib (max RSS
of this process), versions, scored and a ``details`` object. Progress goes to stderr.

What runs is DPSynth's in-memory entry point for an already coded table, with its defaults:
``discrete_mechanisms.DiscreteConfig(mechanism=AIMConfig())`` or ``(mechanism=MSTConfig())`` on an
``mbi.Dataset``. That wrapper spends 10 % of ρ on the 1-way marginals (no domain compression by
default) and hands the rest to the mechanism: AIM with its own workload (every 3-way marginal, its
downward closure as candidates), 16 rounds a column, an 80 MB model cap and 1000 mirror-descent
iterations a round; MST with half its share for the private spanning tree and 5000 iterations. The
budget comes from ``calibrate(epsilon, delta)`` (DPSynth's own search over ρ with dp-accounting);
where it fails (it does for AIM-GDP and SWIFT, not for AIM and MST), from the standard zCDP
conversion (Canonne, Kamath & Steinke 2020, ``accounting.zcdp_rho``), named in ``details.budget``.
Rows are drawn by the mechanism itself (``MarkovRandomField.synthetic_data()``, mbi's randomised
rounding, as many rows as the model's estimated total: the score normalises the marginals); the
seed drives DPSynth's generator and numpy's global one that mbi samples with.

One addition to DPSynth's AIM, with no effect on its result: ``jax.clear_caches()`` once per round.
Every round compiles a fresh variable-elimination program for each candidate; issue 31 reports that,
kept, they exhaust the process's memory maps and AIM crashes after 15+ minutes. AIM's loop has no
hook, so the per-round function it calls first (``aim._filter_candidates``) is wrapped to clear the
caches and log the round.

The model's marginals are computed with reference_mbi.NumpyMarginals (numpy variable elimination
over the model's log-potentials, the same route mbi's driver scores its model with).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pgm_common  # sibling module, numpy only
from reference_mbi import NumpyMarginals  # sibling module, numpy only at import


def log(message: str) -> None:
    """Progress message on stderr (stdout carries only the JSON result)."""
    print(f"[reference_dpsynth {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def import_dpsynth() -> tuple[Any, Any, Any]:
    """JAX in float64 without the persistent compilation cache (as mbi's driver), then DPSynth."""
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    import mbi
    from dpsynth import discrete_mechanisms

    # mirror descent prints its loss table on stdout every 50 iterations (every round of AIM):
    # stdout carries only the result line here, so that table is dropped
    mbi.set_log_fn(lambda *args, **kwargs: None)
    return jax, mbi, discrete_mechanisms


def clear_caches_each_round(jax: Any, stats: dict[str, Any]) -> None:
    """Wrap the function DPSynth's AIM calls once at the top of every round, so that each round
    starts with JAX's compilation caches cleared (module docstring); counts and logs the rounds."""
    from dpsynth.discrete_mechanisms import aim

    original = aim._filter_candidates
    start = time.perf_counter()

    def filter_candidates(candidates: Any, model: Any, size_limit: float) -> Any:
        jax.clear_caches()
        stats["rounds"] += 1
        kept = original(candidates, model, size_limit)
        log(f"AIM round {stats['rounds']}: {len(kept)} of {len(candidates)} candidates fit "
            f"{size_limit:.1f} MB, {time.perf_counter() - start:.0f} s")
        return kept

    aim._filter_candidates = filter_candidates


def calibrated(config: Any, epsilon: float, delta: float) -> tuple[Any, str]:
    """DPSynth's own calibration to (ε, δ); the standard zCDP conversion where it fails."""
    try:
        return config.calibrate(epsilon=epsilon, delta=delta), "calibrate(epsilon, delta)"
    except Exception as error:  # any failure of the search: fall back, and say so
        from dpsynth.discrete_mechanisms import accounting

        rho = accounting.zcdp_rho(epsilon, delta)
        log(f"calibrate failed ({type(error).__name__}: {error}); configure(zcdp_rho={rho:.6g})")
        return config.configure(zcdp_rho=rho), f"configure(zcdp_rho) after calibrate failed: {type(error).__name__}"


def versions() -> dict[str, str]:
    """Versions of Python and the packages that shape the result."""
    return pgm_common.package_versions(("dpsynth", "mbi", "jax", "jaxlib", "dp-accounting", "numpy", "scipy", "networkx"))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options (those of reference_mbi.py that DPSynth's defaults leave meaningful)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    pgm_common.add_run_options(parser)
    args = parser.parse_args(argv)
    pgm_common.table_paths(args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run one DPSynth mechanism on the coded table, score it and print the JSON result line."""
    args = parse_args(argv)
    jax, mbi, mechanisms = import_dpsynth()
    codes, sizes = pgm_common.load_coded(args.data, args.domain)
    columns = list(sizes)
    data = mbi.Dataset({c: codes[:, i] for i, c in enumerate(columns)}, mbi.Domain.fromdict(sizes))
    stats: dict[str, Any] = {"rounds": 0}
    if args.mechanism == "aim":
        clear_caches_each_round(jax, stats)
        config = mechanisms.DiscreteConfig(mechanism=mechanisms.AIMConfig())
    else:
        config = mechanisms.DiscreteConfig(mechanism=mechanisms.MSTConfig())
    np.random.seed(args.seed)  # mbi samples with numpy's global generator
    rng = np.random.default_rng(args.seed)

    start = time.perf_counter()
    mechanism, budget = calibrated(config, args.epsilon, args.delta)
    rho = mechanism.inner.zcdp_rho + mechanism.one_way_gdp_budget / 2  # GDP μ² = 2ρ
    log(f"{args.mechanism}: ρ = {rho:.6g} ({budget}); running")
    result = mechanism(rng, data)
    synthetic = np.column_stack([np.asarray(result.synthetic_data.data[c], dtype=np.int64) for c in columns])
    seconds = time.perf_counter() - start
    log(f"{args.mechanism}: mechanism + sampling {seconds:.1f} s; scoring")

    model = result.model
    model_scored = not result.mappings and dict(model.domain.config) == sizes
    output = {
        **pgm_common.reference_record("dpsynth", args, codes, synthetic, sizes, seconds, NumpyMarginals(model) if model_scored else None),
        "versions": versions(),
        "details": {
            "delta": args.delta,
            "entry": f"DiscreteConfig(mechanism={type(config.mechanism).__name__}()) with DPSynth's defaults",
            "budget": budget,
            "rho": rho,
            "one_way_budget_fraction": config.one_way_budget_fraction,
            "compressed": sorted(result.mappings) if result.mappings else [],
            "rows": int(synthetic.shape[0]),
            "sampling": "MarkovRandomField.synthetic_data() (mbi's randomised rounding, the model's total)",
            "model_cliques": [list(c) for c in model.cliques],
            **({"rounds_run": stats["rounds"], "jax_clear_caches": "once per round"}
               if args.mechanism == "aim" else {}),
        },
    }
    print(json.dumps(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
