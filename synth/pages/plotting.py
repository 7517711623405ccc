"""Drawing helpers shared by synth's report pictures: PNG output, short labels, a heatmap.

Figures are plain ``matplotlib.figure.Figure`` objects drawn with the Agg renderer (no pyplot: no
global backend, no state shared between calls). Nothing here reads data; callers pass numbers.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

DPI = 96
LABEL_CHARS = 32
ACCENT = "#3b6ea8"
SECOND = "#d9822b"  # the synthetic table next to ACCENT's original
ANNOTATE_UP_TO = 12  # heatmaps with at most this many columns print their values
LABEL_POINTS = 8  # a heatmap's column labels
MIN_CELL = 1.8 * LABEL_POINTS / 72  # inches: the least height of a heatmap's row of cells
HEATMAP_SHARE = 0.75  # about this share of a heatmap's height is cells (the rest: margins, colour bar)


def png(figure: Figure) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return buffer.getvalue()


def short(label: str) -> str:
    """``label`` cut to LABEL_CHARS characters (with an ellipsis)."""
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def heatmap_side(columns: int) -> float:
    """A heatmap's height in inches: 0.3 more per column up to 16, then as much as keeps each row of
    cells MIN_CELL high, so that no two labels overlap however many columns there are."""
    return max(min(3.0 + 0.3 * columns, 16.0), MIN_CELL * columns / HEATMAP_SHARE)


def heatmap_figure(values: np.ndarray, names: Sequence[str], label: str, vmin: float = 0.0, vmax: float = 1.0,
                   cmap: str = "Blues", title: str | None = None) -> Figure:
    """A square of coloured cells, one per pair of ``names`` (grey where the value is NaN)."""
    n = len(names)
    side = heatmap_side(n)
    figure = Figure(figsize=(side + 1.2, side))
    axes = figure.add_subplot()
    colours = colormaps[cmap].with_extremes(bad="#eeeeee")
    picture = axes.imshow(np.ma.masked_invalid(values), cmap=colours, vmin=vmin, vmax=vmax)
    labels = [short(name) for name in names]
    axes.set_xticks(range(n), labels, rotation=90, fontsize=LABEL_POINTS)
    axes.set_yticks(range(n), labels, fontsize=LABEL_POINTS)
    if n <= ANNOTATE_UP_TO:
        span = vmax - vmin
        for (i, j), value in np.ndenumerate(values):
            if np.isfinite(value):
                strong = abs(value - (vmin + vmax) / 2) > 0.3 * span if vmin < 0 else value > vmin + 0.6 * span
                axes.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                          color="white" if strong else "black")
    if title:
        axes.set_title(title, fontsize=10)
    figure.colorbar(picture, ax=axes, shrink=0.8, label=label)
    return figure


def heatmap(values: np.ndarray, names: Sequence[str], label: str, vmin: float = 0.0, vmax: float = 1.0,
            cmap: str = "Blues", title: str | None = None) -> bytes:
    """``heatmap_figure`` as PNG bytes."""
    return png(heatmap_figure(values, names, label, vmin, vmax, cmap, title))
