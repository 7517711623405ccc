"""The release manifest: what a data-sharing agreement can point to.

It lists the released files with their SHA-256 digests (these files are DP outputs, so hashing
them is harmless; the private input is never hashed), and restates in plain terms what was spent
and how: notion, budget, spent (ε, δ, ρ), neighbouring relation (under ``replace`` the exact row count
is published), domain, kind and shape provenance (``shape_sources``: where each column's labels,
format, decimals, dayfirst, date_only or key template came from; null for an older release),
whether the noise was seeded (a seeded release carries no privacy guarantee at all, and says so),
and the software version. A release made with a profile drafted under DP (``synth profile
--epsilon``) is one release of two steps: ``steps`` lists the draft and the release, each with what
it spent on its own and its ledger entries, and ``spent`` is their total, within the one budget.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from synth.columns.kinds import DomainSource
from synth.files import atomic_write_text
from synth.release.description import Description

MANIFEST_VERSION = 1


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def guarantee_statement(description: Description) -> str:
    """One paragraph a person can paste into an agreement.

    A seeded release promises nothing: its statement says so first and claims no DP at all.
    """
    spent = description.privacy["spent"]
    produced = (f"These files were produced by synth {description.software.get('version', '?')} with engine "
                f"'{description.engine}'")
    if description.seeded:
        parts = [f"{produced} from SEEDED noise (test mode). They carry NO privacy guarantee, whatever budget "
                 "is stated: anyone who knows or guesses the seed can reproduce the noise and remove it. They "
                 "are for tests and benchmarks only and must not be shared."]
    else:
        parts = [f"{produced}. They satisfy ({spent['epsilon']:.6g}, {spent['delta']:.3g})-differential privacy "
                 f"under the {description.neighbouring} neighbouring relation"]
        if spent.get("rho") is not None:
            parts.append(f" (accounted as {spent['rho']:.6g}-zCDP, converted to (ε, δ))")
        parts.append(".")
    steps = description.privacy.get("steps") or []
    if steps:
        parts.append(" That total covers " + " and ".join(_step_text(step) for step in steps) + ".")
    if not description.end_to_end_dp:
        derived = [n for n, s in description.domain_sources.items() if s == DomainSource.DATA_DERIVED.value]
        shaped = [n for n, keys in (description.shape_sources or {}).items()
                  if DomainSource.DATA_DERIVED.value in keys.values() and n not in derived]
        read = ([f"the domains of {derived}"] if derived else []) + (
            [f"how the values of {shaped} are written"] if shaped else [])
        parts.append(f" NOT end-to-end DP: {' and '.join(read)} were read from the private data without noise.")
    if description.neighbouring == "replace":
        parts.append(" Under the replace relation the exact number of rows is published as part of the release: "
                     "only the rows' contents are protected.")
    return "".join(parts)


def _step_text(step: dict[str, Any]) -> str:
    what = {"profile draft": "drafting the release profile under DP (its kinds, domains and shapes)",
            "release": "the release's own measurements"}.get(step["step"], step["step"])
    entries = step["ledger_entries"]
    return (f"{what}, epsilon = {step['spent']['epsilon']:.6g} on its own (ledger entries {entries['first']} to "
            f"{entries['first'] + entries['count'] - 1})")


def build_manifest(description: Description, description_path: Path, outputs: list[Path]) -> dict[str, Any]:
    files = [description_path, *outputs]
    return {
        "manifest_version": MANIFEST_VERSION,
        "software": description.software,
        "created": description.created,
        "files": [{"name": p.name, "sha256": sha256_of(p), "bytes": p.stat().st_size} for p in files],
        "privacy": {
            "notion": description.privacy["spent"].get("notion"),
            "budget": description.privacy["budget"],
            "spent": description.privacy["spent"],
            "neighbouring": description.neighbouring,
            "row_count_published": description.neighbouring == "replace",
            "privacy_guarantee": not description.seeded,
            "ledger_entries": len(description.ledger),
            "steps": [{"step": s["step"], "spent": s["spent"], "ledger_entries": s["ledger_entries"]}
                      for s in description.privacy.get("steps") or []] or None,
            "end_to_end_dp": description.end_to_end_dp,
            "domain_sources": description.domain_sources,
            "kind_sources": description.privacy.get("kind_sources"),
            "shape_sources": description.shape_sources,
            "noise": description.noise,
        },
        "statement": guarantee_statement(description),
    }


def save_manifest(manifest: dict[str, Any], path: str | os.PathLike[str], force: bool = False) -> Path:
    return atomic_write_text(path, json.dumps(manifest, indent=2) + "\n", force=force, shared=True)
