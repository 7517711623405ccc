"""The HTML report of a relational evaluation: one self-contained page for the data owner.

It shows the release's guarantee (from its record), referential integrity, children per parent
(original, release and naive release, with a bar chart), the marginals across the relation pair by
pair, and each table's headline scores. It formats what ``DatabaseEvaluation`` holds; it reads no
table. Not a DP output: the evaluation read the original database.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from synth.evaluate.relational import DatabaseEvaluation, Degrees, degree_buckets
from synth.files import atomic_write_text, check_writable
from synth.pages.htmlpage import banner, budget_text, escape, facts, figures_module, image, number, page, table

PAIRS_SHOWN = 40  # the worst pairs of a child table's cross-relation marginals


def _degree_figure(degrees: Degrees) -> bytes:
    plotting = figures_module("synth.pages.plotting", "write the evaluation as JSON (--json) instead")
    from matplotlib.figure import Figure

    held = np.nonzero((degrees.original + degrees.synthetic + degrees.naive) > 0)[0]
    labels = [degree_buckets()[i] for i in held]
    figure = Figure(figsize=(max(4.0, 0.45 * len(held) + 2), 3.2))
    axes = figure.add_subplot()
    x = np.arange(len(held))
    for offset, values, colour, name in ((-0.27, degrees.original, plotting.ACCENT, "original"),
                                         (0.0, degrees.synthetic, plotting.SECOND, "synthetic"),
                                         (0.27, degrees.naive, "#999999", "naive (random links)")):
        axes.bar(x + offset, values[held], width=0.27, color=colour, label=name)
    axes.set_xticks(x, labels, rotation=60, fontsize=8)
    axes.set_xlabel(f"{degrees.child} rows per {degrees.parent} row")
    axes.set_ylabel(f"share of {degrees.parent} rows")
    axes.legend(fontsize=8)
    return plotting.png(figure)


def _guarantee(release: dict[str, Any]) -> str:
    bounds = ", ".join(f"{child}: at most {b['max_children']} per person ({b['source']})"
                       for child, b in (release.get("bounds") or {}).items())
    spent = release.get("spent") or {}
    pairs = [("privacy unit", str(release.get("privacy_unit", ""))), ("neighbouring", str(release.get("neighbouring", ""))),
             ("bounds", bounds or "—")]
    if spent:
        pairs.append(("spent", budget_text(spent)))
    return "<h2>The release</h2>\n" + facts(pairs)


def _child_section(evaluation: DatabaseEvaluation, child: str) -> str:
    degrees, cross, integrity = evaluation.degrees[child], evaluation.cross[child], evaluation.integrity[child]
    root = degrees.parent
    labels = degree_buckets()
    held = np.nonzero((degrees.original + degrees.synthetic + degrees.naive) > 0)[0]
    degree_table = table(["bucket", "original", "synthetic", "naive"],
                         [[labels[i], number(degrees.original[i]), number(degrees.synthetic[i]), number(degrees.naive[i])]
                          for i in held], frozenset({1, 2, 3}))
    order = np.argsort(-cross.tvds)[:PAIRS_SHOWN]
    pair_rows = [[cross.pairs[i][0], cross.pairs[i][1], number(cross.tvds[i]), number(cross.naive_tvds[i])] for i in order]
    worst = "" if len(cross.pairs) <= PAIRS_SHOWN else f" (the {PAIRS_SHOWN} worst of {len(cross.pairs)})"
    summary = cross.to_dict()
    headline = facts([
        ("referential integrity", f"{integrity.share:.2%} of {integrity.rows:,} synthetic rows name an existing "
                                  f"{root} row" + ("" if integrity.unique_keys else "; primary keys NOT unique")),
        (f"{child} per {root}: TVD", f"{number(degrees.tvd)} (naive release {number(degrees.naive_tvd)})"),
        (f"{child} per {root}: mean", f"{degrees.original_mean:.3g} original, {degrees.synthetic_mean:.3g} synthetic"),
        (f"{root} column × {child} per {root}: mean TVD",
         f"{number(degrees.joint_tvd)} (naive {number(degrees.naive_joint_tvd)})"),
        ("across the relation: mean 2-way TVD",
         f"{number(summary['mean_tvd'])} (naive {number(summary['naive_mean_tvd'])})"),
    ])
    return (f"<h2>{escape(child)}</h2>\n{headline}\n<h3>{escape(child)} rows per {escape(root)} row</h3>\n"
            + image(_degree_figure(degrees), "figure", f"{child} per {root}") + degree_table
            + f"<h3>{escape(root)} column × {escape(child)} column, over the join{escape(worst)}</h3>\n"
            + table([f"{root} column", f"{child} column", "TVD", "naive TVD"], pair_rows, frozenset({2, 3})))


def _tables_section(evaluation: DatabaseEvaluation) -> str:
    rows = []
    for name, result in evaluation.tables.items():
        summary = result.summary()
        original, synthetic = evaluation.rows[name]
        rows.append([name, f"{original:,}", f"{synthetic:,}", number(summary.get("mean_column_tvd")),
                     number(summary.get("2_way_mean_tvd")), number(summary.get("3_way_mean_tvd"))])
    return ("<h2>Each table on its own</h2>\n<p>As <code>synth evaluate</code> scores one table (keys left out), "
            "on a discretisation drafted from the original.</p>\n"
            + table(["table", "original rows", "synthetic rows", "column TVD", "2-way TVD", "3-way TVD"], rows,
                    frozenset({1, 2, 3, 4, 5})))


def database_report_html(evaluation: DatabaseEvaluation) -> str:
    """The whole page."""
    body = (f"<h1>Evaluation of a relational release: {escape(evaluation.root)} and the tables below it</h1>\n"
            + banner("Not a DP output: this page was computed from the original database. Keep it with the data owner.",
                     warning=True)
            + "<p>The naive release is the same synthetic tables with each child row linked to a synthetic parent "
              "drawn at random, which is what releasing each table on its own gives: the links are what differ.</p>\n"
            + _guarantee(evaluation.release)
            + "".join(_child_section(evaluation, child) for child in evaluation.degrees)
            + _tables_section(evaluation))
    return page(f"synth relational evaluation: {evaluation.root}", body, contents=True)


def write_database_report(evaluation: DatabaseEvaluation, path: str | os.PathLike[str], force: bool = False) -> Path:
    """Write the page to ``path`` atomically (refused if it exists, unless ``force``)."""
    check_writable(Path(path), force)
    atomic_write_text(path, database_report_html(evaluation), force=force)
    return Path(path)
