"""mst spreads a merged code over its codes in proportion to their noisy 1-way counts (issue 16).

The weights are the 1-way measurements mst took before merging (post-processing: no new charge),
recorded in its output; a Description written before they were recorded has none, and its merged
codes spread evenly as they did then.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines import make_engine
from synth.engines.mst import MSTOutput
from synth.errors import DescriptionError
from synth.model.compression import compressed_sizes
from synth.progress import SILENT
from tests.test_aim_compression import rare_codes_table
from tests.test_engines import curator_for


@pytest.fixture(scope="module")
def mst_release():
    codes, domain = rare_codes_table()
    curator = curator_for(codes, domain, 1.0)
    engine = make_engine("mst", {})
    result = engine.describe(curator, SILENT)
    model_domain = Domain(("a", "b"), compressed_sizes(("a", "b"), (10, 4), result.compression))
    return curator, engine, result, model_domain


def test_mst_records_the_noisy_counts_it_merged_and_charges_nothing_more(mst_release):
    curator, _, result, _ = mst_release
    assert set(result.compression) == {"a"}
    one_way = {e.query: e for e in curator.accountant.ledger}
    assert "marginal(a)" in one_way and len(curator.accountant.ledger) == 2 + 1 + 1  # 1-way ×2, tree, pair
    weights = np.asarray(result.output.expansion["a"])
    merged = result.compression["a"] == result.compression["a"].max()
    assert weights.shape == (10,) and (weights[merged] >= 0).all() and weights[merged].sum() > 0
    assert not np.allclose(weights[merged], weights[merged][0])  # not an even spread


def test_mst_spreads_merged_codes_by_the_weights_and_evenly_without_them(mst_release):
    _, engine, result, domain = mst_release
    weights = np.asarray(result.output.expansion["a"])
    merged = result.compression["a"] == result.compression["a"].max()
    rare = engine.build_model(domain, result).marginal(["a"])[merged]
    np.testing.assert_allclose(rare / rare.sum(), weights[merged] / weights[merged].sum(), atol=1e-12)
    old = replace(result, output=MSTOutput(result.output.tree))  # as written before the weights were recorded
    rare = engine.build_model(domain, old).marginal(["a"])[merged]
    np.testing.assert_allclose(rare / rare.sum(), np.full(merged.sum(), 1 / merged.sum()), atol=1e-12)


def test_the_mst_output_round_trips_and_damaged_weights_are_refused(mst_release):
    _, engine, result, domain = mst_release
    output = result.output
    assert MSTOutput.from_dict(output.to_dict()) == output
    assert "expansion" not in MSTOutput(output.tree).to_dict()
    assert MSTOutput.from_dict({"tree": [list(p) for p in output.tree]}).expansion == {}
    for damaged in ({"a": [1.0] * 4}, {"b": [1.0] * 4}, {"a": [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]}):
        with pytest.raises(DescriptionError, match="expansion weights"):
            engine.build_model(domain, replace(result, output=replace(output, expansion=damaged)))
