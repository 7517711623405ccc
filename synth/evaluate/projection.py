"""A principal-component projection of both tables into one plane.

The components are fitted on a sample of original rows (numeric columns standardised, categorical
ones one-hot) and both tables' samples are projected with them, so the two point clouds share axes
and can be drawn on top of each other. Sample sizes are capped and reported. The points are rows of
the original data: NOT differentially private, for the data owner only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.decomposition import PCA

from synth.evaluate.features import fit_features
from synth.evaluate.tables import Tables, sample_rows

FIT_ROWS = 20_000
PLOT_ROWS = 3_000


@dataclass(frozen=True)
class Projection:
    """The first two principal components' coordinates of sampled rows of each table."""

    original: np.ndarray  # rows × 2
    synthetic: np.ndarray
    explained: tuple[float, float]  # share of the original's variance along each axis
    fit_rows: int

    def to_dict(self) -> dict[str, Any]:
        def cloud(points: np.ndarray) -> dict[str, Any]:
            return {"rows": int(points.shape[0]), "mean": points.mean(axis=0).tolist(),
                    "std": points.std(axis=0).tolist()}

        return {"explained_variance_ratio": list(self.explained), "fit_rows": self.fit_rows,
                "original": cloud(self.original), "synthetic": cloud(self.synthetic)}


def project(tables: Tables, rng: np.random.Generator) -> Projection:
    """PCA fitted on (a sample of) the original, both tables' samples projected."""
    fit_rows = sample_rows(tables.original.rows, FIT_ROWS, rng)
    features = fit_features(tables.schema, tables.original, fit_rows, range(len(tables.schema.columns)), "spread")
    x = features.matrix(tables.original, fit_rows)
    components = min(2, x.shape[1], x.shape[0])
    pca = PCA(n_components=components, random_state=0).fit(x)
    points = []
    for table in (tables.original, tables.synthetic):
        coordinates = pca.transform(features.matrix(table, sample_rows(table.rows, PLOT_ROWS, rng)))
        points.append(np.pad(coordinates, ((0, 0), (0, 2 - components))))
    explained = np.pad(pca.explained_variance_ratio_, (0, 2 - components))
    return Projection(points[0], points[1], (float(explained[0]), float(explained[1])), int(fit_rows.size))
