"""Ledger integrity: only the privacy boundary reads private rows, every curator mechanism charges
the accountant before it draws noise (and draws the noise it charged for), and a Description's
stated spending is exactly what its ledger composes to."""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import synth
from synth.api import describe
from synth.columns.column import Column
from synth.columns.domain import Domain
from synth.columns.kinds import DomainSource, Kind
from synth.columns.schema import Schema
from synth.domains.profile import Profile
from synth.errors import BudgetError, BudgetExhaustedError, DescriptionError, EngineError
from synth.privacy import Accountant, Budget, Cost, NoiseSource, SeededNoise, zcdp_to_approx_epsilon
from synth.privacy.curator import CountRelease, Curator
from synth.privacy.neighbours import Neighbouring
from synth.release.description import Description

PACKAGE = Path(synth.__file__).resolve().parent

# --------------------------------------------------------------------------------------------
# Who reads private rows
# --------------------------------------------------------------------------------------------

# Calls that read private rows, or the exact statistics computed from them. ``encode`` and
# ``release`` are methods (Schema.encode, CountRelease.release): they count as a call
# ``x.encode(arg)`` or ``x.release(arg)`` whose first argument is not a literal
# (``"text".encode("utf-8")`` is not Schema.encode). ``Curator`` counts when called (built), not
# when imported for a type hint. The functions count when called or imported under any name.
ROW_TAPS = {
    "read_table": "reads a private table from its file",
    "read_frame": "reads a private table file into pandas",
    "read_csv": "pandas reading a file",
    "read_parquet": "pandas reading a file",
    "encode": "Schema.encode: private rows to codes",
    "parse_values": "parses a private column's cells",
    "classify_cells": "classifies a private column's cells",
    "classify_shapes": "classifies how a private column's cells are written",
    "text_counts": "exact value counts of a private column",
    "count_missing": "the exact number of a private column's missing cells",
    "distinct_texts": "a private column's distinct cell texts and which rows hold them",
    "Curator": "wraps private codes in the privacy boundary",
    "release": "CountRelease.release: noise on exact private counts",
    "column_cells": "CountingTable.column_cells: a private column's (distinct) cells and their row counts",
    "MemoryTable": "wraps a private DataFrame as a counting table",
    "DuckDBTable": "opens a private file on DuckDB",
    "SparkTable": "opens a private table on Spark",
    "fetchall": "a database cursor handing a query's rows to Python (SQLite's cells as stored)",
    "fetchdf": "DuckDB handing a query's rows to pandas",
}
METHOD_TAPS = {"encode", "release", "column_cells"}
CALL_ONLY_TAPS = METHOD_TAPS | {"Curator", "MemoryTable", "DuckDBTable", "SparkTable", "fetchdf", "fetchall"}

