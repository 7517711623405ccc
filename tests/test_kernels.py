"""The compiled table kernels agree with numpy's reductions and broadcasts, on every layout."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from synth.model import kernels
from synth.model.kernels import move_towards, row_max, row_sum, scale_rows, shift_rows, spread_onto, sum_onto

SHAPES = [(3,), (2, 3), (4, 1, 3), (2, 3, 4, 5), (3, 2, 1, 2, 4, 2), (5, 0, 2)]


def layouts():
    """Every shape above with every ordered choice of kept axes (up to 3 axes kept out of order)."""
    for shape in SHAPES:
        for k in range(len(shape) + 1):
            for keep in itertools.permutations(range(len(shape)), k):
                if k <= 3 or keep == tuple(sorted(keep)):
                    yield shape, keep


@pytest.mark.parametrize(("shape", "keep"), list(layouts()))
def test_sum_onto_is_numpy_sum_then_transpose(shape, keep):
    table = np.random.default_rng(len(shape) + 7 * len(keep)).normal(size=shape)
    expected = np.einsum(table, list(range(len(shape))), list(keep))
    got = sum_onto(table, keep)
    assert got.shape == expected.shape and got.flags.c_contiguous
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _broadcast(values: np.ndarray, shape: tuple[int, ...], keep: tuple[int, ...]) -> np.ndarray:
    """``values`` (axes: ``keep``, in that order) laid out to broadcast against a table of ``shape``."""
    present = sorted(keep)
    return values.transpose([keep.index(a) for a in present]).reshape(
        [shape[a] if a in keep else 1 for a in range(len(shape))])


@pytest.mark.parametrize(("shape", "keep"), list(layouts()))
def test_spread_onto_is_the_broadcast_add_and_the_transpose_of_sum_onto(shape, keep):
    rng = np.random.default_rng(3 + len(shape) + 5 * len(keep))
    table = rng.normal(size=shape)
    values = rng.normal(size=tuple(shape[k] for k in keep))
    expected = table + _broadcast(values, shape, keep)
    base, original = table.copy(), table.copy()
    started = np.full(shape, np.nan)  # every cell is written from the base
    spread_onto(started, keep, values, base=base)
    spread_onto(table, keep, values)
    np.testing.assert_allclose(table, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(started, table)  # the same values as a copy and a spread in place
    np.testing.assert_array_equal(base, original)  # the base is left alone
    # the transpose: <sum_onto(x), v> = <x, spread(v)> for any x
    x = rng.normal(size=shape)
    spread = np.zeros(shape)
    spread_onto(spread, keep, values)
    assert np.sum(sum_onto(x, keep) * values) == pytest.approx(np.sum(x * spread), abs=1e-9)


@pytest.mark.parametrize(("shape", "keep"), list(layouts()) + [((8, 15, 6, 2, 2, 16, 7), (0, 5, 6, 2, 3, 4)),
                                                 ((8, 15, 6, 2, 2, 16, 7), (5, 1, 4))])
def test_the_order_of_the_kept_axes_changes_no_bit(shape, keep):
    """A pass may walk the kept axes in the table's order and lay the result out afterwards; every cell
    must get the value of a pass in ``keep``'s order, to the last bit (releases do not change)."""
    rng = np.random.default_rng(11 + len(shape) + 2 * len(keep))
    table = rng.normal(size=shape) * 1e3
    values = rng.normal(size=tuple(shape[k] for k in keep))
    np.testing.assert_array_equal(sum_onto(table, keep), kernels._summed_in_order(table, keep))
    spread, walked = np.empty_like(table), np.empty_like(table)
    spread_onto(spread, keep, values, base=table)
    kernels._spread_in_order(table, walked, keep, values)
    np.testing.assert_array_equal(spread, walked)


def _lane_sum(run: np.ndarray) -> float:
    """A run of cells summed as ``kernels._sum_run`` promises: four running sums of every fourth cell,
    added as (s0 + s1) + (s2 + s3), then the last cells in turn (Python floats are IEEE doubles)."""
    lanes = [0.0, 0.0, 0.0, 0.0]
    whole = len(run) - len(run) % 4
    for j in range(0, whole, 4):
        for lane in range(4):
            lanes[lane] += float(run[j + lane])
    total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    for value in run[whole:]:
        total += float(value)
    return total


