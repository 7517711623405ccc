"""Shared helpers for the marginal-based benchmarks: load adult_coded and score k-way marginal error.

This module is imported both by synth's own benchmark scripts and by the reference drivers that
run in separate virtual environments (e.g. benchmarks/reference_mbi.py inside /work/venvs/mbi).
It therefore depends on numpy and the standard library only, and must never import synth or any
reference package.

Error metric (the convention of the Private-PGM / MST / AIM papers, halved): for every set of k
columns, the total-variation distance between the normalised marginal of the original table and
that of the synthetic table, i.e. 0.5 * || p - q ||_1, averaged over all C(d, k) column sets
(364 three-way marginals for the 14 columns of adult_coded).
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

#: Where the shared benchmark data lives; override with the SYNTH_DATA_DIR environment variable.
DATA_DIR = Path(os.environ.get("SYNTH_DATA_DIR", "/work/shared/data"))


class BenchmarkDataError(ValueError):
    """The benchmark data file does not match its domain file."""


def load_adult_coded(data_dir: Path | str = DATA_DIR) -> tuple[np.ndarray, dict[str, int]]:
    """Read adult_coded.csv and its domain file.

    Returns the codes as an int64 matrix (rows x columns, columns in the CSV header's order) and
    the domain as an ordered dict {column: number of values}, in the same column order.
    """
    data_dir = Path(data_dir)
    csv_path = data_dir / "adult_coded.csv"
    sizes = json.loads((data_dir / "adult_coded-domain.json").read_text())
    with csv_path.open() as handle:
        header = handle.readline().strip().split(",")
    if set(header) != set(sizes):
        raise BenchmarkDataError(
            f"{csv_path} has columns {header} but the domain file names {list(sizes)}; "
            "use the matching adult_coded-domain.json"
        )
    codes = np.loadtxt(csv_path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    domain = {column: int(sizes[column]) for column in header}
    upper = np.array(list(domain.values()))
    if codes.shape[1] != len(header) or (codes < 0).any() or (codes >= upper).any():
        raise BenchmarkDataError(f"{csv_path} holds codes outside the domain in the domain file")
    return codes, domain


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


def kway_tvds(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], k: int) -> np.ndarray:
    """TVD of every k-way marginal (in itertools.combinations order) between two coded tables."""
    if original.shape[1] != synthetic.shape[1] or original.shape[1] != len(sizes):
        raise ValueError("original, synthetic and sizes must describe the same columns")
    return np.array([
        tvd(marginal_counts(original, sizes, cols), marginal_counts(synthetic, sizes, cols))
        for cols in itertools.combinations(range(len(sizes)), k)
    ])


def mean_kway_tvd(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], k: int) -> float:
    """Mean TVD over all k-way marginals between two coded tables (row counts may differ)."""
    return float(kway_tvds(original, synthetic, sizes, k).mean())


def mean_kway_tvd_model(
    original: np.ndarray,
    sizes: Sequence[int],
    k: int,
    model_marginal: Callable[[tuple[int, ...]], np.ndarray],
) -> float:
    """Mean TVD over all k-way marginals between a coded table and a model.

    `model_marginal(columns)` must return the model's marginal over those column positions as an
    array of shape (sizes[c] for c in columns), in any positive scale (it is normalised here).
    """
    errors = [
        tvd(marginal_counts(original, sizes, cols), model_marginal(cols))
        for cols in itertools.combinations(range(len(sizes)), k)
    ]
    return float(np.mean(errors))


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
