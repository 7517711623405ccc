"""Machine-learning utility: train on synthetic, test on real (TSTR) against train on real (TRTR).

The original's held-out rows are the test set of both. TRTR trains on the other original rows,
TSTR on the synthetic table; each side trains on at most ``MAX_TRAIN_ROWS`` sampled rows (the same
number on both sides when the synthetic table allows). A categorical or boolean target is a
classification task (accuracy, macro-averaged F1, and ROC AUC for two classes), a numeric or
datetime target a regression (R², mean absolute error). Two scikit-learn models are trained on each
side: a linear model (logistic or ridge regression on standardised numbers and one-hot categories)
and gradient-boosted trees (histogram-based, missing values and categories handled natively).
Rows whose target is missing are left out. Reads the original data: NOT differentially private.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, f1_score, mean_absolute_error, r2_score, roc_auc_score

from synth.errors import DataError
from synth.evaluate.features import fit_features, native
from synth.evaluate.tables import Split, Table, Tables, sample_rows

MAX_TRAIN_ROWS = 10_000
MAX_TREE_CATEGORIES = 255  # histogram trees take categorical columns with at most this many codes
CLASSIFICATION, REGRESSION = "classification", "regression"
LINEAR, TREES = "linear", "gradient-boosted trees"


@dataclass(frozen=True)
class ModelScores:
    """Test scores of one model trained on one table."""

    model: str
    trained_on: str  # "original" or "synthetic"
    metrics: dict[str, float | None]


@dataclass(frozen=True)
class Utility:
    """TSTR and TRTR scores for one target column."""

    target: str
    task: str
    train_rows: int  # on each side
    test_rows: int
    baseline: dict[str, float | None]  # a constant predictor's scores on the test rows
    scores: tuple[ModelScores, ...]
    notes: tuple[str, ...]

    def score(self, model: str, trained_on: str) -> dict[str, float | None]:
        return next(s.metrics for s in self.scores if s.model == model and s.trained_on == trained_on)

    def to_dict(self) -> dict[str, Any]:
        models: dict[str, dict[str, Any]] = {}
        for s in self.scores:
            models.setdefault(s.model, {})[s.trained_on] = s.metrics
        return {"target": self.target, "task": self.task, "train_rows": self.train_rows,
                "test_rows": self.test_rows, "baseline": self.baseline, "models": models,
                "notes": list(self.notes)}


def check_target(tables: Tables, target: str) -> None:
    """DataError if the target is not a column or takes a single value in the original."""
    if target not in tables.schema.names:
        raise DataError(f"the target column {target!r} is not a column of the tables; choose one of "
                        f"{list(tables.schema.names)}.")
    j = tables.schema.names.index(target)
    column = tables.schema.columns[j]
    if j in tables.original.values:
        values = tables.original.values[j]
        values = values[np.isfinite(values)]
        constant = values.size == 0 or np.ptp(values) == 0
    else:
        codes = tables.original.codes[:, j]
        constant = np.unique(codes[codes != column.missing_code]).size < 2
    if constant:
        raise DataError(f"the target column {target!r} has a single value (or none) in the original table, "
                        "so there is nothing to predict. Choose another --target.")


def _labelled(table: Table, rows: np.ndarray, j: int, missing_code: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows whose target is present, and their targets (codes, or values of numeric targets)."""
    if j in table.values:
        y = table.values[j][rows]
        keep = np.isfinite(y)
    else:
        y = table.codes[rows, j]
        keep = y != missing_code
    return rows[keep], y[keep]


def _models(task: str, tree_categories: np.ndarray, seed: int) -> dict[str, Any]:
    if task == CLASSIFICATION:
        return {LINEAR: LogisticRegression(max_iter=2000),
                TREES: HistGradientBoostingClassifier(categorical_features=tree_categories, random_state=seed)}
    return {LINEAR: Ridge(alpha=1.0),
            TREES: HistGradientBoostingRegressor(categorical_features=tree_categories, random_state=seed)}


def _classification_scores(y: np.ndarray, predicted: np.ndarray, positive_share: np.ndarray | None) -> dict[str, float | None]:
    return {"accuracy": float(accuracy_score(y, predicted)),
            "f1_macro": float(f1_score(y, predicted, average="macro")),
            "auc": None if positive_share is None or np.unique(y).size < 2 else float(roc_auc_score(y, positive_share))}


