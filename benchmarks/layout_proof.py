"""Proof that a change of layout changes nothing a user sees: a fixed set of seeded ``synth`` runs
and the SHA-256 of every file they write and of their console messages.

Run it on two checkouts (e.g. main and a branch that moves modules) and compare the digest files;
they must be identical. The commands run synth's command line from the checkout this script
belongs to (its root first on PYTHONPATH), on slices of the shared Adult tables, with fixed seeds
(and PYTHONHASHSEED=0), the clock that stamps a Description's ``created`` pinned to 2000-01-01:

    python benchmarks/layout_proof.py --out /tmp/before.txt       # on main
    python benchmarks/layout_proof.py --out /tmp/after.txt        # on the branch
    diff /tmp/before.txt /tmp/after.txt

Console text is masked before it is hashed, and only where it legitimately varies: the scratch
folder's absolute path (``<WORK>``), the checkout's (``<REPO>``), durations (a number followed by
s, ms, min or it/s, and tqdm's ``[mm:ss<mm:ss, ...]`` brackets, become ``<TIME>``), and progress
bars: which of a bar's frames get drawn depends on the machine's speed, so each frame becomes
``<BAR description /total>`` (``<BAR description>`` for a bar without a total), the spaces that
clear a finished bar are dropped, and a run of equal lines is kept once. Output files are hashed as written, unmasked. ``--transcript`` keeps the
masked console text for reading.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = 3000  # rows of each slice: small enough for a busy machine, large enough for every engine

# ``python -m synth`` with the clock of the Description's ``created`` stamp pinned (2000-01-01 UTC): the
# one value in the files that changes from run to run (the manifest and the model file restate it)
LAUNCHER = """
import sys
from datetime import datetime

class PinnedClock(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2000, 1, 1, tzinfo=tz)

