"""aim on a compressed domain, and merged codes expanded in proportion to their noisy 1-way counts."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines import make_engine
from synth.errors import DescriptionError, EngineError
from synth.model.compression import (
    ExpandedModel,
    compress_one_way,
    compressed_sizes,
    expand_marginal,
    expansion_weights,
)
from synth.model.store import read_model, write_model
from synth.privacy.measurement import Measurement
from synth.progress import SILENT
from tests.test_engines import curator_for

# column a: four common codes, then rare ones (true counts 0 .. 30), all below three noise deviations
RARE = [0, 2, 5, 10, 20, 30]


def rare_codes_table(n_common: int = 3000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """Columns a (4 common codes, 6 rare ones) and b, a noisy copy of a's common code (or 0)."""
    rng = np.random.default_rng(seed)
    a = np.concatenate([np.repeat(np.arange(4), n_common), np.repeat(np.arange(4, 10), RARE)])
    rng.shuffle(a)
    b = np.where(rng.random(a.size) < 0.8, np.minimum(a, 3), rng.integers(0, 4, a.size))
    return np.column_stack([a, b]), Domain(("a", "b"), (10, 4))


def _m(name: str, values: list[float], sigma: float = 2.0) -> Measurement:
    return Measurement((name,), np.asarray(values, dtype=float), "discrete_gaussian", sigma)


def test_expansion_weights_are_the_merged_codes_noisy_counts_clipped_at_zero():
    one_way = [_m("a", [100, 3, 50, -1, 2]), _m("b", [40, 30]), _m("c", [90, -4, 0])]
    maps, _ = compress_one_way(one_way)
    weights = expansion_weights(one_way, maps)
    assert set(weights) == {"a", "c"}
    np.testing.assert_array_equal(weights["a"], [1, 3, 1, 0, 2])  # merged codes 1, 3, 4: 3, clipped -1, 2
    np.testing.assert_array_equal(weights["c"], [1, 1, 1])  # no merged count positive: even


def test_the_expanded_one_way_marginal_follows_the_noisy_counts_exactly():
    one_way = [_m("a", [100, 3, 50, -1, 2])]
    maps, _ = compress_one_way(one_way)
    weights = expansion_weights(one_way, maps)
    merged = np.array([100.0, 50.0, 10.0])  # the model's mass on the kept codes and the merged one
    out = expand_marginal(merged, ["a"], maps, weights)
    np.testing.assert_allclose(out, [100, 10 * 3 / 5, 50, 0, 10 * 2 / 5])
    even = expand_marginal(merged, ["a"], maps)
    np.testing.assert_allclose(even[[1, 3, 4]], [10 / 3] * 3)  # without weights: evenly, as before


@pytest.fixture(scope="module")
def compressed_release():
    codes, domain = rare_codes_table()
    curator = curator_for(codes, domain, 1.0)
    total = curator.remaining()
    engine = make_engine("aim", {"compress": True, "rounds": 8, "iterations": 50})
    return curator, total, engine, engine.describe(curator, SILENT)


def test_compressed_aim_charges_its_one_way_measurements_first_and_spends_exactly_its_budget(compressed_release):
    curator, total, _, result = compressed_release
    ledger = curator.accountant.ledger
    assert [e.query for e in ledger[:2]] == ["marginal(a)", "marginal(b)"]
    assert all(e.mechanism == "discrete_gaussian" for e in ledger[:2])
    spent = sum(Fraction(e.cost.rho) for e in ledger)
    assert float(spent) == pytest.approx(total, rel=1e-9) and spent <= Fraction(total)
    # the rare codes 4..9 of a are merged into one code; b (all common) is not compressed
    assert set(result.compression) == {"a"}
    np.testing.assert_array_equal(result.compression["a"], [0, 1, 2, 3, 4, 4, 4, 4, 4, 4])
    sizes = compressed_sizes(("a", "b"), (10, 4), result.compression)
    assert all(m.values.size == np.prod([dict(zip(("a", "b"), sizes))[x] for x in m.attrs])
               for m in result.measurements)  # everything after the 1-way marginals is on the merged codes
    assert len(result.output.expansion["a"]) == 10


def test_compressed_aim_generates_the_full_domain_in_proportion_to_the_noisy_counts(compressed_release):
    _, _, engine, result = compressed_release
    domain = Domain(("a", "b"), compressed_sizes(("a", "b"), (10, 4), result.compression))
    model = engine.build_model(domain, result)
    assert isinstance(model, ExpandedModel)
    weights = np.asarray(result.output.expansion["a"])
    rare = model.marginal(["a"])[4:]
    np.testing.assert_allclose(rare / rare.sum(), weights[4:] / weights[4:].sum(), atol=1e-12)
    sample = model.sample(50_000, np.random.default_rng(1))
    assert sample[:, 0].max() <= 9 and sample[:, 1].max() <= 3
    counts = np.bincount(sample[:, 0], minlength=10)[4:]
    expected = weights[4:] / weights[4:].sum() * counts.sum()
    assert np.abs(counts - expected).max() <= 1 + 0.05 * counts.sum()  # rounded draws: within rounding
    assert (counts[weights[4:] > 0] > 0).all() and (counts[weights[4:] == 0] == 0).all()


def test_a_condition_on_merged_codes_keeps_their_proportions(compressed_release):
    _, _, engine, result = compressed_release
    domain = Domain(("a", "b"), compressed_sizes(("a", "b"), (10, 4), result.compression))
    model = engine.build_model(domain, result)
    weights = np.asarray(result.output.expansion["a"])
    keep = np.zeros(10)
    keep[[4, 8, 9]] = 1.0
    conditioned = model.given({"a": keep}).marginal(["a"])
    np.testing.assert_allclose(conditioned / conditioned.sum(), keep * weights / (keep * weights).sum(), atol=1e-12)


def test_the_expansion_weights_are_saved_with_the_model(compressed_release, tmp_path):
    _, _, engine, result = compressed_release
    domain = Domain(("a", "b"), compressed_sizes(("a", "b"), (10, 4), result.compression))
    model = engine.build_model(domain, result)
    loaded, _, _ = read_model(write_model(tmp_path / "m.npz", model, {}, {}))
    np.testing.assert_array_equal(loaded.expansion["a"], model.expansion["a"])
    np.testing.assert_allclose(loaded.marginal(["a", "b"]), model.marginal(["a", "b"]))


def test_damaged_expansion_weights_and_a_bad_compress_option_are_refused(compressed_release):
    _, _, engine, result = compressed_release
    domain = Domain(("a", "b"), compressed_sizes(("a", "b"), (10, 4), result.compression))
    for damaged in ({"a": [1.0] * 4}, {"b": [1.0] * 4}, {"a": [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]}):
        with pytest.raises(DescriptionError, match="expansion weights"):
            engine.build_model(domain, replace(result, output=replace(result.output, expansion=damaged)))
    with pytest.raises(EngineError, match="compress must be true or false"):
        make_engine("aim", {"compress": "yes"})
