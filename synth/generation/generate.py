"""The generator: fit a model to a Description's measurements and sample synthetic rows.

Post-processing only: it reads the Description, never the private data, so what it produces is
as private as the Description. Rows are sampled from the fitted model, by default with rounded
counts per parent configuration, then matched to the model's 3-way marginals
(``synth.model.matching``), or rounded only, or i.i.d., on request (``sampling``, see
``synth.model.sampling``; never by deterministic, unshuffled rounding, which invents
correlations), and decoded to values of each column's type.
Which model a Description stands for is its engine's to say (``Engine.build_model``: most fit the
measurements; a Bayesian network, a replayed histogram or a small database are others); a
Description without measurements is uniform over the domain and needs the number of rows to be
given.

``fit`` returns a ``FittedModel``: the Description with its model, which samples any number of
rows, optionally under conditions (exact conditional sampling, see ``synth.generation.conditions``), and
can be saved to a file (``synth.model.store``) and loaded again with ``load_model``. A saved model
records the digest of the Description it was fitted to (SHA-256 of its canonical JSON) and the
fitting iterations, so a model is never paired with another Description.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.domain import Domain
from synth.columns.unmodelled import KeyRange
from synth.defaults import FIT_ITERATIONS, VERSION
from synth.engines import released_by
from synth.errors import ConditionError, DescriptionError, ModelFileError, SynthError
from synth.generation.conditions import condition_text, evidence, read_conditions, values_in_ranges
from synth.model import matching
from synth.model.bayesian_network import BayesianNetwork
from synth.model.compression import ExpandedModel
from synth.model.derived import DerivedModel
from synth.model.graphical import GraphicalModel
from synth.model.histogram import HistogramModel
from synth.model.interface import Model
from synth.model.sampling import DEFAULT_SAMPLING, check_sampling
from synth.model.store import read_model, write_model
from synth.progress import SILENT, Progress
from synth.release.description import Description, load_description

MAX_ROWS = 100_000_000
CHUNK_ROWS = 1_000_000  # rows sampled and written at a time by sample_chunks


def fit_model(description: Description, iterations: int = FIT_ITERATIONS, progress: Progress = SILENT) -> Model:
    """The model the Description's release stands for, on the original codes (its engine's
    ``build_model``), with a bar for the iterations of a fit."""
    engine = released_by(description.engine, description.engine_options)
    with progress.counter("fitting the model", iterations) as advance:
        return engine.build_model(description.model_domain, description.result, iterations,
                                  lambda iteration, loss: advance(iteration))


def description_digest(description: Description) -> str:
    """SHA-256 of the Description's canonical JSON (keys sorted, no spaces): the same for the
    Description in memory and as read back from its file, different after any edit."""
    text = json.dumps(description.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _model_summary(model: Model) -> str:
    """A few words on what a model is, for ``repr``."""
    if isinstance(model, ExpandedModel):
        inner = _model_summary(model.model)
        return f"{inner}, {len(model.compression)} column(s) compressed" if model.compression else inner
    if isinstance(model, DerivedModel):
        return f"{_model_summary(model.model)} with {len(model.model.domain) - len(model.base)} derived coarse column(s)"
    if isinstance(model, GraphicalModel):
        fitted = f", fitted in {model.fit.iterations} iterations" if model.fit is not None else ""
        return (f"graphical model on {len(model.cliques)} cliques ({model.junction_tree.size_mb:.3g} MiB){fitted}")
    if isinstance(model, BayesianNetwork):
        return f"Bayesian network of {len(model.conditionals)} columns"
    if isinstance(model, HistogramModel):
        return f"histogram of {model.counts.size:,} cells"
    return "independent columns"


class FittedModel:
    """A Description with its fitted model: samples synthetic tables, with or without conditions.

    Build one with ``fit(description)`` or ``load_model(path)``; ``save(path)`` writes it. ``digest``
    is the Description's (``description_digest``), ``iterations`` the fitting iterations asked for.
    """

    def __init__(self, description: Description, model: Model, iterations: int, digest: str | None = None) -> None:
        self.description = description
        self.model = model
        self.iterations = iterations
        self.digest = description_digest(description) if digest is None else digest

    def __repr__(self) -> str:
        d = self.description
        rows = "" if math.isnan(self.model.total) else f", about {self.model.total:,.0f} rows"
        return (f"<FittedModel {d.engine}: {_model_summary(self.model)}; {len(d.schema.output_names)} columns{rows}; "
                f"Description {self.digest[:12]}>")

    def rows_to_sample(self, rows: int | None) -> int:
        """``rows`` if given, else the Description's rows, else the model's (noisy) total rounded."""
        n = rows if rows is not None else self.description.rows
        if n is None and math.isnan(self.model.total):
            raise SynthError(
                f"this Description (engine {self.description.engine!r}) measured nothing, so there is no row count "
                "to generate as many rows as: pass --rows N (rows= in Python), or set rows in the profile's [release]."
            )
        if n is None:
            n = int(round(self.model.total))
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_ROWS:
            raise SynthError(f"the number of rows to generate must be an integer from 1 to {MAX_ROWS:,}; got {n!r}.")
        return int(n)

    def sample(self, rows: int | None = None, conditions: Mapping[str, Any] | None = None,
               seed: int | None = None, sampling: str = DEFAULT_SAMPLING, progress: Progress = SILENT,
               piece: KeyRange | None = None) -> pd.DataFrame:
        """``rows`` synthetic rows (default: the profile's ``rows``, else the estimated total), as a DataFrame.

        ``conditions`` maps columns to what their cells must hold (a value, a list of values, a
        range ``(low, high)`` or ``"low..high"``; see ``synth.generation.conditions``): the rows are then drawn
        from the model's conditional distribution, exactly. ``seed`` makes sampling reproducible;
        without it the generator draws from OS entropy. ``sampling`` is ``"matched"`` (the default:
        rounded draws, then adjusted until the table's 3-way marginals follow the model's, see
        ``synth.model.matching``), ``"rounded"`` (each column's counts per parent configuration are
        its expected counts rounded, randomly) or ``"iid"`` (independent draws, with multinomial
        noise); under conditions, the conditioned model's. ConditionError for an unknown column or
        value, or conditions the model gives no probability; SamplingError for another ``sampling``.
        ``piece``: where these rows lie in a table sampled in pieces (``sample_chunks``), for the fresh keys.
        """
        scheme = check_sampling(sampling)
        schema = self.description.schema
        n = self.rows_to_sample(rows)
        read = read_conditions(schema, conditions or {})
        model = self.model
        if read:
            try:
                model = model.given(evidence(read))
            except ConditionError as error:
                raise ConditionError(f"{condition_text(read)}: {error}") from None
        rng = np.random.default_rng(seed)
        codes = matching.sample_codes(model, Domain(schema.names, schema.sizes), n, rng, scheme, progress)
        table = schema.decode(codes, rng, piece)
        for name, values in values_in_ranges(schema, read, codes, rng).items():
            table[name] = values.set_axis(table.index)
        return table

    def sample_chunks(self, rows: int | None = None, conditions: Mapping[str, Any] | None = None,
                      seed: int | None = None, sampling: str = DEFAULT_SAMPLING,
                      chunk_rows: int | None = None, progress: Progress = SILENT) -> Iterator[pd.DataFrame]:
        """``sample``'s rows as consecutive tables of at most ``chunk_rows`` (default ``CHUNK_ROWS``)
        rows, so that a table larger than memory can be written piece by piece. Up to ``chunk_rows``
        rows this is one ``sample`` (the same rows under the same seed); beyond, each chunk is
        sampled on its own (rounded within the chunk), with a seed drawn from ``seed``'s sequence
        when seeded, and the fresh keys of unmodelled id columns run on across the chunks (distinct
        in the whole table)."""
        n = self.rows_to_sample(rows)
        chunk_rows = chunk_rows or CHUNK_ROWS
        if n <= chunk_rows:
            yield self.sample(n, conditions, seed, sampling, progress)
            return
        seeds = np.random.SeedSequence(seed)
        keys_seed = int(seeds.generate_state(1)[0])  # one for every chunk: their fresh keys are distinct
        for start in range(0, n, chunk_rows):
            chunk_seed = int(seeds.spawn(1)[0].generate_state(1)[0])
            size = min(chunk_rows, n - start)
            # a chunk too large to match only repeats the first chunk's note saying so: keep it quiet
            shown = progress if start == 0 or size <= matching.MAX_ROWS else SILENT
            yield self.sample(size, conditions, chunk_seed, sampling, shown, KeyRange(start, n, keys_seed))

    def in_one_chunk(self, rows: int | None = None) -> bool:
        """Whether ``sample_chunks`` gives these rows as one table (at most ``CHUNK_ROWS``)."""
        return self.rows_to_sample(rows) <= CHUNK_ROWS

    def save(self, path: str | os.PathLike[str], force: bool = False) -> Path:
        """Write the model and its Description to ``path`` (an ``.npz`` archive, no pickle), atomically;
        refused if the file exists, unless ``force``."""
        metadata = {"description_sha256": self.digest, "iterations": self.iterations, "software": VERSION,
                    "engine": self.description.engine}
        text = json.dumps(self.description.to_dict(), allow_nan=False)
        return write_model(path, self.model, metadata, {"description.json": text}, force)


def fit(description: Description | str | os.PathLike[str], iterations: int = FIT_ITERATIONS,
        progress: Progress = SILENT) -> FittedModel:
    """Fit the model of a Description (or of the Description file at that path); ``iterations``
    bounds a graphical-model fit, ``progress`` shows it. The fitted model keeps the Description
    without the engine's model it may have started from (``Description.fit_start``: memory no
    longer needed)."""
    if not isinstance(description, Description):
        description = load_description(description)
    model = fit_model(description, iterations, progress)
    return FittedModel(replace(description, fit_start=None), model, iterations)


def load_model(path: str | os.PathLike[str]) -> FittedModel:
    """A model saved by ``FittedModel.save`` (or by ``synth generate`` / ``synth run`` beside a
    Description), with the Description it holds. ModelFileError if the file is damaged or of another
    format version, or its model is not that of the Description saved with it."""
    model, metadata, texts = read_model(path)
    try:
        description = Description.from_dict(json.loads(texts["description.json"]))
        digest, iterations = str(metadata["description_sha256"]), int(metadata["iterations"])
    except (KeyError, TypeError, ValueError, DescriptionError) as exc:
        raise ModelFileError(f"{path}: the Description saved with the model is missing or damaged ({exc}). "
                             "Fit the model again.") from exc
    if description_digest(description) != digest:
        raise ModelFileError(f"{path}: the model was fitted to another Description than the one saved with it. "
                             "Fit the model again.")
    return FittedModel(description, model, iterations, digest)


def generate(description: Description, rows: int | None = None, seed: int | None = None,
             iterations: int = FIT_ITERATIONS, conditions: Mapping[str, Any] | None = None,
             sampling: str = DEFAULT_SAMPLING) -> pd.DataFrame:
    """Fit the Description's model and sample ``rows`` synthetic rows (``FittedModel.sample``,
    with its ``conditions``, ``seed`` and ``sampling``).

    ``iterations`` bounds the graphical-model fit (engines that measure joint marginals).
    """
    check_sampling(sampling)  # before the fit
    return fit(description, iterations).sample(rows, conditions, seed, sampling)
