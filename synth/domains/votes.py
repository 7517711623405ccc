"""A column's kind and how its values are written, voted under DP from what its cells read as.

Inside the privacy boundary (it reads private cells, for ``synth.domains.discovery``): each vote releases
one noisy, charged histogram of what the cells read as (``vote_kind``: missing, a boolean word,
an integer, a non-integral number, a date or other text) or of how they are written
(``vote_shape``: decimals, boolean words, date only or with a time, day order), and every
decision it makes must clear the noise by a margin, so one person's odd cell cannot flip it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from synth.columns.cells import (
    CELL_CLASSES,
    SHAPE_CELLS,
    classify_cells,
    classify_shapes,
    shape_from_counts,
    weighted_bincount,
)
from synth.columns.kinds import Kind
from synth.columns.textshape import TextShape
from synth.privacy.curator import CountRelease

VOTE_MARGIN = 3.0  # the winning kind's noisy count must clear this many noise deviations
LEAD_MARGIN = 2.0  # ... and lead the runner-up by this many deviations of the difference
FLOAT_MARGIN = 4.0  # numbers are float, and have d decimals, only when that count clears this many deviations
KIND_SHARE = 0.95  # the kind that wins must hold this share of a column's present cells (noisy), else text
PRESENT_MARGIN = 3.5  # ... or one kind's cells this many of theirs, for a column with missing cells to have values


@dataclass(frozen=True)
class Vote:
    """A column's kind, the noisy count of its cells of that kind (None: not voted), whether its
    missing cells stood clear of the noise (a column not voted keeps its missing code), the
    noisy count of all its cells that are not missing, with that count's noise deviation, and
    the noise deviation of ``cells``. A column voted text because its numbers or dates hold too
    small a share of its cells (``KIND_SHARE``) is ``mixed``: it has the kind they read as, and
    ``mixed_cells`` (with ``mixed_std``) counts them, for reading it as that kind after all when
    its values prove too many to list (``synth.domains.discovery``)."""

    kind: Kind
    cells: float | None = None
    missing: bool = True
    present: float | None = None
    present_std: float = 0.0
    cells_std: float = 0.0
    mixed: Kind | None = None
    mixed_cells: float = 0.0
    mixed_std: float = 0.0

    def as_mixed_kind(self) -> Vote:
        """The vote for reading a mixed column as the kind its numbers or dates read as: those cells
        are its cells, and the rest are written as missing (so it keeps a missing code)."""
        assert self.mixed is not None
        return replace(self, kind=self.mixed, cells=self.mixed_cells, cells_std=self.mixed_std, missing=True,
                       mixed=None)


def vote_kind(name: str, series: pd.Series, counts: CountRelease, budget: float,
              missing_markers: Sequence[str] = ("",), notes: list[str] | None = None,
              weights: np.ndarray | None = None) -> Vote:
    """The kind of a column, from a noisy count of what its cells read as, with the noisy count
    of its cells of that kind (``Vote``).

    Each cell is classed as missing, a boolean word, an integer, a non-integral number, a date or
    other text (``classify_cells``), and the 6-cell histogram is released with noise. Deciding
    from exact counts would let one person's odd cell flip the kind. Every decision must clear the
    noise:

    * the column gets a missing code only when its noisy count of missing cells clears
      ``VOTE_MARGIN`` deviations (a column with no missing cells then has none with probability
      about 1 − 1e-3, so synthetic rows hold no empty cells the original never had);
    * a column whose missing cells clear that margin while its present cells do not is all missing,
      up to noise: it is voted ``text`` (left out of the model and written empty,
      ``synth.columns.unmodelled``), so a column of blanks neither needs a domain nor blocks the
      release, and one with a few present cells is treated alike. Its present cells clear the
      noise when their noisy count over all five classes clears ``VOTE_MARGIN`` deviations, or
      the count of one kind (numbers: integers and non-integral ones together) clears
      ``PRESENT_MARGIN`` deviations of its own: a column's values are mostly of one kind, and the
      sum over five classes carries the noise of the four empty ones too. With the sum alone, a
      column of 2,000 cells with 959 numbers (acs12's hours worked, at the budget of one column of
      fourteen at ε = 1) was written empty in 54 of 400 seeded votes; a column of blanks shows
      values by noise with probability about 2e-3 either way (1.3e-3 for the sum, 2.3e-4 for each
      of four kinds);
    * the winning class (numbers: integers and non-integral ones together) must clear
      ``VOTE_MARGIN`` deviations of its noise and lead the runner-up by ``LEAD_MARGIN`` deviations
      of the difference's noise; when it does not (too few rows for this budget, or a close split
      between kinds), the column is taken as text and a note says so;
    * numbers are float only when the non-integral count alone clears ``FLOAT_MARGIN`` deviations
      (they are then certainly there, however few: 1 % of a large column is enough); otherwise
      integer, so a whole-number column becomes float by noise alone with probability about 3e-5
      (stray decimals are rounded, and counted on the console);
    * booleans, numbers or dates that win must also hold ``KIND_SHARE`` of the present cells, as a
      drafted profile asks all of them to (``synth.columns.cells.infer_kinds``): when the other
      present cells surely (by ``VOTE_MARGIN`` deviations of their noisy count) hold more than
      1 − ``KIND_SHARE`` of them, the column is text (numbers or dates: ``mixed``, ``Vote``). A
      survey answer such as "0", "1-2", "5+" or "did not drive" then keeps every answer as a
      category instead of losing its words to the missing code, and so does "yes", "no", "don't
      know"; discovery reads a mixed column as numbers (or dates) after all when its values are too
      many to list.
    """
    classes = classify_cells(series, missing_markers)
    exact = weighted_bincount(classes + 1, weights, len(CELL_CLASSES) + 1)  # cell 0: missing
    released = counts.release(exact, budget, query=f"kind({name}): what the cells read as, or missing")
    missing = bool(released.values[0] >= VOTE_MARGIN * released.std)
    noisy = released.values[1:].astype(float)
    std = released.std
    found, found_std = float(noisy.sum()), std * math.sqrt(len(noisy))  # the present cells
    index = {kind: CELL_CLASSES.index(kind) for kind in CELL_CLASSES}
    votes = {Kind.BOOLEAN: [index[Kind.BOOLEAN]], Kind.INTEGER: [index[Kind.INTEGER], index[Kind.FLOAT]],
             Kind.DATETIME: [index[Kind.DATETIME]], Kind.CATEGORICAL: [index[Kind.CATEGORICAL]]}
    total = {kind: float(noisy[cells].sum()) for kind, cells in votes.items()}
    one_kind_shows = any(total[kind] >= PRESENT_MARGIN * std * math.sqrt(len(cells)) for kind, cells in votes.items())
    if missing and found < VOTE_MARGIN * found_std and not one_kind_shows:  # all missing, up to noise
        return Vote(Kind.TEXT, found, missing, found, found_std, cells_std=found_std)
    first, second = sorted(total, key=lambda k: (total[k], k == Kind.CATEGORICAL), reverse=True)[:2]
    lead = total[first] - max(total[second], 0.0)
    if (total[first] < VOTE_MARGIN * std * math.sqrt(len(votes[first]))
            or lead < LEAD_MARGIN * std * math.sqrt(len(votes[first]) + len(votes[second]))):
        if notes is not None:
            notes.append(f"column {name!r}: what its cells read as does not stand clear of the noise (too few "
                         "rows for this budget, or a mix of kinds); treated as text. Give its kind in a profile.")
        return Vote(Kind.CATEGORICAL, float(noisy[index[Kind.CATEGORICAL]]), missing, found, found_std, cells_std=std)
    cells_std = std * math.sqrt(len(votes[first]))
    voted = Kind.FLOAT if first == Kind.INTEGER and noisy[index[Kind.FLOAT]] >= FLOAT_MARGIN * std else first
    others, others_std = found - total[first], std * math.sqrt(len(noisy) - len(votes[first]))
    if first != Kind.CATEGORICAL and others - VOTE_MARGIN * others_std >= (1 - KIND_SHARE) * found:
        mixed = None if first == Kind.BOOLEAN else voted  # yes/no and a few other words: a short list anyway
        if notes is not None:
            notes.append(f"column {name!r}: about {total[first] / found:.0%} of its cells read as {voted.value} "
                         f"values, the rest as text (noisy counts); read as categories (its {voted.value} values "
                         "among them)" + (" unless it has too many values to list" if mixed else "")
                         + ". Give its kind in a profile to decide otherwise.")
        return Vote(Kind.CATEGORICAL, found, missing, found, found_std, cells_std=found_std, mixed=mixed,
                    mixed_cells=total[first], mixed_std=cells_std)
    return Vote(voted, total[first], missing, found, found_std, cells_std=cells_std)


def vote_shape(name: str, series: pd.Series, kind: Kind, counts: CountRelease, budget: float,
               missing_markers: Sequence[str] = ("",), weights: np.ndarray | None = None) -> TextShape:
    """How a boolean, float or datetime column's values are written (``TextShape``), from a noisy
    histogram of its cells' shapes (``classify_shapes``: one cell per row, so a histogram's
    sensitivity). Each choice must clear the noise, else a public default stands
    (``shape_from_counts``):

    * boolean: the spelling with the largest noisy count (true/false, yes/no, in lower, title or
      upper case), when it clears ``VOTE_MARGIN`` deviations; else True/False;
    * float: the most decimals whose noisy count clears ``FLOAT_MARGIN`` deviations (so a few odd
      cells with long decimals do not set it; more than ``MAX_DECIMALS``, a float written in full:
      that many), else the default rule of ``synth.columns.textshape``. Never more than the input shows,
      up to noise: each of the 13 cells above a column's decimals is an empty count that would
      clear 3 deviations in about 1 vote of 700, 4 in about 1 of 30,000;
    * datetime: date only unless the cells with a time of day clear ``VOTE_MARGIN`` deviations of
      their sum; day first when the numeric dates readable only day first (23/02/2023) clear the
      margin and lead those readable only month first (02/23/2023) by ``LEAD_MARGIN`` deviations.
    """
    shapes = classify_shapes(series, kind, missing_markers)
    mine = shapes >= 0
    exact = weighted_bincount(shapes[mine], None if weights is None else weights[mine], SHAPE_CELLS[kind])
    released = counts.release(exact, budget, query=f"shape({name}): how its values are written")
    margin = FLOAT_MARGIN if kind == Kind.FLOAT else VOTE_MARGIN
    return shape_from_counts(kind, released.values.astype(float), released.std, margin, LEAD_MARGIN)
