"""How a model turns probabilities into rows: the two ways of drawing and the draws they share.

Every model samples the same way: rows are split into groups by the configuration of what a
column is drawn given (its parents in a Bayesian network, the separator and the earlier new
columns of a clique in a junction tree, nothing for the first column), each group gets a count
per value of the column, and the values are dealt to the group's rows in a uniformly random
order, each group shuffled on its own. The two ways of drawing (``Draws``) differ in the counts:

- ``"rounded"`` (the default): a group of m rows whose conditional distribution is p gets the
  integer part of each expected count m·p_v, and the rest of its rows (as many as the fractional
  parts add up to) go to values drawn without replacement with inclusion probabilities exactly
  equal to the fractional parts (systematic sampling over the values in a random order: one
  uniform start, points one apart). Every count is then the floor or the ceiling of its expected
  count, so each group's counts are within 1 of m·p_v, and each count is unbiased.
- ``"iid"``: the counts are multinomial (m, p), which is the same as drawing every row
  independently from p.

The random order in which values are dealt is what keeps columns drawn given the same parent
(siblings) conditionally independent; dealing them in row order would correlate them. A value
with probability 0 never gets a row in either scheme. This module sees only model probabilities,
never private data.

What a user chooses (``Sampling``) is one of these draws, or ``"matched"`` (the default): rounded
draws, then adjusted until the table's low-order marginals follow the model's
(``synth.model.matching``).
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import numba
import numpy as np

from synth.errors import SamplingError

Draws = Literal["rounded", "iid"]  # how a model draws rows (``Model.sample``)
DEFAULT_DRAWS: Draws = "rounded"
Sampling = Literal["matched", "rounded", "iid"]  # what a user asks for: draws, then matching or not
SAMPLING_SCHEMES: tuple[str, ...] = get_args(Sampling)
DEFAULT_SAMPLING: Sampling = "matched"
GROUP_BLOCK_CELLS = 1 << 20  # cells of conditional tables rounded at once (8 MiB per array)


def check_sampling(sampling: object) -> Sampling:
    """``sampling`` if it names a scheme; SamplingError naming the choices otherwise."""
    if sampling not in SAMPLING_SCHEMES:
        raise SamplingError(
            f"unknown sampling {sampling!r}: choose one of {', '.join(SAMPLING_SCHEMES)} "
            "(matched: rounded draws adjusted to the model's 3-way marginals, the default; rounded: the "
            "model's marginals within rounding on the columns drawn together; iid: independent draws)."
        )
    return sampling  # type: ignore[return-value]


def rounded_counts(sizes: np.ndarray, probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For groups of ``sizes[g]`` rows with distributions ``probabilities[g]`` (rows summing to 1),
    integer counts whose rows sum to ``sizes``, each the floor or the ceiling of its expected count
    ``sizes[g] · probabilities[g, v]``, the ceilings chosen with probability the fractional part."""
    counts = np.empty(probabilities.shape, dtype=np.int64)
    _round_groups(np.asarray(sizes, dtype=float), np.ascontiguousarray(probabilities, dtype=float),
                  int(rng.integers(2**32)), counts)
    return counts


@numba.njit(cache=True)
def _round_groups(sizes: np.ndarray, probabilities: np.ndarray, seed: int, counts: np.ndarray) -> None:
    """``rounded_counts`` into ``counts``, group by group: the whole parts of the expected counts, then
    systematic sampling over the values in a random order (Fisher-Yates): one uniform start, points
    one apart along the fractional parts laid end to end, a value gaining a row per point in its
    stretch. (In one pass per group: a million values take milliseconds, where numpy's sort of
    random keys and its temporaries took ten times as long.)"""
    np.random.seed(seed)
    width = probabilities.shape[1]
    order = np.arange(width)
    for g in range(sizes.shape[0]):
        remainder = sizes[g]
        for v in range(width):
            whole = math.floor(sizes[g] * probabilities[g, v])
            counts[g, v] = whole
            remainder -= whole  # exact: whole numbers in float64
        for v in range(width - 1, 0, -1):
            other = np.random.randint(v + 1)
            order[v], order[other] = order[other], order[v]
        start = np.random.random()
        reached, point = 0.0, math.floor(-start)
        for k in range(width):
            v = order[k]
            expected = sizes[g] * probabilities[g, v]
            # the fractional parts add up to the remainder but for rounding error: the end is exact
            reached = remainder if k == width - 1 else min(reached + expected - math.floor(expected), remainder)
            after = math.floor(reached - start)
            counts[g, v] += after - point
            point = after


def group_counts(sizes: np.ndarray, probabilities: np.ndarray, rng: np.random.Generator,
                 sampling: Draws) -> np.ndarray:
    """Counts per value for groups of ``sizes`` rows with distributions ``probabilities`` under
    ``sampling``: rounded (``rounded_counts``) or multinomial."""
    if sampling == "iid":
        return rng.multinomial(sizes, probabilities)
    return rounded_counts(sizes.astype(float), probabilities, rng)


def deal(configs: np.ndarray, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hand out ``values`` (sorted by configuration, as many per configuration as it has rows) to
    the rows with those ``configs``, in a uniformly random order within each configuration."""
    shuffled = rng.permutation(configs.size)  # then a stable sort keeps that order within each configuration
    order = shuffled[np.argsort(configs[shuffled], kind="stable")]  # (3-4 times faster than a lexsort)
    dealt = np.empty(configs.size, dtype=np.int64)
    dealt[order] = values
    return dealt


def draw_given(configs: np.ndarray, table: np.ndarray, rng: np.random.Generator,
               sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
    """For each row, a column index of ``table`` drawn from the row ``configs[i]`` of ``table``
    normalised (uniform when that row sums to 0), under ``sampling`` (see the module docstring):
    the rows sharing a configuration get their counts per value at once, dealt in random order."""
    present, sizes = np.unique(configs, return_counts=True)
    width = table.shape[1]
    block = max(1, GROUP_BLOCK_CELLS // width)  # configurations at a time: memory stays bounded
    values = []
    for start in range(0, present.size, block):
        rows = table[present[start:start + block]]
        mass = rows.sum(axis=1, keepdims=True)
        uniform = np.full_like(rows, 1.0 / width, dtype=float)
        probabilities = np.divide(rows, mass, out=uniform, where=mass > 0)
        counts = group_counts(sizes[start:start + block], probabilities, rng, sampling)
        values.append(np.repeat(np.tile(np.arange(width), rows.shape[0]), counts.ravel()))
    return deal(configs, np.concatenate(values) if values else np.zeros(0, dtype=np.int64), rng)


def draw(n: int, probabilities: np.ndarray, rng: np.random.Generator,
         sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
    """``n`` indices of ``probabilities`` (non-negative weights, not all 0) under ``sampling``."""
    return draw_given(np.zeros(n, dtype=np.int64), np.reshape(probabilities, (1, -1)), rng, sampling)
