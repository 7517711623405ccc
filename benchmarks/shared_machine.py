"""Benchmark: one `synth run` alone, and beside another `synth run` that keeps the machine's cores busy.

Usage (from the repository root, after `pip install -e ".[bench,realdata]"`):

    python benchmarks/shared_machine.py                         # diamonds, aim, ε = 3, beside flights' mst
    python benchmarks/shared_machine.py --table adult_coded --epsilon 1 --beside flights

Every run goes through the user's path: `python -m synth run` on an accuracy-suite table's coded CSV
with its complete public profile (benchmarks/accuracy_suite.md), δ = 1e-9. The timed run is aim on
``--table``; the other is mst on ``--beside`` at ε = 1, started again and again until the timed run
ends. Three timings of the same timed run: alone; beside the other; and beside the other on one core
(``NUMBA_NUM_THREADS=1``, what a pass costs when it never waits for a second thread). Each figure is
the wall clock of the whole `synth run`. The releases of the three must be the same file: which
compilation of a kernel runs changes a run's time, never its values (checked here). The result is
appended to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from accuracy_suite import BY_NAME, coded, load_coded, synth_command  # noqa: E402
from run_benchmarks import RESULTS, machine  # noqa: E402
from startup_benchmark import synth_source  # noqa: E402


def table_command(table: str, engine: str, epsilon: float, seed: int, folder: Path) -> list[str]:
    """The suite's `synth run` of ``table`` into ``folder``/out (accuracy_suite.synth_command), replacing
    what an earlier run there wrote."""
    csv, domain_file = coded(table)
    _, sizes = load_coded(csv, domain_file)
    command, _ = synth_command(csv, sizes, engine, epsilon, seed, folder)
    return [*command, "--force"]


def timed(command: list[str], env: dict[str, str]) -> float:
    """The wall clock of ``command`` (which must succeed), in seconds."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run failed: {done.stderr[-2000:]}")
    return time.perf_counter() - start


def beside(other: list[str], command: list[str], env: dict[str, str]) -> float:
    """The wall clock of ``command`` while ``other`` runs again and again beside it."""
    with subprocess.Popen(["/bin/sh", "-c", 'while true; do "$@" >/dev/null 2>&1; done', "loop", *other],
                          start_new_session=True) as loop:
        try:
            time.sleep(5)  # the other run is reading its table and compiling by then
            return timed(command, env)
        finally:
            os.killpg(loop.pid, 9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default="diamonds", choices=list(BY_NAME))
    parser.add_argument("--epsilon", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--beside", default="flights", choices=list(BY_NAME), help="the other run's table (mst)")
    args = parser.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="shared-") as scratch:
        folders = {name: Path(scratch) / name for name in ("alone", "beside", "one_core", "other")}
        for folder in folders.values():
            folder.mkdir()
        other = table_command(args.beside, "mst", 1.0, 0, folders["other"])
        runs = {name: table_command(args.table, "aim", args.epsilon, args.seed, folders[name])
                for name in ("alone", "beside", "one_core")}
        seconds = {"alone": timed(runs["alone"], env)}
        print(f"alone: {seconds['alone']:.1f} s", flush=True)
        seconds["beside"] = beside(other, runs["beside"], env)
        print(f"beside {args.beside}'s mst: {seconds['beside']:.1f} s", flush=True)
        seconds["one_core"] = beside(other, runs["one_core"], {**env, "NUMBA_NUM_THREADS": "1"})
        print(f"beside it on one core: {seconds['one_core']:.1f} s", flush=True)
        same = all(filecmp.cmp(folders["alone"] / "out" / "synthetic.csv", folders[name] / "out" / "synthetic.csv",
                               shallow=False) for name in ("beside", "one_core"))
    print("the three synthetic tables are " + ("the same file" if same else "DIFFERENT"))
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(["python benchmarks/shared_machine.py", *sys.argv[1:]])
    with RESULTS.open("a") as handle:
        handle.write(f"\n## A run on a shared machine — {stamp}\n\nMachine: {machine()}. "
                     f"synth: {synth_source(sys.executable)}. Command: `{command}`. "
                     f"aim on {args.table} at ε = {args.epsilon:g} (seed {args.seed}), wall clock of `synth run`: "
                     f"alone {seconds['alone']:.1f} s; beside mst on {args.beside} (ε = 1, restarted until it "
                     f"ends) {seconds['beside']:.1f} s; beside it on one core (NUMBA_NUM_THREADS=1) "
                     f"{seconds['one_core']:.1f} s. Synthetic tables "
                     + ("identical." if same else "DIFFERENT.") + "\n")
    if not same:
        raise SystemExit("the runs wrote different synthetic tables")


if __name__ == "__main__":
    main()
