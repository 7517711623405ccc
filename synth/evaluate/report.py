"""The evaluation report: one self-contained HTML page about a synthetic table, for the data owner.

Summary scores first, then fidelity (columns, marginals, associations, PCA), utility (ML models and
a query workload), privacy diagnostics, the attacks when a holdout was given, and last the release and its ledger when a Description is
given. Every
number on the page is in ``Evaluation.to_dict``. Pictures are embedded as base64 PNG and the page
loads nothing from elsewhere (``synth.pages.htmlpage``). The page holds statistics of the original data
computed WITHOUT differential privacy and says so at the top: it is not to be shared.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from synth.evaluate.association import AssociationComparison
from synth.evaluate.attacks_report import attacks_section
from synth.evaluate.discretisation import DRAFTED, RELEASE
from synth.evaluate.evaluation import Evaluation
from synth.files import atomic_write_text, check_writable
from synth.pages.htmlpage import (
    banner,
    budget_text,
    escape,
    facts,
    figures_module,
    image,
    ledger_section,
    number,
    page,
    table,
)
from synth.progress import SILENT, Progress
from synth.release.description import Description

BANNER = ("For the data owner only. This report contains statistics of the ORIGINAL data (distributions, "
          "correlations, sample rows in the PCA picture, distances to real records) computed without "
          "differential privacy. Do not share it with the synthetic data or publish it.")
SIDE_BY_SIDE_UP_TO = 8  # association heatmaps of at most this many columns are shown in one row
PRIVACY_NOTE = ("These are diagnostics, not the privacy guarantee. The guarantee of a synthetic table is the "
                "differential privacy of its release (its Description and ledger). Numbers close to the "
                "held-out baseline mean the synthetic rows are no closer to the original rows than new rows "
                "from the same population would be; they do not prove privacy.")


def _score(value: str, label: str) -> str:
    return f'<div class="score"><div class="value">{escape(value)}</div><div class="label">{escape(label)}</div></div>'


def _summary(evaluation: Evaluation, sources: dict[str, str]) -> str:
    scored = f" ({evaluation.scored_share})" if evaluation.scored_share else ""
    cards = [_score(f"{evaluation.mean_column_tvd:.3f}", f"mean 1-way TVD (0 = identical){scored}")]
    if evaluation.release_schema is not None:
        cards.append(_score(f"{evaluation.release_schema.mean_column_tvd:.3f}",
                            "mean 1-way TVD on the release's schema"))
    for m in evaluation.marginals[1:]:
        cards.append(_score(f"{m.tvds.mean():.3f}", f"mean {m.k}-way TVD over {m.tvds.size} marginals{scored}"))
    if evaluation.kmarginal_score is not None:
        cards.append(_score(f"{evaluation.kmarginal_score:.0f}", "SDNist k-marginal score (of 1000)"))
    cards.append(_score(f"{evaluation.associations.mean_abs_difference:.3f}", "mean |association difference|"))
    cards.append(_score(f"{evaluation.queries.errors.mean():.4f}", "mean query error (share of rows)"))
    if evaluation.utility is not None:
        u = evaluation.utility
        main = "accuracy" if u.task == "classification" else "r2"
        trees = "gradient-boosted trees"
        cards.append(_score(f"{u.score(trees, 'synthetic')[main]:.3f} / {u.score(trees, 'original')[main]:.3f}",
                            f"{main} for {u.target}: trained on synthetic / on original"))
    p = evaluation.privacy.exact_match
    cards.append(_score(f"{p['synthetic']:.2%} / {p['holdout']:.2%}",
                        "exact matches: synthetic / held-out baseline"))
    rows = [("Original", f"{sources.get('original', 'a table')}: {evaluation.original_rows:,} rows"),
            ("Synthetic", f"{sources.get('synthetic', 'a table')}: {evaluation.synthetic_rows:,} rows"),
            ("Sampling seed", str(evaluation.seed))]
    notes = "".join(f"<li>{escape(n)}</li>" for n in evaluation.notes)
    return (f'<h2>Summary</h2>\n<div class="scores">{"".join(cards)}</div>\n{facts(rows)}'
            + (f'<ul class="note">{notes}</ul>' if notes else ""))


def _release(description: Description) -> str:
    privacy = description.privacy
    rows = [("Engine", description.engine), ("Budget", budget_text(privacy["budget"])),
            ("Spent", budget_text(privacy["spent"])), ("Neighbouring relation", description.neighbouring),
            ("End-to-end DP", "yes" if description.end_to_end_dp else "NO (data-derived domains)")]
    seeded = banner("Seeded noise (test mode): this release must not be shared.", warning=True) if description.seeded else ""
    return f"<h2>The release</h2>\n{seeded}{facts(rows)}\n{ledger_section(description)}"


def _discretisations(evaluation: Evaluation) -> str:
    """What the scores are counted on: the drafted discretisation, and the release's schema."""
    drafted = f"Every score on this page is on a discretisation {DRAFTED} (drafted from {evaluation.drafted_from})"
    if evaluation.release_schema is None:
        return f"<p>{escape(drafted)}. With the release's Description, its own schema is scored beside it.</p>"
    return (f"<p>{escape(drafted)}, except the figures labelled “on the release's schema”: those are on "
            f"{escape(RELEASE)}.</p>")