# Module (path under synth/, or a package folder ending in /, which covers the modules of the folder
# that have no entry of their own) -> (taps it may use, why).
ALLOWED_TAPS: dict[str, tuple[frozenset[str], str]] = {
    "privacy/curator.py": (frozenset({"Curator", "release"}),
                           "the privacy boundary itself: holds the codes, releases noisy counts of them, and "
                           "compressed() builds a view over them"),
    "release/describer.py": (frozenset({"encode", "Curator"}),
                             "the front door: encodes the private table and hands the codes to a Curator"),
    "domains/discovery.py": (frozenset({"parse_values", "text_counts", "release", "column_cells"}),
                             "DP domain discovery: reads columns, releases only noisy, charged histograms"),
    "domains/categories.py": (frozenset({"text_counts", "release"}),
                              "DP category lists (for discovery): releases only noisy, charged histograms and counts"),
    "domains/votes.py": (frozenset({"classify_cells", "classify_shapes", "release"}),
                         "DP votes on a column's kind and shape (for discovery): release only noisy, charged histograms"),
    "domains/feasibility.py": (frozenset({"parse_values", "classify_cells", "text_counts", "release", "column_cells"}),
                               "the check before discovery: reads columns as discovery does, releases one noisy, charged "
                               "count"),
    "domains/bounds.py": (frozenset({"release"}),
                          "DP bounds of a numeric column (for discovery): releases only noisy, charged histograms"),
    "columns/cells.py": (frozenset({"text_counts", "distinct_texts"}),
                         "defines reading cells and kinds, applied to the columns discovery, drafting or encoding hand it"),
    "columns/encoding.py": (frozenset({"parse_values", "distinct_texts"}),
                            "defines encoding a column's cells, applied to the columns Schema.encode or evaluation hand it"),
    "tables/tableio.py": (frozenset({"read_csv", "read_parquet"}), "reads the table file for the caller"),
    "tables/": (frozenset({"encode", "MemoryTable", "DuckDBTable", "SparkTable", "read_frame", "fetchall"}),
                "counting backends, inside the boundary: they read the private rows where they are and hand "
                "only exact counts (distinct cells, distinct code rows) to discovery and the curator; "
                "read_table reads a file for the caller, in pandas or on its backend"),
    "api.py": (frozenset({"read_table"}), "the user-facing verbs load the data to hand to describe/evaluate "
               "(and to draft a profile)"),
    "domains/drafting.py": (frozenset({"parse_values", "text_counts", "count_missing", "classify_shapes"}),
                            "draft_profile proposes domains from the data, marked data-derived (refused in a "
                            "release unless accepted, and then flagged not end-to-end DP); a draft under DP goes "
                            "through a release's discovery (domains/finding.py) instead"),
    "relational/source.py": (frozenset({"fetchall", "fetchdf", "read_frame"}),
                             "reads a database's tables (SQLite, DuckDB, a folder of files) for the relational describer, "
                             "which bounds them and measures them only through the curator"),
    "relational/degree.py": (frozenset({"release"}),
                             "the noisy, charged histogram of children per parent that chooses max_children under DP"),
    "relational/describer.py": (frozenset({"release"}),
                                "one noisy, charged count per child table (parents cut to the bound), released by "
                                "CountRelease; the tables themselves go to the release's describer (find_schema, "
                                "measure_table)"),
    "evaluate/": (frozenset({"encode", "parse_values", "text_counts"}),
                  "evaluation compares the original with the synthetic table on a discretisation drafted from "
                  "the original's values; its output is not DP and says so"),
}

# Modules that may import pandas (private tables are DataFrames), with why.
PANDAS_ALLOWED = {
    "release/describer.py": "takes the private table",
    "release/holdout.py": "splits the private table into the rows released from and the rows set aside (before "
                          "anything is measured; the held-out rows go beside the data, never into the release)",
    "domains/finding.py": "draft_domains takes the private table, to draft a profile's domains under DP",
    "domains/discovery.py": "reads private columns for DP domain discovery",
    "domains/categories.py": "reads a private text column's values for its DP category list",
    "domains/votes.py": "reads private columns for DP votes on their kind and shape",
    "columns/schema.py": "Schema.encode and Schema.decode take and build tables",
    "columns/cells.py": "reads the cells of a table's columns",
    "columns/encoding.py": "encodes a column's cells to codes and decodes codes to a column",
    "tables/tableio.py": "reads and writes table files",
    "tables/": "counting backends hand a column's distinct cells to discovery as a pandas Series",
    "columns/textshape.py": "writes decoded (synthetic) values in a column's public shape",
    "api.py": "the user-facing verbs take DataFrames",
    "domains/drafting.py": "drafts profiles from a table",
    "generation/generate.py": "builds the synthetic table",
    "generation/conditions.py": "draws the synthetic values of range-conditioned columns (from the model, never from data)",
    "columns/unmodelled.py": "counts key shapes of private cells (for discovery, only with noise) and writes id and text columns",
    "evaluate/": "compares the original and synthetic tables (not DP)",
    "relational/source.py": "reads a database's tables into pandas",
    "relational/bounding.py": "drops orphans and children beyond the bound, and joins children to their parents' columns",
    "relational/generation.py": "builds the synthetic tables",
    "relational/writing.py": "writes the synthetic tables to a database",
}


def _modules() -> dict[str, ast.Module]:
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def _entry(module: str, table: dict[str, Any]) -> str | None:
    """The allow-list key covering ``module``: its own path, or a package folder holding it."""
    if module in table:
        return module
    return next((key for key in table if key.endswith("/") and module.startswith(key)), None)


