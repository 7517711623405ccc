"""One contract for every registered engine: it describes a table within budget, its ledger
composes to the Description's totals, its Description survives a file round trip, it generates
and is inspected, and the privacy audit covers it (an honest case and one with a deliberate bug).

Parametrised over the registry, so an engine registered without its audit cases fails here. A toy
engine (tests/toy_engine.py), registered by one line, shows that a new engine needs no other edit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from cases import CASES
from test_ledger_integrity import _public_schema, _table

import synth
from synth.domains.profile import Profile
from synth.engines import ENGINES
from synth.errors import DescriptionError, EngineError
from synth.inspect.report import report_html
from synth.inspect.text import inspect_text
from synth.inspect.views import structure
from synth.release.description import load_description, save_description
from tests.toy_engine import ToyEngine, ToyOutput

FAST_OPTIONS: dict[str, dict[str, Any]] = {  # small runs: the contract, not the accuracy, is tested here
    "aim": {"rounds": 4, "iterations": 20},
    "mwem": {"workload": "2-way", "rounds": 3, "passes": 10},
    "smalldb": {"workload": "1-way", "size": 2},
}
NEEDS_ROWS = {"random"}  # uniform over the domain: it measures nothing, so it cannot count the rows


def _described(name: str) -> synth.Description:
    profile = Profile(schema=_public_schema(), engine=name, epsilon=2.0, delta=1e-6, seed=3,
                      engine_options=FAST_OPTIONS.get(name, {}), rows=50 if name in NEEDS_ROWS else None)
    return synth.describe(_table(600), profile, report_to=None)


def keeps_the_release_contract(name: str, tmp_path: Path) -> synth.Description:
    """Describe with engine ``name`` through the public API, then check the release: within budget,
    ledger totals, file round trip, generate, inspect (text and report). The Description made."""
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
    edited = description.to_dict()
    edited["engine"]["output"]["edited"] = True
    with pytest.raises(DescriptionError, match=r"unknown key\(s\) \['edited'\]"):
        synth.Description.from_dict(edited)  # the engine's output is checked on load
    synthetic = synth.generate(again, rows=50, seed=1)
    assert isinstance(synthetic, pd.DataFrame) and synthetic.shape == (50, 3)
    assert list(synthetic.columns) == list(description.schema.output_names)
    assert name in inspect_text(again)
    assert structure(again).summary  # the inspector can draw what the engine learnt
    return again


def audit_gaps(name: str) -> list[str]:
    """What the privacy audit (tests/audit/cases.py) lacks for engine ``name``: an honest case
    and one with a deliberate bug; nothing for an engine that spends nothing."""
    if not _described(name).ledger:
        assert name in NEEDS_ROWS  # only an engine that measures nothing may go without an audit
        return []
    cases = [case for case in CASES if case.subject.startswith(f"engine {name} (")]
    return ([] if any(not case.mutation for case in cases) else [f"engine {name} has no honest audit case"]) + (
        [] if any(case.mutation for case in cases) else [f"engine {name} has no audit case with a deliberate bug"])


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_keeps_the_release_contract(name: str, tmp_path: Path) -> None:
    keeps_the_release_contract(name, tmp_path)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_that_reads_the_data_is_audited_with_a_mutation(name: str) -> None:
    assert audit_gaps(name) == [], "add the cases to tests/audit/cases.py"


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> str:
    """Engine ``toy`` (tests/toy_engine.py) in the registry, as one line in synth/engines/__init__.py would put it."""
    monkeypatch.setitem(ENGINES, ToyEngine.name, ToyEngine)
    return ToyEngine.name


def test_an_engine_added_by_one_module_and_one_registry_line_works_everywhere(toy_registered: str,
                                                                             tmp_path: Path) -> None:
    description = keeps_the_release_contract(toy_registered, tmp_path)
    assert description.engine_output == ToyOutput(("colour", "size"))
    assert description.engine_options == {"pair_share": 0.5}
    assert [m.attrs for m in description.measurements][-1] == ("colour", "size")
    picture = structure(description)
    assert set(map(frozenset, picture.graph.edges)) == {frozenset(("colour", "size"))}
    html = report_html(description, iterations=20)
    assert "engine toy" in html and "Learnt structure" in html
    with pytest.raises(EngineError, match=r"engine 'toy' has no option\(s\) \['pairs'\]; its options are \['pair_share'\]"):
        synth.describe(_table(100), Profile(schema=_public_schema(), engine="toy", epsilon=1.0, delta=1e-6,
                                            engine_options={"pairs": 2}), report_to=None)
    # the audit check fails for it until tests/audit/cases.py has its cases
    assert audit_gaps(toy_registered) == ["engine toy has no honest audit case",
                                          "engine toy has no audit case with a deliberate bug"]


def test_a_description_of_an_engine_this_synth_lacks_is_refused(toy_registered: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_description(_described(toy_registered), tmp_path / "description.json")
    monkeypatch.delitem(ENGINES, toy_registered)
    with pytest.raises(DescriptionError, match="made by engine 'toy', which this synth does not have"):
        load_description(path)


@pytest.mark.parametrize("name,edit", [
    ("mst", lambda output: output.update(tree=[["colour", "size", "flag"]])),
    ("aim", lambda output: output.update(rounds="4")),
    ("aim", lambda output: output.update(expansion={"size": ["many"]})),
    ("privbayes", lambda output: output.update(parent_groups={"size": ["low", "high"]})),
    ("mwem", lambda output: output.update(representation="sparse")),
    ("mwem", lambda output: output.pop("passes")),
    ("smalldb", lambda output: output.update(database=[[0.5]])),
    ("smalldb", lambda output: output["workload"].append({"attrs": ["colour"], "groups": {"size": [0, 1]}})),
], ids=lambda value: value if isinstance(value, str) else "")
def test_a_damaged_engine_output_is_refused_on_load(name: str, edit: Any) -> None:
    data = _described(name).to_dict()
    edit(data["engine"]["output"])
    with pytest.raises(DescriptionError, match=f"the {name} output in the Description"):
        synth.Description.from_dict(data)
