"""Shared helpers for the marginal-based benchmarks: load adult_coded and score k-way marginal error.

This module is imported both by synth's own benchmark scripts and by the reference drivers that
run in separate virtual environments (e.g. benchmarks/reference_mbi.py inside /work/venvs/mbi).
It therefore depends on numpy and the standard library only, and must never import synth or any
reference package.

Error metric (the convention of the Private-PGM / MST / AIM papers, halved): for every set of k
columns, the total-variation distance between the normalised marginal of the original table and
that of the synthetic table, i.e. 0.5 * || p - q ||_1, averaged over all C(d, k) column sets
(364 three-way marginals for the 14 columns of adult_coded). On a wide table the column sets are
too many to score them all (C(86, 3) = 102,340): ``scored_column_sets`` then takes a fixed, seeded
random sample of ``MAX_SCORED_SETS`` of them, the same on every run of that shape (synth's and the
references'), and ``describe_column_sets`` says which were scored.

Any coded table (a CSV of integer codes with a header, and a JSON file {column: number of codes},
the format of adult_coded) loads with ``load_coded``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import resource
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

#: Where the shared benchmark data lives; override with the SYNTH_DATA_DIR environment variable.
DATA_DIR = Path(os.environ.get("SYNTH_DATA_DIR", "/work/shared/data"))


class BenchmarkDataError(ValueError):
    """The benchmark data file does not match its domain file."""


def load_coded(csv_path: Path | str, domain_path: Path | str) -> tuple[np.ndarray, dict[str, int]]:
    """Read a coded table: a CSV of integer codes (header = column names) and its domain file.

    Returns the codes as an int64 matrix (rows x columns, columns in the CSV header's order) and
    the domain as an ordered dict {column: number of values}, in the same column order.
    """
    csv_path = Path(csv_path)
    sizes = json.loads(Path(domain_path).read_text())
    with csv_path.open() as handle:
        header = handle.readline().strip().split(",")
    if set(header) != set(sizes):
        raise BenchmarkDataError(
            f"{csv_path} has columns {header} but {domain_path} names {list(sizes)}; use the matching domain file"
        )
    codes = np.loadtxt(csv_path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    domain = {column: int(sizes[column]) for column in header}
    upper = np.array(list(domain.values()))
    if codes.shape[1] != len(header) or (codes < 0).any() or (codes >= upper).any():
        raise BenchmarkDataError(f"{csv_path} holds codes outside the domain in {domain_path}")
    return codes, domain


def adult_coded_paths(data_dir: Path | str = DATA_DIR) -> tuple[Path, Path]:
    """adult_coded.csv and adult_coded-domain.json in ``data_dir``."""
    return Path(data_dir) / "adult_coded.csv", Path(data_dir) / "adult_coded-domain.json"


def load_adult_coded(data_dir: Path | str = DATA_DIR) -> tuple[np.ndarray, dict[str, int]]:
    """Read adult_coded.csv and its domain file (``load_coded``)."""
    return load_coded(*adult_coded_paths(data_dir))


#: at most this many k-way column sets are scored per table; beyond it, a fixed random sample
MAX_SCORED_SETS = 2000
#: the seed of that sample (the same for every run, tool and table of a given width)
SCORED_SETS_SEED = 31


def scored_column_sets(width: int, k: int, limit: int = MAX_SCORED_SETS,
                       seed: int = SCORED_SETS_SEED) -> list[tuple[int, ...]]:
    """The k-way column sets (positions) the error is averaged over: all of them, in
    itertools.combinations order, when there are at most ``limit`` (``limit`` <= 0: always all);
    otherwise ``limit`` of them drawn without replacement with a generator seeded by ``seed``, in
    combinations order. It depends only on (width, k, limit, seed), so every run on a table scores
    the same sets."""
    every = list(itertools.combinations(range(width), k))
    if limit <= 0 or len(every) <= limit:
        return every
    chosen = np.sort(np.random.default_rng(seed).choice(len(every), size=limit, replace=False))
    return [every[i] for i in chosen]


def describe_column_sets(width: int, k: int, sets: Sequence[tuple[int, ...]]) -> str:
    """What ``scored_column_sets`` chose, in words (for the output and the results)."""
    total = math.comb(width, k)
    if len(sets) == total:
        return f"all {total:,} {k}-way marginals"
    return (f"a fixed random sample of {len(sets):,} of the {total:,} {k}-way marginals "
            f"(seed {SCORED_SETS_SEED}, pgm_common.scored_column_sets)")


def marginal_counts(codes: np.ndarray, sizes: Sequence[int], columns: Sequence[int]) -> np.ndarray:
    """Counts of the marginal over `columns` (positions), flattened in C order of their sizes."""
    shape = tuple(int(sizes[c]) for c in columns)
    flat = np.ravel_multi_index(tuple(codes[:, c] for c in columns), shape)
    return np.bincount(flat, minlength=math.prod(shape)).astype(np.float64)


def tvd(p: np.ndarray, q: np.ndarray) -> float:
    """Total-variation distance between two non-negative vectors, each normalised to sum 1."""
    p = np.asarray(p, dtype=np.float64).ravel()
    q = np.asarray(q, dtype=np.float64).ravel()
    return 0.5 * float(np.abs(p / p.sum() - q / q.sum()).sum())


def kway_tvds(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], k: int,
              sets: Sequence[tuple[int, ...]] | None = None) -> np.ndarray:
    """TVD of every k-way marginal (in itertools.combinations order), or of the column ``sets``
    given, between two coded tables."""
    if original.shape[1] != synthetic.shape[1] or original.shape[1] != len(sizes):
        raise ValueError("original, synthetic and sizes must describe the same columns")
    return np.array([
        tvd(marginal_counts(original, sizes, cols), marginal_counts(synthetic, sizes, cols))
        for cols in (itertools.combinations(range(len(sizes)), k) if sets is None else sets)
    ])


def mean_kway_tvd(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], k: int,
                  sets: Sequence[tuple[int, ...]] | None = None) -> float:
    """Mean TVD over all k-way marginals (or the column ``sets`` given) between two coded tables
    (row counts may differ)."""
    return float(kway_tvds(original, synthetic, sizes, k, sets).mean())


def mean_kway_tvd_model(
    original: np.ndarray,
    sizes: Sequence[int],
    k: int,
    model_marginal: Callable[[tuple[int, ...]], np.ndarray],
    sets: Sequence[tuple[int, ...]] | None = None,
) -> float:
    """Mean TVD over all k-way marginals (or the column ``sets`` given) between a coded table and a model.

    `model_marginal(columns)` must return the model's marginal over those column positions as an
    array of shape (sizes[c] for c in columns), in any positive scale (it is normalised here).
    """
    errors = [
        tvd(marginal_counts(original, sizes, cols), model_marginal(cols))
        for cols in (itertools.combinations(range(len(sizes)), k) if sets is None else sets)
    ]
    return float(np.mean(errors))


def reference_record(tool: str, args: argparse.Namespace, codes: np.ndarray, synthetic: np.ndarray,
                     sizes: dict[str, int], seconds: float,
                     model_marginal: Callable[[tuple[str, ...]], np.ndarray] | None) -> dict[str, object]:
    """The fields every reference driver's result line starts with: which run it was (``tool``, the
    table, and ``args``' mechanism, epsilon and seed), tvd_3way of the ``synthetic`` table against
    ``codes``, tvd_3way_model of the model (when ``model_marginal(column names)`` is given), the
    3-way column sets scored (``scored_column_sets``: the same sets for every tool), ``seconds`` and
    this process's peak memory so far. The driver adds its versions and details."""
    columns, size_list = list(sizes), list(sizes.values())
    sets = scored_column_sets(len(columns), 3, args.max_scored_sets)
    record: dict[str, object] = {"tool": tool, "table": Path(args.data).stem, "mechanism": args.mechanism,
                                 "epsilon": args.epsilon, "seed": args.seed,
                                 "tvd_3way": round(mean_kway_tvd(codes, synthetic, size_list, 3, sets), 5)}
    if model_marginal is not None:
        record["tvd_3way_model"] = round(mean_kway_tvd_model(
            codes, size_list, 3, lambda cols: model_marginal(tuple(columns[i] for i in cols)), sets), 5)
    record["seconds"] = round(seconds, 2)
    record["peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    record["scored"] = describe_column_sets(len(columns), 3, sets)
    return record


def package_versions(names: Sequence[str]) -> dict[str, str]:
    """The versions of Python and of the installed distributions ``names`` ("absent" where missing)."""
    found = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options every reference driver takes: the run (mechanism, ε, δ, seed), the table it runs on
    and how it is scored (``table_paths`` completes the table's)."""
    parser.add_argument("--mechanism", choices=["mst", "aim"], required=True)
    parser.add_argument("--epsilon", type=float, required=True)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=str(DATA_DIR),
                        help="folder of adult_coded.csv, the table used when --data is not given")
    parser.add_argument("--data", default=None,
                        help="a coded table: CSV of integer codes with a header (default: adult_coded.csv in --data-dir)")
    parser.add_argument("--domain", default=None,
                        help="its domain JSON {column: number of codes} (default: the --data file's NAME-domain.json)")
    parser.add_argument("--max-scored-sets", type=int, default=MAX_SCORED_SETS,
                        help="score at most this many 3-way marginals (a fixed seeded sample beyond it; <=0: all)")


def table_paths(args: argparse.Namespace) -> None:
    """Set ``args.data`` and ``args.domain`` from ``add_run_options``' options: adult_coded when no
    --data is given, a table's NAME-domain.json beside it when no --domain is."""
    if args.data is None:
        args.data, default_domain = map(str, adult_coded_paths(args.data_dir))
    else:
        default_domain = str(Path(args.data).with_name(Path(args.data).stem + "-domain.json"))
    args.domain = args.domain or default_domain


def widened_adult_coded(width: int = 40, seed: int = 2026,
                        data_dir: Path | str = DATA_DIR) -> tuple[np.ndarray, dict[str, int]]:
    """adult_coded widened to ``width`` columns with made-up ones (a fixed recipe, seeded).

    Every other added column is a noisy copy of an adult column (its codes folded into at most 12
    values, then 30 % of the cells replaced by random values), so the wide table still has
    dependence to find; the rest are independent columns of 2 to 30 values with skewed
    (Dirichlet) frequencies.
    """
    codes, sizes = load_adult_coded(data_dir)
    rng = np.random.default_rng(seed)
    names, columns = list(sizes), [codes[:, j] for j in range(codes.shape[1])]
    domain = dict(sizes)
    for extra in range(width - len(names)):
        if extra % 2 == 0:
            parent = extra // 2 % len(names)
            size = min(domain[names[parent]], 12)
            column = columns[parent] % size
            noisy = rng.random(column.size) < 0.3
            column = np.where(noisy, rng.integers(0, size, column.size), column)
            name = f"copy{extra}-{names[parent]}"
        else:
            size = int(rng.integers(2, 31))
            column = rng.choice(size, size=codes.shape[0], p=rng.dirichlet(np.full(size, 0.7)))
            name = f"random{extra}"
        domain[name] = size
        columns.append(column.astype(np.int64))
    return np.column_stack(columns), domain
