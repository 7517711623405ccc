"""SDMetrics' QualityReport on the demo release read back as written, beside two baselines.

Usage (SDMetrics needs pandas < 3, synth pandas >= 3, so each has its own environment; the
scoring one runs this script, and synth runs as a subprocess of the Python that has it):

    python3 -m venv /work/venvs/sdmetrics
    /work/venvs/sdmetrics/bin/pip install -r benchmarks/sdmetrics_requirements.txt
    /work/venvs/sdmetrics/bin/python benchmarks/sdmetrics_quality.py --synth-python /path/to/synth/venv/bin/python

For each seed, ``python -m synth run adult.csv --profile adult.toml --seed S`` (the demo: engine
aim, ε = 1, δ = 1e-9) runs in a fresh process. The original and the synthetic CSV are then read
with pandas' defaults, as a user would (no dtype repaired), and scored by SDMetrics'
QualityReport (column shapes and column pair trends) with metadata drafted from the original
alone: a numeric column with more than 20 distinct values is numerical, a boolean one boolean,
every other column categorical. A column whose dtype differs between the two files is listed.
Baselines at the same row count: the original's columns shuffled independently (every pair
trend lost: the floor a synthesizer must beat), and a bootstrap resample of the original (the
ceiling). Results go to benchmarks/RESULTS.md with the machine, date and command.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from sdmetrics.reports.single_table import QualityReport

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_benchmarks import OUT, append_results, machine  # noqa: E402

DATA = HERE.parent / "synth" / "data"
FOLDER = OUT / "sdmetrics"
NUMERICAL_MIN_VALUES = 20  # more distinct values than this: scored as a numerical column


def metadata(original: pd.DataFrame) -> dict:
    """SDMetrics metadata drafted from the original alone (see the module docstring)."""
    columns = {}
    for name, series in original.items():
        if pd.api.types.is_bool_dtype(series):
            columns[name] = {"sdtype": "boolean"}
        elif pd.api.types.is_numeric_dtype(series) and series.nunique() > NUMERICAL_MIN_VALUES:
            columns[name] = {"sdtype": "numerical"}
        else:
            columns[name] = {"sdtype": "categorical"}
    return {"columns": columns}


def score(original: pd.DataFrame, other: pd.DataFrame) -> tuple[float, float, float]:
    """QualityReport's overall score and its two properties."""
    report = QualityReport()
    report.generate(original, other[list(original.columns)], metadata(original), verbose=False)
    properties = report.get_properties().set_index("Property")["Score"]
    return report.get_score(), float(properties["Column Shapes"]), float(properties["Column Pair Trends"])


def synth_release(python: str, csv: Path, seed: int) -> Path:
    """The demo release made by synth in a fresh process; the path of its synthetic CSV."""
    out = FOLDER / f"seed{seed}"
    command = [python, "-m", "synth", "run", str(csv), "--profile", str(DATA / "adult.toml"), "--seed", str(seed),
               "-o", str(out), "--force", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"synth failed ({done.returncode}):\n{done.stderr}")
    return out / "synthetic.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth-python", required=True, help="a Python that has synth installed")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    FOLDER.mkdir(parents=True, exist_ok=True)
    csv = FOLDER / "adult.csv"
    with gzip.open(DATA / "adult.csv.gz", "rb") as packed, csv.open("wb") as plain:
        shutil.copyfileobj(packed, plain)
    original = pd.read_csv(csv)
    version = subprocess.run([args.synth_python, "-c", "import synth; print(synth.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    rows = []
    for seed in range(args.seeds):
        synthetic = pd.read_csv(synth_release(args.synth_python, csv, seed))
        differ = [f"{c} ({original[c].dtype} → {synthetic[c].dtype})" for c in original
                  if original[c].dtype != synthetic[c].dtype]
        rows.append((f"synth (demo profile, aim, ε = 1), seed {seed}", *score(original, synthetic),
                     ", ".join(differ) or "none"))
        print(rows[-1], flush=True)
    rng = np.random.default_rng(0)
    shuffled = pd.DataFrame({c: rng.permutation(original[c].to_numpy()) for c in original})
    rows.append(("original, columns shuffled independently", *score(original, shuffled), "none"))
    resample = original.sample(len(original), replace=True, random_state=0).reset_index(drop=True)
    rows.append(("original, bootstrap resample", *score(original, resample), "none"))
    import sdmetrics

    lines = [
        "", f"## SDMetrics QualityReport on the demo release read as written — "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC", "",
        f"Machine: {machine()}. Command: `python benchmarks/sdmetrics_quality.py --synth-python PYTHON --seeds "
        f"{args.seeds}` (SDMetrics {sdmetrics.__version__}, pandas {pd.__version__} in its own environment; synth "
        f"{version} as `python -m synth run adult.csv --profile adult.toml --seed S`). Both CSVs read with pandas' "
        f"defaults; metadata from the original (numeric with more than {NUMERICAL_MIN_VALUES} values: numerical; "
        "else categorical). Target (issue 15): at least 0.97.", "",
        "| table | score | column shapes | column pair trends | dtypes that differ from the original's |",
        "| --- | ---: | ---: | ---: | --- |",
        *[f"| {name} | {total:.3f} | {shapes:.3f} | {pairs:.3f} | {differ} |" for name, total, shapes, pairs, differ in rows],
    ]
    append_results(lines)


if __name__ == "__main__":
    main()