def _taps(tree: ast.Module) -> set[str]:
    """The row taps a module calls or imports."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found |= {alias.name for alias in node.names if alias.name in ROW_TAPS and alias.name not in CALL_ONLY_TAPS}
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name not in ROW_TAPS:
                continue
            if name in METHOD_TAPS and not (isinstance(func, ast.Attribute) and node.args
                                            and not isinstance(node.args[0], ast.Constant)):
                continue
            found.add(name)
    return found


def _boundary_private_names() -> set[str]:
    """The private members of the curator module's classes: methods and ``self._x`` attributes."""
    tree = ast.parse((PACKAGE / "privacy" / "curator.py").read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("_"):
            names.add(node.name)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
              and node.attr.startswith("_")):
            names.add(node.attr)
    return {name for name in names if not (name.startswith("__") and name.endswith("__"))}


def test_only_the_privacy_boundary_reads_private_rows() -> None:
    used = {module: _taps(tree) for module, tree in _modules().items()}
    violations = []
    for module, taps in used.items():
        entry = _entry(module, ALLOWED_TAPS)
        allowed = ALLOWED_TAPS[entry][0] if entry else frozenset()
        violations += [f"{module} uses {tap} ({ROW_TAPS[tap]})" for tap in sorted(taps - allowed)]
    assert not violations, ("modules outside the privacy boundary read private rows; engines and models "
                            "must ask the Curator (or extend ALLOWED_TAPS with a reason): " + "; ".join(violations))
    stale = [f"{key}: {tap}" for key, (taps, _) in ALLOWED_TAPS.items() for tap in sorted(taps)
             if not any(tap in found for module, found in used.items() if _entry(module, ALLOWED_TAPS) == key)]
    assert not stale, f"ALLOWED_TAPS permits taps no module uses any more; remove them: {stale}"


def test_no_module_reaches_into_the_curator() -> None:
    private = _boundary_private_names()
    assert {"_codes", "_exact"} <= private  # the names that hold and compute on the rows
    violations = []
    for module, tree in _modules().items():
        if module == "privacy/curator.py":
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr in private
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                violations.append(f"{module}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.Constant) and node.value in private:
                violations.append(f"{module}:{node.lineno} '{node.value}'")
    assert not violations, f"private members of the curator used from outside it: {violations}"


def test_only_table_handling_modules_import_pandas() -> None:
    importers = set()
    for module, tree in _modules().items():
        for node in ast.walk(tree):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(name.split(".")[0] == "pandas" for name in names):
                importers.add(module)
    unexpected = sorted(m for m in importers if _entry(m, PANDAS_ALLOWED) is None)
    assert not unexpected, f"modules that may be handed private DataFrames without being allowed to: {unexpected}"


# --------------------------------------------------------------------------------------------
# Every mechanism charges before it draws
# --------------------------------------------------------------------------------------------

NOISE_METHODS = sorted(name for name, member in vars(NoiseSource).items()
                       if callable(member) and not name.startswith("_") and name != "description")


@dataclass(frozen=True)
class Draw:
    """One call to the noise source: what was asked, and how long the ledger was at that moment."""

    method: str
    ledger_size: int
    arguments: tuple[Any, ...]


class RecordingNoise:
    """Seeded noise that records, at each draw, the accountant's ledger length and the inputs."""

    def __init__(self, seed: int) -> None:
        self.inner = SeededNoise(seed)
        self.seeded = True
        self.accountant: Accountant | None = None
        self.draws: list[Draw] = []

    def description(self) -> dict[str, Any]:
        return self.inner.description()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in NOISE_METHODS:
            raise AttributeError(name)

        def draw(*args: Any) -> Any:
            assert self.accountant is not None
            frozen = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)
            self.draws.append(Draw(name, len(self.accountant.ledger), frozen))
            return getattr(self.inner, name)(*args)

        return draw


SIZES = {"a": 3, "b": 4, "c": 2}


def _codes(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, size, 60) for size in SIZES.values()])


BUDGET = 0.5  # per call


def _boundary(relation: str, notion: str, seed: int, codes: np.ndarray
              ) -> tuple[Curator, CountRelease, RecordingNoise]:
    accountant = Accountant(Budget(100.0)) if notion == "pure" else Accountant(Budget(100.0, 1e-6), delta_reserve=5e-7)
    noise = RecordingNoise(seed)
    noise.accountant = accountant
    release = CountRelease(accountant, noise, Neighbouring(relation))
    return Curator(codes, Domain(tuple(SIZES), tuple(SIZES.values())), release), release, noise


