"""The inspection report: one self-contained HTML page about a Description, for a person deciding
whether to share the release.

It is built from the Description alone, never from private data: the summary and the ledger
restate the release, and the pictures are post-processing of its noisy measurements (the model is
fitted with few iterations, for speed). Pictures are embedded as base64 PNG; the page loads
nothing from elsewhere (no network, no external style sheet or script).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from types import ModuleType

from synth.files import atomic_write_text, check_writable
from synth.generation.generate import FIT_ITERATIONS, Model, fit_model
from synth.inspect import views
from synth.pages.htmlpage import banner, budget_text, escape, facts, figures_module, image, ledger_section, number, page
from synth.progress import SILENT, Progress
from synth.release.description import FORMAT_VERSION, Description
from synth.release.manifest import guarantee_statement

REPORT_ITERATIONS = 200
BANNER = ("Built from the Description only, never from the private data. Everything on this page is "
          "post-processing of the release, so it is exactly as private as the release itself.")
NOTIONS = {"pure": "pure ε-DP, basic composition", "approx": "approximate (ε, δ)-DP",
           "zcdp": "ρ-zCDP (ρ adds up), converted to (ε, δ)"}
def _header(description: Description) -> str:
    parts = [f"<h1>synth release inspection: engine {escape(description.engine)}</h1>", banner(BANNER)]
    if description.seeded:
        parts.append('<p class="warning"><strong>Seeded noise: NO privacy guarantee; do not share.</strong> '
                     "The noise was drawn from a reproducible generator (test mode); anyone who knows or "
                     "guesses the seed can remove it, whatever budget this page states. Such a release is "
                     "for tests and benchmarks only.</p>")
    if not description.end_to_end_dp:
        derived = [n for n, s in description.domain_sources.items() if s == "data-derived"]
        parts.append(f'<p class="warning"><strong>Not end-to-end DP.</strong> The domains of '
                     f"{escape(', '.join(derived))} were read from the private data without noise.</p>")
    return "\n".join(parts)


def _summary(description: Description, model: Model) -> str:
    privacy = description.privacy
    budget, spent = privacy["budget"], privacy["spent"]
    notion = NOTIONS.get(budget.get("notion"), str(budget.get("notion")))
    if budget.get("notion") == "approx":
        notion += f", {budget.get('composition')} composition"
    by_source: dict[str, list[str]] = {}
    for name, source in description.domain_sources.items():
        by_source.setdefault(source, []).append(name)
    measured = math.isfinite(model.total)
    estimate = f"{model.total:,.0f} (noisy, from the measurements)" if measured else "none: nothing was measured"
    if description.rows is not None:
        to_generate = f"{description.rows:,}"
    elif measured:
        to_generate = f"not set: synth generate makes about {model.total:,.0f} rows (the noisy estimated total)"
    else:
        to_generate = "not set: synth generate needs --rows"
    noise = description.noise
    rows = [
        ("Engine", description.engine),
        ("Engine options", json.dumps(description.engine_options, sort_keys=True) if description.engine_options
         else "none (defaults)"),
        ("Accounting", notion),
        ("Budget", budget_text(budget)),
        ("Spent", budget_text(spent)),
        ("Neighbouring relation", description.neighbouring),
        ("Rows to generate", to_generate),
        ("Estimated row count", estimate),
        ("Noise", f"{noise.get('sampler', '?')} sampler; "
         + ("SEEDED (test mode): NO privacy guarantee, must not be shared" if description.seeded
            else "not seeded (OS entropy)")),
        ("Domains", "; ".join(f"{source}: {', '.join(names)}" for source, names in by_source.items())),
        ("End-to-end DP", "yes" if description.end_to_end_dp else "NO (data-derived domains)"),
        ("Software", f"{description.software.get('name', 'synth')} {description.software.get('version', '?')}"),
        ("Created", description.created),
        ("Description format version", str(FORMAT_VERSION)),
    ]
    return (f"<h2>Summary</h2>\n{facts(rows)}\n"
            f"<p>{escape(guarantee_statement(description))}</p>")


def _structure(structure: views.Structure, figures: ModuleType) -> str:
    return (f"<h2>Learnt structure</h2>\n<p>{escape(structure.summary)}</p>\n"
            + image(figures.structure_picture(structure), "structure", "learnt structure"))


def _distributions(description: Description, model: Model, figures: ModuleType, progress: Progress) -> str:
    parts = ["<h2>Column distributions</h2>\n<p>Each column's noisy 1-way measurement when it was "
             "measured alone (noisy counts can be negative), else the fitted model's shares. "
             "Numeric columns are shown by the bins of their public domain.</p>"]
    columns = zip(description.schema.columns, views.distributions(description, model))
    for column, distribution in progress.track(list(columns), "drawing column distributions"):
        codes = distribution.shown()
        notes = [f"{column.kind.value}, domain {column.source.value}, {column.size} codes."]
        if distribution.measured:
            notes.append(f"Noisy 1-way measurement; noise deviation ≈ {number(distribution.noise_std)} per count.")
        else:
            notes.append("Not measured alone: the fitted model's marginal, as shares of rows.")
        if distribution.merged:
            notes.append(f"{distribution.merged} rare codes were merged into one noisy count, shown "
                         "spread evenly over them.")
        if codes.size < distribution.values.size:
            notes.append(f"The {codes.size} largest codes are shown; {distribution.values.size - codes.size} "
                         "more are not.")
        parts.append(f'<div class="column"><h3>{escape(column.name)}</h3>'
                     f'<p class="note">{escape(" ".join(notes))}</p>'
                     + image(figures.bar_chart(distribution, codes), "distribution", f"distribution of {column.name}")
                     + "</div>")
    return "\n".join(parts)


def _dependence(description: Description, model: Model, structure: views.Structure, iterations: int,
                figures: ModuleType, progress: Progress) -> str:
    all_names = description.schema.names
    names = views.heatmap_columns(all_names, structure.graph)
    if len(names) < 2:
        return "<h2>Pairwise dependence</h2>\n<p>The release has a single column: there are no pairs.</p>"
    result = views.dependence(model, all_names, names, progress)
    text = ("Cramér's V of every pair of columns in the fitted model's 2-way marginals (0: independent; "
            "1: one column determines the other), over all codes including missing and other. It is "
            "what the model implies, not a measurement: columns never measured together are linked "
            "only through measured ones. Where the model is fitted iteratively (a graphical model over "
            f"joint measurements), the fit was capped at {iterations} iterations for speed (synth "
            f"generate uses {FIT_ITERATIONS}), so the values are approximate. Grey: the diagonal, or a "
            "column the model gives a single value.")
    if structure.graph.number_of_edges() == 0:
        text += " With no joint measurement the model treats the columns as independent: every value is 0."
    if result.left_out:
        text += (f" The table has {len(all_names)} columns; shown are the {len(names)} most connected in the "
                 f"structure above (ties in table order). Left out: {', '.join(result.left_out)}.")
    return (f"<h2>Pairwise dependence</h2>\n<p>{escape(text)}</p>\n"
            + image(figures.heatmap(result), "dependence", "pairwise dependence (Cramér's V)"))


def report_html(description: Description, iterations: int = REPORT_ITERATIONS,
                progress: Progress = SILENT, model: Model | None = None) -> str:
    """The report as one HTML page (pictures embedded), on ``model`` (the Description's fitted
    model, e.g. the one kept beside it) or on a model fitted now with ``iterations``."""
    figures = figures_module("synth.inspect.figures", "run `synth inspect` without --report for the text view")
    if model is None:
        progress.message(f"fitting the model to the Description ({iterations} iterations at most)")
        model = fit_model(description, iterations)
    structure = views.structure(description)
    body = "\n".join([
        _header(description),
        _summary(description, model),
        ledger_section(description),
        _structure(structure, figures),
        _distributions(description, model, figures, progress),
        _dependence(description, model, structure, iterations, figures, progress),
    ])
    return page(f"synth release inspection: {description.engine}", body, contents=True)


def inspect_report(description: Description, path: str | os.PathLike[str], force: bool = False,
                   iterations: int = REPORT_ITERATIONS, progress: Progress = SILENT,
                   model: Model | None = None) -> Path:
    """Write the HTML report about ``description`` to ``path`` atomically (refused if it exists,
    unless ``force``), on ``model`` when given (else fitted now)."""
    target = Path(path)
    check_writable(target, force)  # before the work, not only when writing
    return atomic_write_text(target, report_html(description, iterations, progress, model), force=force, shared=True)
