"""aim's coarse candidates: large columns also measured on groups of codes, fitted through derived columns."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines import make_engine
from synth.engines.aim import COARSE_GROUPS, coarse_map
from synth.errors import EngineError
from synth.model.measured import WARM_SHARE
from synth.privacy.measurement import group_table
from synth.progress import SILENT
from tests.test_engines import curator_for


def test_coarse_map_cuts_codes_in_order_into_stretches_of_equal_noisy_mass():
    np.testing.assert_array_equal(coarse_map(np.full(8, 100.0), 4), [0, 0, 1, 1, 2, 2, 3, 3])
    # a code with most of the mass is a group of its own; negative noisy counts weigh nothing
    heavy = coarse_map(np.array([5.0, -3.0, 1000.0, 5.0, 5.0, -1.0]), 3)
    assert heavy[2] not in set(heavy[[0, 1, 3, 4, 5]])
    assert np.all(np.diff(heavy) >= 0) and set(heavy) == set(range(heavy.max() + 1))
    assert coarse_map(np.zeros(5), 8).max() < 5  # never more groups than codes


def test_coarse_groups_below_two_are_refused_and_zero_or_an_empty_list_turns_them_off():
    assert make_engine("aim", {"coarse_groups": 0}).config.resolutions() == ()
    assert make_engine("aim", {"coarse_groups": []}).config.resolutions() == ()
    assert make_engine("aim", {"coarse_groups": 16}).config.resolutions() == (16,)  # as set
    with pytest.raises(EngineError, match="coarse_groups"):
        make_engine("aim", {"coarse_groups": 1})
    with pytest.raises(EngineError, match="coarse_groups"):
        make_engine("aim", {"coarse_groups": [16, "x"]})
    with pytest.raises(EngineError, match="coarse_groups"):
        make_engine("aim", {"coarse_groups": "many"})  # only "auto" is a word it knows


def test_coarse_groups_left_unset_are_sixteen_on_every_table():
    assert make_engine("aim").config.resolutions() == (COARSE_GROUPS,) == (16,)
    codes, domain = _threshold_table()  # 6,000 rows; x has 60 codes: more than twice 16
    engine = make_engine("aim", {"workload": "2-way", "compress": False})
    result = engine.describe(curator_for(codes, domain, 0.1, delta=1e-6), SILENT)
    assert any(int(m.coarsening["x"].max()) + 1 == 16 for m in result.measurements if m.coarsening)


def _threshold_table(rows: int = 6000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """x: 60 ordered codes; y = 1 mostly when x ≥ 30; z independent noise. The (x, y) relation is
    coarse: at a small budget the 120-cell (x, y) table drowns in noise, 8 groups of x do not."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 60, rows)
    y = np.where(rng.random(rows) < 0.9, (x >= 30).astype(int), rng.integers(0, 2, rows))
    z = rng.integers(0, 3, rows)
    return np.column_stack([x, y, z]), Domain(("x", "y", "z"), (60, 2, 3))


def _coarse_error(codes: np.ndarray, domain: Domain, options: dict, seed: int) -> tuple[float, int]:
    """TVD of the (x in 6 equal stretches, y) table between the data and 6000 synthetic rows, and
    how many measurements were coarse."""
    engine = make_engine("aim", {"workload": "2-way", "compress": False, **options})  # x keeps its 60 codes
    result = engine.describe(curator_for(codes, domain, 0.1, delta=1e-6, seed=seed), SILENT)
    model = engine.build_model(domain, result)
    rows = model.sample(len(codes), np.random.default_rng(seed))
    stretches = np.repeat(np.arange(6), 10)

    def table(c: np.ndarray) -> np.ndarray:
        counts = np.zeros((60, 2))
        np.add.at(counts, (c[:, 0], c[:, 1]), 1)
        return group_table(counts, [stretches, None]) / len(c)

    return 0.5 * float(np.abs(table(codes) - table(rows)).sum()), sum(bool(m.coarsening) for m in result.measurements)


def test_coarse_candidates_recover_a_coarse_relation_that_the_fine_table_hides():
    codes, domain = _threshold_table()
    plain = [_coarse_error(codes, domain, {"coarse_groups": 0}, seed) for seed in range(4)]
    coarse = [_coarse_error(codes, domain, {"coarse_groups": 8}, seed) for seed in range(4)]
    assert all(n == 0 for _, n in plain) and all(n >= 1 for _, n in coarse)
    assert np.mean([e for e, _ in coarse]) < 0.6 * np.mean([e for e, _ in plain])


def test_a_coarse_release_round_trips_and_generates_on_the_original_columns():
    codes, domain = _threshold_table()
    engine = make_engine("aim", {"workload": "2-way", "coarse_groups": [8, 4], "compress": False})
    result = engine.describe(curator_for(codes, domain, 0.5, delta=1e-6), SILENT)
    assert engine.options["coarse_groups"] == [8, 4]
    coarse = [m for m in result.measurements if m.coarsening]
    assert coarse and all(int(m.coarsening["x"].max()) + 1 in (8, 4) for m in coarse if "x" in m.coarsening)
    rows = engine.build_model(domain, result).sample(500, np.random.default_rng(1))
    assert rows.shape == (500, 3) and rows[:, 0].max() < 60


def test_the_final_fit_goes_on_from_the_model_aim_left_and_ends_where_a_cold_fit_does():
    """aim hands the model it fitted last (over every coarse map it offered, more derived columns
    than the measurements use) to the release's fit: that fit starts near the optimum a fit from
    the uniform distribution only approaches, and the two end at the same model."""
    codes, domain = _threshold_table()
    engine = make_engine("aim", {"workload": "2-way", "coarse_groups": [8, 4], "compress": False})
    result = engine.describe(curator_for(codes, domain, 0.5, delta=1e-6, seed=2), SILENT)
    assert result.fit_start is not None and len(result.fit_start.domain) > len(domain)
    warm_losses: list[float] = []
    cold_losses: list[float] = []
    warm = engine.build_model(domain, result, 2000, lambda i, loss: warm_losses.append(loss))
    cold = engine.build_model(domain, replace(result, fit_start=None), 2000, lambda i, loss: cold_losses.append(loss))
    assert warm_losses[0] < 0.2 * cold_losses[0]  # started where aim left it, not from scratch
    assert warm_losses[-1] <= cold_losses[-1] * (1 + 1e-3)
    assert len(warm_losses) < len(cold_losses)
    steps: list[int] = []
    engine.build_model(domain, result, 40, lambda i, loss: steps.append(i))
    assert len(steps) == 40 * WARM_SHARE  # from aim's model, the fit runs a share of the iterations
    tvd = 0.5 * np.abs(warm.marginal(("x", "y")) - cold.marginal(("x", "y"))).sum() / warm.total
    assert tvd < 0.005
