"""The console view of a Description: the privacy ledger and each column's distribution as text.

Reads only the Description (public), never private data. The per-column distributions shown are
the fitted model's, i.e. the noisy measurements after post-processing.
"""

from __future__ import annotations

import math

from synth.columns.kinds import Kind
from synth.generation.generate import fit_model
from synth.release.description import Description
from synth.release.manifest import guarantee_statement

BAR_WIDTH = 30
MAX_VALUES_SHOWN = 12


def _format_cost(cost: object) -> str:
    fields = [(k, getattr(cost, k)) for k in ("epsilon", "delta", "rho")]
    return ", ".join(f"{k}={v:.4g}" for k, v in fields if v)


def inspect_text(description: Description) -> str:
    """The budget ledger as a table and each column's distribution as text bars."""
    spent, budget = description.privacy["spent"], description.privacy["budget"]
    lines = [
        f"synth Description (written by synth {description.software.get('version', '?')}, created {description.created})",
        f"engine: {description.engine}  options: {description.engine_options or '{}'}",
        f"neighbouring relation: {description.neighbouring}   noise: {description.noise}",
        f"budget: epsilon={budget['epsilon']:.6g} delta={budget['delta']:.3g}"
        + (f" rho={budget['rho']:.6g}" if budget.get("rho") is not None else "")
        + f"   spent: epsilon={spent['epsilon']:.6g} delta={spent['delta']:.3g}"
        + (f" rho={spent['rho']:.6g}" if spent.get("rho") is not None else ""),
        guarantee_statement(description),
        "",
        "privacy ledger:",
        f"  {'#':>3}  {'mechanism':<18} {'query':<44} {'sens.':>6} {'scale':>9}  cost",
    ]
    for e in description.ledger:
        lines.append(f"  {e.index:>3}  {e.mechanism:<18} {e.query[:44]:<44} {e.sensitivity:>6.3g} "
                     f"{e.noise_scale:>9.4g}  {_format_cost(e.cost)}")
    model = fit_model(description)
    estimate = f"{model.total:,.0f} (noisy)" if math.isfinite(model.total) else "none: nothing was measured"
    lines += ["", f"estimated rows: {estimate}", "", "columns (noisy distributions):"]
    for column in description.schema.columns:
        marginal = model.marginal([column.name])
        p = marginal / marginal.sum()  # graphical models give counts, product models shares
        labels = column.labels()
        lines.append(f"  {column.name} [{column.kind.value}, domain {column.source.value}, {column.size} codes]")
        order = sorted(range(p.size), key=lambda i: -p[i])[:MAX_VALUES_SHOWN]
        for i in sorted(order):
            bar = "#" * int(round(p[i] * BAR_WIDTH))
            lines.append(f"    {str(labels[i])[:28]:<28} {p[i]:6.1%} {bar}")
        if p.size > MAX_VALUES_SHOWN:
            lines.append(f"    ... {p.size - MAX_VALUES_SHOWN} more codes")
    for unmodelled in description.schema.unmodelled:
        rule = (f"fresh keys shaped {unmodelled.template}" if unmodelled.template else "fresh keys 1, 2, 3, ...") \
            if unmodelled.kind == Kind.ID else "left empty (free text)"
        lines.append(f"  {unmodelled.name} [{unmodelled.kind.value}, not modelled: {rule}]")
    return "\n".join(lines)
