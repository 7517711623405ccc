"""The generator: fit a model to a Description's measurements and sample synthetic rows.

Post-processing only: it reads the Description, never the private data, so what it produces is
as private as the Description. Rows are sampled i.i.d. from the fitted model (never by
deterministic rounding, which invents correlations) and decoded to values of each column's type.
A PrivBayes Description (its engine output has a "network") is sampled from its Bayesian network
unless its ``fit`` option asks for the graphical-model fit; an MWEM Description with an explicit
histogram is replayed into that histogram; a SmallDB Description resamples its small database; a
Description without measurements
(engine ``random``) is uniform over the domain and needs the number of rows to be given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from synth.defaults import FIT_ITERATIONS
from synth.description import Description
from synth.measurement import Measurement
from synth.errors import DescriptionError, SynthError
from synth.model.bayesian_network import network_from_measurements, network_structure
from synth.model.compression import ExpandedModel
from synth.model.domain import Domain
from synth.model.fitting import fit_graphical_model
from synth.model.histogram import database_model, replay_multiplicative_weights
from synth.model.independent import ProductModel, fit_product_model
from synth.model.interface import Model

MAX_ROWS = 100_000_000


def fit_measurements(domain: Domain, measurements: Sequence[Measurement],
                     compression: Mapping[str, np.ndarray], iterations: int = FIT_ITERATIONS) -> Model:
    """The model that best explains ``measurements`` (on ``domain``, the possibly compressed
    codes), seen on the original codes.

    No measurements: uniform columns, with no total (nan). Only 1-way measurements on their own
    codes: independent columns (exact least-squares fit). Otherwise: the graphical model over the
    measured marginals.
    """
    if not measurements:
        return ProductModel(domain, tuple(np.full(size, 1.0 / size) for size in domain.sizes), math.nan)
    if all(len(m.attrs) <= 1 and not m.coarsening for m in measurements) and not compression:
        return fit_product_model(domain, measurements)
    model = fit_graphical_model(domain, measurements, iterations=iterations)
    return ExpandedModel(model, domain.names, compression)


def build_model(engine: str, options: Mapping[str, Any], output: Mapping[str, Any], domain: Domain,
                measurements: Sequence[Measurement], compression: Mapping[str, np.ndarray],
                iterations: int = FIT_ITERATIONS) -> Model:
    """The model an engine's result stands for, on the original codes (``domain``: the codes as
    measured, after compression): the Bayesian network itself for PrivBayes unless its ``fit``
    option is true; MWEM's multiplicative-weights histogram when it used one (replayed from its
    measurements); SmallDB's small database; otherwise the fit of the measurements."""
    try:
        if engine == "smalldb":
            return database_model(domain, np.asarray(output["database"]), float(output["total"]))
        if engine == "mwem" and output.get("representation") == "histogram":
            return replay_multiplicative_weights(domain, measurements, float(output["total"]), int(output["passes"]),
                                                 bool(options["average"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DescriptionError(
            f"the {engine} output in the Description is incomplete or does not fit its domain "
            f"({type(exc).__name__}: {exc}); use the file exactly as synth wrote it."
        ) from exc
    network = output.get("network")
    if network is not None and not options.get("fit", False):
        return network_from_measurements(domain, network_structure(network), measurements)
    return fit_measurements(domain, measurements, compression, iterations)


def fit_model(description: Description, iterations: int = FIT_ITERATIONS) -> Model:
    """The model that best explains the Description's measurements, on the original codes
    (``build_model`` on what the Description holds)."""
    return build_model(description.engine, description.engine_options, description.engine_output,
                       description.model_domain, description.measurements, description.compression, iterations)


def generate(description: Description, rows: int | None = None, seed: int | None = None,
             iterations: int = FIT_ITERATIONS) -> pd.DataFrame:
    """Sample ``rows`` synthetic rows (default: the profile's ``rows``, else the estimated total).

    ``seed`` makes sampling reproducible; without it the generator draws from OS entropy.
    ``iterations`` bounds the graphical-model fit (engines that measure joint marginals).
    """
    n = rows if rows is not None else description.rows
    if n is None and not description.ledger:
        raise SynthError(
            f"this Description (engine {description.engine!r}) measured nothing, so there is no row count "
            "to generate as many rows as: pass --rows N (rows= in Python), or set rows in the profile's [release]."
        )
    model = fit_model(description, iterations)
    if n is None:
        n = int(round(model.total))
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
        raise SynthError(f"the number of rows to generate must be an integer from 1 to {MAX_ROWS:,}; got {n!r}.")
    rng = np.random.default_rng(seed)
    codes = model.sample(int(n), rng)
    return description.schema.decode(codes, rng)
