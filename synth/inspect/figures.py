"""The inspection report's pictures, drawn with matplotlib's Agg renderer as PNG bytes.

Figures are plain ``matplotlib.figure.Figure`` objects (no pyplot: no global backend, no state
shared between calls), drawn from the numbers ``views`` computed from the Description. Nothing
here reads data.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from matplotlib.figure import Figure

from synth.inspect.views import Dependence, Distribution, Structure
from synth.pages.plotting import ACCENT, png, short
from synth.pages.plotting import heatmap as draw_heatmap

NODE_FILL = "#e3edf8"
MAX_EDGE_WIDTH = 9.0  # edges measured this often or more (labelled with the count) look alike


def bar_chart(distribution: Distribution, codes: np.ndarray) -> bytes:
    """Horizontal bars of ``distribution``'s values at ``codes``, labelled with decoded values."""
    figure = Figure(figsize=(6.4, 0.6 + 0.24 * codes.size))
    axes = figure.add_subplot()
    positions = np.arange(codes.size)
    axes.barh(positions, distribution.values[codes], color=ACCENT if distribution.measured else "#7a9cc6")
    axes.set_yticks(positions, [short(distribution.labels[c]) for c in codes], fontsize=8)
    axes.invert_yaxis()
    axes.axvline(0.0, color="black", linewidth=0.6)
    axes.set_xlabel("noisy count" if distribution.measured else "share of rows (fitted model)")
    axes.spines[["top", "right"]].set_visible(False)
    return png(figure)


def _layers(graph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Positions with every generation of a DAG on its own row, roots at the top."""
    positions = {}
    for depth, generation in enumerate(nx.topological_generations(graph)):
        for i, node in enumerate(generation):
            positions[node] = (i - (len(generation) - 1) / 2, -float(depth))
    return positions


def structure_picture(structure: Structure) -> bytes:
    """The network (arrows parent → child, in layers), or the undirected graph laid out by
    Kamada–Kawai (spring when disconnected; a circle when it has no edges). An edge measured more
    than once is wider and labelled with its count."""
    graph = structure.graph
    directed = graph.is_directed()
    if directed:
        positions = _layers(graph)
    elif graph.number_of_edges():
        positions = (nx.kamada_kawai_layout(graph, weight=None) if nx.is_connected(graph)
                     else nx.spring_layout(graph, weight=None, seed=0))
    else:
        positions = nx.circular_layout(graph)
    side = min(4.0 + 0.35 * graph.number_of_nodes(), 16.0)
    figure = Figure(figsize=(side * 1.3, side))
    axes = figure.add_subplot()
    axes.set_axis_off()
    weights = {e: graph.edges[e].get("weight", 1) for e in graph.edges}
    widths = [min(1.5 * w, MAX_EDGE_WIDTH) for w in weights.values()]
    nx.draw_networkx_nodes(graph, positions, ax=axes, node_size=1600, node_color="none")  # sets the limits
    nx.draw_networkx_edges(graph, positions, ax=axes, width=widths, edge_color=ACCENT, node_size=1600,
                           arrows=True, arrowsize=14, alpha=0.8)  # plain lines when undirected
    nx.draw_networkx_labels(graph, positions, ax=axes, labels={n: short(n) for n in graph}, font_size=9,
                            bbox={"boxstyle": "round,pad=0.3", "fc": NODE_FILL, "ec": ACCENT})
    nx.draw_networkx_edge_labels(graph, positions, ax=axes, font_size=7, font_color=ACCENT,
                                 edge_labels={e: str(w) for e, w in weights.items() if w > 1})
    axes.margins(0.12)
    return png(figure)


def heatmap(dependence: Dependence) -> bytes:
    """Cramér's V of every pair as a square of coloured cells (grey: diagonal or undefined)."""
    return draw_heatmap(dependence.values, dependence.names, "Cramér's V")
