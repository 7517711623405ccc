"""The scores the curator's noisy max selects by, each beside its sensitivity and its proof.

Inside the privacy boundary. A score is a frozen description of the candidates (public: names,
estimates, enumerated databases) with three things: ``query`` (the ledger's text), ``sensitivity``
under the relation in force, and ``values``, the candidates' scores computed from exact counts
that the curator hands it (``ExactMarginal``, never stored, never returned). Only the curator's
noisy max over the values (``Curator`` charges first, then draws) leaves the boundary.

``MarginalError``: the error of an estimate of each candidate marginal (AIM, MWEM).
One row changes ‖x_r − ·‖₁ by at most the histogram L1 sensitivity (a grouped marginal is a
histogram too), so the scores' sensitivity is that times max |weight|.

``SmallDatabaseError``: how badly a small database answers the workload (SmallDB). With x the
private rows (n of them), y a candidate of m rows and q a cell of a workload table,

    u(x, y) = −max_q |q(x) − n·q(y)/m|,

the largest error, in rows, of the candidate scaled to n rows. Sensitivity 1 under both
relations. Add/remove: adding a row r moves q(x) by q(r) ∈ {0, 1} and n·q(y)/m by
q(y)/m ∈ [0, 1], so each error moves by q(r) − q(y)/m ∈ [−1, 1], and so does the largest
absolute error (a maximum of 1-Lipschitz functions). Replace-one: n is fixed and q(x)
moves by −1, 0 or 1.

``Dependence``: PrivBayes's scores of (child X, parents Π) pairs, from exact counts.

``mi``: the count-scaled mutual information n·I(X; Π) = n·H(X) + n·H(Π) − n·H(X, Π) in nats.
For counts c_z of a variable Z over n rows, n·H(Z) = n log n − Σ_z c_z log c_z. Let
g(m) = (m+1) log(m+1) − m log m = log(m+1) + m log(1 + 1/m) (g(0) = 0): it increases with m and
g(m) < log(m+1) + 1. Adding one row to a table of n rows moves n to n+1 and, in each of X, Π and
(X, Π), one cell from c to c+1, so each entropy term changes by g(n) − g(c), a number in
[0, g(n)). The score changes by

    Δ = [g(n) − g(a)] + [g(n) − g(b)] − [g(n) − g(j)] = g(n) − g(a) + (g(j) − g(b)),

with a, b, j the counts of the new row's cells of X, Π and (X, Π) before it was added. As j ≤ a
and j ≤ b and g increases, Δ ≤ g(n) − g(a) ≤ g(n) and Δ ≥ g(j) − g(b) ≥ −g(n), so
|Δ| ≤ g(n) < log(n+1) + 1; a row with a new X value and a new Π value (a = b = j = 0) reaches
g(n) = log(n+1) + 1 − O(1/n), so the bound is tight. Under add/remove the row count is private,
so a public upper bound M = ``max_rows`` takes its place, and the scores of a table of more rows
are scaled to M rows: the score is s = min(1, M/n)·n·I, which is M·I(X; Π) when n > M. The
factor is the same for every candidate, so the order of the scores is kept and only the
selection's sharpness changes; nothing is refused and no decision reads n. The sensitivity
then holds for every n:

    Δ_s = log(M + 1) + 1 + L,   L = log min(|X|, |Π|),

with |X| and |Π| the numbers of values of the child and of the parents (on their groups: public,
from the domain), L the largest over the candidates. Adding a row to n rows: when n + 1 ≤ M
nothing is scaled and |Δ| < log(n + 1) + 1 ≤ log(M + 1) + 1. When n ≥ M both tables are scaled
and s moves by M·I(x') − M·I(x) = M/(n+1)·(Δ − I(x)), where Δ is n·I's change above
(|Δ| < log(n+1) + 1) and 0 ≤ I(x) ≤ min(H(X), H(Π)) ≤ L; as t ↦ (log t + 1 + L)/t decreases for
t ≥ 1, |M/(n+1)·(Δ − I(x))| < M (log(M+1) + 1 + L)/(M+1) < Δ_s. The L term is needed: when x₀
and π₀ each hold nearly half the rows but never together and the other rows pair values seen
once, I(x) − Δ exceeds log(n+1) + 1 (tests/test_no_exact_counts.py). Under replace-one a
replacement is a removal then an addition with n public, so the sensitivity is
min(1, M/n)·2 (log(n + 1) + 1): n·I's bound times the public factor.

``r``: the PrivBayes paper's score R (TODS 2017), count-scaled: n·R = ½ Σ_{x,π} |e(x, π)| with
e(x, π) = c(x, π) − c(x) c(π) / n, the L1 distance of the joint counts from the product of their
margins. Add a row at (x₀, π₀), with a = c(x₀) and b = c(π₀) before (n → n + 1), and write
S = (n − a)(n − b) / (n (n+1)). Cell by cell, e changes by: (x₀, π₀): 1 − ((a+1)(b+1)/(n+1) −
ab/n) = S; (x₀, π ≠ π₀): −c(π)(n − a)/(n (n+1)), whose absolute values sum to S; (x ≠ x₀, π₀):
likewise S in all; every other cell: c(x) c(π)/(n (n+1)), summing to S. So Σ|Δe| ≤ 4S, and as
S ≤ n/(n+1) < 1, |Δ(n·R)| < 2 under add/remove, whatever n: no bound on the row count is needed
(an empty table scores 0, and so does one row). The bound is tight: on a table whose columns
are independent (e = 0), a row of values not seen before moves n·R by 2n/(n+1).
Under replace-one (n fixed) two joint cells move by 1, and Σ|Δ(c(x) c(π))| ≤ 2n + 2n + 4, so
|Δ(n·R)| ≤ (2 + 4 + 4/n) / 2 = 3 + 2/n (the paper's 3/n + 2/n² scaled by n).

Parents measured on coarse codes (a public map of codes) are just other variables: both bounds
hold unchanged.

Units of several rows (``Neighbouring.rows_per_unit`` = k, add/remove only): adding a unit is k
additions of one row in turn, and each of the bounds above holds for a table of any row count, so
by the triangle inequality a unit moves a score by at most k times a row's bound (group
privacy). ``MarginalError`` gets it through the histogram's L1 sensitivity, the others multiply.

This module never reads rows itself, never draws noise and never charges: the curator does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from synth.columns.domain import Domain
from synth.privacy.measurement import table_cells
from synth.privacy.neighbours import Neighbouring

DEPENDENCE_SCORES = ("mi", "r")  # see the module docstring

ExactMarginal = Callable[[tuple[str, ...], Mapping[str, np.ndarray]], np.ndarray]
"""The curator's exact histogram over some columns, on the groups of the maps given (private)."""


