"""Fit a graphical model to noisy marginals (the Private-PGM estimator of McKenna, Sheldon and
Miklau, ICML 2019), as post-processing of measurements only: it never sees private rows, and
never takes the row count from anywhere but the measurements (or the caller).

The model's cliques are the measured attribute sets (plus any the caller adds); its total is
``estimate_total`` of the measurements unless given. The fit minimises over the marginal polytope

    L(μ) = Σ_m ½ ‖(w_m ⊙ M_m(μ) − y_m) / σ_m‖²

where ``M_m(μ)`` is the model's marginal (in rows) over measurement m's attributes, ``y_m`` its
noisy counts, ``σ_m`` its noise deviation and ``w_m`` its per-cell weights (1 unless the
measurement was re-expressed, e.g. by compression). Measurements of the same attributes are
pooled into one precision-weighted target (the same loss up to a constant).

Algorithm: entropic mirror descent on the clique log-potentials θ. The gradient of L with
respect to each measured marginal is pushed to the clique holding it (broadcast), and
``θ ← θ − η ∇``; belief propagation maps θ back to consistent clique marginals, so every
iterate is a real distribution. The step ``η`` is found by Armijo backtracking (accept when the
loss falls by at least half of what the linearisation predicts, ``½ ⟨∇L, μ − μ_new⟩``, else
halve), starting each iteration from twice the last accepted step when the previous step was
accepted at once. We chose this over the accelerated interior-gradient variant because it
needs no Lipschitz constant: the safe constant ``total² Σ max(w²/σ²)`` is very pessimistic when
many measurements overlap, while the line search adapts to the local curvature, and the
monotone loss it guarantees makes the stopping rule meaningful. The fit stops after
``iterations`` accepted steps, or when the loss fell by less than ``tolerance`` (relative; a
loss below 1, i.e. a misfit below one noise deviation overall, counts as 1) over the last 50
iterations, or when no step size decreases the loss any more.

Warm start: the new model starts from the previous model's distribution projected onto the new
junction tree (θ_C = log μ_C − log μ_separator from the previous model's marginals). When the
previous cliques lie inside the new ones this reproduces the previous model exactly; otherwise
it is the closest distribution (in KL) that the new structure can represent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from synth.measurement import Measurement
from synth.model.domain import Domain
from synth.model.estimation import estimate_total
from synth.model.factor import Factor, align
from synth.model.graphical import FitSummary, GraphicalModel, calibrate, marginalise
from synth.model.junction_tree import JunctionTree, build_junction_tree

WINDOW = 50  # iterations over which the relative loss improvement is judged
ARMIJO = 0.5  # fraction of the predicted decrease a step must achieve
MAX_HALVINGS = 40  # backtracking steps before concluding that no step decreases the loss

Callback = Callable[[int, float], None]


@dataclass(frozen=True)
class _Target:
    """All measurements of one attribute set, pooled: the loss is Σ ½ precision (μ − mean)² + offset.

    The model's marginal is summed from ``source``: the smallest earlier target holding these
    attributes, else the clique ``clique``; gradients flow back the same way.
    """

    attrs: tuple[str, ...]  # in domain order
    clique: int  # index of the junction-tree clique that holds the attributes
    source: int | None  # index of the target this marginal is summed from (None: the clique table)
    around: tuple[str, ...]  # the attributes of the source (target or clique), in its axis order
    mean: np.ndarray  # precision-weighted mean of the measurements, in units of the marginal
    precision: np.ndarray  # Σ w² / σ² per cell
    offset: float  # the loss left when the marginal equals ``mean``


def _checked_attrs(domain: Domain, m: Measurement) -> tuple[str, ...]:
    unknown = [a for a in m.attrs if a not in domain]
    if unknown:
        raise ValueError(
            f"a measurement over {m.attrs} names {unknown}, which the model's domain "
            f"{list(domain.names)} lacks; measure the model's attributes only"
        )
    if len(set(m.attrs)) != len(m.attrs):
        raise ValueError(f"a measurement over {m.attrs} repeats an attribute")
    cells = domain.size(m.attrs)
    if m.values.size != cells:
        raise ValueError(
            f"the measurement over {m.attrs} has {m.values.size} values, but its marginal has "
            f"{cells} cells (sizes {domain.shape(m.attrs)}); was it measured on another (e.g. "
            "uncompressed) domain?"
        )
    if not np.all(np.isfinite(m.values)):
        raise ValueError(f"the measurement over {m.attrs} holds non-finite values")
    return domain.canonical(m.attrs)


def _targets(domain: Domain, tree: JunctionTree, measurements: Sequence[Measurement]) -> list[_Target]:
    pooled: dict[tuple[str, ...], list[tuple[np.ndarray, np.ndarray, float]]] = defaultdict(list)
    for m in measurements:
        key = _checked_attrs(domain, m)
        order = [m.attrs.index(a) for a in key]
        values = np.asarray(m.values, dtype=float).reshape(domain.shape(m.attrs)).transpose(order)
        weights = np.ones(values.shape) if m.weights is None else (
            np.asarray(m.weights, dtype=float).reshape(domain.shape(m.attrs)).transpose(order))
        pooled[key].append((values, weights, m.std))
    targets: list[_Target] = []
    for key in sorted(pooled, key=lambda k: (-len(k), -domain.size(k), [domain.index(a) for a in k])):
        group = pooled[key]
        precision = sum(w**2 / s**2 for _, w, s in group)
        mean = sum(w * y / s**2 for y, w, s in group) / precision
        offset = sum(0.5 * float(np.sum(((w * mean - y) / s) ** 2)) for y, w, s in group)
        holders = [j for j, t in enumerate(targets) if set(key) < set(t.attrs)]
        source = min(holders, key=lambda j: domain.size(targets[j].attrs)) if holders else None
        clique = tree.containing(key) if source is None else targets[source].clique
        around = tree.cliques[clique] if source is None else targets[source].attrs
        targets.append(_Target(
            attrs=key,
            clique=clique,
            source=source,
            around=around,
            mean=mean,
            precision=precision,
            offset=offset,
        ))
    return targets


def _evaluate(targets: Sequence[_Target], marginals: Sequence[np.ndarray]) -> tuple[float, list[np.ndarray], list[np.ndarray]]:
    """The loss, each target's model marginal, and the loss's gradient with respect to it."""
    loss, measured, gradients = 0.0, [], []
    for t in targets:
        mu = marginalise(marginals[t.clique] if t.source is None else measured[t.source], t.around, t.attrs)
        residual = mu - t.mean
        gradient = t.precision * residual
        loss += 0.5 * float(np.vdot(gradient, residual)) + t.offset
        measured.append(mu)
        gradients.append(gradient)
    return loss, measured, gradients


def _directions(tree: JunctionTree, targets: Sequence[_Target], gradients: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
    """The loss's gradient pushed to the cliques: each target's gradient is broadcast into its
    source's (smallest targets first), then the outermost ones into their cliques."""
    incoming: list[list[np.ndarray]] = [[] for _ in targets]
    into_clique: dict[int, list[np.ndarray]] = defaultdict(list)
    for j in reversed(range(len(targets))):
        t = targets[j]
        gradient = sum(incoming[j], start=gradients[j])
        (into_clique[t.clique] if t.source is None else incoming[t.source]).append(align(gradient, t.attrs, t.around))
    directions = {}
    for c, terms in into_clique.items():
        direction = np.zeros(tree.domain.shape(tree.cliques[c]))
        for term in terms:
            direction += term
        directions[c] = direction
    return directions


