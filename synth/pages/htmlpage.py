"""Pieces of synth's self-contained HTML pages (the inspection and the evaluation report).

One page skeleton with its style sheet (for the screen and for print: no table, figure or box cut
across pages), a list of links to its sections, banners, embedded PNG images (data URIs), tables of
facts and numbers, and the privacy-ledger table of a Description. A page built from these loads nothing
from elsewhere: no network, no external style sheet or script. This module only formats what it is
given; it never reads data, and whatever a page shows is exactly as private as its inputs.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import Any

from synth.errors import OutputError
from synth.release.description import Description, LedgerEntry, ledger_totals

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
.banner { background: #e8f3e8; border-left: 6px solid #3c8d3c; padding: 0.8em 1em; }
.warning { background: #fbeaea; border-left: 6px solid #b22222; padding: 0.8em 1em; margin: 1em 0; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
tr.ledger-total { font-weight: bold; background: #f4f4f4; }
.column { display: inline-block; vertical-align: top; width: 32em; margin: 0 1.5em 1.5em 0; }
.column h3 { margin-bottom: 0.2em; } .note { color: #555; font-size: 0.9em; }
.scores { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.score { border: 1px solid #ccc; border-radius: 6px; padding: 0.6em 1em; min-width: 11em; }
.score .value { font-size: 1.6em; font-weight: bold; } .score .label { color: #555; font-size: 0.85em; }
.figures { display: flex; gap: 0.5em; } .figures img { flex: 1; min-width: 0; }
img { max-width: 100%; }
nav.contents { background: #f6f6f6; border: 1px solid #ddd; padding: 0.4em 1em; margin: 1em 0; }
nav.contents ol { margin: 0.3em 0; columns: 2; } nav.contents a { color: #1f4e79; }
@media print {
  @page { margin: 1.5cm 1.2cm; }
  body { margin: 0; max-width: none; padding: 0; font-size: 10pt; }
  h1, h2, h3 { break-after: avoid; page-break-after: avoid; }
  h2 { margin-top: 1.2em; }
  table, img, figure, .figures, .banner, .warning, .score, .column { break-inside: avoid; page-break-inside: avoid; }
  tr { break-inside: avoid; } thead { display: table-header-group; }
  img { max-height: 24cm; object-fit: contain; }
  .banner, .warning, tr.ledger-total, nav.contents { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  details::details-content { content-visibility: visible; } details > summary { list-style: none; }
  a { color: inherit; text-decoration: none; }
  a[href^="http"]::after { content: " (" attr(href) ")"; font-size: 0.85em; }
}
"""


def escape(value: object) -> str:
    """``value`` as HTML text."""
    return html.escape(str(value))


def number(value: float | None) -> str:
    """A number with six significant digits; an em dash for None."""
    return "—" if value is None else f"{value:.6g}"


def budget_text(amounts: dict[str, Any]) -> str:
    """A privacy budget or spend as "ε = …, δ = …" (and ρ under zCDP)."""
    text = f"ε = {number(amounts['epsilon'])}, δ = {number(amounts['delta'])}"
    return text + (f" (ρ = {number(amounts['rho'])})" if amounts.get("rho") is not None else "")


