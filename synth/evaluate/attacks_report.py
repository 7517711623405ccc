"""The "Attacks" section of the evaluation report: the verdict first, then one table per attack.

Each table has a row per attacked table (the release, a bootstrap of the training rows, the
training rows' columns shuffled) with its numbers and its one-line reading; every number is in
``Attacks.to_dict``. The section reads results computed from the original data WITHOUT differential
privacy and says so; it must never be shown outside the data owner's report.
"""

from __future__ import annotations

from synth.evaluate.anonymeter_attacks import ATTACKS, Risk
from synth.evaluate.attacks import NOTICE, TABLES, Attacks
from synth.evaluate.membership import ASSUMPTION, ATTACK, CONFIDENCE
from synth.pages.htmlpage import banner, escape, table

BASELINES = ("Each attack runs against three tables: the release; a bootstrap of the training rows (as many rows "
             "drawn with replacement), which leaks by construction, so an attack that shows nothing there is too "
             "weak on this table to be evidence; and the training rows with each column shuffled on its own "
             "(marginals kept, rows unlinked). The holdout rows, never given to the release, are the control.")
TITLES = {"singling_out": "Singling out (Anonymeter)", "linkability": "Linkability (Anonymeter)",
          "inference": "Inference (Anonymeter)"}


def _anonymeter_table(attacks: Attacks, name: str) -> str:
    rows = []
    for t in TABLES:
        r = attacks.anonymeter[name][t]
        if isinstance(r, Risk):
            rows.append([t, f"{r.risk:.3f}", f"{r.risk_ci[0]:.3f} – {r.risk_ci[1]:.3f}", f"{r.attack_rate:.1%}",
                         f"{r.control_rate:.1%}", f"{r.baseline_rate:.1%}", r.reading()])
        else:
            rows.append([t, "", "", "", "", "", r])
    return (f"<h3>{escape(TITLES[name])}</h3>\n"
            + table(["table", "risk", f"{CONFIDENCE:.0%} CI", "attack", "control", "baseline", "reading"], rows,
                    frozenset({1, 2, 3, 4, 5})))


def _membership_table(attacks: Attacks) -> str:
    rows = [[t, f"{m.auc:.3f}", f"{m.tpr:.1%}", f"{m.fpr:.1%}", f"{m.epsilon_lower_bound:.2f}", m.reading()]
            for t, m in ((t, attacks.membership[t]) for t in TABLES)]
    epsilon = ("" if attacks.release_epsilon is None else
               f" The release's epsilon is {attacks.release_epsilon:g}: the bound measured on the release must sit below it.")
    return ("<h3>Membership inference</h3>\n"
            f"<p>{escape(ATTACK[0].upper() + ATTACK[1:])}. The threshold is chosen on a random half of the targets "
            f"and TPR and FPR are measured on the other half; with Clopper–Pearson bounds they give a lower bound on "
            f"epsilon at {CONFIDENCE:.0%} confidence. It assumes {escape(ASSUMPTION)}.{escape(epsilon)}</p>\n"
            + table(["table", "AUC", "TPR", "FPR", "epsilon ≥", "reading"], rows, frozenset({1, 2, 3, 4})))


def attacks_section(attacks: Attacks) -> str:
    """The report's "Attacks" section."""
    return ("<h2>Attacks</h2>\n" + banner(attacks.verdict(), warning=bool(attacks.flagged("release")))
            + f"<p>{escape(NOTICE)} {escape(BASELINES)}</p>\n<p>Sampling: {escape(attacks.sampling)}. "
            f"Time: {attacks.seconds:.0f} s.</p>\n"
            + "\n".join(_anonymeter_table(attacks, name) for name in ATTACKS) + "\n" + _membership_table(attacks))