class Score(Protocol):
    """Candidates scored from exact counts, with the sensitivity of the scores."""

    @property
    def query(self) -> str:
        """What the selection is, as the ledger records it."""

    def sensitivity(self, neighbouring: Neighbouring, rows: int) -> float:
        """The most one neighbouring change moves any score (``rows``: the private row count)."""

    def values(self, exact: ExactMarginal, rows: int) -> np.ndarray:
        """Each candidate's score (private: only a noisy max of them may leave)."""


@dataclass(frozen=True)
class MarginalError:
    """``weights[r] * (‖x_r − estimates[r]‖₁ − penalties[r])`` with x_r the exact marginal of
    ``candidates[r]`` on the groups of ``maps[r]`` (module docstring)."""

    candidates: Sequence[tuple[str, ...]]
    estimates: Sequence[np.ndarray]
    weights: np.ndarray
    penalties: np.ndarray
    maps: Sequence[Mapping[str, np.ndarray]]

    @property
    def query(self) -> str:
        return f"select the worst-estimated of {len(self.candidates)} marginals"

    def sensitivity(self, neighbouring: Neighbouring, rows: int) -> float:
        return float(np.max(np.abs(self.weights))) * neighbouring.histogram_l1

    def values(self, exact: ExactMarginal, rows: int) -> np.ndarray:
        w, b = self.weights, self.penalties
        return np.array([
            w[r] * (np.abs(exact(c, self.maps[r]) - np.ravel(self.estimates[r])).sum() - b[r])
            for r, c in enumerate(self.candidates)
        ])


