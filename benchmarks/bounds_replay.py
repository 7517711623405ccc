"""Discovery's bounds over many seeds and three budgets, in minutes: a rule of synth/domains/bounds.py
tried on every numeric and date column of the real tables at once.

The many-seed failure rates (benchmarks/failure_rates.py) run the whole zero-config road, a few
seconds to minutes a run; a change to how a range is located (the coarse and fine histograms of
``locate_bounds``) needs only those two histograms, over hundreds of columns and many seeds. From
the repository root (the tables of benchmarks/real_tables.py, with the realdata extras)::

    python benchmarks/bounds_replay.py --seeds 30

1. **capture** (once; kept in benchmarks/out/bounds_replay/, not committed): for each table, ``python
   -m synth run TABLE.csv --epsilon 1 --seed 0 --engine independent --accept-rough-domains`` runs as
   a user types it, in a child process that records the arguments of every ``locate_bounds`` call
   (the column's values, its kind, the budget discovery gave it, the kind vote's noisy cell count and decimals)
   and stops when discovery ends. ``--recapture`` makes them again (needed when discovery's budget
   split changes or a capture lacks an argument of ``locate_bounds``, such as the vote's decimals, not
   when a bounds rule does).
2. **replay**: each captured call runs again with fresh seeded noise (seeds 0..N-1) at its budget
   times 0.09, 1 and 9 (zCDP: ε about 0.3, 1 and 3), on the synth tree this script imports (run it
   from two checkouts, or with ``PYTHONPATH``, to compare a rule with main's; ``--set NAME=VALUE``
   replays with one of bounds.py's constants changed, e.g. ``--set COVER_MARGIN=2.5``).

Per column and budget it counts the runs *located*, *rough* and *lost*, and checks each range
against the column's real values (an evaluation: it reads them, it is not a DP output): **clipped**,
more than 0.5 % of the values outside [lower, upper] (issue 30's bar), and more than 10 % (a range cut
to the column's busiest values); **wide**, a range wider than
3 times the values' span. The report gives the totals per budget (and with ``--tables`` per table)
and the mean share clipped; ``--results`` appends it to benchmarks/RESULTS.md with the machine, the
commit and the command.
"""

from __future__ import annotations

import argparse
import pickle
import platform
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "bounds_replay"
SCALES = (0.09, 1.0, 9.0)  # times the captured budget (zCDP ρ grows with ε²: ε ≈ 0.3, 1, 3)
CLIPPED = 0.005  # share of a column's values outside its range that counts as clipped (issue 30)
SEVERE = 0.10  # ... and as badly clipped (a range cut to a column's busiest values)
WIDE = 3.0  # times the values' span beyond which a range counts as wide
DAY = 86_400.0


class CaptureDone(Exception):
    """Raised in the capturing child once discovery has returned: nothing else is needed."""


def capture_child(csv: str, out: str) -> int:
    """In a child process: run ``synth run`` on ``csv``, recording every ``locate_bounds`` call, and
    stop when discovery ends (``out``: the pickled list of calls)."""
    import synth.domains.discovery as discovery
    import synth.domains.finding as finding
    from synth.cli import main

    calls: list[dict] = []
    locate, discover = discovery.locate_bounds, finding.discover_columns

    def recording_locate(name, values, kind, counts, budget, cells=None, weights=None, cells_std=0.0, decimals=None):
        calls.append({"name": name, "values": np.asarray(values, dtype=float), "kind": kind, "budget": budget,
                      "cells": cells, "weights": None if weights is None else np.asarray(weights, dtype=float),
                      "cells_std": cells_std, "decimals": decimals})
        return locate(name, values, kind, counts, budget, cells, weights, cells_std, decimals)

    def discover_then_stop(*args, **kwargs):
        discover(*args, **kwargs)
        raise CaptureDone

    discovery.locate_bounds, finding.discover_columns = recording_locate, discover_then_stop
    with tempfile.TemporaryDirectory() as scratch:
        try:
            code = main(["run", csv, "--epsilon", "1", "--seed", "0", "--engine", "independent",
                         "--accept-rough-domains", "-q", "-o", str(Path(scratch) / "release")])
        except CaptureDone:
            code = 0
    with open(out, "wb") as handle:
        pickle.dump(calls, handle)
    return code


def capture(tables: list, again: bool) -> list[Path]:
    """The captured calls of each table (benchmarks/real_tables.py's ``Table``), made where missing
    (or all of them with ``again``)."""
    import real_tables

    paths = []
    for table in tables:
        path = OUT / f"{table.name}.pkl"
        if again or not path.exists():
            csv = real_tables.export_csv(table, OUT / "csv")
            print(f"capturing {table.name} ...", flush=True)
            done = subprocess.run([sys.executable, __file__, "--child", str(csv), str(path)], capture_output=True,
                                  text=True)
            if done.returncode != 0 or not path.exists():
                raise SystemExit(f"capturing {table.name} failed:\n{done.stderr[-2000:]}")
        paths.append(path)
    return paths


