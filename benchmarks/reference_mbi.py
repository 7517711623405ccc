"""Reference benchmark driver: Private-PGM (`mbi` 2.0 from PyPI) MST and AIM on a coded table.

Runs ONLY inside the separate reference environment /work/venvs/mbi (see
benchmarks/reference_requirements.txt); mbi and JAX are never dependencies of synth, and this
file never imports synth. It measures the reference side of the side-by-side benchmark:

    /work/venvs/mbi/bin/python benchmarks/reference_mbi.py --mechanism mst --epsilon 1 --seed 0
    /work/venvs/mbi/bin/python benchmarks/reference_mbi.py --mechanism aim --epsilon 1 --seed 0
    /work/venvs/mbi/bin/python benchmarks/reference_mbi.py --mechanism mst --epsilon 1 --seed 0 \
        --data TABLE.csv --domain TABLE-domain.json        # any coded table (default: adult_coded)

and prints one JSON line: tool, table, mechanism, epsilon, seed, tvd_3way (mean total-variation
distance over the scored 3-way marginals, original vs synthetic: all of them, or on a wide table a
fixed seeded sample of --max-scored-sets, named in `scored`; pgm_common.scored_column_sets),
tvd_3way_model (same, original vs the fitted model's own marginals), seconds (mechanism +
sampling, wall clock), peak_mib (max RSS of this process), versions, plus a `details` object.
Progress goes to stderr.

Why a driver of our own: the mbi 2.0 wheel ships estimators, not mechanisms, and the MST/AIM
scripts in its repository target the 1.x API (FactoredInference, Dataset.load). The two
mechanisms are re-expressed here with 2.0's Dataset, Domain, LinearMeasurement and
estimation.MirrorDescent, following McKenna, Miklau & Sheldon, "Winning the NIST Contest" (MST,
JPC 2021) and McKenna et al., "AIM" (VLDB 2022), and the logic of mbi's own mechanism scripts:

MST  rho = cdp_rho(eps, delta); sigma = sqrt(3 / (2 rho)). One third of rho measures all 1-way
     marginals (Gaussian, sigma * sqrt(d) each); values whose noisy count is below 3 times that
     noise are merged into one cell (domain compression; the merged measurement is rescaled by
     1/sqrt(#merged)). One third selects d - 1 pairs with the exponential mechanism (score: L1
     error of a model fitted to the 1-way measurements, sensitivity 1, eps_em = sqrt(8 (rho/3) /
     (d - 1)) per pick, growing a spanning tree). One third measures the chosen pairs; mirror
     descent (5000 iterations) fits the model; rows are sampled and decompressed (uniformly
     within a merged cell).
AIM  workload: all 3-way (or 2-way) marginals with at most --max-cells cells (10,000 in mbi's
     script); candidates are the workload's downward closure, weighted by overlap with it.
     rounds T = 16 d; sigma = sqrt(T / (2 * 0.9 rho)), eps = sqrt(8 * 0.1 rho / T); all 1-way
     marginals measured first; then each round picks a candidate with the exponential mechanism
     (score: weight * (L1 error - sqrt(2/pi) sigma n), sensitivity max |weight|) among those whose
     addition keeps the junction tree within max_model_size * (rho used / rho) MB (80 MB by
     default), measures it, refits (1000 mirror-descent iterations, warm start), halves sigma
     and doubles eps when the fit moved less than the expected noise, and spends whatever is
     left in a last round.

Deliberate choices, each switchable for comparison:
- Sampling is i.i.d. from the fitted model (`MarkovRandomField.synthetic_data(method="sample")`);
  mbi 2.0's default there is "round" (randomised rounding, not i.i.d.), and
  `mbi.extensions.synthetic_data` uses Gumbel rounding. `--sampling` selects any of the three.
- The total (row count) used by the estimator is the minimum-variance combination of every
  measurement that determines it, including compressed 1-way measurements (as mbi 1.x did).
  mbi 2.0's own `minimum_variance_unbiased_total` ignores reweighted (compressed) measurements
  and returns 1.0 when none is left; `--total mbi` uses it instead. Only columns that actually
  lose values are compressed, as in mbi's MST script.
- JAX runs in float64 (mbi warns that float32 can stall estimation); `--float32` turns it off.
- Model marginals that the mechanisms score (MST: 91 pairs; AIM: every candidate, every round)
  are computed by numpy variable elimination over the model's log-potentials (`--marginals
  numpy`, the default). mbi's own route, `MarkovRandomField.project` -> `variable_elimination`,
  gives the same numbers (checked: relative difference ~1e-14) but JIT-compiles a new program
  per marginal and per model structure, about 1 s each on this machine; `--marginals mbi`
  selects it (MST at eps = 1: ~180 s instead of ~35 s, same result; AIM: hours).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pgm_common

Clique = tuple[str, ...]


def log(message: str) -> None:
    """Progress message on stderr (stdout carries only the JSON result)."""
    print(f"[reference_mbi {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Privacy arithmetic: zCDP -> (eps, delta) conversion of Canonne, Kamath & Steinke (2020), the
# one mbi's mechanisms use (cdp2adp.py), re-derived here by bisection.
# --------------------------------------------------------------------------------------------

def cdp_delta(rho: float, eps: float) -> float:
    """Smallest delta such that rho-zCDP implies (eps, delta)-DP (tight conversion)."""
    if rho <= 0:
        return 0.0
    lo, hi = 1.01, (eps + 1) / (2 * rho) + 2
    alpha = lo
    for _ in range(1000):
        alpha = (lo + hi) / 2
        slope = (2 * alpha - 1) * rho - eps + math.log1p(-1.0 / alpha)
        if slope < 0:
            lo = alpha
        else:
            hi = alpha
    delta = math.exp((alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)) / (alpha - 1.0)
    return min(delta, 1.0)


def cdp_rho(eps: float, delta: float) -> float:
    """Largest rho such that rho-zCDP implies (eps, delta)-DP."""
    if delta <= 0:
        raise ValueError("delta must be positive for zCDP-based mechanisms")
    lo, hi = 0.0, eps + 1
    for _ in range(1000):
        rho = (lo + hi) / 2
        if cdp_delta(rho, eps) <= delta:
            lo = rho
        else:
            hi = rho
    return lo


def exponential_mechanism(scores: np.ndarray, epsilon: float, sensitivity: float,
                          rng: np.random.Generator) -> int:
    """Index drawn with probability proportional to exp(epsilon * score / (2 * sensitivity))."""
    logits = 0.5 * epsilon / sensitivity * (scores - scores.max())
    probabilities = np.exp(logits - np.logaddexp.reduce(logits))
    probabilities /= probabilities.sum()
    return int(rng.choice(scores.size, p=probabilities))


# --------------------------------------------------------------------------------------------
# mbi plumbing
# --------------------------------------------------------------------------------------------

def import_mbi(x64: bool) -> ModuleType:
    """Configure JAX (precision; persistent compilation cache off) and import mbi."""
    import jax

    jax.config.update("jax_enable_x64", x64)
    # mbi 2.0 warns that JAX's persistent compilation cache is counterproductive for it; it would
    # also make a second run look faster than a fresh one.
    jax.config.update("jax_enable_compilation_cache", False)
    import mbi

    return mbi


def counts(data: Any, clique: Sequence[str]) -> np.ndarray:
    """Flattened counts of an mbi Dataset's marginal over `clique` (in the clique's order)."""
    shape = tuple(data.domain[a] for a in clique)
    flat = np.ravel_multi_index(tuple(np.asarray(data.data[a], dtype=np.int64) for a in clique), shape)
    return np.bincount(flat, minlength=math.prod(shape)).astype(np.float64)


def measure(mbi: ModuleType, data: Any, clique: Sequence[str], stddev: float,
            rng: np.random.Generator) -> Any:
    """Gaussian measurement of one marginal as an mbi LinearMeasurement (identity query)."""
    x = counts(data, clique)
    y = x + rng.normal(0.0, stddev, size=x.size)
    return mbi.LinearMeasurement(y, tuple(clique), stddev=float(stddev))


def total_from_measurements(mbi: ModuleType, measurements: Sequence[Any]) -> float:
    """Minimum-variance estimate of the row count from every measurement that determines it.

    An identity query y = x + noise gives sum(y) with variance sigma^2 * size; a reweighted
    query y = w * x + noise (mbi 2.0's compressed measurement) gives sum(y / w) with variance
    sigma^2 * sum(1 / w^2). Measurements of other kinds are skipped. Same rule as mbi 1.x.
    """
    estimates, variances = [], []
    for m in measurements:
        y = np.asarray(m.noisy_measurement, dtype=np.float64).ravel()
        if isinstance(m.query, mbi.DatavectorQuery):
            estimates.append(y.sum())
            variances.append(m.stddev**2 * y.size)
        elif isinstance(m.query, mbi.WeightedQuery):
            w = np.asarray(m.query.weights, dtype=np.float64).ravel()
            if w.size == y.size and np.all(w > 0):
                estimates.append(float((y / w).sum()))
                variances.append(m.stddev**2 * float((1.0 / w**2).sum()))
    if not estimates:
        return 1.0
    weights = 1.0 / np.asarray(variances)
    return max(1.0, float(np.average(estimates, weights=weights)))


class NumpyMarginals:
    """Marginals of a fitted mbi MarkovRandomField by numpy variable elimination.

    Works on the model's log-potentials, exactly what mbi's `variable_elimination` does in JAX,
    but with no per-marginal compilation. Returned arrays are in the query clique's order and
    sum to the model's total.
    """

    def __init__(self, model: Any) -> None:
        self.sizes: dict[str, int] = dict(model.domain.config)
        self.total = float(model.total)
        self.factors: list[tuple[Clique, np.ndarray]] = [
            (tuple(cl), np.asarray(model.potentials[cl].values, dtype=np.float64))
            for cl in model.potentials.cliques
        ]

    def _aligned(self, attrs: Clique, values: np.ndarray, target: Clique) -> np.ndarray:
        present = [a for a in target if a in attrs]
        values = np.transpose(values, [attrs.index(a) for a in present])
        return values.reshape([self.sizes[a] if a in attrs else 1 for a in target])

    def _combine(self, factors: list[tuple[Clique, np.ndarray]]) -> tuple[Clique, np.ndarray]:
        attrs: list[str] = []
        for cl, _ in factors:
            attrs.extend(a for a in cl if a not in attrs)
        target = tuple(attrs)
        out = np.zeros([1] * len(target))
        for cl, values in factors:
            out = out + self._aligned(cl, values, target)
        return target, np.broadcast_to(out, [self.sizes[a] for a in target])

    def __call__(self, clique: Sequence[str]) -> np.ndarray:
        clique = tuple(clique)
        factors = list(self.factors)
        eliminate = {a for cl, _ in factors for a in cl} - set(clique)
        while eliminate:
            # greedy: the variable whose elimination touches the smallest table
            def cost(z: str, factors: list = factors) -> int:
                scope = {a for cl, _ in factors if z in cl for a in cl}
                return math.prod(self.sizes[a] for a in scope)

            z = min(sorted(eliminate), key=cost)
            eliminate.discard(z)
            touching = [f for f in factors if z in f[0]]
            factors = [f for f in factors if z not in f[0]]
            attrs, values = self._combine(touching)
            axis = attrs.index(z)
            peak = np.max(values, axis=axis, keepdims=True)
            peak = np.where(np.isfinite(peak), peak, 0.0)
            reduced = np.log(np.exp(values - peak).sum(axis=axis)) + np.squeeze(peak, axis=axis)
            factors.append((attrs[:axis] + attrs[axis + 1:], reduced))
        factors.append((clique, np.zeros([self.sizes[a] for a in clique])))
        attrs, values = self._combine(factors)
        values = self._aligned(attrs, np.asarray(values), clique)
        values = np.exp(values - values.max())
        return values * (self.total / values.sum())


def model_marginal_fn(model: Any, how: str) -> Callable[[Clique], np.ndarray]:
    """Flattened marginal of `model` over a clique: via mbi (`model.project`) or numpy."""
    if how == "numpy":
        numpy_marginals = NumpyMarginals(model)
        return lambda cl: numpy_marginals(cl).ravel()
    return lambda cl: np.asarray(model.project(cl).datavector(), dtype=np.float64)


def sample(model: Any, rows: int, how: str, seed: int) -> Any:
    """Draw `rows` records from a fitted model: i.i.d. ('sample') or mbi's rounding schemes."""
    if how == "gumbel":
        from mbi import extensions

        return extensions.synthetic_data(model, rows, seed=seed)
    return model.synthetic_data(rows=rows, method=how)


def fit(mbi: ModuleType, domain: Any, measurements: list[Any], iters: int, total_mode: str,
        warm_start: Any = None) -> tuple[Any, float]:
    """Mirror descent on the measurements; returns the model and the total it used."""
    stock_total = mbi.estimation.minimum_variance_unbiased_total(measurements)
    total = stock_total if total_mode == "mbi" else total_from_measurements(mbi, measurements)
    model = mbi.estimation.MirrorDescent().estimate(
        domain, measurements, known_total=total, iters=iters, warm_start=warm_start
    )
    return model, total


@dataclass
class Outcome:
    """What a mechanism run hands back for scoring."""

    synthetic: Any  # mbi Dataset on the original domain
    model_marginal: Callable[[Clique], np.ndarray]  # model's marginal on the original domain
    details: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# MST
# --------------------------------------------------------------------------------------------

def run_mst(mbi: ModuleType, data: Any, rho: float, args: argparse.Namespace,
            rng: np.random.Generator) -> Outcome:
    """MST (McKenna, Miklau & Sheldon 2021) on mbi 2.0's API; see the module docstring."""
    attrs = list(data.domain.attributes)
    d = len(attrs)
    sigma = math.sqrt(3.0 / (2.0 * rho))

    # 1. all 1-way marginals, rho/3 in total
    sigma1 = sigma * math.sqrt(d)
    oneway = [measure(mbi, data, (a,), sigma1, rng) for a in attrs]

    # 2. compress: merge values whose noisy count is below 3 * noise
    mapping: dict[str, np.ndarray] = {}
    for a, m in zip(attrs, oneway):
        keep = np.asarray(m.noisy_measurement) >= 3 * m.stddev
        if not keep.all():
            code = np.full(keep.size, int(keep.sum()), dtype=np.int64)
            code[keep] = np.arange(int(keep.sum()))
            mapping[a] = code
    cdata = data.compress(mapping)
    cdomain = cdata.domain
    log1 = [m.compress(mapping, data.domain) for m in oneway]
    log(f"MST: compressed {len(mapping)}/{d} columns; domain {dict(cdomain.config)}")

    # 3. select a spanning tree with the exponential mechanism, rho/3 in total
    t0 = time.perf_counter()
    model1, total1 = fit(mbi, cdomain, log1, args.select_iters, args.total)
    marginal = model_marginal_fn(model1, args.marginals)
    pairs = list(itertools.combinations(attrs, 2))
    scores = {p: float(np.abs(counts(cdata, p) - marginal(p)).sum()) for p in pairs}
    log(f"MST: selection model (total {total1:.1f}) and {len(pairs)} pair scores in {time.perf_counter() - t0:.1f} s")
    parent = {a: a for a in attrs}

    def root(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    eps_em = math.sqrt(8 * (rho / 3.0) / (d - 1))
    tree: list[Clique] = []
    for _ in range(d - 1):
        options = [p for p in pairs if root(p[0]) != root(p[1])]
        pick = options[exponential_mechanism(np.array([scores[p] for p in options]), eps_em, 1.0, rng)]
        tree.append(pick)
        parent[root(pick[0])] = root(pick[1])

    # 4. measure the tree's pairs, rho/3 in total; fit; sample; decompress
    sigma2 = sigma * math.sqrt(len(tree))
    log2 = [measure(mbi, cdata, p, sigma2, rng) for p in tree]
    t0 = time.perf_counter()
    model, total = fit(mbi, cdomain, log1 + log2, args.final_iters, args.total)
    log(f"MST: final model (total {total:.1f}, {args.final_iters} iterations) in {time.perf_counter() - t0:.1f} s")
    synthetic = sample(model, data.records, args.sampling, args.seed).decompress(mapping)

    preimage = {a: np.bincount(m)[m] for a, m in mapping.items()}
    numpy_marginals = NumpyMarginals(model)

    def original_marginal(cl: Clique) -> np.ndarray:
        values = numpy_marginals(cl)
        index = np.ix_(*[mapping.get(a, np.arange(data.domain[a])) for a in cl])
        spread = np.ones(tuple(data.domain[a] for a in cl))
        for axis, a in enumerate(cl):
            if a in mapping:
                shape = [1] * len(cl)
                shape[axis] = -1
                spread = spread * preimage[a].reshape(shape)
        return values[index] / spread

    details = {
        "rho": rho,
        "sigma_1way": sigma1,
        "sigma_2way": sigma2,
        "compressed": {a: f"{data.domain[a]}->{cdomain[a]}" for a in mapping},
        "tree": [list(p) for p in tree],
        "total_selection": total1,
        "total_final": total,
        "total_mbi_stock_selection": float(mbi.estimation.minimum_variance_unbiased_total(log1)),
    }
    return Outcome(synthetic, original_marginal, details)


# --------------------------------------------------------------------------------------------
# AIM
# --------------------------------------------------------------------------------------------

def run_aim(mbi: ModuleType, data: Any, rho: float, args: argparse.Namespace,
            rng: np.random.Generator) -> Outcome:
    """AIM (McKenna et al., VLDB 2022) on mbi 2.0's API; see the module docstring."""
    from mbi import junction_tree
    from mbi.clique_utils import downward_closure

    domain = data.domain
    attrs = list(domain.attributes)
    degree = 3 if args.workload == "3way" else 2
    workload = [cl for cl in itertools.combinations(attrs, degree)
                if args.max_cells <= 0 or domain.size(cl) <= args.max_cells]
    candidates = {cl: float(sum(len(set(cl) & set(w)) for w in workload))
                  for cl in downward_closure(workload)}
    answers = {cl: counts(data, cl) for cl in candidates}
    oneway = [cl for cl in candidates if len(cl) == 1]
    log(f"AIM: workload {len(workload)} {degree}-way marginals (max cells {args.max_cells}), "
        f"{len(candidates)} candidates")

    rounds = args.rounds or 16 * len(attrs)
    sigma = math.sqrt(rounds / (2 * 0.9 * rho))
    epsilon = math.sqrt(8 * 0.1 * rho / rounds)
    rho_used = len(oneway) * 0.5 / sigma**2
    measurements = [measure(mbi, data, cl, sigma, rng) for cl in oneway]
    model, total = fit(mbi, domain, measurements, args.round_iters, args.total)

    selected: list[list[Any]] = []
    annealed = 0
    terminate = False
    while not terminate:
        t0 = time.perf_counter()
        if rho - rho_used < 2 * (0.5 / sigma**2 + epsilon**2 / 8):
            remaining = rho - rho_used
            sigma = math.sqrt(1 / (2 * 0.9 * remaining))
            epsilon = math.sqrt(8 * 0.1 * remaining)
            terminate = True
        rho_used += epsilon**2 / 8 + 0.5 / sigma**2
        size_limit = args.max_model_size * rho_used / rho

        free = set(downward_closure(list(model.cliques)))
        small = [cl for cl in candidates
                 if cl in free or junction_tree.hypothetical_model_size(domain, list(model.cliques) + [cl]) <= size_limit]
        t_filter = time.perf_counter() - t0
        marginal = model_marginal_fn(model, args.marginals)
        estimates = {cl: marginal(cl) for cl in small}
        t_score = time.perf_counter() - t0 - t_filter
        errors = np.array([
            candidates[cl] * (np.abs(answers[cl] - estimates[cl]).sum()
                              - math.sqrt(2 / math.pi) * sigma * domain.size(cl))
            for cl in small
        ])
        sensitivity = max(abs(candidates[cl]) for cl in small)
        cl = small[exponential_mechanism(errors, epsilon, sensitivity, rng)]

        n = domain.size(cl)
        measurements.append(measure(mbi, data, cl, sigma, rng))
        before = estimates[cl]
        t_fit = time.perf_counter()
        model, total = fit(mbi, domain, measurements, args.round_iters, args.total, warm_start=model)
        t_fit = time.perf_counter() - t_fit
        after = np.asarray(model.project(cl).datavector(), dtype=np.float64)
        selected.append([list(cl), round(sigma, 3)])
        log(f"AIM round {len(selected)}: {cl} ({n} cells), sigma {sigma:.2f}, "
            f"budget used {rho_used / rho:.3f}, {len(small)} candidates, {time.perf_counter() - t0:.1f} s "
            f"(filter {t_filter:.1f}, scores {t_score:.1f}, fit {t_fit:.1f})")
        if np.abs(after - before).sum() <= sigma * math.sqrt(2 / math.pi) * n:
            sigma /= 2
            epsilon *= 2
            annealed += 1

    t0 = time.perf_counter()
    model, total = fit(mbi, domain, measurements, args.final_iters, args.total, warm_start=model)
    log(f"AIM: final model (total {total:.1f}, {args.final_iters} iterations) in {time.perf_counter() - t0:.1f} s")
    synthetic = sample(model, data.records, args.sampling, args.seed)
    numpy_marginals = NumpyMarginals(model)
    details = {
        "rho": rho,
        "rho_used": rho_used,
        "workload_size": len(workload),
        "candidates": len(candidates),
        "rounds_run": len(selected),
        "sigma_halvings": annealed,
        "selected": selected,
        "model_cliques": [list(c) for c in model.cliques],
        "model_size_mb": junction_tree.hypothetical_model_size(domain, list(model.cliques)),
        "total_final": total,
    }
    return Outcome(synthetic, numpy_marginals, details)


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

def versions() -> dict[str, str]:
    """Versions of Python and the packages that shape the result."""
    return pgm_common.package_versions(("mbi", "jax", "jaxlib", "numpy", "scipy", "optax", "networkx"))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options (defaults follow mbi's MST and AIM scripts)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    pgm_common.add_run_options(parser)
    parser.add_argument("--workload", choices=["2way", "3way"], default="3way",
                        help="AIM's workload (the score is always over all 3-way marginals)")
    parser.add_argument("--max-cells", type=int, default=10_000,
                        help="AIM: drop workload marginals with more cells (mbi's script: 10000; <=0: keep all)")
    parser.add_argument("--max-model-size", type=float, default=80.0, help="AIM: model size cap in MB")
    parser.add_argument("--rounds", type=int, default=None, help="AIM: T (default 16 * columns)")
    parser.add_argument("--round-iters", type=int, default=1000, help="AIM: mirror-descent iterations per round")
    parser.add_argument("--select-iters", type=int, default=1000, help="MST: iterations of the selection model")
    parser.add_argument("--final-iters", type=int, default=None,
                        help="iterations of the final fit (default: MST 5000, AIM 1000)")
    parser.add_argument("--sampling", choices=["sample", "round", "gumbel"], default="sample",
                        help="sample = i.i.d.; round / gumbel = mbi 2.0's rounding schemes")
    parser.add_argument("--total", choices=["all", "mbi"], default="all",
                        help="row-count estimate: all measurements (mbi 1.x rule) or mbi 2.0's")
    parser.add_argument("--marginals", choices=["numpy", "mbi"], default="numpy",
                        help="how the mechanisms compute model marginals (mbi = JIT per marginal)")
    parser.add_argument("--float32", action="store_true", help="leave JAX in float32")
    args = parser.parse_args(argv)
    if args.final_iters is None:
        args.final_iters = 5000 if args.mechanism == "mst" else 1000
    pgm_common.table_paths(args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run one mechanism on the coded table, score it and print the JSON result line."""
    args = parse_args(argv)
    mbi = import_mbi(x64=not args.float32)
    codes, sizes = pgm_common.load_coded(args.data, args.domain)
    columns = list(sizes)
    data = mbi.Dataset({c: codes[:, i] for i, c in enumerate(columns)}, mbi.Domain.fromdict(sizes))
    np.random.seed(args.seed)  # mbi samples and decompresses with numpy's global generator
    rng = np.random.default_rng(args.seed)
    rho = cdp_rho(args.epsilon, args.delta)

    start = time.perf_counter()
    runner = run_mst if args.mechanism == "mst" else run_aim
    outcome = runner(mbi, data, rho, args, rng)
    synthetic = np.column_stack([np.asarray(outcome.synthetic.data[c], dtype=np.int64) for c in columns])
    seconds = time.perf_counter() - start
    log(f"{args.mechanism}: mechanism + sampling {seconds:.1f} s; scoring")

    result = {
        **pgm_common.reference_record("mbi", args, codes, synthetic, sizes, seconds, outcome.model_marginal),
        "versions": versions(),
        "details": {
            "delta": args.delta,
            "workload": args.workload if args.mechanism == "aim" else "tree of pairs",
            "rows": int(synthetic.shape[0]),
            "sampling": args.sampling,
            "total_rule": args.total,
            "marginals": args.marginals,
            "float64": not args.float32,
            "final_iters": args.final_iters,
            **outcome.details,
        },
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