# Every public method of the curator and of CountRelease: how to call it (several ways where its
# paths differ), or why it is not a mechanism. The coverage test fails for a method in neither.
# A call gets the curator and the CountRelease behind it.
Call = Callable[[Curator, CountRelease], Any]
CURATOR_CALLS: dict[str, list[Call]] = {
    "measure_marginal": [
        lambda c, r: c.measure_marginal(("a", "b"), BUDGET),
        lambda c, r: c.measure_marginal(("a", "b"), BUDGET, coarsening={"b": np.array([0, 0, 1, 1])}),
    ],
    "select_marginal": [
        lambda c, r: c.select_marginal([("a",), ("b",), ("a", "c")], [np.zeros(3), np.zeros(4), np.zeros(6)],
                                    BUDGET, weights=[1.0, 2.0, 1.0], penalties=[0.0, 1.0, 2.0]),
        lambda c, r: c.select_marginal([("b",), ("a", "b")], [np.zeros(2), np.zeros(6)], BUDGET,
                                    coarsenings=[{"b": np.array([0, 0, 1, 1])}, {"b": np.array([0, 1, 1, 0])}]),
    ],
    "select_small_database": [
        lambda c, r: c.select_small_database(np.array([[0, 5], [3, 23], [7, 7]]), [(("a",), None), (("b", "c"), None)],
                                          BUDGET),
        lambda c, r: c.select_small_database(np.array([[1, 2, 3], [0, 0, 9]]), [(("a", "b"), {"b": np.array([0, 0, 1, 1])})],
                                          BUDGET),
    ],
    "select_by_dependence": [
        lambda c, r: c.select_by_dependence([("a", ("b",)), ("c", ("a", "b")), ("b", ())], BUDGET, score="mi"),
        lambda c, r: c.select_by_dependence([("a", ("b",)), ("c", ("b",))], BUDGET, score="r",
                                         coarsening={"b": np.array([0, 1, 1, 0])}),
        lambda c, r: c.select_by_dependence([("a", ()), ("b", ()), ("c", ())], BUDGET),  # public draw
    ],
    "noisy_count": [lambda c, r: c.noisy_count(BUDGET)],
}
RELEASE_CALLS: dict[str, list[Call]] = {
    "release": [
        lambda c, r: r.release(np.array([5, 0, 7]), 0.5, query="histogram"),
        lambda c, r: r.release(np.array([5, 0, 7]), 0.5, query="thresholded histogram", extra_delta=1e-9),
    ],
}
NOT_MECHANISMS = {
    "remaining": "reads the accountant only",
    "noise_scale": "a calibration from the budget alone",
    "expected_absolute_noise": "a calibration from the budget alone",
    "compressed": "a view over the same rows and accountant; measures nothing itself",
    "public_count": "the row count, public by definition under replace-one (refused under add/remove)",
    "calibrate": "a calibration from the budget alone",
    "budget_for_std": "a calibration from a noise deviation alone (the inverse of calibrate)",
}


