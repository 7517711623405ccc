"""The evaluation report's pictures, as PNG bytes: original (blue) against synthetic (orange).

Drawn with matplotlib's object API from numbers an ``Evaluation`` holds (through ``synth.pages.plotting``);
nothing here reads data. The pictures show statistics of the original data: NOT differentially
private.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from synth.evaluate.association import AssociationComparison
from synth.evaluate.evaluation import ColumnFidelity
from synth.evaluate.fidelity import MarginalErrors
from synth.evaluate.projection import Projection
from synth.evaluate.utility import Utility
from synth.pages.plotting import ACCENT, SECOND, heatmap, png, short

MAX_CATEGORIES = 20  # categories drawn per categorical column (the most common in the original)
TICKS = 8  # bin labels shown under a numeric column's histogram


def column_distribution(column: ColumnFidelity, numeric: bool) -> bytes:
    """The column's shares of rows per code in both tables, overlaid."""
    if numeric:
        figure = Figure(figsize=(6.4, 2.8))
        axes = figure.add_subplot()
        edges = np.arange(column.original.size + 1)
        axes.stairs(column.original, edges, fill=True, color=ACCENT, alpha=0.35, label="original")
        axes.stairs(column.synthetic, edges, color=SECOND, linewidth=1.6, label="synthetic")
        step = max(1, column.original.size // TICKS)
        ticks = np.arange(0, column.original.size, step)
        axes.set_xticks(ticks + 0.5, [short(column.labels[t]) for t in ticks], rotation=30, ha="right", fontsize=7)
        axes.set_ylabel("share of rows")
    else:
        shown = np.argsort(-column.original, kind="stable")[:MAX_CATEGORIES]
        figure = Figure(figsize=(6.4, 0.8 + 0.28 * shown.size))
        axes = figure.add_subplot()
        positions = np.arange(shown.size)
        axes.barh(positions - 0.2, column.original[shown], height=0.4, color=ACCENT, label="original")
        axes.barh(positions + 0.2, column.synthetic[shown], height=0.4, color=SECOND, label="synthetic")
        axes.set_yticks(positions, [short(column.labels[c]) for c in shown], fontsize=8)
        axes.invert_yaxis()
        axes.set_xlabel("share of rows")
    axes.legend(fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    return png(figure)


def association_heatmaps(comparison: AssociationComparison) -> list[bytes]:
    """Heatmaps of the original's, the synthetic's associations and their difference."""
    label = "Pearson r / Cramér's V / η"
    return [heatmap(comparison.original.main, comparison.names, label, -1.0, 1.0, "RdBu_r", "original"),
            heatmap(comparison.synthetic.main, comparison.names, label, -1.0, 1.0, "RdBu_r", "synthetic"),
            heatmap(comparison.difference, comparison.names, "synthetic − original", -1.0, 1.0, "PuOr_r",
                    "difference")]


def marginal_errors(marginals: Sequence[MarginalErrors]) -> bytes:
    """Histograms of the TVDs of the scored k-way marginals, one per k."""
    figure = Figure(figsize=(6.4, 3.0))
    axes = figure.add_subplot()
    top = max(float(m.tvds.max()) for m in marginals)
    bins = np.linspace(0.0, max(top, 1e-3) * 1.05, 30).tolist()
    for m, colour in zip(marginals, (ACCENT, SECOND, "#4a9a4a")):
        axes.hist(m.tvds, bins=bins, histtype="step", linewidth=1.6, color=colour,
                  weights=np.full(m.tvds.size, 1.0 / m.tvds.size), label=f"{m.k}-way ({m.tvds.size})")
    axes.set_xlabel("total-variation distance of a marginal")
    axes.set_ylabel("share of marginals")
    axes.legend(fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    return png(figure)


def pca_scatter(projection: Projection) -> bytes:
    """Both tables' sampled rows on the first two principal components of the original."""
    figure = Figure(figsize=(6.4, 5.0))
    axes = figure.add_subplot()
    axes.scatter(projection.original[:, 0], projection.original[:, 1], s=4, alpha=0.35, color=ACCENT,
                 label=f"original ({projection.original.shape[0]:,} rows)")
    axes.scatter(projection.synthetic[:, 0], projection.synthetic[:, 1], s=4, alpha=0.35, color=SECOND,
                 label=f"synthetic ({projection.synthetic.shape[0]:,} rows)")
    axes.set_xlabel(f"PC 1 ({projection.explained[0]:.0%} of the original's variance)")
    axes.set_ylabel(f"PC 2 ({projection.explained[1]:.0%})")
    axes.legend(fontsize=8, markerscale=3, frameon=False)
    return png(figure)


def utility_bars(utility: Utility) -> bytes:
    """Each model's test scores trained on the original and on the synthetic table."""
    metrics = [m for m in next(iter(utility.scores)).metrics if m != "mae"]
    models = list(dict.fromkeys(s.model for s in utility.scores))
    groups = [(model, metric) for model in models for metric in metrics]
    figure = Figure(figsize=(1.0 + 1.1 * len(groups), 3.4))
    axes = figure.add_subplot()
    positions = np.arange(len(groups))
    for offset, side, colour in ((-0.2, "original", ACCENT), (0.2, "synthetic", SECOND)):
        values = [utility.score(model, side)[metric] for model, metric in groups]
        axes.bar(positions + offset, [np.nan if v is None else v for v in values], width=0.4, color=colour,
                 label=f"trained on {side}")
    axes.set_xticks(positions, [f"{model.replace('gradient-boosted ', '')}\n{metric}" for model, metric in groups],
                    fontsize=8)
    axes.set_ylabel("score on held-out original rows")
    axes.set_ylim(min(0.0, axes.get_ylim()[0]), 1.15)
    axes.legend(fontsize=8, frameon=False, loc="upper center", ncol=2)
    axes.spines[["top", "right"]].set_visible(False)
    return png(figure)


def histogram(samples: dict[str, np.ndarray], xlabel: str) -> bytes:
    """Overlaid histograms (as shares) of one or two samples, keyed by their legend labels."""
    figure = Figure(figsize=(6.4, 3.0))
    axes = figure.add_subplot()
    top = max(float(v.max()) for v in samples.values())
    bins = np.linspace(0.0, max(top, 1e-6) * 1.02, 40).tolist()
    for (label, values), colour in zip(samples.items(), (SECOND, ACCENT)):
        axes.hist(values, bins=bins, histtype="stepfilled", alpha=0.45, color=colour,
                  weights=np.full(values.size, 1.0 / values.size), label=label)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("share")
    axes.legend(fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    return png(figure)
