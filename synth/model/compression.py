"""Domain compression: rare codes of a column merged into one, decided from noisy counts only.

MST (McKenna, Miklau, Sheldon 2021) measures every 1-way marginal first and keeps a code only when
its noisy count is at least three noise deviations; the other codes of the column become one
merged code. Later measurements and the model live on the compressed domain; sampled merged
codes are expanded over the original codes they stand for, by the model's sampling scheme, evenly
or in proportion to expansion weights: the merged codes' own noisy 1-way counts, clipped at zero
(``expansion_weights``). ``ExpandedModel`` shows a model fitted on compressed codes on the
original ones. Everything here is post-processing of released measurements.

The threshold (``SUPPORT_THRESHOLD``) is MST's three deviations, checked on the accuracy suite
(aim and mst, ε = 0.3 and 1, seeds 0–2, both halves; benchmarks/RESULTS.md, 2026-12-03 12:45):
against three, the tuning half's geometric mean of the mean 3-way TVD was, for two deviations,
1.004 (aim, ε = 0.3), 1.013 (aim, ε = 1), 1.013 and 1.014 (mst), and for five 1.017, 0.996, 1.006
and 1.001; the checking half with two 1.012, 0.990, 1.012, 1.003, with five 1.000, 1.021, 1.003,
0.999. Neither side of three gains on both budgets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from synth.model.interface import Evidence, Model, marginal_cost
from synth.model.sampling import DEFAULT_DRAWS, Draws, draw
from synth.privacy.measurement import Measurement

SUPPORT_THRESHOLD = 3.0  # noise deviations a noisy count must reach for its code to be kept


def compress_one_way(measurements: Sequence[Measurement]) -> tuple[dict[str, np.ndarray], list[Measurement]]:
    """Compression maps from noisy 1-way counts, and those measurements re-expressed on them.

    A column all of whose codes are supported is not compressed (no map). Otherwise the map sends
    supported codes to 0..k-1 in order and all others to k; the merged cell's value is the sum of
    the merged noisy counts scaled by 1/sqrt(m) (m codes merged), with that weight recorded, so
    every value keeps the original noise deviation.
    """
    maps: dict[str, np.ndarray] = {}
    compressed: list[Measurement] = []
    for m in measurements:
        (name,) = m.attrs
        supported = m.values >= SUPPORT_THRESHOLD * m.std
        if supported.all():
            compressed.append(m)
            continue
        kept = int(supported.sum())
        mapping = np.full(m.values.size, kept, dtype=np.int64)
        mapping[supported] = np.arange(kept)
        maps[name] = mapping
        merged = int((~supported).sum())
        scale = 1.0 / np.sqrt(merged)
        values = np.append(m.values[supported], m.values[~supported].sum() * scale)
        weights = np.append(np.ones(kept), scale)
        compressed.append(Measurement(m.attrs, values, m.mechanism, m.noise_scale, weights))
    return maps, compressed


def expansion_weights(measurements: Sequence[Measurement], maps: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each compressed column, a weight per original code to expand its merged code by: the
    code's noisy 1-way count (from the uncompressed ``measurements``) clipped at zero; all ones
    when no merged count is positive (then the expansion is even). Kept codes weigh 1 (alone in
    their group, the weight does not matter)."""
    counts = {m.attrs[0]: m.values for m in measurements if len(m.attrs) == 1 and m.weights is None}
    out = {}
    for name, mapping in maps.items():
        merged = mapping == mapping.max()
        weights = np.ones(mapping.size)
        clipped = np.clip(np.asarray(counts[name], dtype=float)[merged], 0.0, None)
        if clipped.sum() > 0:
            weights[merged] = clipped
        out[name] = weights
    return out