def _walked_sum(table: np.ndarray, keep: tuple[int, ...]) -> np.ndarray:
    """``sum_onto``'s order, walked in Python: each cell of the result gets its terms in the table's C
    order, one at a time, except that a run of trailing summed-out axes is first summed in four lanes."""
    trailing = 0
    while trailing < table.ndim and table.ndim - 1 - trailing not in keep:
        trailing += 1
    leading = table.shape[:table.ndim - trailing]
    rows = table.reshape(math.prod(leading), -1)
    out = np.zeros(tuple(table.shape[k] for k in keep))
    for row, index in zip(rows, np.ndindex(*leading)):
        cell = tuple(index[k] for k in keep)
        out[cell] += _lane_sum(row) if trailing else row[0]
    return out


WALKED = [((3, 40, 37), (0, 2)), ((3, 40, 37), (2, 0)), ((3, 40, 37), (1,)), ((2, 5, 300), (0, 2)),
          ((2, 5, 300), (1,)), ((4, 3, 2, 70), (3, 0, 1)), ((6, 9, 2), (2, 0)), ((5, 2, 64, 3), (0, 2))]


@pytest.mark.parametrize(("shape", "keep"), [layout for layout in layouts() if 0 not in layout[0]] + WALKED)
def test_every_cell_sums_its_terms_in_the_promised_order_to_the_last_bit(shape, keep):
    """Values of every magnitude and sign make a sum's bits depend on its order: ``sum_onto`` must give
    the walked order's bits (on long rows too, whose adds are vectorised), and ``spread_onto`` those of
    one addition per cell."""
    rng = np.random.default_rng(29 + len(shape) + 3 * len(keep))
    table = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 9, size=shape)
    walked = _walked_sum(table, keep)
    np.testing.assert_array_equal(sum_onto(table, keep), walked)
    values = rng.normal(size=walked.shape) * 1e3
    spread = np.empty_like(table)
    spread_onto(spread, keep, values, base=table)
    np.testing.assert_array_equal(spread, table + _broadcast(values, shape, keep))


def test_the_walked_order_tells_orders_apart():
    """The check above has teeth: on such values another order of the same terms gives other bits."""
    rng = np.random.default_rng(3)
    table = rng.normal(size=(3, 40, 37)) * 10.0 ** rng.integers(-8, 9, size=(3, 40, 37))
    assert not np.array_equal(_walked_sum(table, (0, 2)), _walked_sum(table[:, ::-1, :], (0, 2)))  # rows reversed
    assert not np.array_equal(_walked_sum(table, (0,)), table.sum(axis=(1, 2)))  # numpy's pairwise sums


def test_a_scalar_table_and_empty_keep():
    assert sum_onto(np.array(2.5), []) == 2.5
    table = np.arange(6.0).reshape(2, 3)
    assert sum_onto(table, []) == pytest.approx(15.0)
    spread_onto(table, [], np.array(1.0))
    np.testing.assert_array_equal(table, np.arange(6.0).reshape(2, 3) + 1)


def test_spread_onto_refuses_what_it_cannot_change_in_place():
    with pytest.raises(ValueError, match="C-contiguous float64"):
        spread_onto(np.zeros((3, 2), dtype=np.float32), [0], np.zeros(3))
    with pytest.raises(ValueError, match="C-contiguous float64"):
        spread_onto(np.zeros((3, 2)).T, [0], np.zeros(2))
    with pytest.raises(ValueError, match="cannot spread"):
        spread_onto(np.zeros((3, 2)), [0], np.zeros(2))
    with pytest.raises(ValueError, match="cannot start a table"):
        spread_onto(np.zeros((3, 2)), [0], np.zeros(3), base=np.zeros((2, 3)))