def _warm_potentials(domain: Domain, tree: JunctionTree, previous: GraphicalModel) -> list[np.ndarray]:
    """Log-potentials on ``tree`` of the previous model's distribution projected onto it."""
    if previous.domain != domain:
        raise ValueError("the warm-start model was fitted on another domain; refit it cold")
    tiny = np.finfo(float).tiny

    def log_marginal(attrs: tuple[str, ...]) -> Factor:
        return Factor(domain.project(attrs), np.log(np.maximum(previous.marginal(attrs), tiny)))

    potentials = [log_marginal(c) for c in tree.cliques]
    for _, child, separator in tree.edges:
        below = log_marginal(separator)
        potentials[child] = potentials[child] + Factor(below.domain, -below.values)
    return [p.values for p in potentials]


def fit_graphical_model(
    domain: Domain,
    measurements: Sequence[Measurement],
    *,
    cliques: Sequence[tuple[str, ...]] | None = None,
    iterations: int = 1000,
    tolerance: float = 1e-6,
    warm_start: GraphicalModel | None = None,
    total: float | None = None,
    callback: Callback | None = None,
) -> GraphicalModel:
    """The graphical model over ``domain`` that best explains ``measurements`` (see the module docstring).

    ``cliques`` adds attribute sets the model must represent jointly besides the measured ones;
    measurements over ``()`` (noisy row counts) only inform the total. ``callback(iteration,
    loss)`` is called after every accepted step. The result's ``fit`` holds the final loss, the
    number of iterations and whether the stopping rule (rather than ``iterations``) ended the fit.
    """
    measurements = list(measurements)
    for m in measurements:
        _checked_attrs(domain, m)
    if total is None:
        total = estimate_total(measurements)
    if not (np.isfinite(total) and total > 0):
        raise ValueError(f"the total must be a positive number of rows; got {total}")
    if iterations < 0:
        raise ValueError(f"iterations must be at least 0; got {iterations}")
    measured = [m for m in measurements if m.attrs]
    tree = build_junction_tree(domain, [m.attrs for m in measured] + list(cliques or []))
    targets = _targets(domain, tree, measured)
    if warm_start is None:
        theta = [np.zeros(domain.shape(c)) for c in tree.cliques]
    else:
        theta = _warm_potentials(domain, tree, warm_start)
    loss, measured_marginals, gradients = _evaluate(targets, calibrate(tree, theta, total))
    step = 1.0 / (total * sum(float(t.precision.max()) for t in targets)) if targets else 0.0
    history = [loss]
    grow = True
    converged = not targets
    iteration = 0
    while iteration < iterations and not converged:
        direction = _directions(tree, targets, gradients)
        step = 2 * step if grow else step
        for halvings in range(MAX_HALVINGS + 1):
            trial = [theta[c] - step * direction[c] if c in direction else theta[c] for c in range(len(theta))]
            trial_loss, trial_marginals, trial_gradients = _evaluate(targets, calibrate(tree, trial, total))
            predicted = sum(float(np.vdot(g, mu - new)) for g, mu, new in zip(gradients, measured_marginals, trial_marginals))
            if trial_loss <= loss - ARMIJO * predicted:
                break
            step /= 2
        else:
            converged = True  # no step size lowers the loss: at the optimum up to rounding
            break
        grow = halvings == 0
        theta, loss, measured_marginals, gradients = trial, trial_loss, trial_marginals, trial_gradients
        iteration += 1
        history.append(loss)
        if callback is not None:
            callback(iteration, loss)
        if iteration >= WINDOW:
            before = history[-1 - WINDOW]
            converged = before - loss <= tolerance * max(before, 1.0)
    potentials = {c: Factor(domain.project(c), values) for c, values in zip(tree.cliques, theta)}
    return GraphicalModel(domain, tree, potentials, total, FitSummary(loss, iteration, converged))
