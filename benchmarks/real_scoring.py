"""How a release of a real table is scored against the original table (benchmarks/real_tables.py):
a verdict per column, and fidelity on one discretisation drafted from the original.

This reads the original: it is an evaluation for the benchmark, not a DP output.


Per-column verdicts (read from the release's domain, description.json ``schema.columns``, and its
synthetic.csv):

* **lost** — the column is not in the release (a zero-config or independent run; a column the
  reviewed profile leaves out, or that synth itself found to be an identifier or free text and
  left out of the model, is **dropped**, not lost), or fewer than 10 % as many synthetic
  cells as original ones hold a real value (the rest are missing, ``<OTHER>``, a placeholder such
  as ``<none found>``, or text in a numeric column), or the domain holds less than half of the
  original's non-missing values (below);
* **located** — the domain holds at least 95 % of the original's non-missing values and, for a
  numeric or date domain, resolves them: the original's 1st-99th percentile range spans at least
  8 of its bins, or half of them when it has fewer than 16 (with 32 equal-width bins: bounds at most
  4 times as wide as that range), or every bin it spans holds a single integer (e.g. a year 2013 in
  the bins 2013 and 2014);
* **rough** — anything in between (e.g. bounds that hold every value but are 50 times too wide,
  so the values crowd into one or two bins and are decoded spread across them).

"Holds" means: for numeric and date domains, the share of the original's non-missing values inside
[lower, upper]; for a category list, the share of the original's non-missing cells whose text is
one of the categories (placeholders and ``<OTHER>`` excluded); for a boolean domain, the share of
cells that are boolean words. Bins are the domain's equal-width bins or those its cuts make; the
detail also gives how many times wider than the original's 1st-99th percentile range the bounds are
(when that range is empty, e.g. a constant year = 2013, the full range, else one unit or one day).

Fidelity, on one discretisation per table drafted from the original (like SDMetrics), the same for
every release of that table so that releases compare: the one ``synth evaluate`` scores on
(``synth.evaluate.discretisation``), with each column's kind read from the original's cells as a
drafted profile reads it (``synth.columns.cells.infer_kinds``):

* a numeric or date column: up to 20 bins at the original's quantiles (the 5 %, 10 %, ..., 95 %
  points; repeated edges merge), values outside fall in the end bins;
* a boolean column (true/false, yes/no, 1/0, case-blind): its two values; a text column: its 50 most
  frequent values, and "other" (which also holds a release's ``<OTHER>``);
* missing cells are a code of their own in every column; cells a numeric column cannot read (e.g.
  ``<OTHER>`` written into it) share that code.

Mean 1-way TVD (total variation distance, half the L1 distance of the normalised marginals) over
the columns, and mean 2-way TVD over the pairs of columns (a fixed random sample of 300 pairs when
there are more). Both are computed over the columns the reviewed profile keeps (all of them, when
it drops none), for all three releases; a scored column missing from a release counts as all
missing. For scale, the summary also gives the 2-way TVD of a fixed-seed bootstrap resample of the
original (as many rows): the floor that sampling alone puts on a table of that size, high on small
tables (a few hundred rows spread over 20 x 20 cells per pair).
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pgm_common import marginal_counts, tvd  # noqa: E402

from synth.columns.cells import infer_kinds  # noqa: E402
from synth.columns.column import Column  # noqa: E402
from synth.columns.encoding import encode_column  # noqa: E402
from synth.columns.kinds import Kind  # noqa: E402
from synth.evaluate.discretisation import draft_discretisation  # noqa: E402

MAX_PAIRS = 300
PAIR_SEED = 0
LOCATED_SHARE = 0.95
LOCATED_BINS = 8
LOST_SHARE = 0.5
LOST_VALID = 0.1
UNMODELLED = ("id", "text")  # kinds synth leaves out of the model (identifiers, free text)
PLACEHOLDERS = frozenset({"<none found>"})
BOOLEAN_WORDS = {"true": "true", "yes": "true", "false": "false", "no": "false"}


class BenchmarkError(RuntimeError):
    """A table cannot be loaded or a run's output cannot be read; the message says what to do."""


# --- the common discretisation -------------------------------------------------------------------