@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (7, 3), (1000, 4), (3, 5000)])
def test_row_max_and_row_sum_are_numpy_s(shape):
    table = np.random.default_rng(shape[0]).normal(size=shape) * 50
    table[0, 0] = -np.inf  # a structural zero's log-potential
    np.testing.assert_array_equal(row_max(table), table.max(axis=1, keepdims=True))
    np.testing.assert_allclose(row_sum(np.exp(table)), np.exp(table).sum(axis=1, keepdims=True), rtol=1e-12)


def test_row_max_of_an_all_minus_infinity_row_is_minus_infinity_and_nan_stays_nan():
    table = np.array([[-np.inf, -np.inf], [1.0, np.nan], [np.nan, 1.0]])
    got = row_max(table).ravel()
    assert got[0] == -np.inf
    assert np.isnan(row_sum(table).ravel()[1:]).all()


def test_row_shifts_and_scalings_and_moving_towards_are_numpy_s():
    rng = np.random.default_rng(11)
    table = rng.normal(size=(40, 3))
    shifts, factors = rng.normal(size=(40, 1)), rng.random(size=(40, 1))
    out = np.empty_like(table)
    shift_rows(table, shifts, out)
    np.testing.assert_allclose(out, table - shifts, rtol=1e-15)
    shift_rows(out, -shifts, out)  # in place
    np.testing.assert_allclose(out, table, rtol=1e-12, atol=1e-12)
    scaled = table.copy()
    scale_rows(scaled, factors)
    np.testing.assert_allclose(scaled, table * factors, rtol=1e-15)
    target = rng.normal(size=(40, 3))
    moved = table.copy()
    move_towards(moved, target, 0.3)
    np.testing.assert_allclose(moved, 0.7 * table + 0.3 * target, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="cannot move"):
        move_towards(moved, target[:, :2], 0.3)


@pytest.fixture
def every_table_cut(monkeypatch):
    """Every table passed over in 5 parts by the every-core kernels, however small (one thread suffices)."""
    monkeypatch.setattr(kernels._CORES, "every_core", lambda kernel, cells: True)
    monkeypatch.setattr(kernels, "_parts", lambda cells: 5 if cells else 1)
    monkeypatch.setattr(kernels, "BLOCK_CELLS", 1)
    monkeypatch.setattr(kernels, "PARALLEL_CELLS", 1)


def _one_core(monkeypatch, call):
    with monkeypatch.context() as patch:
        patch.setattr(kernels, "_parts", lambda cells: 1)
        return call()


