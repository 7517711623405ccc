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

A table of at least ``PARALLEL_CELLS`` cells is passed over by every core numba may use (its
threads; ``NUMBA_NUM_THREADS`` sets how many), cut into parts that write disjoint cells, each in the
order one core would write them: the values are the same to the last bit on any number of cores.
On aim's clique tables two cores take half the time of one, while the machine is otherwise idle;
when other processes keep its cores busy, a pass runs on whichever of the two was faster lately
(``synth.model.core_choice``). One thread of a process passes over a table on every core at a time
(numba's own thread pool would crash on two); the others use one core.
"""

from __future__ import annotations

import math
import threading
import time
import types
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numba
import numpy as np

from synth.model.core_choice import CoreChoice

# A row's maximum may be taken in any order (vectorised; its value does not depend on the order, but for the sign
# of a zero, which the exp that follows erases), without assuming finite values: potentials may hold −inf. Every
# other kernel keeps IEEE order (no reassociation, no fused multiply-add), so that any compilation of it, on one
# core or on every core, gives the same bits; its sums run in a fixed order of four lanes (``_sum_run``).
MAX_FLAGS = {"reassoc", "nsz", "arcp", "contract"}
# Tables of at least this many cells are passed over by every core (numba's threads, NUMBA_NUM_THREADS);
# smaller ones by one, whose pass costs less than waking the others
PARALLEL_CELLS = 1 << 16
PARTS_PER_THREAD = 4  # a parallel pass is cut into this many parts per thread, so that uneven parts even out
# A summed-out inner run shorter than SHORT_RUN cells is summed ROWS_AT_ONCE rows at a time (``_run_totals``)
SHORT_RUN, ROWS_AT_ONCE = 64, 64
BLOCK_CELLS = 4096  # a sum is cut along an axis only when its blocks of consecutive rows hold this many cells
_EVERY_CORE = threading.Lock()  # held while an every-core kernel runs
_CORES = CoreChoice()  # which compilation a large pass runs (the faster lately)


class Compiled(NamedTuple):
    """A kernel's name and its one-core and every-core compilations (``_compiled``)."""
    name: str
    one_core: Callable[..., None]
    every_core: Callable[..., None]


def _compiled(function: Callable[..., None], fastmath: set[str] | bool = False) -> Compiled:
    """``function`` compiled twice: for one core (its ``prange`` is a plain range) and for every core
    (its ``prange`` iterations run on numba's threads). Each iteration of a kernel's ``prange`` writes
    cells that no other iteration writes, in the order one core would: both give the same values."""
    # numba's cache tells compilations apart by the function's name, not by ``parallel``: the every-core
    # one compiles a copy under its own name
    every_core = types.FunctionType(function.__code__, function.__globals__, f"{function.__name__}_every_core")
    every_core.__qualname__ = every_core.__name__
    return Compiled(function.__name__, numba.njit(cache=True, fastmath=fastmath)(function),
                    numba.njit(cache=True, fastmath=fastmath, parallel=True)(every_core))


def _parts(cells: int) -> int:
    """Into how many parts a pass over ``cells`` cells is cut: 1 for a small table or a single thread."""
    if cells < PARALLEL_CELLS:
        return 1
    threads = numba.get_num_threads()
    return 1 if threads < 2 else PARTS_PER_THREAD * threads


def _row_max_body(table: np.ndarray, out: np.ndarray) -> None:
    for r in numba.prange(table.shape[0]):
        peak = table[r, 0]
        for j in range(1, table.shape[1]):
            peak = max(peak, table[r, j])
        out[r, 0] = peak


@numba.njit(cache=True)
def _sum_run(flat: np.ndarray, start: int, length: int) -> float:
    """Σ flat[start : start + length] in one fixed order: four running sums of every fourth cell,
    added as (s0 + s1) + (s2 + s3), then the last cells in turn. The compiler may pack the four
    sums into one vector but not reorder them, so every compilation gives the same bits."""
    s0 = s1 = s2 = s3 = 0.0
    j = 0
    while j + 4 <= length:
        s0 += flat[start + j]
        s1 += flat[start + j + 1]
        s2 += flat[start + j + 2]
        s3 += flat[start + j + 3]
        j += 4
    total = (s0 + s1) + (s2 + s3)
    while j < length:
        total += flat[start + j]
        j += 1
    return total


@numba.njit(cache=True)
def _run_totals(flat: np.ndarray, first_row: int, rows: int, inner: int, totals: np.ndarray,
                lanes: np.ndarray) -> None:
    """``_sum_run`` of each of ``rows`` consecutive rows of ``inner`` cells (from row ``first_row``) into
    ``totals``, its four lanes kept for all the rows at once (``lanes``: 4 × ``ROWS_AT_ONCE``). Each row
    gets the same additions in the same order, so the same bits; taken across rows they vectorise,
    where a short row alone runs at the speed of its additions' latency."""
    whole = inner - inner % 4
    s0, s1, s2, s3 = lanes[0], lanes[1], lanes[2], lanes[3]
    for i in range(rows):
        s0[i] = s1[i] = s2[i] = s3[i] = 0.0
    for j in range(0, whole, 4):
        for i in range(rows):
            start = (first_row + i) * inner + j
            s0[i] += flat[start]
            s1[i] += flat[start + 1]
            s2[i] += flat[start + 2]
            s3[i] += flat[start + 3]
    for i in range(rows):
        total = (s0[i] + s1[i]) + (s2[i] + s3[i])
        start = (first_row + i) * inner
        for j in range(whole, inner):
            total += flat[start + j]
        totals[i] = total


def _row_sum_body(table: np.ndarray, out: np.ndarray) -> None:
    for r in numba.prange(table.shape[0]):
        out[r, 0] = _sum_run(table[r], 0, table.shape[1])


def _shift_rows_body(table: np.ndarray, shifts: np.ndarray, out: np.ndarray) -> None:
    for r in numba.prange(table.shape[0]):
        for j in range(table.shape[1]):
            out[r, j] = table[r, j] - shifts[r, 0]


def _scale_rows_body(table: np.ndarray, factors: np.ndarray) -> None:
    for r in numba.prange(table.shape[0]):
        for j in range(table.shape[1]):
            table[r, j] *= factors[r, 0]


def _move_towards_body(table: np.ndarray, target: np.ndarray, weight: float) -> None:
    for i in numba.prange(table.shape[0]):
        table[i] += weight * (target[i] - table[i])


_ROW_MAX, _ROW_SUM = _compiled(_row_max_body, MAX_FLAGS), _compiled(_row_sum_body)
_SHIFT_ROWS, _SCALE_ROWS, _MOVE_TOWARDS = (_compiled(_shift_rows_body), _compiled(_scale_rows_body),
                                           _compiled(_move_towards_body))


def _run(kernel: Compiled, cells: int, *args: Any) -> None:
    """A kernel on a table of ``cells`` cells: its every-core compilation when the table is large, no
    other thread of this process is running one (numba's default thread pool takes one caller at a
    time) and it has lately been the faster at that size (``_CORES``), else its one-core compilation,
    which gives the same values."""
    if _parts(cells) > 1 and _EVERY_CORE.acquire(blocking=False):
        try:
            every_core = _CORES.every_core(kernel.name, cells)
            start = time.perf_counter()
            (kernel.every_core if every_core else kernel.one_core)(*args)
            _CORES.record(kernel.name, cells, every_core, time.perf_counter() - start)
        finally:
            _EVERY_CORE.release()
    else:
        kernel.one_core(*args)


def row_max(table: np.ndarray) -> np.ndarray:
    """Each row's largest value, as a column (rows × 1); every row must have a value."""
    out = np.empty((table.shape[0], 1))
    _run(_ROW_MAX, table.size, np.ascontiguousarray(table, dtype=float), out)
    return out


def row_sum(table: np.ndarray) -> np.ndarray:
    """Each row's sum, as a column (rows × 1)."""
    out = np.empty((table.shape[0], 1))
    _run(_ROW_SUM, table.size, np.ascontiguousarray(table, dtype=float), out)
    return out


def shift_rows(table: np.ndarray, shifts: np.ndarray, out: np.ndarray) -> None:
    """``out`` (C-contiguous, the shape of ``table``, may be ``table``) = each row of ``table`` minus
    its entry of ``shifts`` (rows × 1)."""
    _run(_SHIFT_ROWS, table.size, table, shifts, out)


def scale_rows(table: np.ndarray, factors: np.ndarray) -> None:
    """Multiply each row of ``table`` (C-contiguous floats, changed in place) by its entry of
    ``factors`` (rows × 1)."""
    _run(_SCALE_ROWS, table.size, table, factors)


def move_towards(table: np.ndarray, target: np.ndarray, weight: float) -> None:
    """``table`` ← (1 − weight) ``table`` + weight ``target``, in place and in one pass (both
    C-contiguous float arrays of one shape)."""
    if table.shape != target.shape:
        raise ValueError(f"cannot move a table of shape {table.shape} towards one of shape {target.shape}")
    _run(_MOVE_TOWARDS, table.size, table.reshape(-1), np.ascontiguousarray(target).reshape(-1), weight)


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


@numba.njit(cache=True)
def _row_start(row: int, shape: np.ndarray, strides: np.ndarray, index: np.ndarray) -> int:
    """Set ``index`` (all axes but the last) to row ``row`` of the table; that row's offset."""
    base = 0
    for axis in range(shape.shape[0] - 2, -1, -1):
        index[axis] = row % shape[axis]
        row //= shape[axis]
        base += index[axis] * strides[axis]
    return base


@numba.njit(cache=True)
def _accumulate_part(flat: np.ndarray, shape: np.ndarray, strides: np.ndarray, out: np.ndarray, axis: int,
                     low: int, high: int) -> None:
    """Add the cells of ``flat`` (a C-ordered table of ``shape``) whose index on ``axis`` lies in
    [low, high) to ``out``, each at the position Σ index × stride over the axes (stride 0: the axis is
    summed out). The last axis is the inner loop: a sum when it is summed out, a strided add
    otherwise, written over slices when the stride is 1 so that the compiler turns it into vector
    adds (out and table never overlap); the other axes advance like an odometer, over each block of
    consecutive rows that the range holds (one per index of the axes before ``axis``). Every cell of
    ``out`` gets its terms in the order of the rows, as in one pass over the whole table."""
    axes = shape.shape[0]
    last = axes - 1
    inner, step = shape[last], strides[last]
    first, stop = (low, high) if axis == last else (0, inner)
    outer, across, per = 1, 1, 1  # blocks; indices of ``axis`` in the row order; rows per index of ``axis``
    if axis < last:
        for a in range(axis):
            outer *= shape[a]
        across = shape[axis]
        for a in range(axis + 1, last):
            per *= shape[a]
    else:
        low, high, per = 0, 1, flat.shape[0] // max(inner, 1)
    index = np.zeros(axes, np.int64)
    short = step == 0 and inner < SHORT_RUN  # then each row's sum comes from ``_run_totals``
    totals, lanes = np.empty(ROWS_AT_ONCE if short else 0), np.empty((4, ROWS_AT_ONCE if short else 0))
    for block in range(outer):
        begin, end = (block * across + low) * per, (block * across + high) * per
        base = _row_start(begin, shape, strides, index)
        if short:
            for chunk in range(begin, end, ROWS_AT_ONCE):
                rows = min(ROWS_AT_ONCE, end - chunk)
                _run_totals(flat, chunk, rows, inner, totals, lanes)
                for r in range(rows):
                    out[base] += totals[r]
                    base = _next_row(index, shape, strides, base)
            continue
        for row in range(begin, end):
            start = row * inner
            if step == 0:
                out[base] += _sum_run(flat, start, inner)
            elif step == 1:  # a loop of its own over slices, which compiles to vector adds
                into, cells = out[base + first:base + stop], flat[start + first:start + stop]
                for j in range(stop - first):
                    into[j] += cells[j]
            else:
                at = base + first * step
                for j in range(first, stop):
                    out[at] += flat[start + j]
                    at += step
            base = _next_row(index, shape, strides, base)


def _accumulate_body(flat: np.ndarray, shape: np.ndarray, strides: np.ndarray, out: np.ndarray, axis: int,
                     parts: int) -> None:
    """``_accumulate_part`` over the whole table, cut into ``parts`` ranges of ``axis``, a kept axis:
    the ranges add into disjoint cells of ``out``, so they may run at once."""
    size = shape[axis]
    for part in numba.prange(parts):
        _accumulate_part(flat, shape, strides, out, axis, part * size // parts, (part + 1) * size // parts)


@numba.njit(cache=True)
def _spread_part(base: np.ndarray, flat: np.ndarray, shape: np.ndarray, strides: np.ndarray, values: np.ndarray,
                 begin: int, end: int) -> None:
    """The transpose of ``_accumulate_part`` on rows [begin, end): every cell of ``flat`` becomes that
    cell of ``base`` (``flat`` itself, or another table of its shape) plus the entry of ``values`` at its
    offset. A row that adds one value (stride 0) or consecutive ones (stride 1) is written over slices,
    which the compiler vectorises; a cell read and written at the same place may be ``base``'s."""
    axes = shape.shape[0]
    inner, step = shape[axes - 1], strides[axes - 1]
    index = np.zeros(axes, np.int64)
    offset = _row_start(begin, shape, strides, index)
    for row in range(begin, end):
        start = row * inner
        if step <= 1:  # loops of their own over slices, which compile to vector adds
            cells, origin = flat[start:start + inner], base[start:start + inner]
            if step == 0:
                value = values[offset]
                for j in range(inner):
                    cells[j] = origin[j] + value
            else:
                spread = values[offset:offset + inner]
                for j in range(inner):
                    cells[j] = origin[j] + spread[j]
        else:
            at = offset
            for j in range(inner):
                flat[start + j] = base[start + j] + values[at]
                at += step
        offset = _next_row(index, shape, strides, offset)


def _spread_body(base: np.ndarray, flat: np.ndarray, shape: np.ndarray, strides: np.ndarray, values: np.ndarray,
                 parts: int) -> None:
    """``_spread_part`` over the whole table, cut into ``parts`` ranges of rows (each writes its own cells)."""
    rows = flat.shape[0] // shape[shape.shape[0] - 1]
    for part in numba.prange(parts):
        _spread_part(base, flat, shape, strides, values, part * rows // parts, (part + 1) * rows // parts)


_ACCUMULATE, _SPREAD = _compiled(_accumulate_body), _compiled(_spread_body)


def _merged_axes(shape: Sequence[int], keep: Sequence[int]) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """The layout ``_accumulate_part`` and ``_spread_part`` walk: a table of ``shape`` whose axes ``keep`` (in
    that order) index a smaller table. Each axis gets its stride in the smaller table (0 for the
    others); neighbouring axes that move together (both left out, or kept next to each other in
    the same order) are merged, so that the inner loop is as long as it can be. Also the smaller
    table's shape. (Fresh arrays each call; the layout itself is worked out once per shape and axes.)"""
    merged_shape, merged_strides, small = _merged_layout(tuple(shape), tuple(keep))
    return np.array(merged_shape, dtype=np.int64), np.array(merged_strides, dtype=np.int64), small


@lru_cache(maxsize=16384)
def _merged_layout(shape: tuple[int, ...], keep: tuple[int, ...]
                   ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
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
    return tuple(merged_shape), tuple(merged_strides), small


def _cut_axis(shape: np.ndarray, strides: np.ndarray) -> int | None:
    """The kept axis (merged, as ``_merged_axes`` lays them out) along which a sum is cut into parts,
    or None for one pass on one core: the first kept axis, when each of its blocks of consecutive rows
    (one per index of the axes before it) holds at least ``BLOCK_CELLS`` cells; smaller blocks cost
    more to start than their part saves. None too when no axis is kept."""
    kept = np.flatnonzero(strides)
    if not kept.size:
        return None
    axis = int(kept[0])
    blocks = math.prod(int(n) for n in shape[:axis])  # for the inner axis: every row
    return axis if math.prod(int(n) for n in shape) >= BLOCK_CELLS * blocks else None


def _ascending(keep: Sequence[int], small_cells: int, cells: int) -> list[int] | None:
    """``keep`` sorted, when a pass is better made in the table's own axis order: the kept axes are
    out of order, and the smaller table has at most half the cells (putting its axes in the asked
    order costs a pass over it). Then neighbouring kept axes merge into long runs of consecutive
    cells, where out of order each cell lands far from the last. None: pass in ``keep``'s order."""
    ordered = sorted(keep)
    return ordered if ordered != list(keep) and 2 * small_cells <= cells else None


def sum_onto(table: np.ndarray, keep: Sequence[int]) -> np.ndarray:
    """``table`` summed over every axis not in ``keep`` (distinct axis positions), the result's axes
    in ``keep``'s order: a new C-contiguous float array, in one pass over the table. The pass walks
    the kept axes in the table's order when that is faster (``_ascending``); each cell of the result
    gets its terms in the same order either way, so the values are the same to the last bit."""
    table = np.ascontiguousarray(table, dtype=float)
    if table.ndim == 0:
        return table.copy()
    ordered = _ascending(keep, math.prod(table.shape[k] for k in keep), table.size)
    if ordered is None:
        return _summed_in_order(table, keep)
    return np.ascontiguousarray(_summed_in_order(table, ordered).transpose([ordered.index(k) for k in keep]))


def _summed_in_order(table: np.ndarray, keep: Sequence[int]) -> np.ndarray:
    """``sum_onto`` of a C-contiguous float table with at least one axis, its pass walking ``keep``'s order."""
    shape, strides, small = _merged_axes(table.shape, keep)
    out = np.zeros(math.prod(small))
    if table.size:
        axis = _cut_axis(shape, strides) if table.size >= PARALLEL_CELLS else None
        cells = table.size if axis is not None else 0  # else one pass on one core
        _run(_ACCUMULATE, cells, table.reshape(-1), shape, strides, out, axis or 0, _parts(cells))
    return out.reshape(small)


def spread_onto(table: np.ndarray, keep: Sequence[int], values: np.ndarray, base: np.ndarray | None = None) -> None:
    """Add ``values`` (axes: ``table``'s axes ``keep``, in that order) to every cell of ``table`` (a
    C-contiguous float array, changed in place) along the axes not in ``keep``: the transpose of
    ``sum_onto``, in one pass over the table. With ``base`` (a table of ``table``'s shape, left
    alone), ``table`` becomes ``base`` plus the spread values instead, in the same one pass: a copy
    and a spread for the cost of the spread, with the same values. Like ``sum_onto``, the pass may walk
    the kept axes in the table's order (``_ascending``): each cell gets the same one addition."""
    if not (table.flags.c_contiguous and table.dtype == np.float64):
        raise ValueError("spread_onto adds into a C-contiguous float64 table only")
    if base is not None and np.shape(base) != table.shape:
        raise ValueError(f"a base of shape {np.shape(base)} cannot start a table of shape {table.shape}")
    source = table if base is None else np.ascontiguousarray(base, dtype=float)
    if table.ndim == 0:
        table[...] = source + values
        return
    small = tuple(table.shape[k] for k in keep)
    if np.shape(values) != small:
        raise ValueError(f"values of shape {np.shape(values)} cannot spread along axes {list(keep)} of a table "
                         f"of shape {table.shape}")
    ordered = _ascending(keep, math.prod(small), table.size)
    if ordered is not None:
        values, keep = np.transpose(values, [list(keep).index(k) for k in ordered]), ordered
    _spread_in_order(source, table, keep, values)


def _spread_in_order(source: np.ndarray, table: np.ndarray, keep: Sequence[int], values: np.ndarray) -> None:
    """``table`` ← ``source`` plus ``values`` spread along the axes not in ``keep`` (``spread_onto``'s
    checked arguments, ``table`` with at least one axis), its pass walking ``keep``'s order."""
    shape, strides, _ = _merged_axes(table.shape, keep)
    if table.size:
        _run(_SPREAD, table.size, source.reshape(-1), table.reshape(-1), shape, strides,
             np.ascontiguousarray(values, dtype=float).reshape(-1), _parts(table.size))
