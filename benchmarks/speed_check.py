"""aim's speed against mbi 2.0's AIM on one machine, one run at a time (issue 31's speed target).

The accuracy suite caches mbi's runs, and with them the times of whatever machine made them; a ratio
of speeds needs both tools timed on the same machine with nothing else running. For each cell
(TABLE:EPSILON) and seed this runs mbi's AIM exactly as the suite does (benchmarks/reference_mbi.py
in the reference venv, sampler "round") and then synth's aim exactly as the suite does (`python -m
synth run` on the coded CSV with its complete public profile, in a fresh process, scored), one after
the other, and prints for each: mbi's seconds (its own timer: mechanism and sampling, without reading
the data or scoring) and peak memory, synth's seconds (the whole command: start-up, reading, the
mechanism, the final fit, sampling and writing) and peak memory, their ratio, and both tables' mean
3-way TVD. synth's modules are compiled to bytecode first, as installing synth does (pip compiles
them at install): a checkout run with PYTHONDONTWRITEBYTECODE set, as on this project's machines,
would otherwise compile them afresh in every run (about 0.1 s). Records go to
benchmarks/out/speed_check.jsonl; `--results` appends the table to
benchmarks/RESULTS.md with the machine (its CPU model too: the two tools' speeds differ by machine
kind in different proportions) and the command.

    python benchmarks/speed_check.py adult_coded:3 diamonds:3 insteval:1 --results

Run it on an otherwise idle machine: the reference's AIM takes minutes to an hour a cell.
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import accuracy_suite as suite  # noqa: E402
from run_benchmarks import cpu_model  # noqa: E402

RECORDS = HERE / "out" / "speed_check.jsonl"


def cell(text: str) -> tuple[str, float]:
    """``TABLE:EPSILON`` as (table, ε); argparse reports a bad one."""
    table, _, epsilon = text.partition(":")
    if table not in suite.BY_NAME or not epsilon:
        raise argparse.ArgumentTypeError(f"{text!r}: give TABLE:EPSILON with TABLE one of {', '.join(suite.BY_NAME)}")
    try:
        return table, float(epsilon)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: the ε after the colon must be a number") from exc


def compile_synth() -> None:
    """Bytecode for every module of the synth that ``synth run`` imports, written next to its source."""
    import synth

    compileall.compile_dir(str(Path(synth.__file__).parent), quiet=1)


def mbi_run(table: str, epsilon: float, seed: int, timeout: float) -> dict:
    """mbi's AIM on one coded table, as ``accuracy_suite.reference_side`` runs it."""
    finished = suite.run_in_group(suite.reference_command("mbi", table, "aim", epsilon, seed), timeout,
                                  fixed_hashing=True)
    if finished is None:
        return {"status": "timeout", "seconds": timeout}
    if finished.returncode != 0:
        return {"status": "failed", "message": finished.stderr[-2000:]}
    return {**json.loads(finished.stdout.strip().splitlines()[-1]), "status": "ok"}


def synth_run(table: str, epsilon: float, seed: int, timeout: float) -> dict:
    """synth's aim on one coded table through the suite's child process (a fresh process per run,
    so that its peak memory is its own)."""
    done = subprocess.run(suite.child_command(table, "aim", epsilon, seed, timeout), capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return {"status": "failed", "message": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(record: dict) -> str:
    mbi, synth = record["mbi"], record["synth"]
    if mbi.get("status") != "ok" or synth.get("status") != "ok":
        return (f"| {record['table']} | {record['epsilon']:g} | {record['seed']} | mbi {mbi.get('status')}, "
                f"synth {synth.get('status')} | | | | |")
    return (f"| {record['table']} | {record['epsilon']:g} | {record['seed']} | {mbi['seconds']:,.1f} s, "
            f"{mbi['peak_mib']:,.0f} MiB | {synth['seconds']:,.1f} s, {synth['peak_mib']:,.0f} MiB | "
            f"{mbi['seconds'] / synth['seconds']:.1f}× | {synth['peak_mib'] / mbi['peak_mib']:.2f} | "
            f"{mbi['tvd_3way']:.4f} / {synth['tvd_3way']:.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cells", nargs="+", type=cell, metavar="TABLE:EPSILON")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 of each cell")
    parser.add_argument("--timeout", type=float, default=3 * 3600.0, help="seconds per run of either tool")
    parser.add_argument("--results", action="store_true", help="append the table to benchmarks/RESULTS.md")
    args = parser.parse_args()
    lines = ["| table | ε | seed | mbi AIM: time, peak | synth aim: time, peak | speed ratio | memory ratio "
             "| 3-way TVD mbi / synth |", "| --- | ---: | ---: | --- | --- | ---: | ---: | --- |"]
    ratios = []
    RECORDS.parent.mkdir(exist_ok=True)
    compile_synth()
    for table, epsilon in args.cells:
        for seed in range(args.seeds):
            record = {"table": table, "epsilon": epsilon, "seed": seed, "cpu": cpu_model(),
                      "date": datetime.now(UTC).isoformat(timespec="seconds"),
                      "mbi": mbi_run(table, epsilon, seed, args.timeout),
                      "synth": synth_run(table, epsilon, seed, args.timeout)}
            with RECORDS.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
            lines.append(row(record))
            print(lines[-1], flush=True)
            if record["mbi"].get("status") == record["synth"].get("status") == "ok":
                ratios.append(record["mbi"]["seconds"] / record["synth"]["seconds"])
    if ratios:
        lines.append(f"\nSpeed ratio (mbi's time / synth's): median {statistics.median(ratios):.1f}×, "
                     f"smallest {min(ratios):.1f}× over {len(ratios)} runs.")
    print("\n".join(lines))
    if args.results:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = "python benchmarks/speed_check.py " + " ".join(sys.argv[1:])
        head = [f"\n## aim's speed against mbi's AIM, both on this machine, one run at a time (issue 31) — {stamp}\n",
                f"Machine: {suite.machine()}. synth: {suite.synth_source(sys.executable)}. "
                f"Command: `{command}`. mbi: its own timer (mechanism and sampling); synth: the whole `synth run` "
                "command with the table's complete public profile, δ = 1e-9. Ratios: mbi / synth for time, "
                "synth / mbi for peak memory.\n"]
        with suite.RESULTS.open("a") as handle:
            handle.write("\n".join(head + lines + [""]))


if __name__ == "__main__":
    main()