@pytest.mark.parametrize(("shape", "keep"), list(layouts()) + [((7, 1, 9, 2, 11), (4, 0, 2)), ((3, 13, 5), (1,))])
def test_a_table_cut_into_parts_gets_the_one_core_values_to_the_last_bit(shape, keep, every_table_cut, monkeypatch):
    rng = np.random.default_rng(17 + len(shape) + 3 * len(keep))
    table = rng.normal(size=shape) * 1e3
    values = rng.normal(size=tuple(shape[k] for k in keep))
    one = _one_core(monkeypatch, lambda: sum_onto(table, keep))
    np.testing.assert_array_equal(sum_onto(table, keep), one)
    spread, spread_one, started = table.copy(), table.copy(), np.empty_like(table)
    spread_onto(spread, keep, values)
    _one_core(monkeypatch, lambda: spread_onto(spread_one, keep, values))
    spread_onto(started, keep, values, base=table)
    np.testing.assert_array_equal(spread, spread_one)
    np.testing.assert_array_equal(started, spread_one)
    np.testing.assert_allclose(one, np.einsum(table, list(range(len(shape))), list(keep)), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("shape", [(300, 7), (40, 3001)])  # short rows, and rows long enough to vectorise
def test_the_row_kernels_cut_into_parts_get_the_one_core_values(shape, every_table_cut, monkeypatch):
    rng = np.random.default_rng(5)
    table, shifts, target = rng.normal(size=shape), rng.normal(size=(shape[0], 1)), rng.normal(size=shape)
    for kernel in (row_max, row_sum):
        np.testing.assert_array_equal(kernel(table), _one_core(monkeypatch, lambda k=kernel: k(table)))
    out, out_one = np.empty_like(table), np.empty_like(table)
    shift_rows(table, shifts, out)
    _one_core(monkeypatch, lambda: shift_rows(table, shifts, out_one))
    scale_rows(out, shifts)
    _one_core(monkeypatch, lambda: scale_rows(out_one, shifts))
    move_towards(out, target, 0.25)
    _one_core(monkeypatch, lambda: move_towards(out_one, target, 0.25))
    np.testing.assert_array_equal(out, out_one)
    np.testing.assert_allclose(out, ((table - shifts) * shifts) * 0.75 + 0.25 * target, rtol=1e-12, atol=1e-12)


def test_a_large_table_is_cut_on_every_thread_and_sums_as_numpy(monkeypatch):
    """At the real threshold: a table of 2¹⁸ cells takes the every-core path when there are threads."""
    shape, keep = (8, 16, 32, 64), (3, 1)
    assert kernels._parts(int(np.prod(shape))) == (
        1 if kernels.numba.get_num_threads() < 2 else kernels.PARTS_PER_THREAD * kernels.numba.get_num_threads())
    table = np.random.default_rng(2).random(shape)
    got = sum_onto(table, keep)
    np.testing.assert_array_equal(got, _one_core(monkeypatch, lambda: sum_onto(table, keep)))
    np.testing.assert_allclose(got, table.sum(axis=(0, 2)).T, rtol=1e-12)


THREADS_AT_ONCE = """
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from synth.model.kernels import sum_onto
tables = [np.random.default_rng(seed).random((64, 64, 256)) for seed in range(8)]
def work(table):
    return all(np.allclose(sum_onto(table, (2, 0)), table.sum(axis=1).T) for _ in range(50))
with ThreadPoolExecutor(8) as pool:
    print("ok" if all(pool.map(work, tables)) else "wrong")
"""


def test_threads_of_one_process_may_sum_large_tables_at_once():
    """numba's own thread pool (the layer it falls back on without OpenMP or TBB) takes one caller at a
    time and crashes the process when two call at once: other threads get the one-core kernel."""
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue", "NUMBA_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", THREADS_AT_ONCE], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


FIRST_PROCESS = """
import numpy as np
from synth.model.kernels import row_sum, spread_onto, sum_onto
table = np.random.default_rng(0).normal(size=(4, 5, 6))
sum_onto(table, (2, 0)); spread_onto(table, (1,), np.zeros(5)); row_sum(table.reshape(4, -1))
"""
SECOND_PROCESS = """
import numpy as np
from synth.model import kernels
kernels.BLOCK_CELLS = kernels.PARALLEL_CELLS = 1
same = True
for seed in range(20):
    table = np.random.default_rng(seed).normal(size=(3, 2, 1, 2, 4, 2)) * 1e3
    rows = np.random.default_rng(seed).normal(size=(7, 203)) * 1e3
    kernels._parts = lambda cells: 1
    one = kernels.sum_onto(table, (2, 1, 0)), kernels.row_sum(rows)
    kernels._parts = lambda cells: 5
    many = kernels.sum_onto(table, (2, 1, 0)), kernels.row_sum(rows)
    same &= all(np.array_equal(a, b) for a, b in zip(one, many))
print("same" if same else "different")
"""


def test_the_one_core_kernels_cached_by_another_process_agree_with_the_every_core_ones(tmp_path):
    """A process (here under numba's own thread pool) compiles and caches the one-core kernels; the next
    compiles the every-core ones and loads the others from the cache. Their sums must still agree to the
    last bit: with reassociated (vectorised) sums the two compilations summed in different orders."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": "2"}
    first = subprocess.run([sys.executable, "-c", FIRST_PROCESS], capture_output=True, text=True, timeout=300,
                           env={**env, "NUMBA_THREADING_LAYER": "workqueue"}, check=False)
    assert first.returncode == 0, first.stderr[-2000:]
    second = subprocess.run([sys.executable, "-c", SECOND_PROCESS], capture_output=True, text=True, timeout=300,
                            env=env, check=False)
    assert second.returncode == 0 and second.stdout.strip() == "same", second.stdout + second.stderr[-2000:]
