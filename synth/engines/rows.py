"""The number of rows the query engines scale their answers to, and what knowing it costs.

Under replace-one neighbours the row count is public; under add/remove it is private, and an
engine that needs it spends ``COUNT_SHARE`` of its budget on a noisy count.
"""

from __future__ import annotations

from synth.privacy.boundary import Boundary
from synth.privacy.measurement import Measurement

COUNT_SHARE = 0.02  # of the budget, for an engine's noisy row count under add/remove


def count_rows(curator: Boundary) -> tuple[float, list[Measurement]]:
    """The number of rows the engines scale their answers to, and what measuring it released.

    Under replace-one the count is public (nothing is spent or measured); under add/remove it is
    a noisy count spending ``COUNT_SHARE`` of what is left (at least 1 row).
    """
    if curator.neighbouring.count_is_public:
        return float(curator.public_count()), []
    count = curator.noisy_count(curator.remaining() * COUNT_SHARE)
    return max(float(count.values[0]), 1.0), [count]