def _public_methods(cls: type) -> set[str]:
    return {name for name, member in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_every_public_method_of_the_boundary_is_audited() -> None:
    public = _public_methods(Curator) | _public_methods(CountRelease)
    covered = set(CURATOR_CALLS) | set(RELEASE_CALLS) | set(NOT_MECHANISMS)
    assert public - covered == set(), (f"new public method(s) {sorted(public - covered)}: add them to CURATOR_CALLS "
                                       "or RELEASE_CALLS (a mechanism) or NOT_MECHANISMS (with a reason)")
    assert covered - public == set(), f"audited methods that no longer exist: {sorted(covered - public)}"


CALLS = [(f"{name}#{i}", call) for table in (CURATOR_CALLS, RELEASE_CALLS)
         for name, calls in table.items() for i, call in enumerate(calls)]


def _run(call: Call, relation: str, notion: str, seed: int, codes: np.ndarray,
         exhaust: bool = False) -> tuple[Curator, RecordingNoise, BaseException | None]:
    curator, release, noise = _boundary(relation, notion, seed, codes)
    if exhaust:
        left = curator.accountant.remaining()
        curator.accountant.charge(left, mechanism="test", query="spend everything", sensitivity=1.0, noise_scale=1.0)
    try:
        call(curator, release)
    except (EngineError, BudgetError, BudgetExhaustedError) as error:  # refused: not allowed, or over the budget
        return curator, noise, error
    return curator, noise, None


@pytest.mark.parametrize("exhaust", [False, True], ids=["budget left", "budget spent"])
@pytest.mark.parametrize("notion", ["pure", "zcdp"])
@pytest.mark.parametrize("relation", ["add-remove", "replace"])
@pytest.mark.parametrize("label,call", CALLS, ids=[label for label, _ in CALLS])
def test_each_draw_follows_its_own_charge_for_the_noise_drawn(label: str, call: Call,
                                                               relation: str, notion: str, exhaust: bool) -> None:
    """Each draw comes after a ledger entry of its own whose noise scale is the scale drawn; a draw
    with no charge must be public randomness (its inputs do not depend on the rows); a refused
    call (budget spent, or not allowed under the relation) draws nothing and charges nothing."""
    curator, noise, error = _run(call, relation, notion, seed=3, codes=_codes(1), exhaust=exhaust)
    start = 1 if exhaust else 0
    if error is not None:
        assert noise.draws == [] and len(curator.accountant.ledger) == start, f"{label} drew or charged, then failed"
        return
    uncharged = []
    before = start
    for i, draw in enumerate(noise.draws):
        if draw.ledger_size > before:
            entry = curator.accountant.ledger[draw.ledger_size - 1]
            assert entry.noise_scale == draw.arguments[1], f"{label} charged for scale {entry.noise_scale} but drew {draw}"
        else:
            uncharged.append(i)
        before = draw.ledger_size
    assert len(curator.accountant.ledger) == before, f"{label} charged after its last draw"
    if uncharged:  # the same call on other rows must ask for exactly the same noise
        _, other, _ = _run(call, relation, notion, seed=3, codes=_codes(2), exhaust=exhaust)
        for i in uncharged:
            mine, theirs = noise.draws[i].arguments, other.draws[i].arguments
            assert len(mine) == len(theirs) and all(np.array_equal(x, y) for x, y in zip(mine, theirs)), (
                f"{label} drew noise without a charge on inputs that depend on the data")


def test_every_call_draws_and_the_public_draw_is_the_only_free_one() -> None:
    """The calls above exercise real draws, and only the parent-less selection draws for free."""
    free = []
    for label, call in CALLS:
        curator, noise, error = _run(call, "add-remove", "zcdp", seed=3, codes=_codes(1))
        assert error is None and noise.draws, f"{label} drew nothing"
        if len(curator.accountant.ledger) == 0:
            free.append(label)
    assert free == ["select_by_dependence#2"]


# --------------------------------------------------------------------------------------------
# The Description's totals are its ledger's
# --------------------------------------------------------------------------------------------


def _table(rows: int = 2000, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], rows)
    size = np.where(colour == "red", rng.integers(0, 5, rows), rng.integers(3, 10, rows))
    return pd.DataFrame({"colour": colour, "size": size, "flag": rng.random(rows) < 0.4})


def _public_schema() -> Schema:
    def column(name: str, **domain: Any) -> Column:
        fields = {"categories": None, "lower": None, "upper": None, "bins": None, **domain}
        return Column(name=name, source=DomainSource.PUBLIC, **fields)

    return Schema(columns=(column("colour", kind=Kind.CATEGORICAL, categories=("blue", "green", "red")),
                           column("size", kind=Kind.INTEGER, lower=0.0, upper=9.0, bins=10),
                           column("flag", kind=Kind.BOOLEAN)))


