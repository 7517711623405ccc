"""Columns left out of the model: identifiers, written as fresh keys, and free text, written empty.

A column that is (nearly) unique per row carries no distribution a model could learn, and copying
or imitating its values would copy people. Two kinds stay out of the model:

* ``id``: a key. The output holds fresh keys in the input's shape, never drawn from real ones. The
  shape is a *template*, one character per character of a key: ``9`` a digit, ``A`` / ``a`` an
  upper / lower case letter, ``X`` / ``x`` an upper / lower case letter or a digit (a run mixing
  both, as in hexadecimal), anything else itself (``-``, ``_``, ``.``). An all-digit template of
  length L gives the integers 10^L, 10^L + 1, ... (one digit longer than any key of that shape, so
  none can equal one); any other template gives distinct keys drawn at random from its space,
  widened by repeating its first character's class (``AAA`` becomes ``AAAA``) until it holds at
  least ``SPARE_SPACE`` times the rows (a key then matches a given real key only by a chance below
  1 %, and even then carries nothing of its row).
  Without a template the keys are 1, 2, 3, ...
  A table written in pieces (a million rows at a time) keeps its keys distinct across them: each
  piece is told where it lies (``KeyRange``), the numbered keys run on, and a random-shape key
  spells its row's number under a permutation shared by the pieces (``_indexed_keys``).
* ``text``: free text (comments, names). The output column is kept, with every cell empty.

``judge_unique`` turns counts (noisy under DP, exact for a drafted profile) into one of these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synth.columns.kinds import UNMODELLED_KINDS, DomainSource, Kind
from synth.columns.mixing import mix64
from synth.errors import SchemaError

UNIQUE_SHARE = 0.8  # distinct values per present cell from which a column counts as (nearly) unique per row
TEMPLATE_SHARE = 0.5  # a key shape must hold this share of the cells to shape the fresh keys
MAX_TEMPLATE = 64  # longer texts are not keys
SPARE_SPACE = 100  # a random-key template must hold this many keys per row
_CLASSES = {"9": "0123456789", "A": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "a": "abcdefghijklmnopqrstuvwxyz",
            "X": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", "x": "0123456789abcdefghijklmnopqrstuvwxyz"}
_RUN = re.compile(r"[0-9A-Za-z]+")
_IDENTIFIER_NAME = re.compile(r"(^|[^a-z])(id|ids|key|uuid|guid|index|rownames?|unnamed: ?\d+)$|^$")


def looks_like_identifier(name: str) -> bool:
    """True when a column's public name reads as a key: ``id``, ``patient_id``, ``PatientID``,
    ``uuid``, ``rownames``, ``Unnamed: 0`` (pandas' name for a written index)."""
    text = name.strip()
    return bool(_IDENTIFIER_NAME.search(text.lower())) or text.endswith("ID") or text.endswith("Id")


def _run_template(run: str) -> str:
    if run.isdigit():
        return "9" * len(run)
    if run.isalpha():
        return "".join("A" if c.isupper() else "a" for c in run)
    head = run.rstrip("0123456789")
    if head.isalpha():  # letters then digits, as in N12345 or ID0001
        return _run_template(head) + "9" * (len(run) - len(head))
    return ("X" if any(c.isupper() for c in run) else "x") * len(run)


def key_template(text: str) -> str | None:
    """The shape of one key (see the module docstring); None for a text too long to be a key or
    one holding spaces (free text)."""
    if not text or len(text) > MAX_TEMPLATE or any(c.isspace() for c in text) or not text.isascii():
        return None
    return _RUN.sub(lambda m: _run_template(m.group(0)), text)


def template_counts(texts: pd.Series) -> pd.Series:
    """How many cells have each key shape, from the counts of distinct cell texts (``texts``:
    text -> count). Exact and private: only the describer may release it, and only with noise."""
    shapes = pd.Series([key_template(str(t)) for t in texts.index], index=texts.index, dtype=object)
    keep = shapes.notna().to_numpy()
    return texts[keep].groupby(shapes[keep].to_numpy()).sum()


@dataclass(frozen=True)
class KeyRange:
    """Where a piece of a table written in pieces lies: the position of its first row, an upper bound
    on the rows of the whole table, and a seed shared by every piece. With it, each piece's fresh keys
    continue the ones before (1, 2, 3, ... and 10^L, 10^L + 1, ... run on) and random-shape keys are
    distinct across the pieces (``_indexed_keys``)."""

    first: int
    total: int
    seed: int


@dataclass(frozen=True)
class UnmodelledColumn:
    """An ``id`` or ``text`` column: left out of the model, written by the rule of its kind."""

    name: str
    kind: Kind
    template: str | None = None
    source: DomainSource = DomainSource.PUBLIC

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError("every column needs a non-empty name (a string). Fix the column's name.")
        try:
            kind, source = Kind(self.kind), DomainSource(self.source)
        except ValueError:
            raise SchemaError(f"column {self.name!r}: an unmodelled column is of kind \"id\" or \"text\", and its "
                              f"source one of {', '.join(s.value for s in DomainSource)}.") from None
        if kind not in UNMODELLED_KINDS:
            raise SchemaError(f"column {self.name!r}: an unmodelled column is of kind \"id\" or \"text\".")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "source", source)
        if self.template is None:
            return
        if kind == Kind.TEXT:
            raise SchemaError(f"column {self.name!r} (text) cannot have a template; only an id column has one.")
        if not isinstance(self.template, str) or not 0 < len(self.template) <= MAX_TEMPLATE:
            raise SchemaError(f"column {self.name!r} (id): template must be a text of 1 to {MAX_TEMPLATE} "
                              "characters, e.g. \"A99999\".")
        if any(c.isspace() for c in self.template) or not self.template.isascii():
            raise SchemaError(f"column {self.name!r} (id): a template holds no spaces and only ASCII characters.")

    @property
    def _digits_only(self) -> bool:
        return self.template is not None and set(self.template) == {"9"}

    def generate(self, rows: int, rng: np.random.Generator, piece: KeyRange | None = None) -> pd.Series:
        """The column's cells for ``rows`` synthetic rows (see the module docstring); ``piece``: where
        they lie in a table written in pieces, so that keys stay distinct across the pieces."""
        first = 0 if piece is None else piece.first
        if self.kind == Kind.TEXT:
            return pd.Series(pd.array([None] * rows, dtype="string"))
        if self.template is None:
            return pd.Series(np.arange(first + 1, first + rows + 1, dtype=np.int64))
        if self._digits_only and len(self.template) < 18:
            return pd.Series(10 ** len(self.template) + first + np.arange(rows, dtype=np.int64))
        keys = _random_keys(self.template, rows, rng) if piece is None else _indexed_keys(self.template, piece, rows, rng)
        return pd.Series(pd.array(keys, dtype="string"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind.value}
        if self.template is not None:
            out["template"] = self.template
        out["source"] = self.source.value
        return out


def _template_space(template: str) -> float:
    return float(np.prod([float(len(_CLASSES[c])) for c in template if c in _CLASSES]))


def _widened(template: str, rows: int) -> str:
    """``template`` with its first character's class repeated in front until it holds ``SPARE_SPACE``
    keys per row."""
    while _template_space(template) < SPARE_SPACE * max(rows, 1):
        template = (template[0] if template[0] in _CLASSES else "9") + template  # one more of its first class
    return template


def _random_keys(template: str, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` distinct keys drawn uniformly from the template's space (widened as needed)."""
    template = _widened(template, rows)
    keys: np.ndarray = np.empty(0, dtype=object)
    while keys.size < rows:
        draw = max(2 * (rows - keys.size), 16)
        parts = [np.array(list(_CLASSES[c]), dtype=object)[rng.integers(0, len(_CLASSES[c]), draw)]
                 if c in _CLASSES else np.full(draw, c, dtype=object) for c in template]
        fresh = np.sum(np.stack(parts), axis=0) if parts else np.full(draw, "", dtype=object)
        keys = pd.unique(np.concatenate([keys, fresh]))
    return keys[:rows]


def _permuted(index: np.ndarray, space: int, seed: int) -> np.ndarray:
    """``index`` (distinct numbers below ``space``) mapped by a permutation of 0 .. space - 1 chosen
    by ``seed``: a four-round Feistel network on the fewest even number of bits that hold ``space``
    (``mix64`` of a half and a round key as the round function), applied again to any number that
    lands at or above ``space`` until none does (a permutation of the larger range, walked along its
    cycles, permutes the smaller one)."""
    half = max(1, (int(space - 1).bit_length() + 1) // 2)
    mask = np.uint64((1 << half) - 1)
    round_keys = [np.uint64(k) for k in np.random.default_rng(seed).integers(0, 2**63, 4)]

    def rounds(words: np.ndarray) -> np.ndarray:
        left, right = words >> np.uint64(half), words & mask
        for key in round_keys:
            left, right = right, left ^ (mix64(right ^ key) & mask)
        return (left << np.uint64(half)) | right

    out = rounds(index.astype(np.uint64))
    outside = out >= np.uint64(space)
    while outside.any():
        out[outside] = rounds(out[outside])
        outside = out >= np.uint64(space)
    return out


def _indexed_keys(template: str, piece: KeyRange, rows: int, rng: np.random.Generator) -> np.ndarray:
    """Keys for rows ``piece.first`` .. ``piece.first + rows - 1`` of a table written in pieces,
    distinct across all of them: the template is widened for ``piece.total`` rows; its last
    characters (those whose classes' sizes multiply to at most 2^62) spell the row's number under a
    permutation chosen by ``piece.seed`` (``_permuted``: the same in every piece, so two rows never
    share them), and the characters before them are drawn at random."""
    template = _widened(template, piece.total)
    spelled, space = [], 1
    for k in reversed(range(len(template))):
        size = len(_CLASSES.get(template[k], "-"))
        if space * size > 2**62:
            break
        spelled.append(k)
        space *= size
    if piece.first + rows > space:
        raise ValueError(f"{piece.first + rows:,} keys do not fit a template spelling {space:,}; give the true total")
    number = _permuted(np.arange(piece.first, piece.first + rows, dtype=np.uint64), space, piece.seed)
    parts: list[np.ndarray] = [np.empty(0)] * len(template)
    for k in spelled:  # last character first: the number's lowest digit in its class's base
        symbols = np.array(list(_CLASSES.get(template[k], template[k])), dtype=object)
        parts[k] = symbols[(number % np.uint64(len(symbols))).astype(np.int64)]
        number //= np.uint64(len(symbols))
    for k in range(len(template) - len(spelled)):
        c = template[k]
        parts[k] = (np.array(list(_CLASSES[c]), dtype=object)[rng.integers(0, len(_CLASSES[c]), rows)]
                    if c in _CLASSES else np.full(rows, c, dtype=object))
    return np.sum(np.stack(parts), axis=0) if rows else np.empty(0, dtype=object)


def judge_unique(name: str, distinct: float, cells: float, templates: Mapping[str, float],
                 text_like: bool, source: DomainSource) -> UnmodelledColumn | None:
    """An ``id`` or ``text`` column when ``distinct`` values reach ``UNIQUE_SHARE`` of ``cells``;
    else None. ``templates``: key shape -> count (the shapes that were found). A shape holding
    ``TEMPLATE_SHARE`` of the cells shapes the keys; a column of numbers (``text_like`` False) is
    shaped by its longest all-digit shape; text without a dominant shape is free text."""
    if cells <= 0 or distinct < UNIQUE_SHARE * cells:
        return None
    if text_like:
        shape, count = max(templates.items(), key=lambda item: item[1], default=(None, 0.0))
        if shape is not None and count >= TEMPLATE_SHARE * cells:
            return UnmodelledColumn(name, Kind.ID, shape, source)
        return UnmodelledColumn(name, Kind.TEXT, None, source)
    digits = [shape for shape in templates if set(shape) == {"9"}]
    return UnmodelledColumn(name, Kind.ID, max(digits, key=len) if digits else None, source)


def unmodelled_from_dict(data: Mapping[str, Any]) -> UnmodelledColumn:
    """Inverse of ``UnmodelledColumn.to_dict``; unknown keys are refused."""
    unknown = [k for k in data if k not in ("name", "kind", "template", "source")]
    if unknown:
        raise SchemaError(f"column {data.get('name')!r} ({data.get('kind')}) has unknown key(s) {unknown}; an id "
                          "column has name, kind, template and source; a text column has no template.")
    return UnmodelledColumn(data.get("name"), data.get("kind"), data.get("template"),  # type: ignore[arg-type]
                            data.get("source", DomainSource.PUBLIC))
