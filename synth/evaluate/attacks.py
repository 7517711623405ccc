"""Attacks measured on a release: which rows are attacked, against which tables, and what it all says.

The data owner gives the rows the release was made from (training rows, the members) and real rows
of the same population that were NOT given to it (the holdout: the control). The original may be
the whole file a holdout was set aside from (``synth run DATA --holdout 10%``): one of its rows
identical to each holdout row, on the columns attacked, is then left out of the training rows
(never every copy of a repeated row). Every attack
runs against three tables, so its numbers can be read:

* release: the synthetic table;
* bootstrap: as many training rows drawn with replacement, which leaks by construction (an attack
  that shows nothing here is too weak on this table to be evidence about the release);
* shuffled: each column of the training rows permuted on its own, marginals kept and rows unlinked.

The attacks are Anonymeter's three (``anonymeter_attacks``) and a distance-based membership
inference with the empirical ε lower bound it proves (``membership``); the verdict says in one
sentence whether any attack shows an advantage on the release distinguishable from the control,
and whether the measured leakage sits below the release's ε. Where the attacks need it, tables are
subsampled, and ``sampling`` says exactly how. Reads the original data: NOT differentially private,
for the data owner; nothing here may be written into a release.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synth.errors import AttackError
from synth.evaluate.anonymeter_attacks import ATTACKS, Risk, frame, run_anonymeter
from synth.evaluate.features import fit_features
from synth.evaluate.membership import ASSUMPTION, ATTACK, CONFIDENCE, MembershipResult, membership_attack
from synth.evaluate.privacy import ONE_HOT_WEIGHT
from synth.evaluate.tables import Table, Tables, sample_rows
from synth.progress import SILENT, Progress

NOTICE = "Attacks read the original data: not DP, for the data owner."
TABLES = ("release", "bootstrap", "shuffled")
N_ATTACKS = 500  # per anonymeter attack (and per secret of the inference attack)
SECRETS = 3  # inference secrets drawn when no target is given
MEMBERSHIP_TARGETS = 1_000  # members, and as many non-members
MEMBERSHIP_SYNTHETIC = 50_000  # rows of each synthetic table the membership distances read
MEMBERSHIP_REFERENCE = 50_000
ANONYMETER_ROWS = 20_000  # training rows, and as many control rows, anonymeter attacks
ANONYMETER_SYNTHETIC = 30_000
MIN_ROWS = 20  # of training rows and of holdout rows


def _partly_read(synthetic_rows: int, read: int) -> str:
    """The caveat when the attacks read only part of a large synthetic table, else nothing."""
    if read >= synthetic_rows:
        return ""
    return (f". The release has {synthetic_rows:,} rows and the attacks read at most {read:,} of them, so a training "
            f"row the release copied is among the rows read with a probability of about {read / synthetic_rows:.0%}: "
            "copies are under-reported in that proportion (the bootstrap's column shows by how much)")


@dataclass(frozen=True)
class Attacks:
    """Every attack on every table, and what was sampled to run them."""

    rows: dict[str, int]
    sampling: str
    release_epsilon: float | None
    anonymeter: dict[str, dict[str, Risk | str]]  # attack → table → result, or why it could not run
    membership: dict[str, MembershipResult]  # table → result
    seconds: float

    def flagged(self, table: str) -> list[str]:
        """The attacks that show an advantage over the control on ``table``."""
        out = [name.replace("_", " ") for name in ATTACKS
               if isinstance(r := self.anonymeter[name][table], Risk) and r.distinguishable]
        return out + ["membership"] * (self.membership[table].epsilon_lower_bound > 0)

    def verdict(self) -> str:
        """One plain sentence about the release."""
        flagged = self.flagged("release")
        head = ("No attack advantage distinguishable from the control" if not flagged else
                f"Attack advantage distinguishable from the control on the release: {', '.join(flagged)}")
        bound = self.membership["release"].epsilon_lower_bound
        leak = f"measured leakage (epsilon >= {bound:.2f} at {CONFIDENCE:.0%} confidence)"
        if self.release_epsilon is None:
            tail = f"; {leak}; no release epsilon to compare it with (give the Description)"
        elif bound < self.release_epsilon:
            tail = f"; {leak} is below the release's epsilon = {self.release_epsilon:g}"
        else:
            tail = (f"; {leak} EXCEEDS the release's epsilon = {self.release_epsilon:g}: either the guarantee does "
                    "not hold for these files, or ORIGINAL and HOLDOUT are not the rows given to and kept from it")
        weak = ("" if self.flagged("bootstrap") else
                ", but no attack shows an advantage on the bootstrap either, so they are too weak on this table "
                "to be evidence")
        return f"{head}{tail}{weak}."

    def to_dict(self) -> dict[str, Any]:
        def entry(result: Risk | MembershipResult | str) -> dict[str, Any]:
            return {"reading": result} if isinstance(result, str) else result.to_dict()

        return {"notice": NOTICE, "rows": self.rows, "sampling": self.sampling,
                "release_epsilon": self.release_epsilon, "tables": list(TABLES),
                "anonymeter": {name: {t: entry(self.anonymeter[name][t]) for t in TABLES} for name in ATTACKS},
                "membership": {"attack": f"{ATTACK[0].upper()}{ATTACK[1:]}; it assumes {ASSUMPTION}.",
                               **{t: entry(self.membership[t]) for t in TABLES}},
                "verdict": self.verdict(), "seconds": self.seconds}

    def lines(self) -> list[str]:
        """The console lines: the verdict, then the main numbers per attack and table."""
        out = [f"attacks (not DP, for the data owner): {self.verdict()}"]
        for name in ATTACKS:
            cells = []
            for t in TABLES:
                r = self.anonymeter[name][t]
                cells.append(f"{t} n/a" if isinstance(r, str) else
                             f"{t} {r.risk:.3f} [{r.risk_ci[0]:.3f}, {r.risk_ci[1]:.3f}]")
            out.append(f"  {name.replace('_', ' ')} risk: " + "; ".join(cells))
        out.append("  membership: " + "; ".join(f"{t} AUC {self.membership[t].auc:.3f}, epsilon >= "
                                                  f"{self.membership[t].epsilon_lower_bound:.2f}" for t in TABLES))
        return out


def _subset(table: Table, rows: np.ndarray) -> Table:
    return Table(np.asfortranarray(table.codes[rows]), {j: v[rows] for j, v in table.values.items()}, 1,
                 table.unlisted)


def _shuffled(table: Table, rng: np.random.Generator) -> Table:
    """Each column (its codes and values together) permuted on its own."""
    codes, values = np.empty_like(table.codes, order="F"), {}
    for j in range(table.codes.shape[1]):
        order = rng.permutation(table.rows)
        codes[:, j] = table.codes[order, j]
        if j in table.values:
            values[j] = table.values[j][order]
    return Table(codes, values, 1, table.unlisted)


def _row_keys(table: Table) -> np.ndarray:
    """A hash of each row's codes and values: equal rows, equal keys."""
    parts: dict[str, np.ndarray] = {f"c{j}": table.codes[:, j] for j in range(table.codes.shape[1])}
    parts.update({f"v{j}": v for j, v in table.values.items()})
    return pd.util.hash_pandas_object(pd.DataFrame(parts), index=False).to_numpy()


