"""Benchmark of the ``privbayes`` engine on adult_coded: accuracy, time and peak memory.

Usage (from the repository root, after `pip install .`):

    python benchmarks/privbayes_benchmark.py --epsilons 0.3 1 3 --seeds 2
    python benchmarks/privbayes_benchmark.py --epsilons 1 --seeds 2 --cases privbayes   # a subset

Cases: ``privbayes`` (the generator samples the Bayesian network, ``fit = false``, the default)
and ``privbayes-fit`` (the measurements go through the graphical-model fitter, ``fit = true``).
Every run is a fresh process (its peak memory is its own) with OPENBLAS_NUM_THREADS=1; it
describes adult_coded under DP (δ = 1e-9, zCDP, seeded noise), builds the model, samples as many
rows as the original and scores them as benchmarks/pgm_benchmark.py does: mean total-variation
distance over all 364 3-way marginals (pgm_common). Time is mechanism + model + sampling. Runs
already recorded in benchmarks/out/privbayes_runs.jsonl are skipped (--redo repeats them); the
summary of that file is appended to benchmarks/RESULTS.md.

``--cases datasynthesizer`` runs DataSynthesizer's correlated attribute mode (k = 2, every column
categorical, its ε) side by side, in its own virtual environment (``python -m venv
/work/venvs/ds && /work/venvs/ds/bin/pip install DataSynthesizer``); this file is then its
driver, and imports no synth. It takes about 40 minutes a run on adult_coded.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pgm_benchmark import ERROR_METRIC, append_summary, run_grid  # noqa: E402
from pgm_common import kway_tvds, load_adult_coded  # noqa: E402

OUT = HERE / "out"
RUNS = OUT / "privbayes_runs.jsonl"
DELTA = 1e-9
CASES = {"privbayes": {}, "privbayes-fit": {"fit": True}, "datasynthesizer": None}
DATASYNTHESIZER_PYTHON = Path("/work/venvs/ds/bin/python")


def run_synth(case: str, epsilon: float, seed: int) -> dict:
    """One run in this process: describe under DP, build the model, sample, score."""
    from synth.curator import CountRelease, Curator
    from synth.engines import make_engine
    from synth.generate import fit_measurements
    from synth.model.bayesian_network import network_from_measurements
    from synth.model.domain import Domain
    from synth.neighbours import Neighbouring
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.progress import SILENT

    codes, sizes = load_adult_coded()
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    accountant = Accountant(Budget(epsilon, DELTA))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring()))
    engine = make_engine("privbayes", CASES[case])
    result = engine.describe(curator, SILENT)
    described = time.perf_counter() - start
    network = [(node["attribute"], node["parents"]) for node in result.output["network"]]
    if engine.options["fit"]:
        model = fit_measurements(domain, result.measurements, result.compression)
    else:
        model = network_from_measurements(domain, network, result.measurements)
    synthetic = model.sample(len(codes), np.random.default_rng(seed))
    seconds = time.perf_counter() - start
    sizes_list = list(sizes.values())
    return {
        "tool": "synth", "case": case, "epsilon": epsilon, "seed": seed,
        "tvd_1way": float(kway_tvds(codes, synthetic, sizes_list, 1).mean()),
        "tvd_2way": float(kway_tvds(codes, synthetic, sizes_list, 2).mean()),
        "tvd_3way": float(kway_tvds(codes, synthetic, sizes_list, 3).mean()),
        "seconds": seconds, "describe_seconds": described,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "spent_epsilon": accountant.spent()["epsilon"], "network": network,
        "max_cells": result.output["max_cells"],
    }


def run_datasynthesizer(epsilon: float, seed: int) -> dict:
    """One DataSynthesizer run (correlated attribute mode, k = 2) in its own venv, scored the same way."""
    import tempfile

    import pandas as pd
    from DataSynthesizer.DataDescriber import DataDescriber
    from DataSynthesizer.DataGenerator import DataGenerator

    codes, sizes = load_adult_coded()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        data, description = Path(folder) / "data.csv", Path(folder) / "description.json"
        pd.DataFrame({c: [f"v{x}" for x in codes[:, j]] for j, c in enumerate(sizes)}).to_csv(data, index=False)
        describer = DataDescriber(category_threshold=max(sizes.values()))
        describer.describe_dataset_in_correlated_attribute_mode(
            str(data), k=2, epsilon=epsilon, attribute_to_is_categorical={c: True for c in sizes}, seed=seed)
        describer.save_dataset_description_to_file(str(description))
        generator = DataGenerator()
        generator.generate_dataset_in_correlated_attribute_mode(len(codes), str(description), seed=seed)
        frame = generator.synthetic_dataset
    seconds = time.perf_counter() - start
    synthetic = np.column_stack([frame[c].astype(str).str[1:].astype(int).to_numpy() for c in sizes])
    sizes_list = list(sizes.values())
    return {
        "tool": "DataSynthesizer", "case": "datasynthesizer", "epsilon": epsilon, "seed": seed,
        "tvd_1way": float(kway_tvds(codes, synthetic, sizes_list, 1).mean()),
        "tvd_2way": float(kway_tvds(codes, synthetic, sizes_list, 2).mean()),
        "tvd_3way": float(kway_tvds(codes, synthetic, sizes_list, 3).mean()),
        "seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_case(case: str, epsilon: float, seed: int) -> dict:
    """One run in a fresh process (one BLAS thread: on 2 cores a multithreaded BLAS stalls)."""
    python = sys.executable
    if case == "datasynthesizer":
        if not DATASYNTHESIZER_PYTHON.exists():
            raise SystemExit(f"{DATASYNTHESIZER_PYTHON} is missing; create that venv first (see the docstring)")
        python = str(DATASYNTHESIZER_PYTHON)
    command = [python, __file__, "--child", case, str(epsilon), str(seed)]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{case} at epsilon={epsilon}, seed={seed} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--cases", nargs="+", default=["privbayes", "privbayes-fit"], choices=list(CASES))
    parser.add_argument("--redo", action="store_true", help="run again the runs already in privbayes_runs.jsonl")
    parser.add_argument("--no-summary", action="store_true", help="record runs but do not append to RESULTS.md")
    args = parser.parse_args()
    run_grid(RUNS, args.epsilons, args.seeds, args.cases, args.redo, run_case,
             lambda record: f"1-way={record['tvd_1way']:.4f} 2-way={record['tvd_2way']:.4f} "
                            f"3-way={record['tvd_3way']:.4f}")
    if not args.no_summary:
        append_summary(RUNS, "privbayes on adult_coded", f"{ERROR_METRIC} δ = {DELTA:g} (zCDP); default options "
                       "(degree 2, θ = 4, 8 parent groups, structure share 0.3); `privbayes` samples the Bayesian "
                       "network, `privbayes-fit` fits a graphical model to the same measurements; "
                       "`datasynthesizer` is DataSynthesizer's correlated attribute mode (k = 2) in its own venv. "
                       "Time is mechanism + model + sampling.")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        case, epsilon, seed = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
        run = run_datasynthesizer(epsilon, seed) if case == "datasynthesizer" else run_synth(case, epsilon, seed)
        print(json.dumps(run))
    else:
        main()
