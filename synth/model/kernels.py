"""Compiled table kernels: row-wise maxima, sums, shifts and scalings, a table summed onto some of
its axes and its transpose, and the fit's in-place averaging.

Belief propagation and fitting spend most of their time passing over clique tables: each row's
maximum and sum of a table laid out as (separator configuration × the clique's other cells), the
row shifted or scaled, and a clique's marginal over some of its attributes. numpy (``max(axis=1)``, ``einsum``) pays a fixed
cost per short row and walks many-dimensional tables slowly; on aim's clique tables (8 or 9
dimensions, millions of cells) these loops are 2 to 9 times faster and give the same values up
to rounding (sums are accumulated in another order). Infinities and NaN keep their meaning. The
gradient of a fit flows back the other way: a marginal's gradient is added to every cell of the
clique table that sums into it (``spread_onto``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np

# reassociation (vectorised sums and maxima) without assuming finite values: potentials may hold −inf
FLAGS = {"reassoc", "nsz", "arcp", "contract"}


@numba.njit(cache=True, fastmath=FLAGS)
def _row_max(table: np.ndarray, out: np.ndarray) -> None:
    for r in range(table.shape[0]):
        peak = table[r, 0]
        for j in range(1, table.shape[1]):
            peak = max(peak, table[r, j])
        out[r, 0] = peak


@numba.njit(cache=True, fastmath=FLAGS)
def _row_sum(table: np.ndarray, out: np.ndarray) -> None:
    for r in range(table.shape[0]):
        total = 0.0
        for j in range(table.shape[1]):
            total += table[r, j]
        out[r, 0] = total


def row_max(table: np.ndarray) -> np.ndarray:
    """Each row's largest value, as a column (rows × 1); every row must have a value."""
    out = np.empty((table.shape[0], 1))
    _row_max(np.ascontiguousarray(table, dtype=float), out)
    return out


def row_sum(table: np.ndarray) -> np.ndarray:
    """Each row's sum, as a column (rows × 1)."""
    out = np.empty((table.shape[0], 1))
    _row_sum(np.ascontiguousarray(table, dtype=float), out)
    return out


@numba.njit(cache=True, fastmath=FLAGS)
def _shift_rows(table: np.ndarray, shifts: np.ndarray, out: np.ndarray) -> None:
    for r in range(table.shape[0]):
        for j in range(table.shape[1]):
            out[r, j] = table[r, j] - shifts[r, 0]


@numba.njit(cache=True, fastmath=FLAGS)
def _scale_rows(table: np.ndarray, factors: np.ndarray) -> None:
    for r in range(table.shape[0]):
        for j in range(table.shape[1]):
            table[r, j] *= factors[r, 0]


@numba.njit(cache=True, fastmath=FLAGS)
def _move_towards(table: np.ndarray, target: np.ndarray, weight: float) -> None:
    for i in range(table.shape[0]):
        table[i] += weight * (target[i] - table[i])


def shift_rows(table: np.ndarray, shifts: np.ndarray, out: np.ndarray) -> None:
    """``out`` (C-contiguous, the shape of ``table``, may be ``table``) = each row of ``table`` minus
    its entry of ``shifts`` (rows × 1)."""
    _shift_rows(table, shifts, out)


def scale_rows(table: np.ndarray, factors: np.ndarray) -> None:
    """Multiply each row of ``table`` (C-contiguous floats, changed in place) by its entry of
    ``factors`` (rows × 1)."""
    _scale_rows(table, factors)


def move_towards(table: np.ndarray, target: np.ndarray, weight: float) -> None:
    """``table`` ← (1 − weight) ``table`` + weight ``target``, in place and in one pass (both
    C-contiguous float arrays of one shape)."""
    if table.shape != target.shape:
        raise ValueError(f"cannot move a table of shape {table.shape} towards one of shape {target.shape}")
    _move_towards(table.reshape(-1), np.ascontiguousarray(target).reshape(-1), weight)


@numba.njit(cache=True)
def _next_row(index: np.ndarray, shape: np.ndarray, strides: np.ndarray, base: int) -> int:
    """Move ``index`` (all axes but the last) to the next row in C order, like an odometer; the
    offset of that row's first cell in the smaller table, from ``base``, that of the current one."""
    axis = shape.shape[0] - 2
    while axis >= 0:
        index[axis] += 1
        base += strides[axis]
        if index[axis] < shape[axis]:
            return base
        base -= strides[axis] * shape[axis]
        index[axis] = 0
        axis -= 1
    return base


