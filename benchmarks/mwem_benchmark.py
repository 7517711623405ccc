"""Benchmark of the query-answering engines ``mwem`` and ``smalldb`` against ``mst`` and ``aim``, with
SmartNoise-synth's MWEM side by side (optional, in its own venv).

Usage (from the repository root, after `pip install .`):

    python benchmarks/mwem_benchmark.py --epsilons 0.3 1 3 --seeds 2
    python benchmarks/mwem_benchmark.py --epsilons 1 --seeds 1 --cases adult_missing/synth-mwem   # a subset

Data sets (from /work/shared/data, see pgm_common.DATA_DIR):

* ``adult_missing``: adult_missing.csv, 32,561 × 6 (age, education, marital-status, relationship,
  sex, income with `<NULL>` cells). Every column is coded as categorical over the values present
  in the file, `<NULL>` included (a data-derived domain: fine for a benchmark, not for a
  release); 1,555,200 cells.
* ``adult_coded8``: 8 columns of adult_coded.csv (48,842 rows; workclass, education-num,
  marital-status, occupation, relationship, race, sex, income>50K); 1,814,400 cells.
* ``adult_coded3``: 3 columns of adult_coded.csv (sex, race, income>50K); 20 cells: small enough
  for ``smalldb``.

Workload and error: all 3-way marginals of the data set's columns; error = mean over them of the
total-variation distance (½ L1) between the normalised marginals of the original and of a
synthetic table of as many rows (pgm_common.kway_tvds). Cases per data set:

* ``synth-mwem``: ``mwem``, k = 3, default options (rounds = min(workload, 30), ½ of each round's
  ε to select, passes by the work rule, averaged estimate), pure ε-DP (δ = 0, Laplace), like SmartNoise's;
* ``synth-mwem-last``: the same with ``average = false`` (the last round's estimate);
* ``synth-mwem-pgm``: the same with ``representation = "graphical-model"`` (MWEM+PGM);
* ``synth-smalldb`` (adult_coded3 only): ``smalldb`` with k = 3 and m = 6 rows (177,100
  candidates), pure ε-DP;
* ``synth-mst``, ``synth-aim`` (3-way workload): zCDP with δ = 1e-9;
* ``snsynth-mwem``: SmartNoise-synth 1.0.8's MWEMSynthesizer (its ε, pure DP; as many iterations
  as synth-mwem's rounds, 3-way cuboid queries, one histogram over all columns), run by this
  file in /work/venvs/snsynth (`python -m venv /work/venvs/snsynth &&
  /work/venvs/snsynth/bin/pip install smartnoise-synth`); the driver then imports no synth.
  ``snsynth-mwem-defaults`` (adult_coded3 only): the same with SmartNoise's own number of
  iterations (10 · ⌈log10 n⌉ = 50 here), as synth-mwem's single round is too few for its
  random cuboid queries.

Time is mechanism + model + sampling (mwem's histogram is rebuilt from its measurements, as
`synth generate` does). Every run is a fresh process with OPENBLAS_NUM_THREADS=1; runs already in
benchmarks/out/mwem_runs.jsonl are skipped (--redo repeats them); the summary is appended to
benchmarks/RESULTS.md (pgm_benchmark.run_grid / append_summary).
"""

from __future__ import annotations

import json
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pgm_benchmark import grid_main, run_child  # noqa: E402
from pgm_common import DATA_DIR, kway_tvds, load_adult_coded  # noqa: E402

RUNS = HERE / "out" / "mwem_runs.jsonl"
SNSYNTH_PYTHON = Path("/work/venvs/snsynth/bin/python")
DELTA = 1e-9
CODED8 = ("workclass", "education-num", "marital-status", "occupation", "relationship", "race", "sex", "income>50K")
CODED3 = ("sex", "race", "income>50K")
SMALLDB_SIZE = 6
ENGINES = {  # case → (engine, options, delta)
    "synth-mwem": ("mwem", {}, 0.0),
    "synth-mwem-last": ("mwem", {"average": False}, 0.0),
    "synth-mwem-pgm": ("mwem", {"representation": "graphical-model"}, 0.0),
    "synth-smalldb": ("smalldb", {"k": 3, "size": SMALLDB_SIZE}, 0.0),
    "synth-mst": ("mst", {}, DELTA),
    "synth-aim": ("aim", {"workload": "3-way"}, DELTA),
}
DATASETS = ("adult_missing", "adult_coded8", "adult_coded3")
CASES = [f"{data}/{case}" for data in DATASETS for case in [*ENGINES, "snsynth-mwem", "snsynth-mwem-defaults"]
         if case not in ("synth-smalldb", "snsynth-mwem-defaults") or data == "adult_coded3"]


