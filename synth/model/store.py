"""Fitted models as files: numpy arrays in an ``.npz`` archive with JSON metadata, and no pickle.

``write_model`` stores a model (a graphical model, possibly with derived coarse columns,
independent columns, a histogram, a Bayesian network, or any of them on compressed codes) with the caller's metadata and any extra text
(the generator stores the Description the model was fitted to); ``read_model`` reads it back
with ``allow_pickle=False``, checking every shape against the structure the metadata states, so
a damaged or foreign file is a ``ModelFileError``, never a wrong model. Arrays are stored
exactly (float64), so a model read back samples exactly as the one written. Files are written
atomically (``synth.files``) and are meant to be shared: a model is post-processing of a
Description and holds nothing else.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from synth.columns.domain import Domain
from synth.errors import ModelFileError
from synth.files import atomic_write
from synth.model.bayesian_network import BayesianNetwork, Conditional
from synth.model.compression import ExpandedModel
from synth.model.derived import DerivedModel
from synth.model.factor import Factor
from synth.model.graphical import FitSummary, GraphicalModel
from synth.model.histogram import HistogramModel
from synth.model.independent import ProductModel
from synth.model.interface import Model
from synth.model.junction_tree import JunctionTree

FORMAT = "synth-model"
FORMAT_VERSION = 1
_METADATA = "metadata.json"
_TEXT = "text/"

Arrays = dict[str, np.ndarray]


def _domain_dict(domain: Domain) -> dict[str, Any]:
    return {"names": list(domain.names), "sizes": list(domain.sizes)}


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None  # JSON has no nan: the random engine's model has no total


def _encode(model: Model, key: str, arrays: Arrays) -> dict[str, Any]:
    """The model's structure as JSON data; its tables go into ``arrays`` under names starting with ``key``."""
    if isinstance(model, ExpandedModel):
        if model.weights:
            raise TypeError("a conditioned model is not stored; store the model before conditioning it")
        for j, name in enumerate(model.names):
            if name in model.compression:
                arrays[f"{key}/compression/{j}"] = np.asarray(model.compression[name], dtype=np.int64)
            if name in model.expansion:
                arrays[f"{key}/expansion/{j}"] = np.asarray(model.expansion[name], dtype=float)
        return {"type": "expanded", "names": list(model.names), "compressed": sorted(model.compression),
                "expanded": sorted(model.expansion), "model": _encode(model.model, f"{key}/model", arrays)}
    if isinstance(model, DerivedModel):
        return {"type": "derived", "base": _domain_dict(model.base), "model": _encode(model.model, f"{key}/model", arrays)}
    if isinstance(model, GraphicalModel):
        for i, table in enumerate(model.log_potentials):
            arrays[f"{key}/potential/{i}"] = table
        tree = model.junction_tree
        return {"type": "graphical", "domain": _domain_dict(model.domain), "total": model.total,
                "cliques": [list(c) for c in tree.cliques],
                "edges": [[parent, child, list(separator)] for parent, child, separator in tree.edges],
                "fit": None if model.fit is None else {"loss": model.fit.loss, "iterations": model.fit.iterations,
                                                       "converged": model.fit.converged}}
    if isinstance(model, ProductModel):
        for j, p in enumerate(model.probabilities):
            arrays[f"{key}/probabilities/{j}"] = p
        return {"type": "independent", "domain": _domain_dict(model.domain), "total": _number(model.total)}
    if isinstance(model, HistogramModel):
        arrays[f"{key}/counts"] = model.counts
        return {"type": "histogram", "domain": _domain_dict(model.domain)}
    if isinstance(model, BayesianNetwork):
        nodes = []
        for i, c in enumerate(model.conditionals):
            arrays[f"{key}/table/{i}"] = c.table
            for k, groups in enumerate(c.groups):
                if groups is not None:
                    arrays[f"{key}/groups/{i}/{k}"] = np.asarray(groups, dtype=np.int64)
            nodes.append({"attribute": c.attribute, "parents": list(c.parents),
                          "coarse": [groups is not None for groups in c.groups]})
        return {"type": "network", "domain": _domain_dict(model.domain), "total": model.total, "conditionals": nodes}
    raise TypeError(f"a {type(model).__name__} cannot be stored")