def training_rows(original: np.ndarray, holdout: np.ndarray) -> np.ndarray:
    """Positions of the training rows, from the row keys of the original and of the holdout. When the
    original holds every holdout row (the whole file a holdout was set aside from), one equal row is
    taken out per holdout row: as many copies as the holdout has, never every copy (rows repeat in
    small-domain tables; dropping all copies would leave only rare rows as members, which any attack
    tells from the control). Otherwise the original is the training rows, all of them."""
    held, keys = pd.Series(holdout).value_counts(), pd.Series(original)
    if (keys.value_counts().reindex(held.index, fill_value=0) < held).any():
        return np.arange(keys.size)
    copy = keys.groupby(keys).cumcount().to_numpy()  # 0 for a row's first copy, 1 for its second, ...
    return np.flatnonzero(copy >= keys.map(held).fillna(0).to_numpy())


def _check_sizes(training: int, holdout: int) -> None:
    if holdout < MIN_ROWS or training < MIN_ROWS:
        raise AttackError(f"the attacks need at least {MIN_ROWS} training rows and {MIN_ROWS} holdout rows (the "
                           "original's rows identical to a holdout row are not training rows): give a larger "
                           "holdout (`synth run DATA --holdout 10%` sets one aside) and the rows given to synth run.")


def _secrets(tables: Tables, target: str | None, rng: np.random.Generator) -> list[str]:
    names = list(tables.schema.names)
    if target is not None and target in names:
        return [target]
    return [names[i] for i in sorted(rng.choice(len(names), size=min(SECRETS, len(names)), replace=False))]