def image(png: bytes, css_class: str, alt: str) -> str:
    """An <img> holding ``png`` as a base64 data URI."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="{css_class}" alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def banner(text: str, warning: bool = False) -> str:
    """A highlighted paragraph: green for information, red for a warning."""
    return f'<p class="{"warning" if warning else "banner"}"><strong>{escape(text)}</strong></p>'


def facts(pairs: Sequence[tuple[str, str]]) -> str:
    """A two-column table of (name, value) rows."""
    rows = "".join(f"<tr><th>{escape(key)}</th><td>{escape(value)}</td></tr>" for key, value in pairs)
    return f'<table class="facts">{rows}</table>'


def table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: frozenset[int] = frozenset(),
          css_class: str = "", row_classes: Sequence[str] | None = None) -> str:
    """A table with a header row; cells at the ``numeric`` positions are right-aligned."""
    def cells(values: Sequence[str], tag: str) -> str:
        return "".join(f'<{tag} class="number">{escape(v)}</{tag}>' if i in numeric else f"<{tag}>{escape(v)}</{tag}>"
                       for i, v in enumerate(values))

    classes = row_classes or [""] * len(rows)
    body = "".join(f'<tr class="{c}">{cells(r, "td")}</tr>' if c else f"<tr>{cells(r, 'td')}</tr>"
                   for r, c in zip(rows, classes))
    return f'<table class="{css_class}"><thead><tr>{cells(head, "th")}</tr></thead><tbody>{body}</tbody></table>'


def ledger_table(ledger: Sequence[LedgerEntry]) -> str:
    """A privacy ledger as a table, one row per charged query, with its plain sums."""
    rows = [[str(e.index), e.mechanism, e.query, number(e.sensitivity), number(e.noise_scale),
             number(e.cost.epsilon), number(e.cost.delta), number(e.cost.rho), e.note]
            for e in ledger]
    rows.append(["", f"total of {len(ledger)} entries", "", "", "",
                 *(number(total) for total in ledger_totals(ledger).values()), ""])
    head = ["#", "mechanism", "query", "sensitivity", "noise scale", "ε", "δ", "ρ", "note"]
    return table(head, rows, frozenset({3, 4, 5, 6, 7}), "ledger", ["ledger-entry"] * (len(rows) - 1) + ["ledger-total"])


def ledger_section(description: Description) -> str:
    """The Description's privacy ledger, one row per charged query, with its totals."""
    return ("<h2>Privacy ledger</h2>\n<p>One row per query that touched the private data, charged "
            "before its noise was drawn. The totals are plain sums; the budget spent in the summary "
            "is after composition (and, under zCDP, conversion to (ε, δ)).</p>\n" + ledger_table(description.ledger))


def _slug(text: str, taken: set[str]) -> str:
    """An id made of ``text``'s words, not in ``taken`` (a number is added when it is)."""
    base = "-".join(re.findall(r"\w+", html.unescape(re.sub(r"<[^>]*>", "", text)).lower())) or "section"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def with_contents(body: str) -> str:
    """``body`` with an id on each <h2> that has none and, before the first, a list of links to them all
    (unchanged when it has fewer than two). Ids are made of the heading's words, so they are safe in HTML."""
    taken = set(re.findall(r'\bid="([^"]*)"', body))
    entries: list[str] = []

    def anchor(match: re.Match[str]) -> str:
        name = match.group(1) or _slug(match.group(2), taken)
        taken.add(name)
        entries.append(f'<li><a href="#{name}">{match.group(2)}</a></li>')
        return f'<h2 id="{name}">{match.group(2)}</h2>'

    anchored = re.sub(r'<h2(?: id="([^"]*)")?>(.*?)</h2>', anchor, body, flags=re.S)
    if len(entries) < 2:
        return body
    first = anchored.index("<h2")
    nav = f'<nav class="contents" aria-label="Contents"><strong>Contents</strong><ol>{"".join(entries)}</ol></nav>\n'
    return anchored[:first] + nav + anchored[first:]


def page(title: str, body: str, contents: bool = False, style: str = "") -> str:
    """A whole HTML document with the shared style sheet (and ``style`` after it); with ``contents``,
    a list of links to its sections (its <h2> headings) before the first of them."""
    if contents:
        body = with_contents(body)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{STYLE}{style}</style></head>\n<body>\n{body}\n</body></html>\n")


def figures_module(name: str, alternative: str) -> ModuleType:
    """Import the drawing module ``name``; OutputError naming ``alternative`` if matplotlib is missing."""
    try:
        import_module("matplotlib")
        return import_module(name)
    except ImportError as exc:
        if not (exc.name or "").startswith("matplotlib"):
            raise
        raise OutputError(
            f"the HTML report draws its pictures with matplotlib, which is not installed. Install it "
            f"(pip install matplotlib), or {alternative}."
        ) from exc