@dataclass(frozen=True)
class SmallDatabaseError:
    """−max_q |q(x) − n·q(y)/m| for each small database y (the rows of ``databases``, cells of the
    full ``domain``) over the cells q of the workload ``tables`` (module docstring)."""

    databases: np.ndarray
    tables: Sequence[tuple[tuple[str, ...], Mapping[str, np.ndarray]]]
    domain: Domain

    CHUNK: ClassVar[int] = 4_000_000  # (candidate, cell) pairs scored at once

    @property
    def query(self) -> str:
        return f"select one of {self.databases.shape[0]} small databases of {self.databases.shape[1]} rows"

    def sensitivity(self, neighbouring: Neighbouring, rows: int) -> float:
        return float(neighbouring.rows_per_unit)

    def values(self, exact: ExactMarginal, rows: int) -> np.ndarray:
        databases, size = self.databases, self.databases.shape[1]
        every_cell = np.column_stack(np.unravel_index(np.arange(self.domain.size()), self.domain.sizes))  # public
        scores = np.zeros(databases.shape[0])
        for attrs, maps in self.tables:
            counts_of = exact(attrs, maps).astype(float)
            cell_of, _ = table_cells(every_cell, self.domain, attrs, maps)
            step = max(1, self.CHUNK // counts_of.size)
            for start in range(0, databases.shape[0], step):
                chunk = cell_of[databases[start:start + step]]
                offsets = np.arange(chunk.shape[0])[:, None] * counts_of.size
                counts = np.bincount((chunk + offsets).ravel(), minlength=chunk.shape[0] * counts_of.size)
                errors = np.abs(counts_of - counts.reshape(chunk.shape[0], counts_of.size) * (rows / size)).max(axis=1)
                np.minimum(scores[start:start + step], -errors, out=scores[start:start + step])
        return scores


@dataclass(frozen=True)
class Dependence:
    """n·I (``score = "mi"``, scaled to ``max_rows`` rows above it) or n·R (``"r"``) of each pair's
    child ``attrs[0]`` and parents ``attrs[1:]``, parents on the groups of ``maps`` where it maps
    them (module docstring)."""

    score: str
    pairs: Sequence[tuple[str, ...]]
    maps: Mapping[str, np.ndarray]
    max_rows: int
    domain: Domain

    @property
    def query(self) -> str:
        return f"select the most dependent ({self.score}) of {len(self.pairs)} (column, parents) pairs"

    def sensitivity(self, neighbouring: Neighbouring, rows: int) -> float:
        if self.score == "r":
            return 3 + 2 / max(rows, 1) if neighbouring.count_is_public else 2.0 * neighbouring.rows_per_unit
        if neighbouring.count_is_public:
            return self._factor(rows) * 2 * (math.log1p(rows) + 1)
        return neighbouring.rows_per_unit * (math.log1p(self.max_rows) + 1 + self._most_information())

    def values(self, exact: ExactMarginal, rows: int) -> np.ndarray:
        factor = self._factor(rows) if self.score == "mi" else 1.0
        return factor * np.array([self._scaled(attrs, exact) for attrs in self.pairs])

    def _factor(self, rows: int) -> float:
        """min(1, max_rows / rows): the mi scores of a larger table are scaled to max_rows rows."""
        return min(1.0, self.max_rows / rows) if rows else 1.0

    def _most_information(self) -> float:
        """L: the largest log min(|X|, |Π|) over the pairs, in nats (public: the domain and the maps)."""
        def values(attr: str) -> int:
            return int(self.maps[attr].max()) + 1 if attr in self.maps else self.domain.size((attr,))

        return max(math.log(min(values(attrs[0]), math.prod(values(a) for a in attrs[1:]))) for attrs in self.pairs)

    def _scaled(self, attrs: tuple[str, ...], exact: ExactMarginal) -> float:
        """n·I or n·R of attrs[0] and attrs[1:], from the exact counts (private)."""
        joint = exact(attrs, {a: self.maps[a] for a in attrs[1:] if a in self.maps}).astype(np.float64)
        joint = joint.reshape(self.domain.size(attrs[:1]), -1)
        n = float(joint.sum())
        child, parents = joint.sum(axis=1), joint.sum(axis=0)
        if self.score == "r":
            return 0.5 * float(np.abs(joint - np.outer(child, parents) / max(n, 1.0)).sum())
        return _sum_xlogx(joint) - _sum_xlogx(child) - _sum_xlogx(parents) + _sum_xlogx(np.array([n]))


def _sum_xlogx(counts: np.ndarray) -> float:
    positive = counts[counts > 0]
    return float(np.sum(positive * np.log(positive)))