def run_attacks(tables: Tables, holdout: Table, release_epsilon: float | None = None, release_delta: float = 0.0,
                target: str | None = None, seed: int = 0, n_attacks: int = N_ATTACKS,
                progress: Progress = SILENT) -> Attacks:
    """Every attack on the release (``tables.synthetic``), a bootstrap and a shuffle of the training
    rows (``tables.original`` but one row equal to each ``holdout`` row), with ``holdout`` as the control."""
    start = time.perf_counter()
    rng = np.random.default_rng([seed, 34])
    schema, original = tables.schema, tables.original
    members = training_rows(_row_keys(original), _row_keys(holdout))
    _check_sizes(members.size, holdout.rows)
    training = _subset(original, members)
    synthetic = {"release": tables.synthetic, "bootstrap": _subset(training, rng.integers(0, training.rows, training.rows)),
                 "shuffled": _shuffled(training, rng)}

    progress.message("attacks: membership inference")
    m = min(MEMBERSHIP_TARGETS, holdout.rows // 2, training.rows)
    order = rng.permutation(holdout.rows)
    outsiders, reference = np.sort(order[:m]), np.sort(order[m:m + MEMBERSHIP_REFERENCE])
    insiders = np.sort(rng.choice(training.rows, size=m, replace=False))
    features = fit_features(schema, training, insiders, range(len(schema.columns)), "bounds", ONE_HOT_WEIGHT)
    x_in, x_out = features.matrix(training, insiders), features.matrix(holdout, outsiders)
    x_ref = features.matrix(holdout, reference)
    membership, syn_rows = {}, {}
    for name, table in progress.track(synthetic.items(), "membership inference", total=len(synthetic)):
        rows = sample_rows(table.rows, MEMBERSHIP_SYNTHETIC, rng)
        syn_rows[name] = rows.size
        membership[name] = membership_attack(x_in, x_out, features.matrix(table, rows), x_ref,
                                             np.random.default_rng([seed, 35]), release_delta)

    # as many training rows as control rows: anonymeter's correction for unequal sizes is biased (on
    # Adult, a fresh sample of the population showed a singling-out risk of 0.18 against 20,000 and 3,000 rows)
    size = min(ANONYMETER_ROWS, holdout.rows, training.rows)
    ori_rows, control_rows = sample_rows(training.rows, size, rng), sample_rows(holdout.rows, size, rng)
    n = min(n_attacks, size)
    ori, control = frame(training, schema, ori_rows), frame(holdout, schema, control_rows)
    numeric = {schema.columns[j].name for j in training.values}
    secrets = _secrets(tables, target, rng)
    results: dict[str, dict[str, Risk | str]] = {name: {} for name in ATTACKS}
    anonymeter_rows = 0
    for name, table in progress.track(synthetic.items(), "anonymeter attacks", total=len(synthetic)):
        rows = sample_rows(table.rows, ANONYMETER_SYNTHETIC, rng)
        anonymeter_rows = max(anonymeter_rows, rows.size)
        for attack, result in run_anonymeter(ori, frame(table, schema, rows), control, secrets, numeric, n,
                                             seed).items():
            results[attack][name] = result

    removed = original.rows - training.rows
    left_out = (f"{removed:,} rows of the original, one equal to each holdout row, were left out of the training rows"
                if removed else "the original does not hold every holdout row, so all its rows are training rows")
    sampling = (f"membership: {m:,} training and {m:,} holdout rows drawn at random as targets (a random half of "
                f"each chooses the threshold, the other half measures it), the other {reference.size:,} holdout rows "
                f"as the reference, against up to {max(syn_rows.values()):,} rows drawn from each synthetic table; "
                f"anonymeter: {n:,} attacks each, on {ori_rows.size:,} training rows with {control_rows.size:,} "
                f"holdout rows as the control and up to {anonymeter_rows:,} rows drawn from each synthetic table "
                f"(seed {seed}); {left_out}{_partly_read(tables.synthetic.total_rows, min(syn_rows.values()))}")
    rows_count = {"training": training.rows, "holdout": holdout.rows, "synthetic": tables.synthetic.total_rows,
                  "attacked": 2 * m}
    epsilon = None if release_epsilon is None or not math.isfinite(release_epsilon) else float(release_epsilon)
    return Attacks(rows_count, sampling, epsilon, results, membership, round(time.perf_counter() - start, 1))
