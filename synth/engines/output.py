"""What an engine releases beside its measurements, and how the inspector pictures it.

Each engine's public output (the tree MST chose, AIM's rounds, PrivBayes's network, ...) is a
frozen dataclass with ``to_dict`` (the JSON the Description holds) and ``from_dict`` (reading it
back, checked: a damaged or hand-edited output is refused with a ``DescriptionError``). ``NoOutput``
serves engines that release nothing more. ``Structure`` is what the inspector draws of what an
engine learnt; ``measured_together`` is the picture for engines without a structure of their own.
Everything here is public: outputs are chosen under DP or from public facts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

import numpy as np

from synth.errors import DescriptionError, EngineError
from synth.privacy.measurement import Measurement

if TYPE_CHECKING:
    import networkx as nx

T = TypeVar("T")


class EngineOutput(Protocol):
    """An engine's public output: JSON data out, checked JSON data in."""

    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self: ...


def output_of(output: object, kind: type[T]) -> T:
    """``output`` as the engine's own output type; EngineError when an engine is handed another's."""
    if not isinstance(output, kind):
        raise EngineError(f"expected an engine output of type {kind.__name__}, got {type(output).__name__}: "
                          "a result reached another engine than the one that made it.")
    return output


@contextmanager
def reading_output(engine: str) -> Iterator[None]:
    """Turn the errors of reading (or using) an engine's output into one DescriptionError."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DescriptionError(
            f"the {engine} output in the Description is incomplete or does not fit its domain "
            f"({type(exc).__name__}: {exc}); use the file exactly as synth wrote it."
        ) from exc


def recorded_expansion(weights: Mapping[str, np.ndarray]) -> dict[str, tuple[float, ...]]:
    """Expansion weights (per compressed column, one per original code) as an output holds them."""
    return {name: tuple(values.tolist()) for name, values in weights.items()}


def write_expansion(data: dict[str, Any], expansion: Mapping[str, tuple[float, ...]]) -> dict[str, Any]:
    """``data`` (an output's ``to_dict``) with its ``expansion`` added when there is one."""
    if expansion:
        data["expansion"] = {name: list(weights) for name, weights in expansion.items()}
    return data


def read_expansion(data: Mapping[str, Any]) -> dict[str, tuple[float, ...]]:
    """An output's optional ``expansion`` (aim with ``compress``, mst): for each compressed column, a
    weight per original code that its merged code is spread by (checked against the compression
    maps when the model is built, ``fit_expanded``)."""
    return {str(name): tuple(float(w) for w in weights) for name, weights in dict(data.get("expansion") or {}).items()}


def check_keys(engine: str, data: Mapping[str, Any], required: Sequence[str], optional: Sequence[str] = ()) -> None:
    """DescriptionError unless ``data`` has every ``required`` key and no key beyond ``optional``."""
    if not isinstance(data, Mapping):
        raise DescriptionError(f"the {engine} output in the Description must be a table; got {data!r}. "
                               "Use the file exactly as synth wrote it.")
    missing = [k for k in required if k not in data]
    unknown = sorted(set(data) - set(required) - set(optional))
    if missing or unknown:
        wrong = " and ".join(([f"lacks the key(s) {missing}"] if missing else [])
                             + ([f"has unknown key(s) {unknown}"] if unknown else []))
        raise DescriptionError(f"the {engine} output in the Description {wrong}; use the file exactly as synth "
                               "wrote it.")


def read_names(value: Any) -> tuple[str, ...]:
    """A list of column names; TypeError otherwise."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value):
        raise TypeError(f"expected a list of column names, got {value!r}")
    return tuple(value)


def read_number(value: Any) -> float:
    """A number (kept as written: an int stays an int); TypeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {value!r}")
    return value


def read_whole(value: Any) -> int:
    """A whole number; TypeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected a whole number, got {value!r}")
    return value


@dataclass(frozen=True)
class NoOutput:
    """The output of an engine that releases nothing beyond its measurements."""

    def to_dict(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        check_keys("engine's", data, ())  # this engine releases no output: any key is an edit
        return cls()


@dataclass(frozen=True)
class Structure:
    """The learnt structure: a directed network (parents → child) or the graph of columns measured
    together (edge weight: how many measured marginals hold both); ``summary`` says which."""

    graph: nx.Graph
    summary: str


def measured_together(names: Sequence[str], measurements: Sequence[Measurement]) -> Structure:
    """The columns measured together: an edge per pair held by a measured marginal."""
    import networkx as nx  # here, not at the top: only pictures need it, and its import costs every run 60 ms

    graph = nx.Graph()
    graph.add_nodes_from(names)
    for m in measurements:
        for a, b in itertools.combinations(m.attrs, 2):
            weight = graph.edges[a, b]["weight"] + 1 if graph.has_edge(a, b) else 1
            graph.add_edge(a, b, weight=weight)
    if not measurements:
        return Structure(graph, "Nothing was measured: the model is uniform over the public domain, "
                                "columns independent, so the picture has no edges.")
    if graph.number_of_edges() == 0:
        return Structure(graph, "No marginal was measured over more than one column: the model treats "
                                "the columns as independent, so the picture has no edges.")
    joint = sum(1 for m in measurements if len(m.attrs) > 1)
    return Structure(graph, f"Columns joined by an edge were measured together ({joint} joint "
                            "marginals); an edge's width is the number of measured marginals holding both.")