def _regression_scores(y: np.ndarray, predicted: np.ndarray) -> dict[str, float | None]:
    return {"r2": float(r2_score(y, predicted)), "mae": float(mean_absolute_error(y, predicted))}


def ml_utility(tables: Tables, split: Split, target: str, rng: np.random.Generator, seed: int = 0) -> Utility:
    """Scores of both models trained on the original's reference rows and on the synthetic table,
    tested on the original's held-out rows."""
    check_target(tables, target)
    schema = tables.schema
    j = schema.names.index(target)
    missing_code = schema.columns[j].missing_code
    task = REGRESSION if j in tables.original.values else CLASSIFICATION
    inputs = [p for p in range(len(schema.columns)) if p != j]
    test_rows, y_test = _labelled(tables.original, split.holdout, j, missing_code)
    real_rows, y_real = _labelled(tables.original, split.reference, j, missing_code)
    synth_rows, y_synth = _labelled(tables.synthetic, np.arange(tables.synthetic.rows), j, missing_code)
    if test_rows.size == 0 or real_rows.size == 0 or synth_rows.size == 0:
        raise DataError(f"the target column {target!r} is missing in every row of one of the tables (or of "
                        "the held-out rows); choose another --target.")
    size = min(MAX_TRAIN_ROWS, real_rows.size, synth_rows.size)
    train = {"original": sample_rows(np.arange(real_rows.size), size, rng),
             "synthetic": sample_rows(np.arange(synth_rows.size), size, rng)}
    sides = {"original": (tables.original, real_rows[train["original"]], y_real[train["original"]]),
             "synthetic": (tables.synthetic, synth_rows[train["synthetic"]], y_synth[train["synthetic"]])}
    notes = [f"Both sides train on {size:,} rows; tested on {test_rows.size:,} held-out original rows."]
    linear = fit_features(schema, tables.original, real_rows[train["original"]], inputs, "spread")
    x_tree_test, categorical = native(tables.original, test_rows, inputs)
    categorical &= np.array([schema.columns[p].size <= MAX_TREE_CATEGORIES for p in inputs])
    x_linear_test = linear.matrix(tables.original, test_rows)
    positive = None
    if task == CLASSIFICATION:
        classes, counts = np.unique(y_real, return_counts=True)
        if classes.size == 2:
            positive = classes[np.argmin(counts)]  # the rarer class of the original, e.g. ">50K"
        else:
            notes.append("ROC AUC is reported for two-class targets only.")
        majority = classes[np.argmax(counts)]
        baseline = _classification_scores(y_test, np.full(y_test.size, majority), None)
        baseline.pop("auc")
    else:
        baseline = _regression_scores(y_test, np.full(y_test.size, float(y_real.mean())))
    scores = []
    for side, (table, rows, y) in sides.items():
        x = {LINEAR: linear.matrix(table, rows), TREES: native(table, rows, inputs)[0]}
        x_test = {LINEAR: x_linear_test, TREES: x_tree_test}
        if task == CLASSIFICATION and np.unique(y).size < 2:
            notes.append(f"The {side} training rows hold a single class of {target!r}: every model "
                         "predicts it.")
            for name in (LINEAR, TREES):
                scores.append(ModelScores(name, side, _classification_scores(
                    y_test, np.full(y_test.size, y[0]), None if positive is None else np.full(y_test.size, float(y[0] == positive)))))
            continue
        for name, model in _models(task, categorical, seed).items():
            model.fit(x[name], y)
            predicted = model.predict(x_test[name])
            if task == REGRESSION:
                scores.append(ModelScores(name, side, _regression_scores(y_test, predicted)))
                continue
            share = None
            if positive is not None:
                column = np.flatnonzero(model.classes_ == positive)
                share = model.predict_proba(x_test[name])[:, column[0]] if column.size else np.zeros(y_test.size)
            scores.append(ModelScores(name, side, _classification_scores(y_test, predicted, share)))
    return Utility(target, task, size, int(test_rows.size), baseline,
                   tuple(scores), tuple(notes))
