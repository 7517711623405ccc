"""The release card: one self-contained, printable HTML page a privacy officer can read and sign.

Built from the release folder alone (its Description(s), manifest and relational record, and the
synthetic files' row counts), plus an evaluation's JSON when one is given: what was released and
what was left out, the guarantee in plain words with every place it does not hold end to end, what
was public input and what was estimated under DP, where the budget went, the utility and attack
results, every file with its SHA-256, and an annex text an agreement can quote. It refuses to vouch
for a folder whose files differ from its manifest. It never reads the private data; a card with an
evaluation holds the evaluation's numbers, which are not DP, and is written for its owner only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.defaults import VERSION
from synth.errors import InputFileError
from synth.files import atomic_write_text
from synth.pages.htmlpage import escape, facts, ledger_table, number, page, table
from synth.release.description import Description, LedgerEntry, ledger_totals
from synth.sharing import card_text
from synth.sharing.folder import (
    CARD_MARK,
    MANIFEST,
    SINGLE_TABLE,
    ReleaseFolder,
    read_folder,
    synthetic_rows,
    unlisted,
)

SECTIONS = (("what-was-released", "What was released"), ("guarantee", "The guarantee in plain words"),
            ("public-input", "Public input and what was estimated under DP"), ("budget", "Where the budget went"),
            ("utility-and-attacks", "Utility and attacks"), ("files", "Files"), ("annex", "Annex text"))
CARD_STYLE = """
.warning-box { border: 3px solid #b22222; background: #fbeaea; padding: 0.8em 1.2em; margin: 1em 0; }
.warning-box h3 { margin-top: 0; color: #b22222; } .clean { border: 2px solid #3c8d3c; background: #e8f3e8;
  padding: 0.6em 1em; }
.notice-box { border: 2px solid #b8860b; background: #fdf6e3; padding: 0.6em 1em; margin: 1em 0; }
blockquote.annex { border-left: 4px solid #888; margin: 1em 0; padding: 0.5em 1em;
  background: #f7f7f7; white-space: pre-wrap; font-family: Georgia, serif; }
code.hash { font-size: 0.85em; word-break: break-all; }
@media print {  /* beside the shared print style (synth.pages.htmlpage) */
  nav.contents { display: none; }
  .warning-box, .notice-box, .clean, blockquote, details { break-inside: avoid; page-break-inside: avoid; }
  details > summary { list-style: none; font-style: italic; }
}
"""


def _modelled(folder: ReleaseFolder, name: str) -> list[str]:
    """The columns a table's Description models as its own (a relational part's copies of its parent's
    columns left out; its children counts kept), or every column of a single table."""
    if folder.stored is not None:
        return folder.stored.modelled(name)
    return list(folder.descriptions[name].schema.output_names)


def _kinds(description: Description, names: Sequence[str]) -> list[tuple[str, str]]:
    by_name = {c.name: c for c in description.schema.output_columns}
    return [(n, by_name[n].kind.value) for n in names if n in by_name]


def _left_out(folder: ReleaseFolder) -> list[list[str]]:
    """(table, column, why) of each column the release does not model or does not hold."""
    rows = []
    for name, description in folder.descriptions.items():
        for column in description.schema.unmodelled:
            why = ("identifier: the synthetic file holds fresh keys of the same shape, never a real one"
                   if column.kind.value == "id" else "free text: the synthetic file keeps the column, every cell empty")
            rows.append([name, column.name, why])
        present = set(description.schema.output_names)
        for lost in card_text.discovered_columns(description.ledger):
            if lost not in present:
                rows.append([name, lost, "lost: no domain for it stood clear of the noise with this budget, so it "
                             "was left out of the release (rough domains were accepted)"])
    if folder.stored is not None:
        for entry in folder.stored.record["tables"]:
            keys = [k for k in (entry.get("primary_key"), entry.get("foreign_key")) if k]
            for key in keys:
                rows.append([entry["table"], key, "key: fresh keys that keep each child row with its synthetic "
                             "parent; no real key is released"])
    return rows


def _what_was_released(folder: ReleaseFolder) -> str:
    parts = []
    counts = synthetic_rows(folder)
    rows = [[file, table_name, "—" if n is None else f"{n:,}"] for file, table_name, n in counts]
    parts.append(table(["synthetic file", "table", "rows"], rows, frozenset({2})))
    for name, description in folder.descriptions.items():
        own = folder.stored.own_columns(name) if folder.stored is not None else list(description.schema.output_names)
        listed = ", ".join(f"{n} ({kind})" for n, kind in _kinds(description, own))
        parts.append(f"<p><strong>{escape(name)}</strong>: engine {escape(description.engine)}; columns: "
                     f"{escape(listed)}.</p>")
    left = _left_out(folder)
    parts.append("<h3>Left out, and why</h3>" + (table(["table", "column", "why"], left) if left else
                 "<p>Nothing: every column of the table is modelled.</p>"))
    return "\n".join(parts)


def _problems(folder: ReleaseFolder) -> list[str]:
    """Every place where the guarantee does not hold end to end, one plain sentence each."""
    found = []
    if folder.seeded:
        found.append("The noise was SEEDED (test mode): these files carry NO privacy guarantee at all, whatever ε this "
                     "card states. Anyone who knows or guesses the seed can reproduce the noise and remove it. They are "
                     "for tests and benchmarks only and must not be shared.")
    for name, description in folder.descriptions.items():
        where = "" if folder.stored is None else f"In table {name}: "
        own = set(_modelled(folder, name)) | {c.name for c in description.schema.unmodelled}
        derived = [n for n, s in description.domain_sources.items() if s == "data-derived" and n in own]
        kinds = [n for n, s in (description.privacy.get("kind_sources") or {}).items()
                 if s == "data-derived" and n not in derived and n in own]
        shapes = [f"{n} ({', '.join(k for k, s in keys.items() if s == 'data-derived')})"
                  for n, keys in (description.shape_sources or {}).items() if "data-derived" in keys.values() and n in own]
        if derived:
            found.append(f"{where}the domains (category lists, ranges) of {', '.join(derived)} were read from the "
                         "private data without noise: a category or a bound can reveal one person, and the guarantee "
                         "does not cover them.")
        if kinds:
            found.append(f"{where}the kinds of {', '.join(kinds)} were read from the private data without noise.")
        if shapes:
            found.append(f"{where}how the values of {', '.join(shapes)} are written was read from the private data "
                         "without noise.")
        if not description.end_to_end_dp and not (derived or kinds or shapes):
            found.append(f"{where}the release states that it is not end-to-end DP.")
    return found


def _notes(folder: ReleaseFolder) -> list[str]:
    notes = []
    for name, description in folder.descriptions.items():
        where = "" if folder.stored is None else f"In table {name}: "
        own = set(_modelled(folder, name))
        estimated = [n for n, s in description.domain_sources.items() if s == "dp-estimated" and n in own]
        if estimated:
            notes.append(f"{where}the domains of {', '.join(estimated)} were found under DP, without a public profile. "
                         "The guarantee covers this (its cost is in the budget below), but rare values may be missing "
                         "from the release (written as the 'other' label) and ranges are approximate.")
        for step in description.privacy.get("steps") or []:
            if step.get("step") == "profile draft":
                notes.append(f"{where}the release profile was drafted under DP (ε = {number(step['spent']['epsilon'])} "
                             "on its own), within the same budget.")
    return notes


def warning_box(problems: Sequence[str]) -> str:
    items = "".join(f"<li>{escape(p)}</li>" for p in problems)
    return (f'<div class="warning-box" role="alert"><h3>The guarantee does NOT hold end to end</h3><ul>{items}</ul>'
            "</div>")


def _spent(folder: ReleaseFolder) -> dict[str, Any]:
    if folder.stored is not None:
        return dict(folder.stored.record["spent"])
    return dict(folder.descriptions[SINGLE_TABLE].privacy["spent"])


def _neighbouring(folder: ReleaseFolder) -> str:
    if folder.stored is not None:
        return str(folder.stored.record.get("neighbouring", "add-remove"))
    return folder.descriptions[SINGLE_TABLE].neighbouring


def _guarantee(folder: ReleaseFolder, problems: Sequence[str]) -> str:
    spent = _spent(folder)
    neighbouring = _neighbouring(folder)
    unit = folder.stored.record.get("privacy_unit") if folder.stored is not None else None
    rows = [("Privacy unit", card_text.unit_sentence(unit)),
            ("ε (epsilon)", f"{number(spent['epsilon'])}: the bound on how much one unit can change any conclusion"),
            ("δ (delta)", f"{spent['delta']:.3g}: the probability that the bound may fail"),
            ("Neighbouring relation", card_text.neighbouring_sentence(neighbouring)),
            ("Accounting", f"{spent.get('notion', '?')}, {spent.get('composition', '?')} composition"
             + (f"; ρ = {number(spent['rho'])} converted to (ε, δ)" if spent.get("rho") is not None else ""))]
    if folder.stored is not None:
        rows.append(("Row counts", str(folder.stored.record.get("row_counts", ""))))
    else:
        rows.append(("Row count published", "yes (exactly)" if neighbouring == "replace" else "no (only noisy estimates)"))
    text = card_text.person_sentence(spent["epsilon"], spent["delta"], folder.stored is not None)
    parts = [facts(rows), f"<p><strong>For one person:</strong> {escape(text)}</p>"]
    if problems:
        parts.append(warning_box(problems))
    else:
        parts.append('<p class="clean"><strong>The guarantee holds end to end:</strong> every column\'s kind, domain '
                     "and written shape was public input or found under DP within this budget, and the noise was "
                     "drawn from the operating system's entropy (not seeded).</p>")
    parts += [f'<p class="notice-box">{escape(n)}</p>' for n in _notes(folder)]
    return "\n".join(parts)


def _public_input(folder: ReleaseFolder) -> str:
    head = ["table", "column", "kind", "domain from", "kind from", "written shape from"]
    rows = []
    for name, description in folder.descriptions.items():
        kinds = description.privacy.get("kind_sources") or {}
        shapes = description.shape_sources or {}
        own = set(_modelled(folder, name))
        for column in (c for c in description.schema.output_columns if c.name in own):
            shape = ", ".join(f"{k}: {s}" for k, s in shapes.get(column.name, {}).items()) or "—"
            rows.append([name, column.name, column.kind.value, description.domain_sources[column.name],
                         str(kinds.get(column.name, "—")), shape])
    return ("<p><em>public</em>: given in a profile, as public knowledge (costs nothing, and must truly be public); "
            "<em>dp-estimated</em>: found from the data under DP, paid from the budget; <em>data-derived</em>: read "
            "from the data without noise (not covered by the guarantee); <em>default</em>: synth's public rule.</p>"
            + table(head, rows))


def _ledger(folder: ReleaseFolder) -> tuple[list[LedgerEntry], range]:
    """The whole ledger and the range of its entries that drafted the profile (empty when none did)."""
    if folder.stored is not None:
        return [LedgerEntry.from_dict(e) for e in folder.stored.record["ledger"]], range(0)
    description = folder.descriptions[SINGLE_TABLE]
    for step in description.privacy.get("steps") or []:
        if step.get("step") == "profile draft":
            first, count = step["ledger_entries"]["first"], step["ledger_entries"]["count"]
            return list(description.ledger), range(first, first + count)
    return list(description.ledger), range(0)


def budget_summary(ledger: Sequence[LedgerEntry], drafted: range) -> tuple[str, list[tuple[str, int, float, float, float]]]:
    """The charged quantity ("rho" when any entry is charged in ρ, else "epsilon") and, per purpose in
    order of first charge, (purpose, entries, amount, share of the total, δ)."""
    key = "rho" if any(e.cost.rho > 0 for e in ledger) else "epsilon"
    groups: dict[str, list[LedgerEntry]] = {}
    for entry in ledger:
        groups.setdefault(card_text.purpose(entry, drafted), []).append(entry)
    total = ledger_totals(ledger)[key]
    rows = []
    for name, entries in groups.items():
        sums = ledger_totals(entries)
        rows.append((name, len(entries), sums[key], sums[key] / total if total > 0 else 0.0, sums["delta"]))
    return key, rows


def _budget(folder: ReleaseFolder) -> str:
    ledger, drafted = _ledger(folder)
    key, summary = budget_summary(ledger, drafted)
    symbol = {"rho": "ρ", "epsilon": "ε"}[key]
    rows = [[name, str(count), number(amount), f"{share:.1%}", number(delta),
             card_text.PURPOSES.get(name, "an entry of a kind this card does not name; see the full ledger")]
            for name, count, amount, share, delta in summary]
    totals = ledger_totals(ledger)
    rows.append(["total", str(len(ledger)), number(totals[key]), "100.0%" if totals[key] > 0 else "—",
                 number(totals["delta"]), ""])
    spent = _spent(folder)
    intro = (f"<p>Every query that touched the private data was charged before its noise was drawn. The "
             f"{len(ledger)} charges, grouped by what they paid for, in {symbol}"
             + (" (zCDP: ρ adds up; the whole converts to the ε and δ above)" if key == "rho" else "")
             + f". After composition the release spent ε = {number(spent['epsilon'])}, δ = {spent['delta']:.3g}.</p>")
    parts = [intro, table(["purpose", "entries", symbol, "share", "δ", "what it paid for"], rows,
                          frozenset({1, 2, 3, 4}), "budget-summary",
                          ["budget-purpose"] * (len(rows) - 1) + ["ledger-total"])]
    if folder.stored is not None:
        per_table = [[t["table"], number(t["spent"]["epsilon"]), str(t.get("measurements", "—"))]
                     for t in folder.stored.record["tables"]]
        parts.append("<p>Each table's part on its own (they compose to the total above):</p>"
                     + table(["table", "ε on its own", "measurements"], per_table, frozenset({1, 2})))
    parts.append(f"<details><summary>The full ledger ({len(ledger)} entries; open it on screen)</summary>{ledger_table(ledger)}</details>")
    return "\n".join(parts)


def _utility_and_attacks(evaluation: dict[str, Any] | None) -> str:
    if evaluation is None:
        return ("<p>No evaluation was attached to this card. The data owner can measure utility and attacks with "
                "<code>synth evaluate ORIGINAL SYNTHETIC --json ev.json</code> and make the card again with "
                "<code>--evaluation ev.json</code>.</p>")
    parts = ['<p class="notice-box">These numbers come from the data owner\'s evaluation, which reads the original '
             "data: they are not differentially private. Keep this card with the owner; share the card made without "
             "an evaluation.</p>"]
    summaries = ({SINGLE_TABLE: evaluation["summary"]} if isinstance(evaluation.get("summary"), dict)
                 else {k: v for k, v in (evaluation.get("tables") or {}).items() if isinstance(v, dict)})
    for name, summary in summaries.items():
        readings = card_text.summary_readings(summary)
        if readings:
            title = "" if name == SINGLE_TABLE else f"<h3>Table {escape(name)}</h3>"
            parts.append(title + table(["measure", "value", "reading"], [list(r) for r in readings], frozenset({1}),
                                       "utility"))
    across = card_text.relation_readings(evaluation)
    if across:
        parts.append("<h3>Across the tables</h3>" + table(["measure", "value", "reading"], [list(r) for r in across],
                                                          frozenset({1}), "utility"))
    if len(parts) == 1:
        parts.append("<p>The evaluation holds no summary numbers this card reads.</p>")
    attacks = evaluation.get("attacks")
    if isinstance(attacks, dict):
        parts.append(_attacks(attacks))
    else:
        parts.append("<p>The evaluation holds no attack results (<code>synth evaluate --attacks --holdout</code> adds "
                     "them).</p>")
    return "\n".join(parts)


def _attacks(attacks: dict[str, Any]) -> str:
    rows = attacks.get("rows") or {}
    about = [("Notice", str(attacks.get("notice", ""))), ("Sampling", str(attacks.get("sampling", "")))]
    if rows:
        about.append(("Rows", ", ".join(f"{k}: {v:,}" if isinstance(v, int) else f"{k}: {v}" for k, v in rows.items())))
    if attacks.get("release_epsilon") is not None:
        about.append(("The release's ε", number(attacks["release_epsilon"])))
    head = ["attack", "against", "risk [95 % CI] / AUC", "rates", "ε lower bound", "reading"]
    return ("<h3>Attacks measured on the release</h3><p>Each attack runs against the release, against a bootstrap "
            "of the training rows (which leaks by construction: the attack must show a clear advantage there) and "
            "against independently shuffled columns (a control).</p>"
            + facts(about) + table(head, card_text.attack_rows(attacks), frozenset({4}), "attacks")
            + f'<p class="verdict"><strong>Verdict:</strong> {escape(attacks.get("verdict", "none stated"))}</p>')


def _files(folder: ReleaseFolder) -> str:
    rows = [[f.name, f'<code class="hash">{f.sha256}</code>',
             f"{(f.size if f.size is not None else (folder.path / f.name).stat().st_size):,}"] for f in folder.files]
    rows.append([MANIFEST, f'<code class="hash">{folder.manifest_sha256}</code>',
                 f"{(folder.path / MANIFEST).stat().st_size:,}"])
    body = "".join(f"<tr><td>{escape(name)}</td><td>{sha}</td><td class=\"number\">{size}</td></tr>"
                   for name, sha, size in rows)
    description = next(iter(folder.descriptions.values()))
    parts = [f'<table class="files"><tr><th>file</th><th>SHA-256</th><th class="number">bytes</th></tr>{body}</table>',
             "<p>Every file listed in the manifest was checked against the files on disk when this card was made: "
             "all match.</p>",
             facts([("Software", f"{description.software.get('name', 'synth')} "
                                 f"{description.software.get('version', '?')} (this card: synth {VERSION})"),
                    ("Release created", description.created)])]
    extra = unlisted(folder)
    if extra:
        parts.append(f"<p>Not part of the release (not in its manifest, not vouched for): {escape(', '.join(extra))}. "
                     "An evaluation in the folder read the original data: do not share it with the release.</p>")
    return "\n".join(parts)


def annex_text(folder: ReleaseFolder, problems: Sequence[str]) -> str:
    """The paragraph an agreement can quote."""
    spent = _spent(folder)
    tables = ", ".join(folder.descriptions) if folder.stored is not None else "one table"
    unit = ("one person (a row of the root table with every row that refers to it)" if folder.stored is not None
            else "one row of the table")
    files = ", ".join(f.name for f in folder.files)
    text = (f"The released files ({files}) hold synthetic data ({tables}) generated by synth "
            f"{next(iter(folder.descriptions.values())).software.get('version', '?')} under differential privacy with "
            f"ε = {number(spent['epsilon'])} and δ = {spent['delta']:.3g}, the privacy unit being {unit}, under the "
            f"{_neighbouring(folder)} neighbouring relation. The release is identified by its manifest "
            f"(manifest.json, SHA-256 {folder.manifest_sha256}), which lists the SHA-256 of every file.")
    if problems:
        text += " The guarantee does NOT hold end to end: " + " ".join(problems)
    else:
        text += " The guarantee holds end to end."
    return text


def card_html(folder: ReleaseFolder, evaluation: dict[str, Any] | None = None) -> str:
    """The release card of ``folder`` (whose files were checked) as one HTML page."""
    problems = _problems(folder)
    kind = "relational release" if folder.stored is not None else "release"
    bodies = {"what-was-released": _what_was_released(folder), "guarantee": _guarantee(folder, problems),
              "public-input": _public_input(folder), "budget": _budget(folder),
              "utility-and-attacks": _utility_and_attacks(evaluation), "files": _files(folder),
              "annex": f'<blockquote class="annex">{escape(annex_text(folder, problems))}</blockquote>'}
    sections = "\n".join(f'<section><h2 id="{key}">{escape(title)}</h2>\n{bodies[key]}</section>' for key, title in SECTIONS)
    top = warning_box(problems) if problems else ""
    return page(f"Release card: {folder.path.name}",
                f'<main class="release-card" {CARD_MARK}="{folder.manifest_sha256}">'
                f"<h1>Release card: {escape(kind)} {escape(folder.path.name)}</h1>\n{top}\n{sections}\n</main>",
                contents=True, style=CARD_STYLE)


def load_evaluation(path: str | os.PathLike[str]) -> dict[str, Any]:
    """An evaluation's JSON (``synth evaluate --json``); InputFileError when it is not one."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputFileError(f"cannot read the evaluation {p} ({exc}). Pass the JSON `synth evaluate ... --json` "
                             "wrote.") from exc
    if not isinstance(data, dict) or not ("summary" in data or "tables" in data or "attacks" in data):
        raise InputFileError(f"{p} is not an evaluation written by `synth evaluate ... --json` (no summary, tables or "
                             "attacks in it).")
    return data


def write_card(release: str | os.PathLike[str], out: str | os.PathLike[str],
               evaluation: str | os.PathLike[str] | None = None, force: bool = False) -> Path:
    """Check the release's files against its manifest and write its card to ``out``.

    ReleaseFolderError (naming the files) when a listed file is missing or changed. Without an
    evaluation the card is a shareable file of the release; with one it is the owner's only."""
    folder = read_folder(release)  # checks the files against the manifest
    attached = None if evaluation is None else load_evaluation(evaluation)
    return atomic_write_text(out, card_html(folder, attached), force=force, shared=attached is None)

