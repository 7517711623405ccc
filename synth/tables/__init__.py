"""Reading and writing tables (CSV, Parquet), and the counting backends (memory, DuckDB, Spark).
Reads private rows: for the describer, discovery and the evaluation only; writes synthetic tables.
Hands on a DataFrame or a ``CountingTable``, whose exact counts only the privacy boundary may take.
"""
