"""Benchmark of the ``privbayes`` engine on adult_coded: accuracy, time and peak memory.

Usage (from the repository root, after `pip install .`):

    python benchmarks/privbayes_benchmark.py --epsilons 0.3 1 3 --seeds 2
    python benchmarks/privbayes_benchmark.py --epsilons 1 --seeds 2 --cases privbayes   # a subset

Cases on adult_coded: ``privbayes`` (mutual-information score, ``score = "mi"``; the generator
samples the Bayesian network, ``fit = false``), ``privbayes-fit`` (the same measurements go
through the graphical-model fitter, ``fit = true``), ``privbayes-r`` and ``privbayes-r-fit`` (the
paper's R score, ``score = "r"``, the default). Every run is a fresh process (its peak memory is its own) with OPENBLAS_NUM_THREADS=1; it
describes adult_coded under DP (δ = 1e-9, zCDP, seeded noise), builds the model, samples as many
rows as the original and scores them as benchmarks/pgm_benchmark.py does: mean total-variation
distance over all 364 3-way marginals (pgm_common). Time is mechanism + model + sampling. Runs
already recorded in benchmarks/out/privbayes_runs.jsonl are skipped (--redo repeats them); the
summary of that file is appended to benchmarks/RESULTS.md.

``--cases datasynthesizer`` runs DataSynthesizer's correlated attribute mode (k = 2, every column
categorical, its ε) side by side, in its own virtual environment (``python -m venv
/work/venvs/ds && /work/venvs/ds/bin/pip install DataSynthesizer``); this file is then its
driver, and imports no synth. It takes about 40 minutes a run on adult_coded.

Cases ending in ``-raw`` run on the raw ../shared/data/adult.csv (30,162 × 15, numbers and text):
synth through its public API with the demo profile's public domains (synth/data/adult.toml),
DataSynthesizer with text columns categorical and numbers as its default 20-bin histograms (its
output is scored by this process). Both synthetic tables are scored on the demo profile's codes
(each number in its profile bin), all 455 3-way marginals.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pgm_benchmark import ERROR_METRIC, grid_main, run_child  # noqa: E402
from pgm_common import kway_tvds, load_adult_coded  # noqa: E402

OUT = HERE / "out"
RUNS = OUT / "privbayes_runs.jsonl"
DELTA = 1e-9
CASES = {"privbayes": {"score": "mi"}, "privbayes-fit": {"score": "mi", "fit": True}, "privbayes-r": {"score": "r"},
         "privbayes-r-fit": {"score": "r", "fit": True}, "datasynthesizer": None,
         "privbayes-raw": {"score": "mi"}, "privbayes-r-raw": {"score": "r"}, "datasynthesizer-raw": None}
RAW_DATA = HERE.parent.parent / "shared" / "data" / "adult.csv"
RAW_PROFILE = HERE.parent / "synth" / "data" / "adult.toml"
DATASYNTHESIZER_PYTHON = Path("/work/venvs/ds/bin/python")


def run_synth(case: str, epsilon: float, seed: int) -> dict:
    """One run in this process: describe under DP, build the model, sample, score."""
    from synth.columns.domain import Domain
    from synth.engines import make_engine
    from synth.model.matching import sample_codes
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.privacy.curator import CountRelease, Curator
    from synth.privacy.neighbours import Neighbouring
    from synth.progress import SILENT

    codes, sizes = load_adult_coded()
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    accountant = Accountant(Budget(epsilon, DELTA))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring()))
    engine = make_engine("privbayes", CASES[case])
    result = engine.describe(curator, SILENT)
    described = time.perf_counter() - start
    model = engine.build_model(domain, result)
    synthetic = sample_codes(model, domain, len(codes), np.random.default_rng(seed))  # the default: matched
    seconds = time.perf_counter() - start
    return {
        "tool": "synth", "case": case, "epsilon": epsilon, "seed": seed,
        **_scores(codes, synthetic, list(sizes.values())),
        "seconds": seconds, "describe_seconds": described,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "spent_epsilon": accountant.spent()["epsilon"], "network": [[child, list(parents)] for child, parents in result.output.network],
        "max_cells": result.output.max_cells,
    }


def _scores(original: np.ndarray, synthetic: np.ndarray, sizes: list[int]) -> dict:
    return {f"tvd_{k}way": float(kway_tvds(original, synthetic, sizes, k).mean()) for k in (1, 2, 3)}


def run_synth_raw(case: str, epsilon: float, seed: int) -> dict:
    """One run of the whole public path on the raw adult.csv: the demo profile's public domains
    (synth/data/adult.toml) with this engine and ε, describe, generate; both tables are scored on
    the profile's codes (numbers in its bins)."""
    import pandas as pd

    from synth.api import describe, resolve_profile
    from synth.generation.generate import generate

    original = pd.read_csv(RAW_DATA, dtype=str, keep_default_na=False)
    start = time.perf_counter()
    profile = resolve_profile(str(RAW_PROFILE), epsilon=epsilon, engine="privbayes").with_overrides(
        engine_options=CASES[case])
    description = describe(original, profile, seed=seed, report_to=None)
    synthetic = generate(description, rows=len(original), seed=seed)
    seconds = time.perf_counter() - start
    return {"tool": "synth", "case": case, "epsilon": epsilon, "seed": seed, **_raw_scores(original, synthetic),
            "seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _raw_scores(original, synthetic) -> dict:
    """Mean k-way TVDs of a synthetic version of adult.csv, both tables on the demo profile's codes."""
    from synth.domains.profile import load_profile

    schema = load_profile(RAW_PROFILE).schema
    codes, _ = schema.encode(original)
    synthetic_codes, _ = schema.encode(synthetic.astype(str))
    return _scores(codes, synthetic_codes, [c.size for c in schema.columns])


def _datasynthesizer(table, epsilon: float, seed: int, categorical: dict[str, bool], threshold: int):
    """DataSynthesizer's correlated attribute mode (k = 2) on ``table``: a synthetic table of as
    many rows, and the seconds it took (describe + generate)."""
    import tempfile

    from DataSynthesizer.DataDescriber import DataDescriber
    from DataSynthesizer.DataGenerator import DataGenerator

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        data, description = Path(folder) / "data.csv", Path(folder) / "description.json"
        table.to_csv(data, index=False)
        describer = DataDescriber(category_threshold=threshold)
        describer.describe_dataset_in_correlated_attribute_mode(
            str(data), k=2, epsilon=epsilon, attribute_to_is_categorical=categorical, seed=seed)
        describer.save_dataset_description_to_file(str(description))
        generator = DataGenerator()
        generator.generate_dataset_in_correlated_attribute_mode(len(table), str(description), seed=seed)
        return generator.synthetic_dataset, time.perf_counter() - start


def run_datasynthesizer(epsilon: float, seed: int) -> dict:
    """One DataSynthesizer run on adult_coded (every column categorical), scored like synth's."""
    import pandas as pd

    codes, sizes = load_adult_coded()
    table = pd.DataFrame({c: [f"v{x}" for x in codes[:, j]] for j, c in enumerate(sizes)})
    frame, seconds = _datasynthesizer(table, epsilon, seed, {c: True for c in sizes}, max(sizes.values()))
    synthetic = np.column_stack([frame[c].astype(str).str[1:].astype(int).to_numpy() for c in sizes])
    return {"tool": "DataSynthesizer", "case": "datasynthesizer", "epsilon": epsilon, "seed": seed,
            **_scores(codes, synthetic, list(sizes.values())),
            "seconds": seconds, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_datasynthesizer_raw(epsilon: float, seed: int) -> dict:
    """One DataSynthesizer run on the raw adult.csv: text columns categorical (told, since one has
    more values than its category threshold of 20), numbers as its default 20-bin histograms;
    scored on synth's demo profile codes like synth's raw runs."""
    import pandas as pd

    table = pd.read_csv(RAW_DATA)
    text = {c: True for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])}  # one has 41 values
    frame, seconds = _datasynthesizer(table, epsilon, seed, text, 20)
    synthetic = OUT / f"datasynthesizer-raw-{epsilon:g}-{seed}.csv"
    frame.to_csv(synthetic, index=False)
    return {"case": "datasynthesizer-raw", "epsilon": epsilon, "seed": seed, "seconds": seconds,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "synthetic": str(synthetic)}