import synth
sys.modules[synth.Description.__module__].datetime = PinnedClock
from synth.cli import main
sys.exit(main())
"""

TIMES = [
    re.compile(r"\[\d+:\d+(?::\d+)?<[^\]]*\]"),  # tqdm: [00:01<00:02, 3.4it/s]
    re.compile(r"\b\d+(?:[.,]\d+)*\s*(?:s|ms|min|it/s|s/it)\b"),
]


BAR = re.compile(r"^(?P<desc>.*?):? *\d+%\|[^|]*\| *\d+/(?P<total>\d+)\b.*$")  # tqdm with a total
COUNTER = re.compile(r"^(?P<desc>.*?):? *\d+it \[.*$")  # tqdm without one: "reading: 3it [00:01, 2.1it/s]"


def mask(text: str, work: Path) -> str:
    text = text.replace(str(work), "<WORK>").replace(str(ROOT), "<REPO>")
    lines: list[str] = []
    for segment in re.split(r"[\r\n]", text):
        bar = BAR.match(segment)
        counter = COUNTER.match(segment)
        if bar:
            segment = f"<BAR {bar['desc']} /{bar['total']}>"
        elif counter:
            segment = f"<BAR {counter['desc']}>"
        elif segment and not segment.strip():
            continue  # the spaces that clear a finished bar
        for pattern in TIMES:
            segment = pattern.sub("<TIME>", segment)
        if not lines or lines[-1] != segment:
            lines.append(segment)
    return "\n".join(lines)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def slice_csv(source: Path, target: Path, rows: int) -> None:
    with source.open(encoding="utf-8") as src, target.open("w", encoding="utf-8", newline="") as out:
        for i, line in enumerate(src):
            if i > rows:
                break
            out.write(line)


def cases(data: Path, profile: Path) -> list[tuple[str, list[list[str]]]]:
    """(name, commands): each command is the arguments of ``synth``, run in the case's folder."""
    adult, missing = str(data / "adult.csv"), str(data / "adult_missing.csv")
    listed: list[tuple[str, list[list[str]]]] = [
        ("run_mst_no_profile", [["run", adult, "-o", "out", "--epsilon", "1", "--seed", "11", "--engine", "mst",
                                 "--rows", "1000"]]),
        ("run_aim_profile", [["run", adult, "-o", "out", "--profile", str(profile), "--seed", "12",
                              "--engine", "aim", "--rows", "1000"]]),
        ("run_independent_no_profile", [["run", adult, "-o", "out", "--epsilon", "2", "--seed", "13",
                                         "--engine", "independent", "--sampling", "iid"]]),
        ("profile_dp_then_run_aim", [["profile", missing, "-o", "drafted.toml", "--epsilon", "1", "--seed", "15",
                                      "--missing", "<NULL>"],
                                     ["run", missing, "-o", "out", "--profile", "drafted.toml", "--seed", "16",
                                      "--rows", "800"]]),
        ("profile_from_data", [["profile", adult, "-o", "derived.toml"]]),
        ("describe_generate_inspect", [
            ["describe", adult, "-o", "d.json", "--profile", str(profile), "--engine", "privbayes", "--seed", "17"],
            ["generate", "d.json", "-o", "s1.csv", "--seed", "18", "--rows", "800"],
            ["generate", "d.json", "-o", "s2.csv", "--seed", "19", "--rows", "300", "--condition", "sex=Female",
             "--condition", "age=30..40", "--sampling", "rounded"],
            ["inspect", "d.json"],
            ["inspect", "d.json", "--report", "inspect.html"],
        ]),
        ("evaluate", [
            ["run", adult, "-o", "out", "--profile", str(profile), "--engine", "mst", "--seed", "20", "--rows", "1500"],
            ["evaluate", adult, "out/synthetic.csv", "--description", "out/description.json", "--json", "e.json",
             "--seed", "0", "--target", "income"],
        ]),
    ]
    if importlib.util.find_spec("duckdb") is not None:
        listed.append(("run_mst_duckdb", [["run", adult, "-o", "out", "--profile", str(profile), "--seed", "21",
                                          "--engine", "mst", "--backend", "duckdb", "--rows", "500"]]))
    return listed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="digest file to write")
    parser.add_argument("--data", default="/work/shared/data", help="folder of adult.csv and adult_missing.csv")
    parser.add_argument("--transcript", help="also write the masked console text here")
    parser.add_argument("--only", nargs="*", help="run only these cases")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "COLUMNS": "100", "TZ": "UTC"}
    lines, transcript = [], []
    with tempfile.TemporaryDirectory(prefix="synth-layout-") as scratch:
        work = Path(scratch).resolve()
        data = work / "data"
        data.mkdir()
        for name in ("adult.csv", "adult_missing.csv"):
            slice_csv(Path(args.data) / name, data / name, ROWS)
        for name, commands in cases(data, ROOT / "profiles" / "adult.toml"):
            if args.only and name not in args.only:
                continue
            folder = work / name
            folder.mkdir()
            for i, command in enumerate(commands):
                done = subprocess.run([sys.executable, "-c", LAUNCHER, *command], cwd=folder, env=env,
                                      capture_output=True, check=False)
                for stream, raw in (("stdout", done.stdout), ("stderr", done.stderr)):
                    masked = mask(raw.decode("utf-8", errors="replace"), work)
                    lines.append(f"{name} #{i} {command[0]} {stream} {digest(masked.encode())}")
                    transcript.append(f"=== {name} #{i} synth {' '.join(mask(c, work) for c in command)} "
                                      f"[{stream}]\n{masked}")
                lines.append(f"{name} #{i} {command[0]} exit {done.returncode}")
                print(f"{name} #{i} {command[0]}: exit {done.returncode}", file=sys.stderr)
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                lines.append(f"{name} {path.relative_to(folder).as_posix()} {digest(path.read_bytes())}")
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.transcript:
        Path(args.transcript).write_text("\n".join(transcript), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