RELEASES = {
    "independent, pure": dict(engine="independent", epsilon=1.0),
    "independent, approx advanced": dict(engine="independent", epsilon=1.0, delta=1e-6, accounting="approx",
                                         composition="advanced"),
    "independent, replace": dict(engine="independent", epsilon=1.0, neighbouring="replace"),
    "privbayes, pure": dict(engine="privbayes", epsilon=1.0),
    "privbayes, zcdp": dict(engine="privbayes", epsilon=1.0, delta=1e-6),
    "mst, zcdp": dict(engine="mst", epsilon=1.0, delta=1e-6),
    "aim, zcdp": dict(engine="aim", epsilon=1.0, delta=1e-6, engine_options={"rounds": 4, "iterations": 10}),
    "random": dict(engine="random", epsilon=1.0, rows=10),
    "mwem, pure": dict(engine="mwem", epsilon=1.0, engine_options={"workload": "2-way", "rounds": 3, "passes": 10}),
    "mwem, zcdp": dict(engine="mwem", epsilon=1.0, delta=1e-6, engine_options={"workload": "2-way", "rounds": 3}),
    "smalldb, pure": dict(engine="smalldb", epsilon=1.0, engine_options={"workload": "1-way", "size": 2}),
    "aim, zcdp, domains discovered": dict(engine="aim", epsilon=1.0, delta=1e-6, schema=None,
                                          engine_options={"rounds": 4, "iterations": 10}),
}


def _exact_sum(values: list[float]) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


def _rounded_up(value: float, exact: Fraction) -> bool:
    """``value`` is ``exact`` rounded up to a float (the accountant never understates a total)."""
    return Fraction(value) >= exact and (value == 0 or Fraction(math.nextafter(value, 0)) < exact)


MEASUREMENT_QUERIES = ("marginal(", "count(*)")


@pytest.mark.parametrize("settings", RELEASES.values(), ids=RELEASES.keys())
def test_description_totals_are_what_its_ledger_composes_to(settings: dict[str, Any]) -> None:
    profile = Profile(**{"schema": _public_schema(), "seed": 5, **settings})
    description = describe(_table(), profile, report_to=None)
    ledger, spent, budget = description.ledger, description.privacy["spent"], description.privacy["budget"]
    assert [entry.index for entry in ledger] == list(range(len(ledger)))
    costs = {key: _exact_sum([getattr(entry.cost, key) for entry in ledger]) for key in ("epsilon", "delta", "rho")}
    assert description.ledger_totals() == pytest.approx({key: float(value) for key, value in costs.items()}, rel=1e-12)
    notion = spent["notion"]
    if notion == "zcdp":
        conversion_delta = budget["delta"] - budget["delta_reserve"]
        assert costs["epsilon"] == 0 and _rounded_up(spent["rho"], costs["rho"])
        assert spent["epsilon"] == zcdp_to_approx_epsilon(spent["rho"], conversion_delta)
        assert spent["delta"] == pytest.approx(conversion_delta + float(costs["delta"]), rel=1e-12)
        assert spent["rho"] <= budget["rho"]
    elif spent["composition"] == "basic" or not ledger:
        assert _rounded_up(spent["epsilon"], costs["epsilon"]) and _rounded_up(spent["delta"], costs["delta"])
    else:  # advanced composition: the basic bound, or the advanced one with its δ slack
        basic = _rounded_up(spent["epsilon"], costs["epsilon"]) and _rounded_up(spent["delta"], costs["delta"])
        advanced = (_rounded_up(spent["delta"], costs["delta"] + Fraction(budget["delta_slack"]))
                    and Fraction(spent["epsilon"]) <= costs["epsilon"])
        assert basic or advanced
    assert spent["epsilon"] <= budget["epsilon"] and spent["delta"] <= budget["delta"]
    # every released measurement has its own ledger entry, with the noise it carries
    entries = [entry for entry in ledger if entry.query.startswith(MEASUREMENT_QUERIES)]
    assert [(e.mechanism, e.noise_scale) for e in entries] == [
        (m.mechanism, m.noise_scale) for m in description.measurements]


def test_a_description_whose_ledger_was_altered_is_refused() -> None:
    description = describe(_table(), Profile(schema=_public_schema(), epsilon=1.0, engine="independent", seed=5),
                           report_to=None)
    data = description.to_dict()
    assert Description.from_dict(data).ledger_totals() == description.ledger_totals()
    cheaper = replace(description.ledger[0], cost=Cost(epsilon=description.ledger[0].cost.epsilon / 2))
    data["privacy"]["ledger"][0] = cheaper.to_dict()
    with pytest.raises(DescriptionError, match="ledger adds up"):
        Description.from_dict(data)
