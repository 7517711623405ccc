"""Fidelity metrics: total-variation distance of k-way marginals, SDNist's k-marginal score, and
Kolmogorov–Smirnov statistics.

Marginal inputs are code matrices of the original and the synthetic table under one schema, each
row standing for one row or, with weights, for ``weights[i]`` rows (the distinct code rows a
counting backend returns); counts are the same either way. Each k-way marginal is counted over
every row. When a table has more k-way marginals than its cap, a
uniform random sample of that many is scored and the sample size is reported with the result. The
cap is ``MAX_MARGINALS``; for k ≥ 3 it is lowered for long tables so that one k reads at most
``ROW_BUDGET`` rows in all (for two tables of 1,000,000 rows: 100 marginals), never below
``MIN_MARGINALS``. 2-way marginals keep the full cap, so the k-marginal score covers every pair of
up to 32 columns, as NIST's does. These metrics read the original data:
their results are NOT differentially private and are for the data owner.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_MARGINALS = 500  # k-way marginals scored per k; more are sampled uniformly without replacement
MIN_MARGINALS = 100
ROW_BUDGET = 200_000_000  # rows read per k (each marginal reads every row of both tables)
KMARGINAL_SCALE = 1000.0
DENSE_CELLS = 1 << 22  # marginals with more cells are counted over the cells some row falls in


Weights = np.ndarray | None  # rows per code row (None: one each)


def count_cells(flat: np.ndarray, weights: Weights, cells: int) -> np.ndarray:
    """Rows per cell (int64) of flat cell indices, each index standing for ``weights[i]`` rows when given."""
    if weights is None:
        return np.bincount(flat, minlength=cells)
    return np.bincount(flat, weights=weights, minlength=cells).astype(np.int64)  # whole numbers below 2**53: exact


def marginal_counts(codes: np.ndarray, sizes: Sequence[int], positions: Sequence[int],
                    weights: Weights = None) -> np.ndarray:
    """Row counts of every cell of the columns at ``positions`` (flattened, C order)."""
    return count_cells(_flat_codes(codes, sizes, positions), weights, int(np.prod([sizes[p] for p in positions])))


def aligned_counts(flats: Sequence[np.ndarray], cells: int,
                   weights: Sequence[Weights] | None = None) -> list[np.ndarray]:
    """Row counts per cell of each table's flat cell indices, on common cells: all ``cells`` when
    there are at most DENSE_CELLS, else only the cells that some table's rows fall in."""
    each = list(weights) if weights is not None else [None] * len(flats)
    if cells <= DENSE_CELLS:
        return [count_cells(flat, w, cells) for flat, w in zip(flats, each, strict=True)]
    occupied, inverse = np.unique(np.concatenate(flats), return_inverse=True)
    pieces = np.split(inverse, np.cumsum([flat.size for flat in flats])[:-1])
    return [count_cells(piece, w, occupied.size) for piece, w in zip(pieces, each, strict=True)]


def table_counts(tables: Sequence[np.ndarray], sizes: Sequence[int], positions: Sequence[int],
                 weights: Sequence[Weights] | None = None) -> list[np.ndarray]:
    """``aligned_counts`` of the marginal over ``positions`` in each code matrix of ``tables``."""
    return aligned_counts([_flat_codes(t, sizes, positions) for t in tables],
                          int(np.prod([sizes[p] for p in positions])), weights)


def choose_marginals(columns: int, k: int, rng: np.random.Generator,
                     cap: int = MAX_MARGINALS) -> list[tuple[int, ...]]:
    """Every k-subset of the columns in lexicographic order, or a uniform sample of ``cap`` of them."""
    total = math.comb(columns, k)
    if total <= cap:
        return list(itertools.combinations(range(columns), k))
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < cap:
        chosen.add(tuple(sorted(rng.choice(columns, size=k, replace=False).tolist())))
    return sorted(chosen)


def _flat_codes(codes: np.ndarray, sizes: Sequence[int], positions: Sequence[int]) -> np.ndarray:
    flat = codes[:, positions[0]].astype(np.int64)
    for p in positions[1:]:
        flat = flat * sizes[p] + codes[:, p]
    return flat