def load(dataset: str) -> tuple[np.ndarray, dict[str, int]]:
    """Codes (rows × columns) and {column: number of codes} of a benchmark data set."""
    if dataset == "adult_missing":
        import pandas as pd

        frame = pd.read_csv(DATA_DIR / "adult_missing.csv", dtype=str, keep_default_na=False)
        columns = [pd.factorize(frame[c], sort=True) for c in frame.columns]
        return (np.column_stack([codes for codes, _ in columns]).astype(np.int64),
                {c: len(values) for c, (_, values) in zip(frame.columns, columns)})
    codes, sizes = load_adult_coded()
    names = CODED8 if dataset == "adult_coded8" else CODED3
    positions = [list(sizes).index(c) for c in names]
    return codes[:, positions], {c: sizes[c] for c in names}


def default_rounds(columns: int) -> int:
    """synth-mwem's default number of rounds: the number of 3-way marginals, at most 30."""
    return min(math.comb(columns, 3), 30)


def score(record: dict, codes: np.ndarray, synthetic: np.ndarray, sizes: dict[str, int], start: float) -> dict:
    return {**record, "tvd_3way": float(kway_tvds(codes, synthetic, list(sizes.values()), 3).mean()),
            "seconds": time.perf_counter() - start,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_synth(case: str, epsilon: float, seed: int) -> dict:
    """One synth run in this process: describe under DP, build the model as the generator does, sample."""
    from synth.curator import CountRelease, Curator
    from synth.engines import make_engine
    from synth.generate import fit_measurements
    from synth.model.compression import compressed_sizes
    from synth.model.domain import Domain
    from synth.model.histogram import database_model, replay_multiplicative_weights
    from synth.neighbours import Neighbouring
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.progress import SILENT

    dataset, name = case.split("/")
    engine_name, options, delta = ENGINES[name]
    codes, sizes = load(dataset)
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    accountant = Accountant(Budget(epsilon, delta))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring()))
    engine = make_engine(engine_name, {"k": 3, **options} if engine_name == "mwem" else options)
    result = engine.describe(curator, SILENT)
    output = result.output
    if engine_name == "smalldb":
        model = database_model(domain, np.asarray(output["database"]), output["total"])
    elif engine_name == "mwem" and output["representation"] == "histogram":
        model = replay_multiplicative_weights(domain, result.measurements, output["total"], output["passes"],
                                              engine.options["average"])
    else:
        model_domain = Domain(domain.names, compressed_sizes(domain.names, domain.sizes, result.compression))
        model = fit_measurements(model_domain, result.measurements, result.compression)
    synthetic = model.sample(len(codes), np.random.default_rng(seed))
    record = {"tool": "synth", "case": case, "epsilon": epsilon, "seed": seed, "delta": delta,
              "spent": accountant.spent(), "rounds": output.get("rounds"),
              "representation": output.get("representation")}
    return score(record, codes, synthetic, sizes, start)


def run_smartnoise(case: str, epsilon: float, seed: int) -> dict:
    """One SmartNoise-synth MWEM run (in its venv), scored the same way."""
    import random

    from snsynth.mwem import MWEMSynthesizer

    dataset = case.split("/")[0]
    codes, sizes = load(dataset)
    np.random.seed(seed)
    random.seed(seed)
    start = time.perf_counter()
    iterations = None if case.endswith("-defaults") else default_rounds(len(sizes))
    synthesizer = MWEMSynthesizer(epsilon=epsilon, iterations=iterations, marginal_width=3, split_factor=len(sizes))
    synthesizer.fit(codes, categorical_columns=list(range(len(sizes))))
    synthetic = np.asarray(synthesizer.sample(len(codes)), dtype=np.int64)
    record = {"tool": "smartnoise-synth", "case": case, "epsilon": epsilon, "seed": seed, "delta": 0.0}
    return score(record, codes, synthetic, sizes, start)


def run_case(case: str, epsilon: float, seed: int) -> dict:
    """One run in a fresh process: SmartNoise's in its venv, synth's with this interpreter."""
    python = sys.executable
    if "/snsynth-" in case:
        if not SNSYNTH_PYTHON.exists():
            raise SystemExit(f"{SNSYNTH_PYTHON} is missing; create that venv first (see the docstring)")
        python = str(SNSYNTH_PYTHON)
    return run_child(python, __file__, case, epsilon, seed)


def main() -> None:
    grid_main(__doc__, RUNS, CASES, CASES, run_case, lambda record: f"tvd={record['tvd_3way']:.4f}",
              "mwem and smalldb against mst, aim and SmartNoise-synth's MWEM",
              "Error: mean over the workload (all 3-way marginals of the data set's columns: 20 for "
              "adult_missing, 56 for adult_coded8, 1 for adult_coded3) of the total-variation distance "
              "(½ L1) between normalised marginals of the original and a synthetic table of as many rows. "
              "synth mwem/smalldb and SmartNoise's MWEM: pure ε-DP; synth mst/aim: zCDP, δ = 1e-9. "
              "Time is mechanism + model + sampling. Cases are described in benchmarks/mwem_benchmark.py.")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        runner = run_smartnoise if "/snsynth-" in sys.argv[2] else run_synth
        print(json.dumps(runner(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()
