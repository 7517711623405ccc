"""The association heatmaps stay readable for wide tables: labels never overlap, keep their size as
columns are added, and the report shows wide heatmaps one per row at their own size."""

from __future__ import annotations

import base64
import itertools
import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from synth.evaluate import evaluate, report_html
from synth.pages.plotting import LABEL_POINTS, heatmap_figure

PAGE_PIXELS = 70 * 16  # the reports' widest content: 70em at the browsers' default 16 px


def _boxes(figure, labels):
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    return [label.get_window_extent(renderer) for label in labels]


@pytest.mark.parametrize("columns", [5, 15, 40, 100])
def test_heatmap_labels_never_overlap_and_keep_their_size(columns):
    names = [f"a fairly long column name {i}" for i in range(columns)]
    values = np.random.default_rng(columns).uniform(-1, 1, (columns, columns))
    figure = heatmap_figure(values, names, "r", -1.0, 1.0, "RdBu_r", "original")
    axes = figure.axes[0]
    for labels in (axes.get_xticklabels(), axes.get_yticklabels()):
        assert [label.get_fontsize() for label in labels] == [LABEL_POINTS] * columns
        boxes = _boxes(figure, labels)
        assert not any(a.overlaps(b) for a, b in itertools.pairwise(boxes))
    # a row of cells is taller than a label, so the figure grows with the columns instead
    row = _boxes(figure, [axes])[0].height / columns
    assert row > 1.2 * _boxes(figure, axes.get_yticklabels()[:1])[0].height


def _png_width(data_uri: str) -> int:
    png = base64.b64decode(data_uri.split(",", 1)[1])
    return int.from_bytes(png[16:20], "big")  # the IHDR chunk's width


@pytest.mark.parametrize("columns,side_by_side", [(5, True), (15, False)])
def test_report_shows_wide_association_heatmaps_one_per_row_at_their_own_size(columns, side_by_side):
    rng = np.random.default_rng(columns)
    base = rng.normal(size=400)
    table = pd.DataFrame({f"measurement {i:02d}": np.round(base * (i % 3) + rng.normal(size=400), 2)
                          for i in range(columns)})
    text = report_html(evaluate(table, table.sample(frac=1.0, random_state=1)))
    heatmaps = re.findall(r'<img class="association" alt="associations: \w+" src="([^"]+)">', text)
    assert len(heatmaps) == 3
    in_one_row = re.search(r'<div class="figures">(<img class="association"[^>]*>){3}</div>', text) is not None
    assert in_one_row == side_by_side
    if not side_by_side:  # each fits the page, so it is shown unscaled: labels at LABEL_POINTS
        assert all(_png_width(uri) <= PAGE_PIXELS for uri in heatmaps)