def rows_of(codes: np.ndarray, weights: Weights) -> int:
    """The rows that code rows stand for: one each, or ``weights[i]`` each."""
    return int(codes.shape[0]) if weights is None else int(weights.sum())


def tvds(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int],
         marginals: Sequence[tuple[int, ...]], weights: tuple[Weights, Weights] = (None, None)) -> np.ndarray:
    """TVD of each marginal in ``marginals`` (code rows weighted by ``weights``, original's and
    synthetic's); the cell index of a shared prefix of consecutive marginals (as in lexicographic
    order) is computed once."""
    out = np.empty(len(marginals))
    totals = (max(rows_of(original, weights[0]), 1), max(rows_of(synthetic, weights[1]), 1))
    prefix: tuple[int, ...] | None = None
    heads: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))
    for i, positions in enumerate(marginals):
        if positions[:-1] != prefix:
            prefix = positions[:-1]
            heads = (_flat_codes(original, sizes, prefix), _flat_codes(synthetic, sizes, prefix)) if prefix else (
                np.zeros(original.shape[0], dtype=np.int64), np.zeros(synthetic.shape[0], dtype=np.int64))
        last = positions[-1]
        counts = aligned_counts([head * sizes[last] + codes[:, last] for head, codes in zip(heads, (original, synthetic))],
                                int(np.prod([sizes[p] for p in positions])), weights)
        out[i] = 0.5 * float(np.abs(counts[0] / totals[0] - counts[1] / totals[1]).sum())
    return out


def marginal_tvd(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int],
                 positions: Sequence[int]) -> float:
    """Total-variation distance (half the L1 distance) between the two normalised marginals."""
    return float(tvds(original, synthetic, sizes, [tuple(positions)])[0])


def kmarginal_score(two_way_tvds: np.ndarray) -> float:
    """NIST SDNist's k-marginal score: (2 − mean L1 distance of the 2-way marginal densities) × 500,
    i.e. 1000 × (1 − mean 2-way TVD); 1000 for identical marginals, 0 for disjoint ones."""
    return KMARGINAL_SCALE * (1.0 - float(np.mean(two_way_tvds)))


def _distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array, in one pass."""
    return values[np.concatenate([[True], values[1:] != values[:-1]])] if values.size else values


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = np.sort(a), np.sort(b)
    points = np.union1d(_distinct_sorted(a), _distinct_sorted(b))  # the CDFs only jump at these
    gap = np.searchsorted(a, points, side="right") / a.size - np.searchsorted(b, points, side="right") / b.size
    return float(np.abs(gap).max())


@dataclass(frozen=True)
class MarginalErrors:
    """TVD of the k-way marginals scored for one k: all of them, or a uniform sample."""

    k: int
    tvds: np.ndarray
    total: int  # how many k-way marginals the table has
    cap: int  # at most this many were scored

    @property
    def sampled(self) -> bool:
        return self.tvds.size < self.total

    def to_dict(self) -> dict[str, float | int | bool]:
        return {"k": self.k, "mean_tvd": float(self.tvds.mean()), "max_tvd": float(self.tvds.max()),
                "median_tvd": float(np.median(self.tvds)), "scored": int(self.tvds.size),
                "of": self.total, "cap": self.cap, "sampled": self.sampled}


def marginal_cap(rows: int, k: int) -> int:
    """How many k-way marginals to score for tables of ``rows`` rows (both tables together)."""
    return MAX_MARGINALS if k <= 2 else int(np.clip(ROW_BUDGET // max(rows, 1), MIN_MARGINALS, MAX_MARGINALS))


def marginal_errors(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], k: int,
                    rng: np.random.Generator, weights: tuple[Weights, Weights] = (None, None)) -> MarginalErrors:
    """TVD over the k-way marginals (a uniform sample above ``marginal_cap``, which depends on the
    rows the code rows stand for, so weighted and unweighted code rows score the same marginals)."""
    cap = marginal_cap(rows_of(original, weights[0]) + rows_of(synthetic, weights[1]), k)
    chosen = choose_marginals(len(sizes), k, rng, cap)
    return MarginalErrors(k, tvds(original, synthetic, sizes, chosen, weights), math.comb(len(sizes), k), cap)