def _array(arrays: Mapping[str, np.ndarray], name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    table = arrays[name]
    if shape is not None and table.shape != shape:
        raise ValueError(f"{name} has shape {table.shape}, its structure says {shape}")
    return table


def _tree(domain: Domain, cliques: tuple[tuple[str, ...], ...], edges: tuple[tuple[int, int, tuple[str, ...]], ...]
          ) -> JunctionTree:
    """The junction tree the file states, if it is one: every attribute in a clique, each clique but the
    root the child of exactly one earlier clique, its separator what the two share, laid out first."""
    children = [child for _, child, _ in edges]
    if sorted(children) != list(range(1, len(cliques))) or set().union(*map(set, cliques)) != set(domain.names):
        raise ValueError("the junction tree's edges or cliques do not form a tree over the domain")
    placed = {0}
    for parent, child, separator in edges:
        shared = tuple(a for a in cliques[child] if a in cliques[parent])
        if parent not in placed or separator != shared or cliques[child][:len(separator)] != separator:
            raise ValueError(f"the junction tree's edge {parent} -> {child} is inconsistent with its cliques")
        placed.add(child)
    return JunctionTree(domain, cliques, edges)


def _decode(meta: Mapping[str, Any], key: str, arrays: Mapping[str, np.ndarray]) -> Model:
    """The model ``_encode`` described by ``meta``; KeyError, TypeError or ValueError if they disagree."""
    kind = meta["type"]
    if kind == "expanded":
        names = tuple(meta["names"])
        compression = {name: _array(arrays, f"{key}/compression/{names.index(name)}") for name in meta["compressed"]}
        expansion = {name: _array(arrays, f"{key}/expansion/{names.index(name)}", compression[name].shape)
                     for name in meta.get("expanded", [])}
        return ExpandedModel(_decode(meta["model"], f"{key}/model", arrays), names, compression, expansion=expansion)
    if kind == "derived":
        base = Domain(tuple(meta["base"]["names"]), tuple(meta["base"]["sizes"]))
        inner = _decode(meta["model"], f"{key}/model", arrays)
        if not isinstance(inner, GraphicalModel) or (inner.domain.names[:len(base)], inner.domain.sizes[:len(base)]) != (
                base.names, base.sizes):
            raise ValueError("a model with derived columns must be a graphical model whose domain starts with its base")
        return DerivedModel(inner, base)
    domain = Domain(tuple(meta["domain"]["names"]), tuple(meta["domain"]["sizes"]))
    if kind == "graphical":
        cliques = tuple(tuple(c) for c in meta["cliques"])
        edges = tuple((int(p), int(c), tuple(s)) for p, c, s in meta["edges"])
        potentials = {clique: Factor(domain.project(clique),
                                     _array(arrays, f"{key}/potential/{i}", domain.shape(clique)))
                      for i, clique in enumerate(cliques)}
        fit = None if meta["fit"] is None else FitSummary(float(meta["fit"]["loss"]), int(meta["fit"]["iterations"]),
                                                          bool(meta["fit"]["converged"]))
        return GraphicalModel(domain, _tree(domain, cliques, edges), potentials, float(meta["total"]), fit)
    if kind == "independent":
        probabilities = tuple(_array(arrays, f"{key}/probabilities/{j}", (size,))
                              for j, size in enumerate(domain.sizes))
        return ProductModel(domain, probabilities, math.nan if meta["total"] is None else float(meta["total"]))
    if kind == "histogram":
        return HistogramModel(domain, _array(arrays, f"{key}/counts", domain.sizes))
    if kind == "network":
        conditionals = []
        for i, node in enumerate(meta["conditionals"]):
            parents = tuple(node["parents"])
            groups = tuple(_array(arrays, f"{key}/groups/{i}/{k}", domain.shape([p])) if coarse else None
                           for k, (p, coarse) in enumerate(zip(parents, node["coarse"], strict=True)))
            shape = tuple(domain.shape([p])[0] if g is None else int(g.max()) + 1 for p, g in zip(parents, groups))
            table = _array(arrays, f"{key}/table/{i}", (*shape, *domain.shape([node["attribute"]])))
            conditionals.append(Conditional(node["attribute"], parents, groups, table))
        return BayesianNetwork(domain, tuple(conditionals), float(meta["total"]))
    raise ValueError(f"unknown model type {kind!r}")


def write_model(path: str | os.PathLike[str], model: Model, metadata: Mapping[str, Any],
                texts: Mapping[str, str] | None = None, force: bool = False) -> Path:
    """Write ``model`` with ``metadata`` (JSON data) and ``texts`` (named UTF-8 texts) to ``path``,
    atomically and without pickle."""
    arrays: Arrays = {}
    structure = _encode(model, "model", arrays)
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "metadata": dict(metadata), "model": structure}
    arrays[_METADATA] = np.frombuffer(json.dumps(document, allow_nan=False).encode("utf-8"), dtype=np.uint8)
    for name, text in (texts or {}).items():
        arrays[_TEXT + name] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            np.savez(handle, allow_pickle=False, **arrays)

    return atomic_write(path, write, force, shared=True)


def read_model(path: str | os.PathLike[str]) -> tuple[Model, dict[str, Any], dict[str, str]]:
    """The model, metadata and texts ``write_model`` wrote to ``path``. ModelFileError if the file is
    missing, unreadable, damaged, of another format or version, or inconsistent."""
    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"no saved model at {p}. Save one with `synth generate` or model.save(path).")
    try:
        with np.load(p, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        document = json.loads(bytes(arrays.pop(_METADATA)).decode("utf-8"))
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ModelFileError(f"{p} is not a synth model file. Pass a file written by synth.")
        if document.get("format_version") != FORMAT_VERSION:
            raise ModelFileError(f"{p} is a synth model file of format version {document.get('format_version')!r}; "
                                 f"this synth reads version {FORMAT_VERSION}. Fit the model again.")
        texts = {name[len(_TEXT):]: bytes(arrays.pop(name)).decode("utf-8")
                 for name in list(arrays) if name.startswith(_TEXT)}
        return _decode(document["model"], "model", arrays), dict(document["metadata"]), texts
    except ModelFileError:
        raise
    except (OSError, EOFError, zipfile.BadZipFile, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"{p} is damaged or not a synth model file ({type(exc).__name__}: {exc}). "
                             "Delete it and fit the model again.") from exc