def run_case(case: str, epsilon: float, seed: int) -> dict:
    """One run in a fresh process (one BLAS thread: on 2 cores a multithreaded BLAS stalls)."""
    python = sys.executable
    if case.startswith("datasynthesizer"):
        if not DATASYNTHESIZER_PYTHON.exists():
            raise SystemExit(f"{DATASYNTHESIZER_PYTHON} is missing; create that venv first (see the docstring)")
        python = str(DATASYNTHESIZER_PYTHON)
    record = run_child(python, __file__, case, epsilon, seed)
    if "synthetic" in record:  # DataSynthesizer on the raw table: scored here, where synth is
        import pandas as pd

        synthetic = pd.read_csv(record.pop("synthetic"), dtype=str, keep_default_na=False)
        original = pd.read_csv(RAW_DATA, dtype=str, keep_default_na=False)
        record = {"tool": "DataSynthesizer", **record, **_raw_scores(original, synthetic)}
    return record


def main() -> None:
    grid_main(__doc__, RUNS, CASES, ["privbayes-r", "privbayes-r-fit"], run_case,
              lambda record: f"1-way={record['tvd_1way']:.4f} 2-way={record['tvd_2way']:.4f} "
                             f"3-way={record['tvd_3way']:.4f}",
              "privbayes on adult_coded and adult.csv",
              f"{ERROR_METRIC} δ = {DELTA:g} (zCDP); options degree 2, θ = 4, 8 parent groups, structure share "
              "0.3; `-r` cases use the paper's R score (the default), the others mutual information; `-fit` cases "
              "fit a graphical model to the measurements instead of sampling the network; `-raw` cases run on "
              "adult.csv with the demo profile and are scored on its codes (all 455 3-way marginals); "
              "`datasynthesizer` is DataSynthesizer 0.1.13's correlated attribute mode (k = 2) in its own venv. "
              "Time is mechanism + model + sampling.")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        case, epsilon, seed = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
        runners = {"datasynthesizer": run_datasynthesizer, "datasynthesizer-raw": run_datasynthesizer_raw}
        if case in runners:
            run = runners[case](epsilon, seed)
        else:
            run = (run_synth_raw if case.endswith("-raw") else run_synth)(case, epsilon, seed)
        print(json.dumps(run))
    else:
        main()
