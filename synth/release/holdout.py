"""Setting real rows aside at release time, as the control set that attacks on the release need.

``synth run DATA --holdout 10%`` sets each row aside on its own with that probability (fresh
randomness, reproducible only with a seed), writes them NEXT TO the private data (``holdout_path``: DATA's name
with ".holdout" before its table suffix, same format), and the release is described from the other
rows only. The held-out rows are private data, to keep with the original: they must never be
written into the release folder, and nothing written into the release may state how many there
are (the share, which the user chose, may be recorded). Not DP: this module reads private rows and
spends nothing; the describer must never see the rows it sets aside.

Each row's fate is its own coin (Poisson sampling), never a fixed number of rows drawn from the
table: a fixed count follows the exact row count, so one row added to the table could move another
row between the kept and the held-out rows, and the release would then differ in two rows, not one.
With a coin per row, a person added or removed changes only their own row of the kept table.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from synth.errors import AttackError
from synth.tables.tableio import CSV_SUFFIXES, PARQUET_SUFFIXES

MAX_SHARE = 0.5  # more held out than kept would starve the release


def parse_share(value: float | str) -> float:
    """A holdout share from "10%", "0.1" or 0.1; AttackError unless it is in (0, MAX_SHARE]."""
    text = str(value).strip()
    try:
        share = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise AttackError(f"--holdout takes a share of the rows, such as 10% or 0.1, not {text!r}.") from None
    if not 0 < share <= MAX_SHARE:
        raise AttackError(f"--holdout {text} is outside (0, {MAX_SHARE:.0%}]: set aside a share such as 10% "
                           "(enough real rows for the attacks' control set, most rows left for the release).")
    return share


def holdout_path(data: str | os.PathLike[str]) -> Path:
    """Where the holdout of the table file ``data`` goes: beside it, ".holdout" before its table
    suffix (adult.csv → adult.holdout.csv, adult.csv.gz → adult.holdout.csv.gz)."""
    path = Path(os.fspath(data))
    name = path.name
    suffix = next((s for s in sorted(CSV_SUFFIXES + PARQUET_SUFFIXES, key=len, reverse=True)
                   if name.lower().endswith(s)), path.suffix)
    return path.with_name(f"{name[:len(name) - len(suffix)]}.holdout{suffix}")


def check_holdout_place(data: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> Path:
    """The holdout's path; AttackError when it would land inside the release folder ``out_dir``."""
    target = holdout_path(data).resolve()
    release = Path(os.fspath(out_dir)).resolve()
    if release == target.parent or release in target.parents:
        raise AttackError(f"the holdout would be written to {target}, inside the release folder {release}: held-out "
                           "rows are private and must never travel with the release. Keep the data outside the "
                           "release folder (-o).")
    return target


def set_aside(frame: pd.DataFrame, share: float, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``frame`` split into the rows kept for the release and those set aside, each row on its own
    with probability ``share`` (row i by the generator's i-th draw; both keep the original order)."""
    chosen = rng.random(len(frame)) < share
    return frame.iloc[np.flatnonzero(~chosen)], frame.iloc[np.flatnonzero(chosen)]


def holdout_statement(share: float) -> dict[str, object]:
    """What the manifest may say of a holdout: its share (the user's choice), never its rows or count."""
    return {"share": share, "statement": f"Each private row was set aside with probability {share:.0%} before the release "
            "as a control set for attacks (kept by the data owner, not released); the release was made from "
            "the other rows."}