def replay_column(call: dict, seeds: int, scale: float) -> Counter:
    """The verdicts and checks of one captured call over ``seeds`` seeds at ``scale`` times its budget."""
    from synth.columns.kinds import Kind
    from synth.domains.bounds import locate_bounds
    from synth.privacy import Accountant, Budget, SeededNoise
    from synth.privacy.curator import CountRelease
    from synth.privacy.neighbours import Neighbouring

    values = call["values"]
    finite = np.isfinite(values)
    weights = np.ones(values.size) if call["weights"] is None else call["weights"]
    real, weights = values[finite], weights[finite]
    day = call["kind"] == Kind.DATETIME
    span = max(float(real.max() - real.min()), DAY if day else 1.0) if real.size else 1.0
    tally: Counter = Counter()
    for seed in range(seeds):
        counts = CountRelease(Accountant(Budget(1e6, 1e-3), delta_reserve=5e-4), SeededNoise(seed), Neighbouring())
        located = locate_bounds(call["name"], call["values"], call["kind"], counts, call["budget"] * scale,
                                call["cells"], call["weights"], call["cells_std"], call.get("decimals"))
        tally["runs"] += 1
        tally[located.verdict] += 1
        if located.column is None or not real.size:
            continue
        lower, upper = float(located.column.lower), float(located.column.upper)
        top = upper + (DAY if day else 0.0)  # a date bound holds its whole day
        share = float(weights[(real < lower) | (real > top)].sum() / weights.sum())
        tally["clipped"] += share > CLIPPED
        tally["severe"] += share > SEVERE
        tally["clipped share"] += share
        tally["wide"] += (top - lower) > WIDE * span
    return tally


def replay(paths: list[Path], seeds: int, scales: tuple[float, ...]) -> dict[float, dict[str, Counter]]:
    """Per budget scale and table, the summed tallies of its columns (first call per column)."""
    totals: dict[float, dict[str, Counter]] = {scale: defaultdict(Counter) for scale in scales}
    for path in paths:
        with open(path, "rb") as handle:
            calls = pickle.load(handle)
        seen = set()
        for call in calls:
            if call["name"] in seen:
                continue
            seen.add(call["name"])
            for scale in scales:
                totals[scale][path.stem].update(replay_column(call, seeds, scale))
    return totals


def report(totals: dict[float, dict[str, Counter]], per_table: bool) -> list[str]:
    lines = ["| budget × | column-runs | located | rough | lost | clipped > 0.5 % | clipped > 10 % | wide > 3× | "
             "mean share clipped |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for scale, tables in totals.items():
        rows = [("all tables", sum(tables.values(), Counter()))]
        if per_table:
            rows += sorted(tables.items())
        for name, tally in rows:
            kept = tally["runs"] - tally["lost"]
            label = f"{scale:g}" if name == "all tables" else f"{scale:g} {name}"
            lines.append(f"| {label} | {tally['runs']:,} | {tally['located']:,} | {tally['rough']:,} | "
                         f"{tally['lost']:,} | {tally['clipped']:,} | {tally['severe']:,} | {tally['wide']:,} | "
                         f"{tally['clipped share'] / max(kept, 1):.4f} |")
    return lines


def set_constants(settings: list[str]) -> None:
    """Change numeric constants of synth/domains/bounds.py (``NAME=VALUE``) for the replay, in this
    process only: the module's global, and the defaults of its functions that name the constant
    (bound when the function was defined, e.g. ``near_alarm=TAIL_ALARM``)."""
    import ast
    import inspect

    import synth.domains.bounds as bounds

    tree = ast.parse(inspect.getsource(bounds))
    for setting in settings:
        name, _, text = setting.partition("=")
        old = getattr(bounds, name, None)
        if not name.isupper() or not isinstance(old, int | float) or not text:
            raise SystemExit(f"--set {setting}: name one of bounds.py's numeric constants and its value, e.g. "
                             "COVER_MARGIN=2.5")
        value = type(old)(text)
        setattr(bounds, name, value)
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            function = getattr(bounds, node.name, None)
            defaults = list(getattr(function, "__defaults__", None) or ())
            named = [isinstance(d, ast.Name) and d.id == name for d in node.args.defaults]
            if any(named):
                function.__defaults__ = tuple(value if hit else d for hit, d in zip(named, defaults, strict=True))
            kw_named = {a.arg for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                        if isinstance(d, ast.Name) and d.id == name}
            if kw_named:
                function.__kwdefaults__ = {**function.__kwdefaults__, **dict.fromkeys(kw_named, value)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        raise SystemExit(capture_child(sys.argv[2], sys.argv[3]))
    sys.path.insert(0, str(HERE))
    import real_tables

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--only", nargs="+", default=[t.name for t in real_tables.ALL_TABLES],
                        choices=[t.name for t in real_tables.ALL_TABLES], help="tables (default: all of real_tables.py)")
    parser.add_argument("--scales", type=float, nargs="+", default=list(SCALES))
    parser.add_argument("--recapture", action="store_true", help="capture the calls again")
    parser.add_argument("--tables", action="store_true", help="report each table too")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="replay with a constant of synth/domains/bounds.py changed (repeatable)")
    parser.add_argument("--results", action="store_true", help="append the report to benchmarks/RESULTS.md")
    parser.add_argument("--note", default="", help="a sentence for the RESULTS.md entry")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    by_name = {table.name: table for table in real_tables.ALL_TABLES}
    paths = capture([by_name[name] for name in args.only], args.recapture)
    set_constants(args.set)
    lines = report(replay(paths, args.seeds, tuple(args.scales)), args.tables)
    print("\n".join(lines))
    if args.results:
        import synth
        tree = Path(synth.__file__).resolve().parent.parent
        commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        command = "python benchmarks/bounds_replay.py " + " ".join(sys.argv[1:])
        head = (f"\n## Discovery's bounds replayed over many seeds — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n"
                f"Machine: {platform.system()} {platform.machine()}, Python {platform.python_version()}. synth: {tree} "
                f"({commit}). Command: `{command}`. Tables: {', '.join(args.only)}; {args.seeds} seeds; budgets: each "
                "column's zero-config discovery budget at ε = 1 times the factor. " + args.note + "\n\n")
        with open(HERE / "RESULTS.md", "a") as handle:
            handle.write(head + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
