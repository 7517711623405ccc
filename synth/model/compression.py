"""Domain compression: rare codes of a column merged into one, decided from noisy counts only.

MST (McKenna, Miklau, Sheldon 2021) measures every 1-way marginal first and keeps a code only when
its noisy count is at least three noise deviations; the other codes of the column become one
merged code. Later measurements and the model live on the compressed domain; sampled merged
codes are expanded uniformly over the original codes they stand for. Everything here is
post-processing of released measurements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from synth.measurement import Measurement

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


def compressed_sizes(names: Sequence[str], sizes: Sequence[int], maps: Mapping[str, np.ndarray]) -> tuple[int, ...]:
    """Numbers of codes per column after compression."""
    return tuple(int(maps[n].max()) + 1 if n in maps else s for n, s in zip(names, sizes))


def expand_codes(codes: np.ndarray, names: Sequence[str], maps: Mapping[str, np.ndarray],
                 rng: np.random.Generator) -> np.ndarray:
    """Compressed codes back to original codes; a merged code becomes one of its codes, uniformly."""
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
        out[rows, j] = merged[rng.integers(0, merged.size, int(rows.sum()))]
    return out


def expand_marginal(marginal: np.ndarray, attrs: Sequence[str], maps: Mapping[str, np.ndarray]) -> np.ndarray:
    """A marginal over compressed codes spread back over the original codes (merged ones evenly)."""
    out = marginal
    for axis, name in enumerate(attrs):
        mapping = maps.get(name)
        if mapping is None:
            continue
        group_sizes = np.bincount(mapping)
        shape = [1] * out.ndim
        shape[axis] = mapping.size
        out = np.take(out, mapping, axis=axis) / group_sizes[mapping].reshape(shape)
    return out
