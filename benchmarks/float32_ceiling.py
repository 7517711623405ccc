"""How much a float32 fit could gain at most: the kinds of pass synth's fit makes over a large clique
table, timed in float64 and in float32 on one table of 5.16 million cells (the shape of adult_coded's
largest clique in aim's model at ε = 3). A standalone measurement of memory passes, not of synth's code:
synth.model.kernels takes float64 tables only, so both dtypes go through the same plain loops here.

    python benchmarks/float32_ceiling.py

Prints the best of seven runs of each pass per dtype (see benchmarks/RESULTS.md, 2026-12-04 05:35).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numba
import numpy as np

SHAPE = (16, 16, 14, 8, 6, 5, 3, 2)  # 5,160,960 cells
ROWS = 16 * 16 * 14  # a separator's configurations: the table as rows × the clique's other cells
REPEATS = 7


@numba.njit
def move_towards(table: np.ndarray, target: np.ndarray, weight: float) -> None:
    """table ← table + weight (target − table), as the fit moves its iterate."""
    for i in range(table.size):
        table[i] += weight * (target[i] - table[i])


@numba.njit
def row_sums(table: np.ndarray, out: np.ndarray) -> None:
    """Each row's sum into a float64 accumulator, as belief propagation's messages."""
    for r in range(table.shape[0]):
        total = 0.0
        for j in range(table.shape[1]):
            total += table[r, j]
        out[r] = total


@numba.njit
def spread_rows(table: np.ndarray, values: np.ndarray) -> None:
    """A value per row added to each of its cells, as a gradient or message spread back."""
    for r in range(table.shape[0]):
        value = values[r]
        for j in range(table.shape[1]):
            table[r, j] += value


def best(run: Callable[[], object]) -> float:
    """The least wall-clock time of ``REPEATS`` calls (the first compiles the kernels)."""
    run()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def timed_passes(dtype: type[np.floating], rng: np.random.Generator) -> dict[str, float]:
    """Each pass's best time in seconds on tables of ``dtype``."""
    table, other = rng.random(SHAPE).astype(dtype), rng.random(SHAPE).astype(dtype)
    rows, sums, values = table.reshape(ROWS, -1), np.empty(ROWS), rng.random(ROWS).astype(dtype)
    weight = dtype(0.3)
    return {
        "exp in place": best(lambda: np.exp(table, out=other)),
        "move towards": best(lambda: move_towards(table.reshape(-1), other.reshape(-1), weight)),
        "row sums": best(lambda: row_sums(rows, sums)),
        "spread along rows": best(lambda: spread_rows(rows, values)),
        "np.sum over five axes": best(lambda: table.sum(axis=(3, 4, 5, 6, 7))),
    }


def main() -> None:
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        timed = ", ".join(f"{name} {seconds * 1e3:.1f} ms" for name, seconds in timed_passes(dtype, rng).items())
        print(f"{np.dtype(dtype).name}: {timed}")


if __name__ == "__main__":
    main()
