"""Progress display for long steps: a thin wrapper over tqdm that can be silenced.

Library code receives a ``Progress`` object and reports steps through it; only the CLI decides
whether anything is shown (``--quiet`` turns it off). Progress text must never contain private
values: it names steps and columns, not counts from the data.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


class Progress:
    """Shows progress bars on standard error unless ``quiet``."""

    def __init__(self, quiet: bool = True) -> None:
        self.quiet = quiet

    def track(self, items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        """Yield ``items`` while advancing a bar labelled ``description``."""
        if self.quiet:
            yield from items
            return
        with tqdm(items, desc=description, total=total, file=sys.stderr, leave=False,
                  dynamic_ncols=True) as bar:
            yield from bar

    @contextmanager
    def counter(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        """A bar of ``total`` steps for a loop that reports itself: the body calls the function it
        is given with the number of steps done so far (the bar may close before ``total``)."""
        if self.quiet:
            yield lambda done: None
            return
        with tqdm(total=total, desc=description, file=sys.stderr, leave=False, dynamic_ncols=True) as bar:
            yield lambda done: bar.update(done - bar.n)

    def message(self, text: str) -> None:
        """Print a one-line status message (nothing when quiet)."""
        if not self.quiet:
            tqdm.write(text, file=sys.stderr)


SILENT = Progress(quiet=True)
