"""Benchmark of the query-answering engines ``mwem`` and ``smalldb`` against ``mst`` and ``aim``, with
SmartNoise-synth's MWEM side by side (optional, in its own venv).

Usage (from the repository root, after `pip install .`):

    python benchmarks/mwem_benchmark.py --epsilons 0.3 1 3 --seeds 2
    python benchmarks/mwem_benchmark.py --epsilons 1 --seeds 1 --cases adult_missing/synth-mwem   # a subset

The default cases leave out SmartNoise on the two large data sets (see ``snsynth-mwem``).

Data sets (from /work/shared/data, see pgm_common.DATA_DIR):

* ``adult_missing``: adult_missing.csv, 32,561 × 6 (age, education, marital-status, relationship,
  sex, income with `<NULL>` cells). Every column is coded as categorical over the values present
  in the file, `<NULL>` included (a data-derived domain: fine for a benchmark, not for a
  release); 1,555,200 cells.
* ``adult_coded8``: 8 columns of adult_coded.csv (48,842 rows; workclass, education-num,
  marital-status, occupation, relationship, race, sex, income>50K); 1,814,400 cells.
* ``adult_coded6``: 6 columns of adult_coded.csv (workclass, marital-status, relationship, race,
  sex, income>50K); 7,560 cells: the selection on which SmartNoise's MWEM finishes.
* ``adult_coded3``: 3 columns of adult_coded.csv (sex, race, income>50K); 20 cells: small enough
  for ``smalldb``.

Workload and error: all 3-way marginals of the data set's columns; error = mean over them of the
total-variation distance (½ L1) between the normalised marginals of the original and of a
synthetic table of as many rows (pgm_common.kway_tvds). Cases per data set:

* ``synth-mwem``: ``mwem``, workload ``"3-way"``, default options (candidates: the workload's 1-, 2- and 3-way
  tables; selection score minus the expected noise of measuring; rounds = the number of columns;
  ½ of each round's ε to select; passes by the work rule; the last estimate), pure ε-DP (δ = 0,
  Laplace), like SmartNoise's;
* ``synth-mwem-pgm``, ``synth-mwem-histogram``: the same with ``representation =
  "graphical-model"`` (MWEM+PGM) or ``"histogram"`` (``"auto"`` takes the histogram on
  adult_coded6 and adult_coded3, the graphical model on the two larger sets);
* ``synth-mwem-workload``, ``synth-mwem-no-penalty``: the defaults with ``candidates =
  "workload"`` (3-way tables only) or ``penalty = false``: what each of the two changes brings;
* ``synth-mwem-paper``: the paper's MWEM (3-way tables only, no penalty, explicit histogram,
  the average of the rounds' estimates); ``synth-mwem-paper-last``: the same with the last
  estimate;
* ``synth-smalldb`` (adult_coded3 only): ``smalldb`` with workload ``"3-way"`` and m = 6 rows (177,100
  candidates), pure ε-DP;
* ``synth-mst``, ``synth-aim`` (3-way workload): zCDP with δ = 1e-9;
* ``snsynth-mwem``: SmartNoise-synth 1.0.8's MWEMSynthesizer (its ε, pure DP; one histogram over
  all columns; cuboid queries up to 3-way, all of them (``q_count`` = their number, as
  synth-mwem's candidates); as many iterations as synth-mwem's rounds), run by this file in
  /work/venvs/snsynth (`python -m venv /work/venvs/snsynth && /work/venvs/snsynth/bin/pip install
  smartnoise-synth`); the driver then imports no synth. A run is stopped after
  ``SNSYNTH_TIMEOUT`` seconds and recorded as not finished: SmartNoise updates one query object
  per cell of a measured cuboid against the whole histogram, so its time grows with the domain
  times the cells measured (adult_missing and adult_coded8 are run on request only).
  ``snsynth-mwem-defaults``: SmartNoise's own choices
  (10 · ⌈log10 n⌉ = 50 iterations, 2 · iterations random cuboids), as it needs more iterations
  than synth-mwem's rounds. ``snsynth-mwem-split3`` (adult_missing): its own choices with
  ``split_factor = 3``, its way to scale: the columns are cut into groups of 3 with one
  histogram each, sampled independently of each other.

Time is mechanism + model + sampling (mwem's histogram is rebuilt from its measurements, as
`synth generate` does). Every run is a fresh process with OPENBLAS_NUM_THREADS=1; runs already in
benchmarks/out/mwem_runs.jsonl are skipped (--redo repeats them); the summary is appended to
benchmarks/RESULTS.md (pgm_benchmark.run_grid / append_summary), with the error-against-ε curves
of every recorded run drawn to docs/mwem-error-vs-epsilon.png.
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
FIGURE = HERE.parent / "docs" / "mwem-error-vs-epsilon.png"
SNSYNTH_PYTHON = Path("/work/venvs/snsynth/bin/python")
SNSYNTH_TIMEOUT = 1800  # seconds; a SmartNoise run stopped then is recorded as not finished
DELTA = 1e-9
CODED8 = ("workclass", "education-num", "marital-status", "occupation", "relationship", "race", "sex", "income>50K")
CODED6 = ("workclass", "marital-status", "relationship", "race", "sex", "income>50K")
CODED3 = ("sex", "race", "income>50K")
SMALLDB_SIZE = 6
PAPER = {"candidates": "workload", "penalty": False, "average": True, "representation": "histogram"}  # the paper's
ENGINES = {  # case → (engine, options, delta)
    "synth-mwem": ("mwem", {}, 0.0),
    "synth-mwem-pgm": ("mwem", {"representation": "graphical-model"}, 0.0),
    "synth-mwem-histogram": ("mwem", {"representation": "histogram"}, 0.0),
    "synth-mwem-workload": ("mwem", {"candidates": "workload"}, 0.0),
    "synth-mwem-no-penalty": ("mwem", {"penalty": False}, 0.0),
    "synth-mwem-paper": ("mwem", PAPER, 0.0),
    "synth-mwem-paper-last": ("mwem", {**PAPER, "average": False}, 0.0),
    "synth-smalldb": ("smalldb", {"workload": "3-way", "size": SMALLDB_SIZE}, 0.0),
    "synth-mst": ("mst", {}, DELTA),
    "synth-aim": ("aim", {"workload": "3-way"}, DELTA),
}
DATASETS = ("adult_missing", "adult_coded8", "adult_coded6", "adult_coded3")
SUBSETS = {"adult_coded8": CODED8, "adult_coded6": CODED6, "adult_coded3": CODED3}
SMALL = ("adult_coded6", "adult_coded3")  # small enough for SmartNoise's MWEM (its cost grows with the domain)
CASES = [f"{data}/{case}" for data in DATASETS
         for case in [*ENGINES, "snsynth-mwem", "snsynth-mwem-defaults", "snsynth-mwem-split3"]
         if (case != "synth-smalldb" or data == "adult_coded3") and (case != "snsynth-mwem-split3" or data == "adult_missing")]
DEFAULT_CASES = [c for c in CASES if "/snsynth-" not in c or c.split("/")[0] in SMALL]


def load(dataset: str) -> tuple[np.ndarray, dict[str, int]]:
    """Codes (rows × columns) and {column: number of codes} of a benchmark data set."""
    if dataset == "adult_missing":
        import pandas as pd

        frame = pd.read_csv(DATA_DIR / "adult_missing.csv", dtype=str, keep_default_na=False)
        columns = [pd.factorize(frame[c], sort=True) for c in frame.columns]
        return (np.column_stack([codes for codes, _ in columns]).astype(np.int64),
                {c: len(values) for c, (_, values) in zip(frame.columns, columns)})
    codes, sizes = load_adult_coded()
    names = SUBSETS[dataset]
    positions = [list(sizes).index(c) for c in names]
    return codes[:, positions], {c: sizes[c] for c in names}


def closure_size(columns: int) -> int:
    """The number of 1-, 2- and 3-way marginals of ``columns`` columns: synth-mwem's candidates
    (the 3-way workload's downward closure) and SmartNoise's cuboids with marginal_width = 3."""
    return sum(math.comb(columns, k) for k in (1, 2, 3))


def score(record: dict, codes: np.ndarray, synthetic: np.ndarray, sizes: dict[str, int], start: float) -> dict:
    return {**record, "tvd_3way": float(kway_tvds(codes, synthetic, list(sizes.values()), 3).mean()),
            "seconds": time.perf_counter() - start,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_synth(case: str, epsilon: float, seed: int) -> dict:
    """One synth run in this process: describe under DP, build the model as the generator does, sample."""
    from synth.columns.domain import Domain
    from synth.engines import make_engine
    from synth.model.compression import compressed_sizes
    from synth.model.matching import sample_codes
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.privacy.curator import CountRelease, Curator
    from synth.privacy.neighbours import Neighbouring
    from synth.progress import SILENT

    dataset, name = case.split("/")
    engine_name, options, delta = ENGINES[name]
    codes, sizes = load(dataset)
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    start = time.perf_counter()
    accountant = Accountant(Budget(epsilon, delta))
    curator = Curator(codes, domain, CountRelease(accountant, SeededNoise(seed), Neighbouring()))
    engine = make_engine(engine_name, {"workload": "3-way", **options} if engine_name == "mwem" else options)
    result = engine.describe(curator, SILENT)
    output = result.output
    model_domain = Domain(domain.names, compressed_sizes(domain.names, domain.sizes, result.compression))
    model = engine.build_model(model_domain, result)
    synthetic = sample_codes(model, domain, len(codes), np.random.default_rng(seed))  # the default: matched
    record = {"tool": "synth", "case": case, "epsilon": epsilon, "seed": seed, "delta": delta,
              "spent": accountant.spent(), "rounds": getattr(output, "rounds", None),
              "representation": getattr(output, "representation", None)}
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
    same = case.endswith("/snsynth-mwem")  # synth-mwem's rounds and candidates, or SmartNoise's own
    synthesizer = MWEMSynthesizer(epsilon=epsilon, iterations=len(sizes) if same else None,
                                  q_count=closure_size(len(sizes)) if same else None, marginal_width=3,
                                  split_factor=3 if case.endswith("-split3") else len(sizes))
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
    return run_child(python, __file__, case, epsilon, seed, SNSYNTH_TIMEOUT if "/snsynth-" in case else None)


def main() -> None:
    grid_main(__doc__, RUNS, CASES, DEFAULT_CASES, run_case, lambda record: f"tvd={record['tvd_3way']:.4f}",
              "mwem and smalldb against mst, aim and SmartNoise-synth's MWEM",
              "Error: mean over the workload (all 3-way marginals of the data set's columns: 20 for "
              "adult_missing, 56 for adult_coded8, 1 for adult_coded3) of the total-variation distance "
              "(½ L1) between normalised marginals of the original and a synthetic table of as many rows. "
              "synth mwem/smalldb and SmartNoise's MWEM: pure ε-DP; synth mst/aim: zCDP, δ = 1e-9. "
              "Time is mechanism + model + sampling. Cases are described in benchmarks/mwem_benchmark.py. "
              f"Error against ε, every run recorded: {FIGURE.relative_to(HERE.parent)}.", FIGURE)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        runner = run_smartnoise if "/snsynth-" in sys.argv[2] else run_synth
        print(json.dumps(runner(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()
