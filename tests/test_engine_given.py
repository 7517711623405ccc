"""Given marginals (``synth.engines.given``): which marginals an engine still measures beside them,
and their codes merged where they hold no mass, each merged value keeping its deviation."""

from __future__ import annotations

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines.given import check_given, compress_given, given_columns, touches_own
from synth.privacy.measurement import PARENT_RELEASE, Measurement

DOMAIN = Domain(("p.count", "p.sex", "ward"), (4, 2, 3))


def _given() -> list[Measurement]:
    table = np.array([[30.0, 10.0], [20.0, 20.0], [0.0, 0.0], [0.0, 0.0]])  # counts 2 and 3: no parent
    return [Measurement(("p.count", "p.sex"), table.ravel(), PARENT_RELEASE, 2.0)]


def test_only_marginals_holding_an_uncovered_column_are_worth_measuring() -> None:
    covered = given_columns(_given())
    assert covered == {"p.count", "p.sex"}
    assert touches_own(("p.sex", "ward"), covered) and touches_own(("ward",), covered)
    assert not touches_own(("p.count", "p.sex"), covered) and not touches_own(("p.sex",), covered)


def test_codes_without_given_mass_are_merged_and_keep_their_deviation() -> None:
    maps, expansion, (merged,) = compress_given(_given(), DOMAIN)
    assert set(maps) == {"p.count"}  # p.sex has mass in both codes
    np.testing.assert_array_equal(maps["p.count"], [0, 1, 2, 2])
    np.testing.assert_allclose(expansion["p.count"], [1, 1, 1, 1])  # no merged mass: an even spread
    table = merged.values.reshape(3, 2) / merged.weights.reshape(3, 2)  # the merged cells' sums
    np.testing.assert_allclose(table, [[30, 10], [20, 20], [0, 0]])
    np.testing.assert_allclose(merged.weights.reshape(3, 2), [[1, 1], [1, 1], [2 ** -0.5] * 2])
    assert merged.std == pytest.approx(2.0)


def test_a_given_marginal_must_be_derived_and_name_the_table_s_columns() -> None:
    check_given(_given(), DOMAIN.names)
    with pytest.raises(ValueError, match="mechanism"):
        check_given([Measurement(("p.sex",), np.ones(2), "discrete_gaussian", 1.0)], DOMAIN.names)
    with pytest.raises(ValueError, match="lacks"):
        check_given(_given(), ("p.sex", "ward"))