def read_cells(path: Path) -> pd.DataFrame:
    """A CSV file as text cells, exactly as written (nothing is read as missing but blank cells)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def blank(cells: pd.Series) -> np.ndarray:
    return (cells.str.strip() == "").to_numpy()


def as_numbers(cells: pd.Series) -> np.ndarray:
    """Cells as floats; NaN where blank or not a finite number."""
    values = pd.to_numeric(cells.str.strip(), errors="coerce").to_numpy(dtype=float, na_value=np.nan, copy=True)
    values[~np.isfinite(values)] = np.nan
    return values


def as_seconds(cells: pd.Series) -> np.ndarray:
    """ISO dates as seconds since 1970-01-01 UTC (naive ones read as UTC); NaN where unreadable."""
    stamps = pd.to_datetime(cells.str.strip(), errors="coerce", utc=True, format="ISO8601")
    return ((stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy(dtype=float, na_value=np.nan)


def canonical_words(cells: pd.Series) -> pd.Series:
    """Boolean words compared case-blind, yes = true and no = false."""
    lowered = cells.str.strip().str.lower()
    return lowered.map(BOOLEAN_WORDS).fillna(lowered)


VERDICT_KINDS = {Kind.INTEGER: "number", Kind.FLOAT: "number", Kind.DATETIME: "date", Kind.BOOLEAN: "boolean",
                 Kind.CATEGORICAL: "text"}


@dataclass(frozen=True)
class Coder:
    """One original column: its codes on the common discretisation (``column``), and the kind the
    verdicts read its cells as."""

    column: Column

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def kind(self) -> str:  # "number" | "date" | "boolean" | "text"
        return VERDICT_KINDS[self.column.kind]

    @property
    def numeric(self) -> bool:
        return self.kind in ("number", "date")

    @property
    def size(self) -> int:
        return self.column.size

    def values(self, cells: pd.Series) -> np.ndarray:
        """Numbers (dates as seconds) of a numeric column; NaN where blank or unreadable."""
        return as_seconds(cells) if self.kind == "date" else as_numbers(cells)

    def texts(self, cells: pd.Series) -> pd.Series:
        return canonical_words(cells) if self.kind == "boolean" else cells.str.strip()

    def codes(self, cells: pd.Series) -> np.ndarray:
        return encode_column(self.column, cells, ("",))[0].astype(np.int64)


def draft_coders(cells: pd.DataFrame) -> list[Coder]:
    """The common discretisation of every column of the original (see the module docstring)."""
    return [Coder(column) for column in draft_discretisation(cells, kinds=infer_kinds(cells)).schema.columns]


def coded(frame: pd.DataFrame | None, coders: Sequence[Coder]) -> np.ndarray:
    """A table's codes, one column per coder; a column the table lacks is all MISSING."""
    rows = 0 if frame is None else len(frame)
    columns = []
    for coder in coders:
        if frame is not None and coder.name in frame.columns:
            columns.append(coder.codes(frame[coder.name]))
        else:
            columns.append(np.full(rows, coder.column.missing_code, dtype=np.int64))
    return np.column_stack(columns) if columns else np.empty((rows, 0), dtype=np.int64)


def scored_pairs(width: int) -> list[tuple[int, int]]:
    pairs = list(itertools.combinations(range(width), 2))
    if len(pairs) <= MAX_PAIRS:
        return pairs
    chosen = np.random.default_rng(PAIR_SEED).choice(len(pairs), size=MAX_PAIRS, replace=False)
    return [pairs[i] for i in sorted(chosen)]


def mean_tvd(original: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int],
             column_sets: Sequence[Sequence[int]]) -> float:
    if not column_sets or len(synthetic) == 0:
        return float("nan")
    return float(np.mean([tvd(marginal_counts(original, sizes, cols), marginal_counts(synthetic, sizes, cols))
                          for cols in column_sets]))


# --- per-column verdicts -------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    column: str
    verdict: str  # "located" | "rough" | "lost" | "dropped"
    detail: str


def central_range(values: np.ndarray) -> tuple[float, float]:
    """The original's 1st and 99th percentiles."""
    low, high = np.quantile(values, [0.01, 0.99])
    return float(low), float(high)


