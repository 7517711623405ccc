"""The domain of a release's codes: attribute names and their numbers of codes.

Every stage that counts or models codes shares it: the curator measures over it, engines and the
model (``synth.model``) fit and sample over it. A ``Domain`` is public metadata (column names and
code counts from the schema or from a compression decided on noisy counts). It holds no data and
must never be built from private rows. Attribute order is meaningful: it is the column order of
sampled code matrices and the canonical axis order of every factor and marginal inside the model.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Domain:
    """Attributes ``names`` with ``sizes[i]`` codes (0 .. sizes[i]-1) each."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    _positions: dict[str, int] = field(init=False, repr=False, compare=False)
    _code_counts: dict[str, int] = field(init=False, repr=False, compare=False)  # each name's number of codes

    def __post_init__(self) -> None:
        names = tuple(self.names)
        try:
            sizes = tuple(operator.index(s) for s in self.sizes)
        except TypeError as exc:
            raise ValueError(f"domain sizes must be whole numbers; got {self.sizes!r}") from exc
        if len(names) != len(sizes):
            raise ValueError(f"a domain needs one size per name; got {len(names)} names and {len(sizes)} sizes")
        if not all(isinstance(n, str) for n in names):
            raise ValueError(f"domain names must be strings; got {names!r}")
        if len(set(names)) != len(names):
            repeated = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"domain names must be distinct; {repeated} appear more than once")
        if any(s < 1 for s in sizes):
            raise ValueError(f"every attribute needs at least one code; got sizes {dict(zip(names, sizes))}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "_positions", {n: i for i, n in enumerate(names)})
        object.__setattr__(self, "_code_counts", dict(zip(names, sizes)))

    @classmethod
    def from_mapping(cls, sizes: Mapping[str, int]) -> Domain:
        """A domain from ``{name: size}``, in the mapping's order."""
        return cls(tuple(sizes), tuple(sizes.values()))

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, attr: object) -> bool:
        return attr in self._positions

    def index(self, attr: str) -> int:
        """Position of ``attr`` in the domain."""
        try:
            return self._positions[attr]
        except KeyError:
            raise self._unknown(attr) from None

    def _unknown(self, attr: object) -> ValueError:
        return ValueError(f"attribute {attr!r} is not in the domain {list(self.names)}")

    def canonical(self, attrs: Iterable[str]) -> tuple[str, ...]:
        """``attrs`` (distinct, known) sorted in domain order."""
        attrs = tuple(attrs)
        if len(set(attrs)) != len(attrs):
            raise ValueError(f"attributes {attrs} repeat a name")
        return tuple(sorted(attrs, key=self.index))

    def shape(self, attrs: Iterable[str]) -> tuple[int, ...]:
        """Numbers of codes of ``attrs``, in the order given."""
        try:
            return tuple(map(self._code_counts.__getitem__, attrs))
        except KeyError as missing:
            raise self._unknown(missing.args[0]) from None

    def size(self, attrs: Iterable[str] | None = None) -> int:
        """Number of cells of the marginal over ``attrs`` (all attributes when None)."""
        return math.prod(self.sizes if attrs is None else self.shape(attrs))

    def project(self, attrs: Iterable[str]) -> Domain:
        """The sub-domain over ``attrs``, in the order given."""
        attrs = tuple(attrs)
        return Domain(attrs, self.shape(attrs))
