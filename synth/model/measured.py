"""The model of a set of noisy measurements: uniform, independent columns, or a graphical model.

``fit_measurements`` picks the simplest model that explains the measurements it is given and sees
it on the original codes of compressed columns. Post-processing only: it reads measurements,
never data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from synth.columns.domain import Domain
from synth.defaults import FIT_ITERATIONS
from synth.model.compression import ExpandedModel
from synth.model.derived import DerivedModel, derived_for, fit_derived
from synth.model.fitting import Callback, fit_graphical_model, holds
from synth.model.graphical import GraphicalModel
from synth.model.independent import ProductModel, fit_product_model
from synth.model.interface import Model
from synth.privacy.measurement import Measurement

# A fit that starts from the engine's own model (aim's) runs this share of its iterations. aim's last
# model, refitted warm after every round, is near the optimum that a fit from the uniform
# distribution approaches in 1000 iterations: from it, the fit reached the loss of those 1000 in 4
# to 814 iterations (median 379; 13 tables of the accuracy suite at ε = 1 and 3, seed 0), and with
# 500 the model's mean 3-way TVD was the cold fit's within -3.5 % to +0.5 % on every table but
# military at ε = 3 (+1.8 %, 0.000153 against 0.000150); with 300 military lost 4.7 %. Chosen on the
# suite's tuning half, the checking half within ±0.4 % (benchmarks/RESULTS.md, "aim's final fit from
# its last model"). On adult_coded at ε = 3 the final fit took 133 s, now 64 s.
WARM_SHARE = 0.5


def fit_measurements(domain: Domain, measurements: Sequence[Measurement], compression: Mapping[str, np.ndarray],
                     iterations: int = FIT_ITERATIONS, callback: Callback | None = None,
                     expansion: Mapping[str, np.ndarray] | None = None,
                     fit_start: GraphicalModel | None = None) -> Model:
    """The model that best explains ``measurements`` (on ``domain``, the possibly compressed
    codes), seen on the original codes (merged codes spread in proportion to ``expansion``
    weights, evenly for a column without).

    No measurements: uniform columns, with no total (nan). Only 1-way measurements on their own
    codes: independent columns (exact least-squares fit). Otherwise: the graphical model over the
    measured marginals (``callback(iteration, loss)`` after each step of its fit), started from
    ``fit_start`` when that is a model on the domain it fits (e.g. the model aim last fitted while
    choosing its measurements: the fit then goes on from where aim left it, for ``WARM_SHARE`` of
    the ``iterations``), else from the uniform distribution.
    """
    if not measurements:
        return ProductModel(domain, tuple(np.full(size, 1.0 / size) for size in domain.sizes), math.nan)
    if all(len(m.attrs) <= 1 and not m.coarsening for m in measurements) and not compression:
        return fit_product_model(domain, measurements)
    derived = derived_for(domain, measurements)
    fitted_domain = domain if derived is None else derived.domain
    start = fit_start if fit_start is not None and holds(fit_start.domain, fitted_domain) else None
    if start is not None:
        iterations = math.ceil(iterations * WARM_SHARE)
    model: Model = (fit_graphical_model(domain, measurements, iterations=iterations, callback=callback,
                                        warm_start=start)
                    if derived is None else
                    DerivedModel(fit_derived(domain, measurements, derived, iterations=iterations, callback=callback,
                                             warm_start=start), domain))
    return ExpandedModel(model, domain.names, compression, expansion=expansion or {})
