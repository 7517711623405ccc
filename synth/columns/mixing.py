"""64-bit mixing of integer arrays: splitmix64's finaliser, applied element-wise in place.

It spreads every bit of a word over the whole word, so that nearby inputs (consecutive row
numbers, codes that differ in one column) give unrelated outputs: the round function of the keyed
permutation of fresh keys (``synth.columns.unmodelled``) and the fold of a code row into one hash
(``synth.evaluate.privacy``). Not a cryptographic hash.
"""

from __future__ import annotations

import numpy as np


def mix64(words: np.ndarray) -> np.ndarray:
    """``words`` (uint64) mixed in place by splitmix64's finaliser; returns them."""
    words ^= words >> np.uint64(30)
    words *= np.uint64(0xBF58476D1CE4E5B9)
    words ^= words >> np.uint64(27)
    words *= np.uint64(0x94D049BB133111EB)
    words ^= words >> np.uint64(31)
    return words
