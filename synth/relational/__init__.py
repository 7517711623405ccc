"""Relational releases: a root table and the tables below it under person-level DP (a root row with
every row that references it, at any depth, is the privacy unit). Reads a database through
readers of its own, bounds each unit's rows, and measures each table's part through the curator
and the engines; it never draws noise or charges but through ``synth.privacy``.

Modules: ``source`` (reading a SQLite or DuckDB file, a folder of files or a PostgreSQL database,
with the declared keys), ``keys`` (the keys' structure: a tree from one root), ``profile`` (a
relational profile's tables, keys and bounds), ``degree`` (a bound chosen under DP), ``bounding``
(orphans, contribution bounds, the joined tables), ``describer`` (the release: budget parts,
measurements, the record), ``parent_marginals`` (what a child part is given of its parent's
release), ``generation`` (the synthetic database, chunk by chunk of root rows), ``writing`` (writing
it as the user's kind of database), ``release`` (a run, and a new draw from a release) and
``stored`` (a release folder read back). Comparing a release with the original, for the
data owner, is the evaluation's: ``synth.evaluate.relational`` and ``synth.evaluate.relational_report``.

``is_url`` lives here, importing nothing, so that the command line can tell a PostgreSQL URL from a
path before it loads pandas.
"""

from __future__ import annotations

import os

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_url(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a PostgreSQL URL rather than a path."""
    return isinstance(path, str) and path.lower().startswith(POSTGRES_SCHEMES)
