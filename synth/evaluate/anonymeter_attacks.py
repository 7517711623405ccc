"""Anonymeter's three attacks (singling out, linkability, inference) run on one synthetic table and summarised.

Anonymeter (Giomi et al., PETS 2023; the library a European data-protection authority reviewed)
measures each risk as the attacker's success on the training rows beyond its success on control
rows that were not used, (attack − control) / (1 − control), with a confidence interval; a naive
baseline attacker shows whether the attack is informative at all. The settings, stated in each
reading:

* singling out: multivariate predicates on ``SINGLING_OUT_COLUMNS`` columns built from synthetic
  rows, checked against every training row given and every control row (anonymeter corrects for the
  two sizes), at most ``ATTEMPTS_PER_ATTACK`` tries per attack;
* linkability: the columns in schema order dealt alternately into two groups, the attacker links
  a target's two halves through their nearest synthetic neighbours (one neighbour);
* inference: each secret column in turn (the evaluation's target, else up to ``SECRETS`` columns
  drawn at random) guessed from the others through the nearest synthetic row, successes pooled over
  the secrets into one risk (a numeric secret is right within anonymeter's relative tolerance).

Tables are handed over as anonymeter reads them: numbers and dates as floats (NaN when missing),
every other column as its category label (missing and other are labels). Reads original rows:
NOT differentially private, for the data owner.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.schema import Schema
from synth.errors import AttackError
from synth.evaluate.tables import Table

CONFIDENCE = 0.95
SINGLING_OUT_COLUMNS = 4
ATTEMPTS_PER_ATTACK = 50
SECRETS = 3
ATTACKS = ("singling_out", "linkability", "inference")


def check_anonymeter() -> None:
    """AttackError unless the anonymeter library (an optional dependency) can be imported."""
    try:
        import anonymeter  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise AttackError("the attacks need the anonymeter library, an optional dependency: pip install "
                          "'synth[attacks]' (or leave out --attacks).") from None


@dataclass(frozen=True)
class Risk:
    """One anonymeter attack on one table: the risk with its confidence interval and the three rates."""

    attack: str  # one of ATTACKS
    risk: float
    risk_ci: tuple[float, float]
    attack_rate: float
    baseline_rate: float
    control_rate: float
    n_attacks: int
    setting: str  # how it was run, for the reading

    @property
    def distinguishable(self) -> bool:
        """Whether the attack does better on training rows than on the control, beyond chance."""
        return self.risk_ci[0] > 0

    def reading(self) -> str:
        name = self.attack.replace("_", " ").capitalize()
        rates = (f"success {self.attack_rate:.1%} on training rows, {self.control_rate:.1%} on the control "
                 f"(naive baseline {self.baseline_rate:.1%})")
        verdict = ("an advantage over the control" if self.distinguishable else
                   "no advantage distinguishable from the control")
        return (f"{name} ({self.setting}): {rates}: {verdict}, risk {self.risk:.3f} "
                f"({CONFIDENCE:.0%} CI {self.risk_ci[0]:.3f} to {self.risk_ci[1]:.3f}).")

    def to_dict(self) -> dict[str, Any]:
        return {"risk": self.risk, "risk_ci": list(self.risk_ci), "attack_rate": self.attack_rate,
                "baseline_rate": self.baseline_rate, "control_rate": self.control_rate,
                "n_attacks": self.n_attacks, "reading": self.reading()}


def frame(table: Table, schema: Schema, rows: np.ndarray) -> pd.DataFrame:
    """``table``'s ``rows`` as anonymeter reads them: floats for numbers and dates, labels otherwise."""
    columns: dict[str, np.ndarray] = {}
    for j, column in enumerate(schema.columns):
        if j in table.values:
            columns[column.name] = table.values[j][rows]
        else:
            labels = np.array(column.labels(schema.other_label), dtype=object)
            columns[column.name] = labels[table.codes[rows, j]]
    return pd.DataFrame(columns)