def _column_table(evaluation: Evaluation) -> str:
    """The columns table (TVD, TVD on the release's schema, KS), then the columns not scored."""
    on_release = evaluation.release_schema
    head = ["column", "kind", "TVD", "TVD on the release's schema", "KS"] if on_release else ["column", "kind", "TVD", "KS"]
    rows = []
    for c in evaluation.columns:
        ks = "" if c.ks is None else f"{c.ks:.4f}"
        same = None if on_release is None else on_release.column(c.name)
        rows.append([c.name, c.kind, f"{c.tvd:.4f}", *([] if on_release is None else
                                                       ["" if same is None else f"{same.tvd:.4f}"]), ks])
    skipped = "".join(f"<li>{escape(name)}: {escape(reason)}</li>" for name, reason in evaluation.not_scored.items())
    return (table(head, rows, frozenset(range(2, len(head))))
            + (f'<p>Columns of the original that are not scored:</p><ul class="note">{skipped}</ul>' if skipped else ""))


def _marginal_table(evaluation: Evaluation) -> str:
    groups = [("", evaluation.marginals)]
    if evaluation.release_schema is not None:
        groups.append((" on the release's schema", evaluation.release_schema.marginals))
    rows = [[f"{m.k}-way{where}", f"{m.tvds.mean():.4f}", f"{m.tvds.max():.4f}", f"{m.tvds.size}", f"{m.total}"]
            for where, marginals in groups for m in marginals]
    return table(["marginals", "mean TVD", "max TVD", "scored", "of"], rows, frozenset({1, 2, 3, 4}))


def _heatmaps(associations: AssociationComparison, figures: ModuleType) -> str:
    """The three association heatmaps: in one row for a few columns; else one per row, each shown at
    its own size, so that its labels keep their size (shrunk to a third of the page they could not
    be read from 15 columns on)."""
    images = [image(png, "association", f"associations: {which}")
              for png, which in zip(figures.association_heatmaps(associations), ("original", "synthetic", "difference"))]
    if len(associations.names) <= SIDE_BY_SIDE_UP_TO:
        return '<div class="figures">' + "".join(images) + "</div>"
    return "".join(f"<div>{picture}</div>" for picture in images)


def _fidelity(evaluation: Evaluation, numeric: set[str], figures: ModuleType, progress: Progress) -> str:
    parts = ["<h2>Fidelity</h2>\n" + _discretisations(evaluation)
             + "<h3>Columns</h3>\n<p>Total-variation distance (TVD) between the two tables' "
             "shares of rows per code (category, or bin of a numeric column; missing and other are codes), "
             "and for numeric columns the Kolmogorov–Smirnov statistic of the values.</p>",
             _column_table(evaluation)]
    for column in progress.track(evaluation.columns, "drawing column distributions"):
        parts.append(f'<div class="column"><h3>{escape(column.name)}</h3>'
                     + image(figures.column_distribution(column, column.name in numeric), "distribution",
                             f"distribution of {column.name}, original and synthetic") + "</div>")
    parts.append("<h3>Marginals</h3>\n<p>TVD of every k-way marginal, or of a uniform random sample when there "
                 "are more than the cap (the scored count is shown). The SDNist k-marginal score is NIST's: "
                 "(2 − mean L1 distance between the two tables' 2-way marginal densities) × 500, from 0 "
                 "(disjoint) to 1000 (identical), i.e. 1000 × (1 − mean 2-way TVD).</p>"
                 + _marginal_table(evaluation)
                 + image(figures.marginal_errors(evaluation.marginals), "marginals", "histogram of marginal TVDs"))
    a = evaluation.associations
    parts.append("<h3>Associations between columns</h3>\n<p>Pearson's r for two numeric columns, Cramér's V for "
                 "two categorical ones, the correlation ratio η for a numeric and a categorical one; the third "
                 f"picture is synthetic − original. Mean absolute difference: {number(a.mean_abs_difference)}. "
                 "Spearman's rank correlations of numeric pairs are in the JSON.</p>"
                 + _heatmaps(a, figures))
    pca = evaluation.projection
    parts.append("<h3>PCA</h3>\n<p>Both tables projected on the first two principal components of the original "
                 f"(fitted on {pca.fit_rows:,} original rows: numeric columns standardised, categorical one-hot); "
                 f"explained variance {pca.explained[0]:.1%} and {pca.explained[1]:.1%}. Samples of "
                 f"{pca.original.shape[0]:,} and {pca.synthetic.shape[0]:,} rows are drawn.</p>"
                 + image(figures.pca_scatter(pca), "pca", "PCA scatter of both tables"))
    return "\n".join(parts)


