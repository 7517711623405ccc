"""The release card's plain-language texts: the guarantee for one person, each ledger entry's purpose,
and a one-line reading of each number an evaluation holds.

Pure functions of what they are given (the release's public facts, an evaluation's numbers); they
read no file and never the private data, and they never round a number into a claim it does not
support (a reading states what a value means, never that a release is safe).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from synth.release.description import LedgerEntry

DISCOVERY = ("kind(", "distinct(", "categories(", "categories, second pass(", "bounds(", "shape(", "left over(",
             "feasibility:")
PURPOSES = {  # purpose -> what it paid for, for a reader who is not a statistician
    "profile draft": "the profile drafted under DP before the release: each column's kind, domain and written shape",
    "discovery": "finding each column's kind, domain (categories, ranges) and written shape under DP, where no "
                 "public profile gave them",
    "bounding": "bounding each person's rows: how many rows of a child table one person may hold (noisy histograms "
                "and counts of the rows per person)",
    "selection": "choosing which statistics to measure (the exponential mechanism picks, it releases no count)",
    "measurement": "the noisy counts the synthetic data is built from (marginals: counts of value combinations)",
}


def purpose(entry: LedgerEntry, drafted: range) -> str:
    """What a ledger entry paid for: a key of ``PURPOSES``, else "other: QUERY" (its query's head)."""
    if entry.index in drafted:
        return "profile draft"
    if entry.mechanism == "exponential":
        return "selection"
    if entry.query.startswith(DISCOVERY):
        return "discovery"
    if entry.query.startswith("histogram of ") or (entry.query.startswith("count of ") and " rows with more than " in entry.query):
        return "bounding"
    if entry.query.startswith(("marginal(", "count(")):
        return "measurement"
    return f"other: {entry.query.split('(')[0].split(':')[0].strip()}"


def discovered_columns(ledger: Sequence[LedgerEntry]) -> list[str]:
    """The columns discovery queried (in ledger order, once each): read from the entries' queries."""
    found: dict[str, None] = {}
    for entry in ledger:
        head = next((h for h in DISCOVERY if h.endswith("(") and entry.query.startswith(h)), None)
        if head is not None:
            rest = entry.query[len(head):]
            found[rest.split("): ", 1)[0] if "): " in rest else rest.rstrip(")")] = None
    return list(found)


def times(epsilon: float) -> str:
    """e^ε as a plain factor ("2.72"), or "more than a million" for a large ε."""
    return f"{math.exp(epsilon):.3g}" if epsilon <= math.log(1e6) else "more than a million"


def person_sentence(epsilon: float, delta: float, relational: bool) -> str:
    """What (ε, δ) means for one person, in one sentence."""
    whose = "their row and every row that refers to it were" if relational else "their row was"
    chance = (f", except with a probability of at most δ = {delta:.3g}" if delta > 0
              else "; δ = 0: the bound holds always")
    return (f"Whatever anyone concludes about a person from these files, that conclusion is at most e^ε = "
            f"e^{epsilon:.3g} ≈ {times(epsilon)} times more likely (or less likely) whether or not {whose} used to "
            f"make the release{chance}. It holds whatever else the reader knows, and no later analysis of the files "
            "can weaken it.")


def neighbouring_sentence(neighbouring: str) -> str:
    if neighbouring == "replace":
        return ("replace: the two datasets compared differ in one unit's values, the number of units being the same. "
                "The exact number of rows is therefore published as part of the release.")
    return ("add-remove: the two datasets compared differ by one unit, present in one and absent from the other. "
            "The number of rows is protected like everything else (synth publishes only a noisy estimate).")


def unit_sentence(unit: str | None) -> str:
    """The privacy unit: a relational release's own statement, else one row."""
    if unit:
        return f"one person: {unit}."
    return ("one row of the table. When each person has one row, that is one person; a person with k rows is "
            "protected at k·ε (group privacy), so check that the table holds one row per person.")


def _share_reading(value: float, what: str) -> str:
    return f"{value:.1%} of {what}"


def summary_readings(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(measure, value, reading) of each known number in an evaluation's summary (missing ones left out)."""
    rows: list[tuple[str, str, str]] = []
    for k in (1, 2, 3):
        value = summary.get(f"{k}_way_mean_tvd")
        if isinstance(value, (int, float)):
            rows.append((f"{k}-way mean total-variation distance", f"{value:.4f}",
                         f"on average, {_share_reading(value, 'the rows')} would have to move to make a "
                         f"{k}-column breakdown of the synthetic table match the original (0 is a perfect match)."))
    score = summary.get("kmarginal_score")
    if isinstance(score, (int, float)):
        rows.append(("k-marginal score (NIST SDNist)", f"{score:.0f} / 1000",
                     "how closely the 2-column breakdowns agree: 1000 identical, 0 disjoint."))
    association = summary.get("association_mean_abs_difference")
    if isinstance(association, (int, float)):
        rows.append(("association difference", f"{association:.3f}",
                     "mean gap between the strength of each pair of columns' relation in the two tables (0 to 1)."))
    queries = summary.get("query_mean_abs_error")
    if isinstance(queries, (int, float)):
        rows.append(("counting-query error", f"{queries:.4f}",
                     f"a random query ('what share of rows has …') is off by {_share_reading(queries, 'the rows')} "
                     "on average."))
    utility = summary.get("utility")
    if isinstance(utility, dict) and isinstance(utility.get("train_on_synthetic"), (int, float)):
        original = utility.get("train_on_original")
        rows.append((f"machine learning ({utility.get('metric', 'score')} predicting {utility.get('target', '?')})",
                     f"{utility['train_on_synthetic']:.3f}" + (f" vs {original:.3f}" if isinstance(original, (int, float))
                                                               else ""),
                     f"a {utility.get('model', 'model')} trained on the synthetic rows, against one trained on the "
                     "original, both tested on real rows: close numbers mean the synthetic table serves for prediction."))
    matches = summary.get("exact_match_rate")
    if isinstance(matches, dict) and isinstance(matches.get("synthetic"), (int, float)):
        holdout = matches.get("holdout")
        rows.append(("rows copied exactly", f"{matches['synthetic']:.2%}" + (f" (real holdout rows: {holdout:.2%})"
                                                                            if isinstance(holdout, (int, float)) else ""),
                     "share of synthetic rows equal to some original row; common rows recur by chance, so it is read "
                     "against the same share for real rows the release never saw."))
    return rows


def relation_readings(evaluation: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(measure, value, reading) of a relational evaluation's numbers across tables (none for one table)."""
    rows: list[tuple[str, str, str]] = []
    for child, found in (evaluation.get("children_per_parent") or {}).items():
        if isinstance(found, dict) and isinstance(found.get("tvd"), (int, float)):
            naive = found.get("naive_tvd")
            rows.append((f"{child} rows per parent (TVD)", f"{found['tvd']:.4f}" + (
                f" (linked at random: {naive:.4f})" if isinstance(naive, (int, float)) else ""),
                "how far the synthetic number of child rows per parent is from the original's; the tables linked "
                "at random are the baseline to beat."))
    for child, share in (evaluation.get("referential_integrity") or {}).items():
        if isinstance(share, (int, float)):
            rows.append((f"{child} rows with a parent", f"{share:.2%}",
                         "share of synthetic child rows whose key points to a synthetic parent (100 % expected)."))
    return rows


ANONYMETER = {"singling_out": "singling out", "linkability": "linkability", "inference": "inference"}
AGAINST = ("release", "bootstrap", "shuffled")


def _number(value: Any, form: str) -> str:
    return format(value, form) if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def attack_rows(attacks: dict[str, Any]) -> list[list[str]]:
    """One row per attack and table attacked: attack, table, risk (CI) or AUC, ε lower bound, reading."""
    rows = []
    for key, name in ANONYMETER.items():
        results = (attacks.get("anonymeter") or {}).get(key) or {}
        for against in AGAINST:
            r = results.get(against) or {}
            ci = r.get("risk_ci")
            interval = (f" [{_number(ci[0], '.3f')}, {_number(ci[1], '.3f')}]"
                        if isinstance(ci, (list, tuple)) and len(ci) == 2 else "")
            rows.append([name, against, f"risk {_number(r.get('risk'), '.3f')}{interval}",
                         f"attack {_number(r.get('attack_rate'), '.3f')}, control {_number(r.get('control_rate'), '.3f')}",
                         "", str(r.get("reading", "not run"))])
    membership = attacks.get("membership") or {}
    for against in AGAINST:
        m = membership.get(against) or {}
        rows.append(["membership inference", against, f"AUC {_number(m.get('auc'), '.3f')}",
                     f"TPR {_number(m.get('tpr'), '.3f')}, FPR {_number(m.get('fpr'), '.3f')}",
                     _number(m.get("epsilon_lower_bound"), ".2f"), str(m.get("reading", "not run"))])
    return rows
