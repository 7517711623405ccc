"""The generator: fit a model to a Description's measurements and sample synthetic rows.

Post-processing only: it reads the Description, never the private data, so what it produces is
as private as the Description. Rows are sampled i.i.d. from the fitted model (never by
deterministic rounding, which invents correlations) and decoded to values of each column's type.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synth.description import Description
from synth.errors import SynthError
from synth.model import fit_model

MAX_ROWS = 100_000_000


def generate(description: Description, rows: int | None = None, seed: int | None = None) -> pd.DataFrame:
    """Sample ``rows`` synthetic rows (default: the profile's ``rows``, else the estimated total).

    ``seed`` makes sampling reproducible; without it the generator draws from OS entropy.
    """
    model = fit_model(description)
    n = rows if rows is not None else description.rows
    if n is None:
        n = int(round(model.total))
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
        raise SynthError(f"the number of rows to generate must be an integer from 1 to {MAX_ROWS:,}; got {n!r}.")
    rng = np.random.default_rng(seed)
    codes = model.sample(int(n), rng)
    return description.schema.decode(codes, rng)
