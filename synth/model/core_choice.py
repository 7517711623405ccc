"""Whether a kernel's large pass runs on every core or on one: whichever took less time per cell lately.

Passing over a table on every core is about twice as fast as on one while this process has the
machine to itself. When other processes keep the cores busy, every parallel pass waits for its
slowest thread to be scheduled again, and on a busy 2-core machine the every-core passes became
slower than one core's (diamonds at ε = 3 beside another synth run: 224 s on every core, 116 s on
one; benchmarks/RESULTS.md). Both compilations give the same values to the last bit, so the choice
changes only the time a run takes, never its release.

``CoreChoice`` keeps, per kernel and table size (its cells rounded down to a power of two), a moving
average of the seconds per cell each compilation took, prefers the faster one, and runs the other
now and then so that its average follows the machine's load as it comes and goes: one call in
``PROBE_EVERY`` times how many times slower it was (at most ``MOST_SPACING`` times), so that the
probes cost about one call in ``PROBE_EVERY`` of the time. Beside another synth run the every-core
passes of 2¹⁶–2¹⁸ cells were 8–15 times slower than one core's: probing them one call in 32 cost
more than a third of those passes' time.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

PROBE_EVERY = 32  # one call in this many, per kernel and size, runs the compilation not preferred, when as fast
MOST_SPACING = 8  # a compilation that was slower by r is probed one call in PROBE_EVERY × min(r, MOST_SPACING)
WEIGHT = 0.25  # of the newest time in a moving average
MOST_GROWTH = 2.0  # a time counts at most this many times the average it joins (one stall moves it little)


@dataclass
class _Times:
    """The moving averages of seconds per cell, for the one-core [0] and every-core [1] compilation
    (nan until measured), how many calls of each were seen, and the calls since the last probe."""
    average: list[float] = field(default_factory=lambda: [math.nan, math.nan])
    seen: list[int] = field(default_factory=lambda: [0, 0])
    since_probe: int = 0


class CoreChoice:
    """Chooses, for each large pass of a kernel, its every-core or its one-core compilation."""

    def __init__(self, probe_every: int = PROBE_EVERY) -> None:
        self.probe_every = probe_every
        self._times: dict[tuple[str, int], _Times] = {}
        self._lock = threading.Lock()

    def _slot(self, kernel: str, cells: int) -> _Times:
        """The times of ``kernel`` on tables of about ``cells`` cells (the same power of two)."""
        return self._times.setdefault((kernel, cells.bit_length()), _Times())

    def every_core(self, kernel: str, cells: int) -> bool:
        """Whether the next pass of ``kernel`` over ``cells`` cells should run on every core: yes
        until one core is measured faster at that size, and the other way round one call in
        ``probe_every`` times how many times slower the other was (at most ``MOST_SPACING``)."""
        with self._lock:
            times = self._slot(kernel, cells)
            times.since_probe += 1
            one, every = times.average
            prefer_every = math.isnan(one) or not every > one
            slower = 1.0 if math.isnan(one) or math.isnan(every) else max(one, every) / max(min(one, every), 1e-300)
            if times.since_probe >= self.probe_every * min(slower, MOST_SPACING):
                times.since_probe = 0
                return not prefer_every
            return prefer_every

    def record(self, kernel: str, cells: int, every_core: bool, seconds: float) -> None:
        """A pass of ``kernel`` over ``cells`` cells took ``seconds`` on the compilation chosen. The
        first pass of each compilation at each size is not counted (it may load or compile it)."""
        with self._lock:
            times = self._slot(kernel, cells)
            mode = int(every_core)
            times.seen[mode] += 1
            if times.seen[mode] == 1:
                return
            per_cell, average = seconds / max(cells, 1), times.average[mode]
            if math.isnan(average):
                times.average[mode] = per_cell
            else:
                times.average[mode] = average + WEIGHT * (min(per_cell, MOST_GROWTH * average) - average)
