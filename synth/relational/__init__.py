"""Relational releases: a root table and its child tables under person-level DP (a root row with
every row that references it is the privacy unit). Reads a database through ``synth.tables``-like
readers of its own, bounds each unit's children, and measures each table's part through the
curator and the engines; it never draws noise or charges but through ``synth.privacy``.

Modules: ``source`` (reading a SQLite or DuckDB file or a folder of files, with the declared keys),
``keys`` (the keys' structure: one root, its children), ``profile`` (a relational profile's
tables, keys and bounds), ``degree`` (a bound chosen under DP), ``bounding`` (orphans, contribution bounds, the joined child tables),
``describer`` (the release: budget parts, measurements, the record), ``generation`` (the
synthetic database) and ``writing`` (writing it as the user's kind of database).
"""
