"""Models fitted from a Description's measurements (post-processing only, never the data)."""

from __future__ import annotations

from synth.description import Description
from synth.errors import DescriptionError
from synth.model.independent import ProductModel, fit_product_model


def fit_model(description: Description) -> ProductModel:
    """The model that best explains the Description's measurements."""
    joint = [m.attrs for m in description.measurements if len(m.attrs) > 1]
    if joint:
        raise DescriptionError(
            f"this Description measures joint marginals ({joint[:3]}...), which need the "
            "graphical-model fitter; this synth version only fits 1-way measurements."
        )
    return fit_product_model(description.schema, description.measurements)


__all__ = ["ProductModel", "fit_model"]
