"""The describer: accounting notions chosen from the profile, end to end through the curator."""

from __future__ import annotations

from dataclasses import replace

import pytest

from synth.api import describe
from synth.errors import BudgetError, ProfileError
from synth.profile import Profile, draft_profile
from synth.schema import DomainSource
from tests.conftest import mixed_table


def _mechanisms(description) -> set[str]:
    return {e.mechanism for e in description.ledger}


def test_default_with_delta_is_zcdp_and_aim():
    d = describe(mixed_table(), epsilon=1.0, delta=1e-8, seed=1, report_to=None)
    assert d.engine == "aim"
    assert d.privacy["spent"]["notion"] == "zcdp" and _mechanisms(d) == {"discrete_gaussian", "exponential"}
    assert d.privacy["spent"]["epsilon"] <= 1.0 and d.privacy["spent"]["delta"] <= 1e-8


def test_approx_with_advanced_composition_uses_laplace_and_charges_delta_for_discovery():
    profile = Profile(schema=None, epsilon=1.0, delta=1e-6, accounting="approx", composition="advanced", seed=2)
    d = describe(mixed_table(), profile, report_to=None)
    assert d.privacy["spent"]["notion"] == "approx" and _mechanisms(d) == {"discrete_laplace"}
    category_queries = [e for e in d.ledger if e.query.startswith("categories(")]
    assert category_queries and all(e.cost.delta > 0 for e in category_queries)
    assert d.privacy["spent"]["epsilon"] <= 1.0 and d.privacy["spent"]["delta"] <= 1e-6


def test_pure_dp_with_a_public_schema_spends_no_delta():
    df = mixed_table()
    schema = draft_profile(df).schema
    public = replace(schema, columns=tuple(replace(c, source=DomainSource.PUBLIC) for c in schema.columns))
    d = describe(df, Profile(schema=public, epsilon=0.5, seed=3), report_to=None)
    assert d.privacy["spent"]["notion"] == "pure" and _mechanisms(d) == {"discrete_laplace"}
    assert d.privacy["spent"]["delta"] == 0 and d.privacy["spent"]["epsilon"] == pytest.approx(0.5)
    assert d.end_to_end_dp


def test_inconsistent_accounting_settings_are_refused():
    with pytest.raises(ProfileError, match="accounting"):
        Profile(schema=None, epsilon=1.0, accounting="renyi")
    with pytest.raises(BudgetError):
        describe(mixed_table(), Profile(schema=None, epsilon=1.0, delta=1e-6, accounting="pure", seed=1),
                 report_to=None)