def _risk(attack: str, results: Any, n_attacks: int, setting: str) -> Risk:
    """A Risk from anonymeter's ``EvaluationResults``."""
    risk = results.risk()
    control = results.control_rate
    return Risk(attack, float(risk.value), (float(risk.ci[0]), float(risk.ci[1])), float(results.attack_rate.value),
                float(results.baseline_rate.value), float("nan") if control is None else float(control.value),
                n_attacks, setting)


def singling_out(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame, n_attacks: int, seed: int) -> Risk:
    from anonymeter.evaluators import SinglingOutEvaluator  # type: ignore[import-untyped]

    n_cols = min(SINGLING_OUT_COLUMNS, ori.shape[1])
    evaluator = SinglingOutEvaluator(ori, syn, n_attacks=n_attacks, n_cols=n_cols, control=control,
                                     max_attempts=ATTEMPTS_PER_ATTACK * n_attacks, seed=seed)
    evaluator.evaluate(mode="multivariate")
    return _risk("singling_out", evaluator.results(CONFIDENCE), n_attacks,
                 f"predicates on {n_cols} columns, {n_attacks} attacks")


def linkability_groups(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The two column groups the linkability attacker holds: the columns dealt alternately."""
    return list(names[0::2]), list(names[1::2])


def linkability(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame, n_attacks: int) -> Risk:
    from anonymeter.evaluators import LinkabilityEvaluator

    groups = linkability_groups(list(ori.columns))
    evaluator = LinkabilityEvaluator(ori, syn, groups, n_attacks=n_attacks, n_neighbors=1, control=control)
    evaluator.evaluate(n_jobs=1)
    return _risk("linkability", evaluator.results(CONFIDENCE), n_attacks,
                 f"columns dealt alternately into two groups of {len(groups[0])} and {len(groups[1])}, "
                 f"{n_attacks} attacks")


def inference(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame, secrets: Sequence[str],
              numeric: set[str], n_attacks: int) -> Risk:
    """Each secret in turn, the other columns as what the attacker knows; successes pooled."""
    from anonymeter.evaluators import InferenceEvaluator
    from anonymeter.stats.confidence import EvaluationResults  # type: ignore[import-untyped]

    totals = np.zeros(6)  # attacks on ori, baseline, control; successes on ori, baseline, control
    for secret in secrets:
        aux = [c for c in ori.columns if c != secret]
        evaluator = InferenceEvaluator(ori, syn, aux, secret, regression=secret in numeric, n_attacks=n_attacks,
                                       control=control)
        results = evaluator.evaluate(n_jobs=1).results(CONFIDENCE)
        totals += [results.n_attacks_ori, results.n_attacks_baseline, results.n_attacks_control,
                   results.n_success, results.n_baseline, results.n_control]
    counts = [int(t) for t in totals]
    pooled = EvaluationResults((counts[0], counts[1], counts[2]), counts[3], counts[4], counts[5], CONFIDENCE)
    return _risk("inference", pooled, counts[0],
                 f"secret {', '.join(secrets)} in turn, the other columns known, {n_attacks} attacks each, pooled")


def run_anonymeter(ori: pd.DataFrame, syn: pd.DataFrame, control: pd.DataFrame, secrets: Sequence[str],
                   numeric: set[str], n_attacks: int, seed: int) -> dict[str, Risk | str]:
    """The three attacks on ``syn`` (training rows ``ori``, control rows ``control``); an attack that
    anonymeter cannot run on these tables gives the reason instead. Anonymeter's own warnings (an
    attack no better than its baseline, fewer queries found than asked) are silenced: the rates say it."""
    runs = {"singling_out": lambda: singling_out(ori, syn, control, n_attacks, seed),
            "linkability": lambda: linkability(ori, syn, control, n_attacks),
            "inference": lambda: inference(ori, syn, control, secrets, numeric, n_attacks)}
    out: dict[str, Risk | str] = {}
    logger = logging.getLogger("anonymeter")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        for name, attack in runs.items():
            np.random.seed(seed)  # anonymeter's linkability and inference targets come from numpy's global stream
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out[name] = attack()
                except (ValueError, RuntimeError, IndexError) as error:
                    out[name] = f"anonymeter could not run this attack on these tables: {error}"
    finally:
        logger.setLevel(level)
    return out
