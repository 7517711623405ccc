"""Privacy diagnostics: does the synthetic table sit closer to the original rows than new rows would?

These are DIAGNOSTICS, not the guarantee: the guarantee of a synthetic table is the differential
privacy of its release, stated in its Description. A good score here does not prove privacy and a
DP release can still reproduce common rows by chance. Each diagnostic compares the synthetic table
with a baseline: rows held out from the original (``Split.holdout``), which are new rows from the
same population, measured against the other original rows (``Split.reference``):

* exact matches: the share of rows whose codes (the evaluation's discretisation) equal those of
  some reference row, for the synthetic table and for the held-out rows;
* distance to the closest record (DCR): for up to ``DCR_QUERIES`` synthetic and held-out rows, the
  Euclidean distance to the nearest of up to ``DCR_REFERENCE`` sampled reference rows, with numeric
  columns scaled to [0, 1] by the schema's bounds and a categorical mismatch counting 1;
* rare combinations: cells of sampled k-way marginals (k = 3, or fewer columns) held by 1 to
  ``RARE_MAX_ROWS`` reference rows; the share of them present in an equal-sized sample of the
  synthetic table and in the held-out rows.

Synthetic tables are often made from the whole original, held-out rows included; the baseline then
slightly favours the synthetic side. Reads the original data: NOT differentially private.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import pairwise_distances_argmin_min

from synth.columns.mixing import mix64
from synth.evaluate.counted import Counts
from synth.evaluate.features import fit_features
from synth.evaluate.fidelity import choose_marginals, count_cells, table_counts
from synth.evaluate.tables import Split, Tables, sample_rows

DCR_QUERIES = 2_000
DCR_REFERENCE = 10_000
RARE_MAX_ROWS = 5
RARE_MARGINALS = 100
ONE_HOT_WEIGHT = math.sqrt(0.5)  # two differing one-hot entries add 2 × 0.5 = 1 to the squared distance


@dataclass(frozen=True)
class PrivacyDiagnostics:
    """Synthetic table against held-out original rows, each measured against the reference rows."""

    exact_match: dict[str, float]  # "synthetic", "holdout": share of rows equal to a reference row
    dcr: dict[str, np.ndarray]  # distances to the closest reference row
    dcr_reference_rows: int
    rare_cells: int  # rare cells of the reference over the sampled marginals
    rare_reproduced: dict[str, float]  # share of rare cells present in each sample
    rare_marginals: int
    rare_sample_rows: int
    holdout_rows: int
    reference_rows: int

    def to_dict(self) -> dict[str, Any]:
        def summary(d: np.ndarray) -> dict[str, float | int]:
            return {"rows": int(d.size), "median": float(np.median(d)), "p05": float(np.quantile(d, 0.05)),
                    "mean": float(d.mean()), "share_zero": float(np.mean(d == 0))}

        return {"notice": "Diagnostics, not the privacy guarantee: the guarantee is the release's "
                          "differential privacy, stated in its Description.",
                "reference_rows": self.reference_rows, "holdout_rows": self.holdout_rows,
                "exact_match_rate": self.exact_match,
                "distance_to_closest_record": {"reference_sample_rows": self.dcr_reference_rows,
                                               **{k: summary(v) for k, v in self.dcr.items()}},
                "rare_combinations": {"max_reference_rows": RARE_MAX_ROWS, "marginals": self.rare_marginals,
                                      "rare_cells": self.rare_cells, "sample_rows": self.rare_sample_rows,
                                      "reproduced_share": self.rare_reproduced}}


def _row_hashes(codes: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each code row: the columns folded in one at a time, each fold mixed by
    splitmix64's finaliser. Holds a few arrays of one 64-bit word per row (a counted table's millions
    of distinct rows cost hundreds of MiB more through a DataFrame)."""
    hashes = np.zeros(codes.shape[0], dtype=np.uint64)
    for j in range(codes.shape[1]):
        hashes += codes[:, j].astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        mix64(hashes)
    return hashes


def _nearest(reference: np.ndarray, queries: np.ndarray) -> np.ndarray:
    return pairwise_distances_argmin_min(queries, reference)[1]


def _share(hashes: np.ndarray, weights: np.ndarray | None, within: np.ndarray) -> float:
    """The share of rows (code-row hashes, each ``weights[i]`` rows when given) whose hash is ``within``."""
    found = np.isin(hashes, within)
    return float(found.mean()) if weights is None else float(weights[found].sum()) / float(weights.sum())


def _reference_hashes(original: Counts, holdout: np.ndarray) -> np.ndarray:
    """The hashes of the code rows held by some reference row: every original row but the held-out ones."""
    every, held = _row_hashes(original.codes), _row_hashes(holdout)
    distinct, inverse = np.unique(np.concatenate([every, held]), return_inverse=True)
    rows = count_cells(inverse[:every.size], original.weights, distinct.size)
    return distinct[rows - np.bincount(inverse[every.size:], minlength=distinct.size) > 0]


def privacy_diagnostics(tables: Tables, split: Split, rng: np.random.Generator) -> PrivacyDiagnostics:
    """Exact matches, distances to the closest record and rare-combination reproduction. The held-out
    rows are of the rows ``tables.original`` holds; the reference is every other original row, so exact
    matches and the rare cells count every row (``Table.counted``), sampled or not."""
    schema, original, synthetic = tables.schema, tables.original, tables.synthetic
    holdout_codes = original.codes[split.holdout]
    counted = original.counted
    reference_hashes = _reference_hashes(counted, holdout_codes)
    exact = {"synthetic": _share(_row_hashes(synthetic.counted.codes), synthetic.counted.weights, reference_hashes),
             "holdout": _share(_row_hashes(holdout_codes), None, reference_hashes)}

    columns = range(len(schema.columns))
    reference = sample_rows(split.reference, DCR_REFERENCE, rng)
    features = fit_features(schema, original, reference, columns, "bounds", ONE_HOT_WEIGHT)
    reference_x = features.matrix(original, reference)
    queries = min(DCR_QUERIES, split.holdout.size, synthetic.rows)
    dcr = {"synthetic": _nearest(reference_x, features.matrix(synthetic, sample_rows(synthetic.rows, queries, rng))),
           "holdout": _nearest(reference_x, features.matrix(original, sample_rows(split.holdout, queries, rng)))}

    k = min(3, len(schema.columns))
    marginals = choose_marginals(len(schema.columns), k, rng, RARE_MARGINALS)
    sample = min(split.holdout.size, synthetic.rows)
    samples = {"synthetic": synthetic.codes[sample_rows(synthetic.rows, sample, rng)],
               "holdout": original.codes[sample_rows(split.holdout, sample, rng)]}
    rare_total = 0
    present = {"synthetic": 0, "holdout": 0}
    for positions in marginals:
        every, held, *found = table_counts([counted.codes, holdout_codes, *samples.values()], schema.sizes, positions,
                                           [counted.weights, None, *(None for _ in samples)])
        counts = every - held  # the reference rows'
        rare = (counts >= 1) & (counts <= RARE_MAX_ROWS)
        rare_total += int(rare.sum())
        for which, sample_counts in zip(samples, found):
            present[which] += int((rare & (sample_counts > 0)).sum())
    reproduced = {which: (count / rare_total if rare_total else 0.0) for which, count in present.items()}
    return PrivacyDiagnostics(exact, dcr, int(reference.size), rare_total, reproduced, len(marginals), sample,
                              int(split.holdout.size), counted.rows - int(split.holdout.size))
