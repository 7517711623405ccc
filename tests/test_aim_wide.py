"""aim on wide tables: each round scores a drawn subset of the candidates, and the console shows the time left."""

from __future__ import annotations

import numpy as np
import pytest

from synth.columns.domain import Domain
from synth.engines import aim, make_engine
from synth.engines.aim import RoundClock, scored_subset
from synth.errors import EngineError
from synth.privacy.curator import Curator
from synth.progress import SILENT
from tests.test_engines import curator_for


def _wide_table(seed: int, rows: int = 2000, columns: int = 10) -> tuple[np.ndarray, Domain]:
    """``columns`` columns of 3 codes; column 1 copies column 0 most of the time (seed varies the rows)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, (rows, columns))
    codes[:, 1] = np.where(rng.random(rows) < 0.8, codes[:, 0], codes[:, 1])
    return codes, Domain(tuple(f"c{i}" for i in range(columns)), (3,) * columns)


def _offered(monkeypatch: pytest.MonkeyPatch, codes: np.ndarray, domain: Domain,
             **options: int) -> list[list[tuple[str, ...]]]:
    """The candidates each round of aim offered the exponential mechanism."""
    offered: list[list[tuple[str, ...]]] = []
    select = Curator.select_marginal

    def spy(self: Curator, candidates, *args, **kwargs) -> int:
        offered.append(list(candidates))
        return select(self, candidates, *args, **kwargs)

    monkeypatch.setattr(Curator, "select_marginal", spy)
    make_engine("aim", {"rounds": 14, **options}).describe(curator_for(codes, domain, 1.0), SILENT)
    return offered


def test_a_round_scores_at_most_its_cap_and_the_draw_does_not_read_the_data(monkeypatch):
    # 10 columns: 175 candidates (120 triples, 45 pairs, 10 columns)
    first = _offered(monkeypatch, *_wide_table(seed=0), scored_per_round=12)
    assert first and all(len(round_) <= 12 for round_ in first)
    assert len({tuple(r) for r in first}) > 1  # a new draw each round
    # another table of the same domain: the first round (before any data-dependent choice) offers the same subset
    other = _offered(monkeypatch, *_wide_table(seed=1), scored_per_round=12)
    assert first[0] == other[0]


def test_a_table_within_the_cap_or_with_no_cap_offers_every_candidate_each_round(monkeypatch):
    assert aim.SCORED_PER_ROUND > 175
    for options in ({}, {"scored_per_round": 0}):
        offered = _offered(monkeypatch, *_wide_table(seed=0), **options)
        assert all(len(round_) > 100 for round_ in offered)  # all that fit the model's size cap (175 in all)


def test_scored_per_round_must_be_a_whole_number():
    with pytest.raises(EngineError, match="scored_per_round"):
        make_engine("aim", {"scored_per_round": -1})
    with pytest.raises(EngineError, match="scored_per_round"):
        make_engine("aim", {"scored_per_round": 2.5})


def test_scored_subset_draws_without_replacement_in_candidate_order():
    keys = [((f"c{i}",), ()) for i in range(5000)]
    drawn = scored_subset(keys, np.random.default_rng(0), 2000)
    assert len(drawn) == len(set(drawn)) == 2000
    assert drawn == sorted(drawn, key=keys.index)
    assert scored_subset(keys[:10], np.random.default_rng(0), 2000) == keys[:10]
    assert scored_subset(keys, np.random.default_rng(0), 0) == keys


def test_the_round_clock_scales_the_time_so_far_by_the_budget_left():
    now = [100.0]
    clock = RoundClock(1.0, clock=lambda: now[0])
    assert clock.left(1.0) == ""  # nothing spent yet: no estimate
    now[0] = 130.0
    assert clock.left(0.5) == ", about 30 s left"  # half spent in 30 s
    assert clock.left(0.8) == ", about 2 min left"  # a fifth spent in 30 s: 120 s to go
    assert clock.left(0.0) == ""  # the last round: nothing left to estimate
