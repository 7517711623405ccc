"""One contract for every registered engine: it describes a table within budget, its ledger
composes to the Description's totals, its Description survives a file round trip, it generates
and is inspected, and the privacy audit covers it (an honest case and one with a deliberate bug).

Parametrised over the registry, so an engine registered without its audit cases fails here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from cases import CASES
from test_ledger_integrity import _public_schema, _table

import synth
from synth.description import load_description, save_description
from synth.engines import ENGINES
from synth.inspect.text import inspect_text
from synth.inspect.views import structure
from synth.profile import Profile

FAST_OPTIONS: dict[str, dict[str, Any]] = {  # small runs: the contract, not the accuracy, is tested here
    "aim": {"rounds": 4, "iterations": 20},
    "mwem": {"k": 2, "rounds": 3, "passes": 10},
    "smalldb": {"k": 1, "size": 2},
}
NEEDS_ROWS = {"random"}  # uniform over the domain: it measures nothing, so it cannot count the rows


def _described(name: str) -> synth.Description:
    profile = Profile(schema=_public_schema(), engine=name, epsilon=2.0, delta=1e-6, seed=3,
                      engine_options=FAST_OPTIONS.get(name, {}), rows=50 if name in NEEDS_ROWS else None)
    return synth.describe(_table(600), profile, report_to=None)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_keeps_the_release_contract(name: str, tmp_path) -> None:
    description = _described(name)
    assert description.engine == name
    spent, budget = description.privacy["spent"], description.privacy["budget"]
    assert spent["epsilon"] <= budget["epsilon"] * (1 + 1e-12) and spent["delta"] <= budget["delta"] * (1 + 1e-12)
    totals = description.ledger_totals()
    for key in ("epsilon", "delta", "rho"):
        assert totals[key] == pytest.approx(sum(getattr(e.cost, key) for e in description.ledger), rel=1e-12)
    path = save_description(description, tmp_path / "description.json")
    again = load_description(path)
    assert again.to_dict() == description.to_dict()
    synthetic = synth.generate(again, rows=50, seed=1)
    assert isinstance(synthetic, pd.DataFrame) and synthetic.shape == (50, 3)
    assert list(synthetic.columns) == list(description.schema.output_names)
    assert name in inspect_text(again)
    structure(again)  # the inspector can draw what the engine learnt


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_that_reads_the_data_is_audited_with_a_mutation(name: str) -> None:
    if not _described(name).ledger:
        assert name in NEEDS_ROWS  # only an engine that measures nothing may go without an audit
        return
    cases = [case for case in CASES if case.subject.startswith(f"engine {name} (")]
    assert any(not case.mutation for case in cases), f"engine {name} has no honest audit case in tests/audit/cases.py"
    assert any(case.mutation for case in cases), f"engine {name} has no audit case with a deliberate bug"