def _utility(evaluation: Evaluation, figures: ModuleType) -> str:
    parts = ["<h2>Utility</h2>"]
    u = evaluation.utility
    if u is None:
        parts.append("<p>No target column was given (--target), so no model was trained.</p>")
    else:
        metrics = list(u.scores[0].metrics)
        rows = [[s.model, f"trained on {s.trained_on}", *(number(s.metrics[m]) for m in metrics)] for s in u.scores]
        rows.append(["constant prediction", "from the original", *(number(u.baseline.get(m)) for m in metrics)])
        parts.append(f"<h3>Machine learning: {escape(u.target)} ({u.task})</h3>\n<p>Train on synthetic, test on "
                     f"real (TSTR) next to train on real, test on real (TRTR): each model trains on {u.train_rows:,} "
                     f"rows and is tested on {u.test_rows:,} original rows held out from training. F1 is "
                     "macro-averaged over the classes.</p>"
                     + table(["model", "training data", *metrics], rows, frozenset(range(2, 2 + len(metrics))))
                     + "".join(f'<p class="note">{escape(n)}</p>' for n in u.notes)
                     + image(figures.utility_bars(u), "utility", "model scores by training data"))
    q = evaluation.queries.to_dict()
    parts.append("<h3>Query workload</h3>\n<p>Random counting queries: each a conjunction of 1 to 3 predicates "
                 "(a range of bins of a numeric column, a subset of categories), answered as the share of "
                 f"rows on both tables. {q['queries']} queries: mean absolute error {q['mean_abs_error']:.4f}, "
                 f"median {q['median_abs_error']:.4f}, 90th percentile {q['p90_abs_error']:.4f}, maximum "
                 f"{q['max_abs_error']:.4f} (the mean answer is {q['mean_original_answer']:.3f}).</p>"
                 + image(figures.histogram({"queries": evaluation.queries.errors}, "absolute error (share of rows)"),
                         "queries", "histogram of query errors"))
    return "\n".join(parts)


def _privacy(evaluation: Evaluation, figures: ModuleType) -> str:
    p = evaluation.privacy
    d = p.to_dict()["distance_to_closest_record"]
    rows = [["exact matches with an original row", f"{p.exact_match['synthetic']:.3%}", f"{p.exact_match['holdout']:.3%}"],
            ["median distance to the closest original row", f"{d['synthetic']['median']:.4f}", f"{d['holdout']['median']:.4f}"],
            ["5th percentile of that distance", f"{d['synthetic']['p05']:.4f}", f"{d['holdout']['p05']:.4f}"],
            [f"rare combinations reproduced (of {p.rare_cells:,})", f"{p.rare_reproduced['synthetic']:.2%}",
             f"{p.rare_reproduced['holdout']:.2%}"]]
    return ("<h2>Privacy diagnostics</h2>\n" + banner(PRIVACY_NOTE, warning=True)
            + f"<p>The original is split into {p.reference_rows:,} reference rows and {p.holdout_rows:,} held-out "
            "rows. Each measure compares the synthetic table with the held-out rows, both against the reference "
            "rows. Exact matches use the discretisation drafted from the original (all rows). Distances: the nearest of "
            f"{p.dcr_reference_rows:,} sampled reference rows for {p.dcr['synthetic'].size:,} rows of each side "
            "(numeric columns scaled to [0, 1] by their bounds, a differing category counts 1). Rare combinations: "
            f"cells of {p.rare_marginals} sampled marginals held by 1 to 5 reference rows, looked for in "
            f"{p.rare_sample_rows:,} rows of each side.</p>"
            + table(["diagnostic", "synthetic", "held-out baseline"], rows, frozenset({1, 2}))
            + image(figures.histogram({"synthetic": p.dcr["synthetic"], "held-out original": p.dcr["holdout"]},
                                      "distance to the closest original (reference) row"), "dcr",
                    "distances to the closest record"))


def report_html(evaluation: Evaluation, description: Description | None = None,
                sources: dict[str, str] | None = None, progress: Progress = SILENT) -> str:
    """The report as one HTML page (pictures embedded)."""
    figures = figures_module("synth.evaluate.figures", "write only the JSON (--json) or the console summary")
    numeric = {c.name for c in evaluation.columns if c.ks is not None}
    sources = sources or {}
    body = ["<h1>synth evaluation: synthetic against original</h1>", banner(BANNER, warning=True),
            _summary(evaluation, sources), _fidelity(evaluation, numeric, figures, progress),
            _utility(evaluation, figures), _privacy(evaluation, figures)]
    if evaluation.attacks is not None:
        body.append(attacks_section(evaluation.attacks))
    if description is not None:
        body.append(_release(description))
    return page("synth evaluation report", "\n".join(body), contents=True)


def write_report(evaluation: Evaluation, path: str | os.PathLike[str], description: Description | None = None,
                 sources: dict[str, str] | None = None, force: bool = False, progress: Progress = SILENT) -> Path:
    """Write the HTML report to ``path`` atomically (refused if it exists, unless ``force``)."""
    target = Path(path)
    check_writable(target, force)
    return atomic_write_text(target, report_html(evaluation, description, sources, progress), force=force)