def check_expansion(expansion: Mapping[str, Sequence[float]], maps: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Expansion weights read from a Description, checked against its compression maps: ValueError
    unless each belongs to a compressed column, has a finite weight ≥ 0 per original code and some
    positive weight in the merged group."""
    out = {}
    for name, values in expansion.items():
        mapping = maps.get(name)
        weights = np.asarray(values, dtype=float)
        if (mapping is None or weights.shape != mapping.shape or not np.isfinite(weights).all()
                or (weights < 0).any() or np.bincount(mapping, weights=weights).min() <= 0):
            raise ValueError(f"the expansion weights of {name!r} do not fit its compression map")
        out[name] = weights
    return out


def compressed_sizes(names: Sequence[str], sizes: Sequence[int], maps: Mapping[str, np.ndarray]) -> tuple[int, ...]:
    """Numbers of codes per column after compression."""
    return tuple(int(maps[n].max()) + 1 if n in maps else s for n, s in zip(names, sizes))


def _shares(mapping: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Each original code's share of its compressed code: its weight over its group's (evenly
    1 / group size without weights; 0 where the group has no weight)."""
    weights = np.ones(mapping.size) if weights is None else np.asarray(weights, dtype=float)
    group = np.bincount(mapping, weights=weights)[mapping]
    return np.divide(weights, group, out=np.zeros_like(weights), where=group > 0)


def expand_codes(codes: np.ndarray, names: Sequence[str], maps: Mapping[str, np.ndarray],
                 rng: np.random.Generator, weights: Mapping[str, np.ndarray] | None = None,
                 sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
    """Compressed codes back to original codes; a merged code becomes one of its codes, uniformly
    or, for a column in ``weights``, with probability proportional to its weight, drawn under
    ``sampling`` (``synth.model.sampling``) among the rows holding it."""
    out = codes.copy()
    for j, name in enumerate(names):
        mapping = maps.get(name)
        if mapping is None:
            continue
        kept = np.nonzero(mapping < mapping.max())[0]
        merged = np.nonzero(mapping == mapping.max())[0]
        column = codes[:, j]
        rows = column == mapping.max()
        out[~rows, j] = kept[column[~rows]]
        shares = _shares(mapping, None if weights is None else weights.get(name))[merged]
        out[rows, j] = merged[draw(int(rows.sum()), shares, rng, sampling)]
    return out


def expand_marginal(marginal: np.ndarray, attrs: Sequence[str], maps: Mapping[str, np.ndarray],
                    weights: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
    """A marginal over compressed codes spread back over the original codes (merged ones evenly,
    or in proportion to their ``weights``)."""
    out = marginal
    for axis, name in enumerate(attrs):
        mapping = maps.get(name)
        if mapping is None:
            continue
        shape = [1] * out.ndim
        shape[axis] = mapping.size
        share = _shares(mapping, None if weights is None else weights.get(name))
        out = np.take(out, mapping, axis=axis) * share.reshape(shape)
    return out


@dataclass(frozen=True)
class ExpandedModel:
    """A model fitted on compressed codes, seen on the original codes of every column.

    The original codes of a merged code share it in proportion to their ``expansion`` weights
    (evenly for a column without), times their ``weights`` (set by ``given``: a condition that
    keeps some of them only)."""

    model: Model
    names: tuple[str, ...]
    compression: Mapping[str, np.ndarray]
    weights: Mapping[str, np.ndarray] = field(default_factory=dict)
    expansion: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return self.model.total

    def _shares(self) -> dict[str, np.ndarray]:
        """Each compressed column's weights for expansion: expansion weights times condition weights."""
        out = dict(self.expansion)
        for name, weights in self.weights.items():
            out[name] = weights * out[name] if name in out else weights
        return out

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        return expand_marginal(self.model.marginal(attrs), attrs, self.compression, self._shares())

    def marginal_cost(self, attrs: Sequence[str]) -> int | None:
        return marginal_cost(self.model, attrs)

    def sample(self, n: int, rng: np.random.Generator, sampling: Draws = DEFAULT_DRAWS) -> np.ndarray:
        return expand_codes(self.model.sample(n, rng, sampling), self.names, self.compression, rng, self._shares(),
                            sampling)

    def given(self, evidence: Evidence) -> ExpandedModel:
        """The model conditioned on evidence over original codes: a merged code's weight is its codes'
        weights averaged by their shares of it, and it then expands in proportion to its codes'
        shares times their weights."""
        compressed, weights, shares = {}, dict(self.weights), self._shares()
        for name, values in evidence.items():
            mapping = self.compression.get(name)
            if mapping is None:
                compressed[name] = values
                continue
            before = weights.get(name)
            values = np.asarray(values, dtype=float)
            compressed[name] = np.bincount(mapping, weights=_shares(mapping, shares.get(name)) * values)
            weights[name] = values if before is None else before * values
        return ExpandedModel(self.model.given(compressed), self.names, self.compression, weights, self.expansion)