@numba.njit(cache=True, fastmath=FLAGS)
def _accumulate(flat: np.ndarray, shape: np.ndarray, strides: np.ndarray, out: np.ndarray) -> None:
    """Add every cell of ``flat`` (a C-ordered table of ``shape``) to ``out`` at the position whose
    offset is Σ index × stride over the axes (stride 0: the axis is summed out). The last axis is
    the inner loop: a sum when it is summed out, a strided add otherwise; the other axes advance
    like an odometer."""
    axes = shape.shape[0]
    inner, step = shape[axes - 1], strides[axes - 1]
    index = np.zeros(axes, np.int64)
    base = 0
    for start in range(0, flat.shape[0], inner):
        if step == 0:
            total = 0.0
            for j in range(inner):
                total += flat[start + j]
            out[base] += total
        else:
            at = base
            for j in range(inner):
                out[at] += flat[start + j]
                at += step
        base = _next_row(index, shape, strides, base)


@numba.njit(cache=True, fastmath=FLAGS)
def _spread(flat: np.ndarray, shape: np.ndarray, strides: np.ndarray, values: np.ndarray) -> None:
    """The transpose of ``_accumulate``: add to every cell of ``flat`` the entry of ``values`` at its
    offset."""
    axes = shape.shape[0]
    inner, step = shape[axes - 1], strides[axes - 1]
    index = np.zeros(axes, np.int64)
    base = 0
    for start in range(0, flat.shape[0], inner):
        at = base
        for j in range(inner):
            flat[start + j] += values[at]
            at += step
        base = _next_row(index, shape, strides, base)


def _merged_axes(shape: Sequence[int], keep: Sequence[int]) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """The layout ``_accumulate`` and ``_spread`` walk: a table of ``shape`` whose axes ``keep`` (in
    that order) index a smaller table. Each axis gets its stride in the smaller table (0 for the
    others); neighbouring axes that move together (both left out, or kept next to each other in
    the same order) are merged, so that the inner loop is as long as it can be. Also the smaller
    table's shape."""
    small = tuple(shape[k] for k in keep)
    strides = [0] * len(shape)
    stride = 1
    for k in reversed(keep):
        strides[k] = stride
        stride *= shape[k]
    merged_shape: list[int] = []
    merged_strides: list[int] = []
    for size, step in zip(shape, strides):
        if merged_shape and merged_strides[-1] == step * size:  # also true when both are left out (0 == 0)
            merged_shape[-1] *= size
            merged_strides[-1] = step
        else:
            merged_shape.append(size)
            merged_strides.append(step)
    return np.array(merged_shape, dtype=np.int64), np.array(merged_strides, dtype=np.int64), small


def sum_onto(table: np.ndarray, keep: Sequence[int]) -> np.ndarray:
    """``table`` summed over every axis not in ``keep`` (distinct axis positions), the result's axes
    in ``keep``'s order: a new C-contiguous float array, in one pass over the table."""
    table = np.ascontiguousarray(table, dtype=float)
    if table.ndim == 0:
        return table.copy()
    shape, strides, small = _merged_axes(table.shape, keep)
    out = np.zeros(math.prod(small))
    if table.size:
        _accumulate(table.reshape(-1), shape, strides, out)
    return out.reshape(small)


def spread_onto(table: np.ndarray, keep: Sequence[int], values: np.ndarray) -> None:
    """Add ``values`` (axes: ``table``'s axes ``keep``, in that order) to every cell of ``table`` (a
    C-contiguous float array, changed in place) along the axes not in ``keep``: the transpose of
    ``sum_onto``, in one pass over the table."""
    if not (table.flags.c_contiguous and table.dtype == np.float64):
        raise ValueError("spread_onto adds into a C-contiguous float64 table only")
    if table.ndim == 0:
        table += values
        return
    shape, strides, small = _merged_axes(table.shape, keep)
    if np.shape(values) != small:
        raise ValueError(f"values of shape {np.shape(values)} cannot spread along axes {list(keep)} of a table "
                         f"of shape {table.shape}")
    if table.size:
        _spread(table.reshape(-1), shape, strides, np.ascontiguousarray(values, dtype=float).reshape(-1))
