"""Matched sampling: a drawn table adjusted, one cell at a time, until its marginals follow the model's.

A table drawn from a model (``synth.model.sampling``) follows the model's marginals within
rounding only on the sets of columns drawn together (a clique, a column with its parents). On any
other set of columns, say a triple spread over three cliques, its marginal carries the noise of
the random order in which values were dealt: on adult_coded (48,842 rows) an aim model's own
3-way marginals are 0.080 from the data's, the rounded table's 0.087, and most of the gap is that
noise, not the model.

Matching removes most of it. The target of a set of columns is the model's marginal, scaled to
the table's rows and rounded (``rounded_counts``: each count the floor or the ceiling of its
expected count, unbiased), when the model's structure says those marginals cost fewer cells than
counting a reference sample (``exact_is_cheaper``: small junction trees). Otherwise it is the set's
marginal in a reference sample drawn rounded from the model, twenty times the table's rows
(``reference_rows``: capped), scaled and rounded the same way: the reference's noise is a fifth of
the table's, and it costs the same for every model (the exact marginals of hundreds of triples
take minutes on large junction trees, for the same accuracy). The score of a table is the sum
over the target sets of the L1 distance between its counts and the targets. A step picks a random
row and column, and moves the row's cell to the value of that column that lowers the score most,
if any does (ties broken at random), never into a cell of a target set that the model gives no
probability, or the reference never drew (so a structural zero stays empty); every step lowers
the score or changes nothing. A step needs only each cell's side of its target (short, on it,
over) and whether a move may enter it: one byte per cell (``_Targets.states``) that it reads, a
quarter of the int32 residuals it keeps up to date when a row moves; on adult_coded's 364 triples
(21 million cells) the bytes stay in the processor's cache where the residuals do not, and a
round takes half the time. Steps run in rounds of (rows × columns) until a round
lowers the score by less than ``STOP_GAIN`` of itself, at most ``MAX_ROUNDS`` rounds and
``MAX_STEPS`` steps. Tables of more than ``MAX_ROWS`` rows are left rounded, and the progress says
so: the noise matching removes shrinks as tables grow (the same aim model sampled to a million
rows: rounded 0.0807, matched 0.0803, for 70 s more), while its cost grows with them. On the
example above the matched table scores 0.082.

The target sets are all triples of columns while there are at most ``MAX_TRIPLES`` of them, else
all pairs, the largest dropped until their cells fit ``MAX_CELLS``. Matching reads the model
only, never private data, so it is post-processing like the rest of the generator. The inner loop
is compiled with numba (it is a sequential walk that vectorises badly).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence

import numba
import numpy as np

from synth.columns.domain import Domain
from synth.model.interface import MIN_PROBABILITY, Model, marginal_cost
from synth.model.sampling import DEFAULT_SAMPLING, Sampling, rounded_counts
from synth.progress import SILENT, Progress

MAX_TRIPLES = 1_000  # up to 19 columns: beyond, matching targets the pairs
MAX_CELLS = 1 << 25  # cells of all target marginals together (128 MiB of int32 residuals)
REFERENCE_FACTOR = 20  # the reference sample has this many times the table's rows,
MAX_REFERENCE_ROWS = 2_000_000  # but no more,
MAX_REFERENCE_WORK = 1 << 30  # and reference rows × target sets no more than this (a few seconds of counting)
REFERENCE_CHUNK_CODES = 1 << 23  # codes of the reference drawn at once (64 MiB)
MAX_ROUNDS = 3  # rounds of steps at most (see match_marginals)
MAX_STEPS = 10_000_000  # steps per table at most (20-40 s)
MAX_ROWS = 500_000  # larger tables are left rounded: see the module docstring
STOP_GAIN = 0.02  # a round that lowers the score by less than this share of it is the last


def target_sets(domain: Domain) -> list[tuple[int, ...]]:
    """The column sets (positions in ``domain``) whose marginals matching follows: all triples
    while there are at most ``MAX_TRIPLES``, else all pairs, smallest first up to ``MAX_CELLS``
    cells together. No sets for fewer than two columns (a single column is rounded already)."""
    d = len(domain.names)
    if d < 2:
        return []
    k = 3 if 3 <= d and math.comb(d, 3) <= MAX_TRIPLES else 2
    sets = sorted(itertools.combinations(range(d), k), key=lambda s: math.prod(domain.sizes[i] for i in s))
    kept, cells = [], 0
    for s in sets:
        cells += math.prod(domain.sizes[i] for i in s)
        if cells > MAX_CELLS:
            break
        kept.append(s)
    return sorted(kept)


def reference_rows(n: int, sets: int) -> int:
    """Rows of the reference sample that sets the targets of ``sets`` target sets of an ``n``-row
    table: ``REFERENCE_FACTOR`` times the rows, at most ``MAX_REFERENCE_ROWS``, and fewer (but no
    fewer than the table's) when counting them into every set would pass ``MAX_REFERENCE_WORK``
    (a wide table's thousands of pairs)."""
    return min(REFERENCE_FACTOR * n, MAX_REFERENCE_ROWS, max(n, MAX_REFERENCE_WORK // max(sets, 1)))


def exact_is_cheaper(model: Model, domain: Domain, sets: Sequence[tuple[int, ...]], rows: int) -> bool:
    """Whether the model's exact marginals of ``sets`` cost no more cells (``marginal_cost``, from the
    model's structure) than counting the reference sample of a ``rows``-row table into them: true
    for small junction trees (an mst tree of pairs), false for a model that cannot tell or whose
    marginals need variable elimination over large separators."""
    costs = [marginal_cost(model, [domain.names[c] for c in s]) for s in sets]
    return all(c is not None for c in costs) and sum(c or 0 for c in costs) <= reference_rows(rows, len(sets)) * len(sets)


SHORT, ON, OVER = 0, 1, 2  # a cell's residual is negative, zero or positive (the low bits of its state)
CLOSED = 4  # a move may not enter the cell (the model gives it no probability, or the reference never drew it)


class _Targets:
    """The residuals (table counts minus targets) of every target set in one flat int32 array, with
    each set's columns, offset and strides, each cell's state (one byte: ``SHORT``, ``ON`` or
    ``OVER``, plus ``CLOSED`` when a move may not enter it), and for each column the sets holding it
    (the first ``held[c]`` entries of its row).

    With ``exact``, a set's target is the model's marginal, scaled to the table's rows and rounded
    without bias (``rounded_counts``), and a move may enter a cell of probability at least
    ``MIN_PROBABILITY``. Otherwise it is the set's counts in a reference sample of
    ``reference_rows`` rows drawn rounded from the model, scaled and rounded the same way, and a
    move may enter a cell the reference drew. The reference costs the same for every model, where
    the exact marginals of hundreds of triples cost minutes on a large junction tree, and its
    sampling noise is a fifth of the table's (20 times the rows). On adult_coded at ε = 1,
    matching to it scores as matching to the exact marginals does for aim (0.0760 against 0.0761,
    two seeds) and 0.0002 worse for mst, whose exact marginals are cheap (``exact_is_cheaper``). On
    the accuracy suite (aim, ε = 1, seeds 0–2, both halves; benchmarks/RESULTS.md, 2026-12-03 12:45)
    only diamonds' model took the reference (the others' exact marginals are cheaper): 10 times the
    rows scored 1.004 of 20's mean 3-way TVD there, 40 times 0.999."""

    def __init__(self, codes: np.ndarray, model: Model, domain: Domain, sets: Sequence[tuple[int, ...]],
                 rng: np.random.Generator, exact: bool, advance: Callable[[int], None] = lambda done: None) -> None:
        k = len(sets[0])
        cells = np.array([math.prod(domain.sizes[c] for c in s) for s in sets], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(cells)[:-1]]).astype(np.int64)
        self.columns = np.array(sets, dtype=np.int64)
        self.strides = np.array([[math.prod(domain.sizes[c] for c in s[q + 1:]) for q in range(k)] for s in sets],
                                dtype=np.int64)
        holding = [[j for j, s in enumerate(sets) if c in s] for c in range(len(domain.names))]
        self.held = np.array([len(h) for h in holding], dtype=np.int64)  # the cell cap may leave some out
        self.sets_of_column = np.zeros((len(domain.names), int(self.held.max())), dtype=np.int64)
        self.position = np.zeros_like(self.sets_of_column)
        for c, h in enumerate(holding):
            self.sets_of_column[c, :len(h)] = h
            self.position[c, :len(h)] = [sets[j].index(c) for j in h]
        self.residuals = np.zeros(int(cells.sum()), dtype=np.int32)
        _count(codes, self.columns, self.strides, self.offsets, self.residuals)
        self.states = np.empty(int(cells.sum()), dtype=np.int8)
        segments = [slice(self.offsets[j], self.offsets[j] + cells[j]) for j in range(len(sets))]
        shares = (_exact_shares(model, domain, sets, advance) if exact else _reference_shares(
            model, domain, self.columns, self.strides, self.offsets, segments, rng, advance,
            reference_rows(codes.shape[0], len(sets))))
        n = np.array([float(codes.shape[0])])
        for share, segment in zip(shares, segments):  # shares first: its last progress step runs
            self.residuals[segment] -= rounded_counts(n, share[None, :], rng)[0].astype(np.int32)
            # a drawn cell's share is at least 1 / MAX_REFERENCE_ROWS: this is "the reference drew it" there
            _set_states(self.residuals[segment], share >= MIN_PROBABILITY, self.states[segment])

    def score(self) -> int:
        return int(np.abs(self.residuals).sum())


def _exact_shares(model: Model, domain: Domain, sets: Sequence[tuple[int, ...]],
                  advance: Callable[[int], None]) -> Iterator[np.ndarray]:
    """Each target set's distribution under the model, computed one set at a time."""
    for j, s in enumerate(sets):
        marginal = np.maximum(np.asarray(model.marginal([domain.names[c] for c in s]), dtype=float).ravel(), 0)
        yield marginal / marginal.sum()
        advance(j + 1)


def _reference_shares(model: Model, domain: Domain, columns: np.ndarray, strides: np.ndarray, offsets: np.ndarray,
                      segments: Sequence[slice], rng: np.random.Generator, advance: Callable[[int], None],
                      wanted: int) -> Iterator[np.ndarray]:
    """Each target set's distribution in a reference sample of ``wanted`` rows drawn rounded from the
    model (in chunks, all drawn before the first set's is given)."""
    reference = np.zeros(segments[-1].stop, dtype=np.int32)
    chunk = max(1, REFERENCE_CHUNK_CODES // len(domain.names))
    for start in range(0, wanted, chunk):
        drawn = model.sample(min(chunk, wanted - start), rng, "rounded")
        _count(drawn, columns, strides, offsets, reference)
        advance(min(start + chunk, wanted))
    for segment in segments:
        yield reference[segment] / wanted


def _count(codes: np.ndarray, columns: np.ndarray, strides: np.ndarray, offsets: np.ndarray,
           counts: np.ndarray) -> None:
    """Add each row of ``codes`` to its cell of every target set in ``counts``."""
    _count_by_column(np.ascontiguousarray(codes.T, dtype=np.int64), columns, strides, offsets, counts)


@numba.njit(cache=True)
def _count_by_column(by_column: np.ndarray, columns: np.ndarray, strides: np.ndarray, offsets: np.ndarray,
                     counts: np.ndarray) -> None:
    """``_count`` on the codes laid out column by column: one set at a time, so that its counts
    stay in cache while every row is added."""
    for s in range(columns.shape[0]):
        for i in range(by_column.shape[1]):
            cell = offsets[s]
            for q in range(columns.shape[1]):
                cell += by_column[columns[s, q], i] * strides[s, q]
            counts[cell] += 1


@numba.njit(cache=True)
def _side(residual: int) -> int:
    """The side of its target a cell with this residual is on: ``SHORT``, ``ON`` or ``OVER``."""
    return SHORT if residual < 0 else (ON if residual == 0 else OVER)


@numba.njit(cache=True)
def _set_states(residuals: np.ndarray, enterable: np.ndarray, states: np.ndarray) -> None:
    """Each cell's state from its residual and whether a move may enter it."""
    for cell in range(residuals.shape[0]):
        states[cell] = _side(residuals[cell]) + (0 if enterable[cell] else CLOSED)


@numba.njit(cache=True)
def _steps(codes: np.ndarray, sizes: np.ndarray, columns: np.ndarray, strides: np.ndarray, offsets: np.ndarray,
           residuals: np.ndarray, states: np.ndarray, held_by: np.ndarray, sets_of_column: np.ndarray,
           position: np.ndarray, steps: int, seed: int) -> int:
    """``steps`` random (row, column) proposals, each moving the cell to its best value if that
    lowers the summed L1 residual and no cell it enters is ``CLOSED``; the number of cells moved.
    Proposals read the cells' ``states`` only; residuals and states are kept up to date."""
    np.random.seed(seed)
    rows, width = codes.shape
    base = np.empty(sets_of_column.shape[1], np.int64)
    step = np.empty(sets_of_column.shape[1], np.int64)
    moved = 0
    for _ in range(steps):
        i = np.random.randint(rows)
        c = np.random.randint(width)
        held = held_by[c]
        if held == 0:
            continue
        old = codes[i, c]
        leave = 0  # the change of the score from taking the row out of its cells
        for j in range(held):
            s = sets_of_column[c, j]
            cell = offsets[s]
            for q in range(columns.shape[1]):
                cell += codes[i, columns[s, q]] * strides[s, q]
            step[j] = strides[s, position[c, j]]
            base[j] = cell - old * step[j]
            leave += -1 if states[cell] & 3 == OVER else 1
            if leave - (held - 1 - j) >= 0:
                break  # leaving cannot lower the score even if every set left had too many rows
        if leave - (held - 1 - j) >= 0:
            continue
        best, best_value = 0, -1
        first = np.random.randint(sizes[c])
        for w in range(sizes[c]):
            value = (first + w) % sizes[c]
            if value == old:
                continue
            change = leave
            for j in range(held):
                state = states[base[j] + value * step[j]]
                if state & CLOSED:
                    change = held  # never into a cell the model gives no probability
                    break
                change += -1 if state == SHORT else 1
                if change - (held - 1 - j) >= best:
                    break  # even if every set left were short of rows, this value could not win
            if change < best:
                best, best_value = change, value
        if best_value >= 0:
            for j in range(held):
                for cell, change in ((base[j] + old * step[j], -1), (base[j] + best_value * step[j], 1)):
                    residuals[cell] += change
                    states[cell] = (states[cell] & CLOSED) + _side(residuals[cell])
            codes[i, c] = best_value
            moved += 1
    return moved


def match_marginals(codes: np.ndarray, model: Model, domain: Domain, rng: np.random.Generator,
                    progress: Progress = SILENT) -> np.ndarray:
    """``codes`` (rows × ``domain``'s columns) adjusted so that their marginals on the target sets
    follow ``model``'s (see the module docstring); a new array, the input is left alone.

    Steps run in rounds of rows × columns, at most ``MAX_ROUNDS``: the first round gains most. On
    the accuracy suite (aim, ε = 1, seeds 0–2; benchmarks/RESULTS.md, 2026-12-03 12:45) one round
    scored a geometric mean of 1.003 of three rounds' mean 3-way TVD on both halves (tuning 0.999–
    1.008, checking 1.000–1.005), and up to ten, still stopping at ``STOP_GAIN``, 1.000 and 0.999
    (no table below 0.998), for more time (adult_coded's whole run, one round against up to ten,
    side by side: 11.1 s against 15.8 s)."""
    matched = np.array(codes, dtype=np.int64, order="C")
    sets = target_sets(domain)
    if not sets or matched.shape[0] == 0:
        return matched
    if matched.shape[0] > MAX_ROWS:
        progress.message(f"note: {matched.shape[0]:,} rows are sampled rounded, not matched: matching is for tables "
                         f"of up to {MAX_ROWS:,} rows (above, it takes minutes and the noise it removes is small).")
        return matched
    exact = exact_is_cheaper(model, domain, sets, matched.shape[0])
    with (progress.counter("the model's marginals to match", len(sets)) if exact else
          progress.counter("a reference sample of the model", reference_rows(matched.shape[0], len(sets)))) as advance:
        targets = _Targets(matched, model, domain, sets, rng, exact, advance)
    sizes = np.asarray(domain.sizes, dtype=np.int64)
    score, left = targets.score(), MAX_STEPS
    with progress.counter("matching the model's marginals", MAX_ROUNDS) as advance:
        for done in range(1, MAX_ROUNDS + 1):
            steps = min(matched.size, left)
            _steps(matched, sizes, targets.columns, targets.strides, targets.offsets, targets.residuals,
                   targets.states, targets.held, targets.sets_of_column, targets.position, steps,
                   int(rng.integers(2**31)))
            before, score, left = score, targets.score(), left - steps
            advance(done)
            if before - score < STOP_GAIN * before or left == 0:
                break
    return matched


def sample_codes(model: Model, domain: Domain, n: int, rng: np.random.Generator,
                 sampling: Sampling = DEFAULT_SAMPLING, progress: Progress = SILENT) -> np.ndarray:
    """``n`` rows of codes of ``domain`` (the model's columns, in order) from ``model`` under
    ``sampling``: i.i.d. or rounded draws, or rounded draws matched to the model's marginals."""
    if sampling == "iid":
        return model.sample(n, rng, "iid")
    codes = model.sample(n, rng, "rounded")
    return codes if sampling == "rounded" else match_marginals(codes, model, domain, rng, progress)