def reference_width(values: np.ndarray, kind: str) -> float:
    """The original's 1st-99th percentile range, else its full range, else one unit (one day)."""
    low, high = central_range(values)
    if high > low:
        return high - low
    if values.max() > values.min():
        return float(values.max() - values.min())
    return 86400.0 if kind == "date" else 1.0


def bin_edges(domain: dict, convert: Callable[[pd.Series], np.ndarray]) -> np.ndarray:
    """The edges of a numeric or date domain's bins (equal-width or at its cuts); an integer
    domain's last edge is upper + 1, so a bin of width 1 holds one integer."""
    lower, upper = convert(pd.Series([str(domain["lower"]), str(domain["upper"])]))
    top = upper + 1 if domain["kind"] == "integer" else upper
    if domain.get("cuts"):
        inner = convert(pd.Series([str(c) for c in domain["cuts"]]))
    else:
        inner = np.linspace(lower, top, int(domain["bins"]) + 1)[1:-1]
    return np.concatenate([[lower], inner, [top]])


def valid_share(coder: Coder, cells: pd.Series, other_label: str) -> float:
    """Share of synthetic cells holding a real value: not blank, not OTHER or a placeholder, and
    readable when the original column is numeric."""
    texts = cells.str.strip()
    valid = ~blank(cells) & ~texts.isin(PLACEHOLDERS | {other_label}).to_numpy()
    if coder.numeric:
        valid &= ~np.isnan(coder.values(cells))
    return float(valid.mean()) if len(cells) else 0.0


@dataclass(frozen=True)
class DomainFit:
    """How a release's domain fits the original column (see the module docstring)."""

    share: float  # of the original's non-missing values the domain holds
    fine: bool = True  # numeric: the central range spans enough bins, or single integers
    detail: str = ""


def numeric_fit(coder: Coder, present: pd.Series, domain: dict) -> DomainFit:
    convert = as_seconds if domain["kind"] == "datetime" else as_numbers
    edges = bin_edges(domain, convert)
    values = convert(present)
    share = float(((values >= edges[0]) & (values <= edges[-1])).mean()) if len(values) else 1.0
    readable = values[~np.isnan(values)]
    shown = f"{domain['kind']} [{domain['lower']}, {domain['upper']}], {len(edges) - 1} bins"
    if not readable.size:
        return DomainFit(share, False, shown)
    low, high = central_range(readable)
    touched = (edges[1:] > low) & (edges[:-1] <= high)
    spans = int(touched.sum())
    single = domain["kind"] == "integer" and bool(np.all(np.diff(edges)[touched] <= 1))
    ratio = (edges[-1] - edges[0]) / reference_width(readable, coder.kind)
    detail = f"{shown}: bounds {ratio:.3g}x the 1-99% range, which spans {spans} bin{'s' * (spans != 1)}"
    enough = min(LOCATED_BINS, math.ceil((len(edges) - 1) / 2))
    return DomainFit(share, spans >= enough or single, detail)


def domain_fit(coder: Coder, original: pd.Series, domain: dict) -> DomainFit:
    present = original[~blank(original)]
    kind = domain["kind"]
    if kind in ("integer", "float", "datetime"):
        return numeric_fit(coder, present, domain)
    if kind == "boolean":
        share = float(canonical_words(present).isin(["true", "false", "1", "0"]).mean()) if len(present) else 1.0
        return DomainFit(share, detail="boolean")
    listed = domain.get("categories", [])
    categories = [c for c in listed if c not in PLACEHOLDERS]
    allowed = set(coder.texts(pd.Series(categories, dtype=str)))
    share = float(coder.texts(present).isin(allowed).mean()) if len(present) else 1.0
    shown = ", ".join(listed[:3]) + (", ..." if len(listed) > 3 else "")
    return DomainFit(share, detail=f"{len(categories)} categories ({shown})")


def column_verdict(coder: Coder, original: pd.Series, synthetic: pd.Series | None, domain: dict | None,
                   other_label: str, dropped_ok: bool) -> Verdict:
    """located / rough / lost / dropped, with the criteria of the module docstring."""
    if domain is None or synthetic is None:
        return Verdict(coder.name, "dropped" if dropped_ok else "lost", "not in the release")
    if domain["kind"] in UNMODELLED:  # found as an identifier or free text: left out of the model on purpose
        keys = f"fresh keys shaped {domain['template']}" if domain.get("template") else "fresh keys 1, 2, ..."
        return Verdict(coder.name, "dropped", f"{domain['kind']}: " + (keys if domain["kind"] == "id" else "written empty"))
    present = float((~blank(original)).mean())
    valid = valid_share(coder, synthetic, other_label)
    fit = domain_fit(coder, original, domain)
    detail = f"{fit.detail}; holds {fit.share:.0%} of the values"
    if present > 0 and valid < LOST_VALID * present:
        return Verdict(coder.name, "lost", f"{detail}; only {valid:.0%} of synthetic cells hold a value")
    if fit.share < LOST_SHARE:
        return Verdict(coder.name, "lost", detail)
    if fit.share >= LOCATED_SHARE and fit.fine:
        return Verdict(coder.name, "located", detail)
    return Verdict(coder.name, "rough", detail)


# --- evaluating one release ----------------------------------------------------------------------

@dataclass
class Original:
    """The original table, its common discretisation and the pairs scored."""

    cells: pd.DataFrame
    coders: list[Coder]  # every column
    scored: list[int]  # positions (in coders) of the columns scored for TVD
    codes: np.ndarray  # of the scored columns
    pairs: list[tuple[int, int]]  # positions in ``scored``
    floor_tvd2: float  # 2-way TVD of a resample of the original: the floor at this row count


def resample_tvd(codes: np.ndarray, sizes: Sequence[int], pairs: Sequence[tuple[int, int]]) -> float:
    """Mean 2-way TVD between the original and a fixed-seed bootstrap resample of as many rows."""
    rows = np.random.default_rng(PAIR_SEED).integers(0, len(codes), size=len(codes))
    return mean_tvd(codes, codes[rows], sizes, pairs)


def load_original(csv: Path, keep: list[str] | None) -> Original:
    cells = read_cells(csv)
    coders = draft_coders(cells)
    scored = [i for i, c in enumerate(coders) if keep is None or c.name in keep]
    codes = coded(cells, [coders[i] for i in scored])
    pairs = scored_pairs(len(scored))
    floor = resample_tvd(codes, [coders[i].size for i in scored], pairs)
    return Original(cells, coders, scored, codes, pairs, floor)


def read_release(out: Path) -> tuple[pd.DataFrame, dict[str, dict], str]:
    """A release's synthetic table, its domain by column name and its OTHER label."""
    try:
        synthetic = read_cells(out / "synthetic.csv")
        schema = json.loads((out / "description.json").read_text(encoding="utf-8"))["schema"]
    except (OSError, ValueError, KeyError) as error:
        raise BenchmarkError(f"cannot read the release in {out}: {error}") from None
    return synthetic, {c["name"]: c for c in schema["columns"]}, schema.get("other_label", "<OTHER>")


def evaluate_release(original: Original, out: Path, variant: str,
                     text_target: tuple[str, int] | None) -> dict:
    """Verdicts, mean 1- and 2-way TVD and (for the text target) values kept, of one release."""
    synthetic, domains, other_label = read_release(out)
    verdicts = [column_verdict(coder, original.cells[coder.name],
                               synthetic[coder.name] if coder.name in synthetic.columns else None,
                               domains.get(coder.name), other_label, dropped_ok=variant == "profile")
                for coder in original.coders]
    scored = [original.coders[i] for i in original.scored]
    codes = coded(synthetic, scored)
    sizes = [c.size for c in scored]
    result = {
        "synthetic_rows": len(synthetic),
        "verdicts": [asdict(v) for v in verdicts],
        "counts": {k: sum(v.verdict == k for v in verdicts) for k in ("located", "rough", "lost", "dropped")},
        "tvd1": mean_tvd(original.codes, codes, sizes, [(i,) for i in range(len(scored))]),
        "tvd2": mean_tvd(original.codes, codes, sizes, original.pairs),
        "pairs": len(original.pairs),
    }
    if text_target is not None:
        column = text_target[0]
        values = set(original.cells[column].str.strip()) - {""}
        categories = set(domains.get(column, {}).get("categories", []))
        in_synthetic = set(synthetic[column].str.strip()) if column in synthetic.columns else set()
        result["text_target"] = {"column": column, "values": len(values), "in_domain": len(values & categories),
                                  "in_synthetic": len(values & in_synthetic)}
    return result
