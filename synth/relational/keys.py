"""The keys of a database and the structure they give a release: one root table, its child tables.

``TableKeys`` is what a schema (or a profile) declares for one table: its primary key and its
foreign keys. ``Structure`` checks that the declarations make a release synth supports today (a
tree: one root table with a primary key; every other table with one foreign key to the primary key
of the root or of another table that leads to it, at any depth) and says, in the error, what is not
supported yet (two foreign keys, several roots). Keys are schema metadata: public. Nothing here
reads a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from synth.errors import NoKeysError, RelationalError


@dataclass(frozen=True)
class ForeignKey:
    """``column`` of a child table references ``parent_column`` of the table ``parent``."""

    column: str
    parent: str
    parent_column: str


@dataclass(frozen=True)
class TableKeys:
    """A table's declared primary key (None: none declared) and foreign keys."""

    name: str
    primary_key: str | None
    foreign_keys: tuple[ForeignKey, ...] = ()

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The columns that are keys: never modelled, never measured."""
        own = (self.primary_key,) if self.primary_key else ()
        return (*own, *(fk.column for fk in self.foreign_keys))


def keys_toml(tables: Sequence[str], columns: Mapping[str, Sequence[str]]) -> str:
    """The TOML a person writes to declare keys, with the database's own table names."""
    names = list(tables) or ["patients", "visits"]
    root, children = names[0], names[1:] or ["CHILD"]
    first = list(columns.get(root, ())) or ["id"]
    lines = [f"[tables.{root}]", f'primary_key = "{first[0]}"', ""]
    for child in children:
        own = list(columns.get(child, ())) or ["id"]
        lines += [f"[tables.{child}]", f'primary_key = "{own[0]}"',
                  f'foreign_key = "{root}_id"   # the column of {child} that holds a {root} key',
                  f'references = "{root}"', "max_children = 10   # public bound on rows per parent", ""]
    return "\n".join(lines)


@dataclass(frozen=True)
class Structure:
    """A checked tree of tables: the root, and every other table (``children``, each listed after the
    table it references, so a walk in this order meets a parent before its children). Each non-root
    table has one foreign key to its parent's primary key; the parent is the root or another table."""

    root: TableKeys
    children: tuple[TableKeys, ...]

    @property
    def tables(self) -> tuple[TableKeys, ...]:
        return (self.root, *self.children)

    def table(self, name: str) -> TableKeys:
        return next(t for t in self.tables if t.name == name)

    def parent(self, table: TableKeys) -> TableKeys:
        """The table ``table``'s foreign key references."""
        return self.table(table.foreign_keys[0].parent)

    def children_of(self, name: str) -> tuple[TableKeys, ...]:
        """The tables whose foreign key references ``name``."""
        return tuple(t for t in self.children if t.foreign_keys[0].parent == name)

    def path(self, table: TableKeys) -> tuple[TableKeys, ...]:
        """The tables from the root's first child down to ``table`` (empty for the root)."""
        out: list[TableKeys] = []
        while table.foreign_keys:
            out.insert(0, table)
            table = self.parent(table)
        return tuple(out)

    @classmethod
    def of(cls, declared: Sequence[TableKeys], columns: Mapping[str, Sequence[str]]) -> Structure:
        """The structure the declarations give, or an error saying what is wrong and what to do.
        ``columns``: each table's columns (public: the header), to check the keys name real columns
        and to write an example into the no-keys error."""
        names = [t.name for t in declared]
        if not any(t.primary_key or t.foreign_keys for t in declared):
            raise NoKeysError(
                "the database declares no primary or foreign keys, so synth cannot tell which rows belong to one "
                "person (the privacy unit is a row of the root table with every row that references it). Declare "
                "the keys in a profile and pass it with --profile, e.g.:\n\n[release]\nepsilon = 1.0\n\n"
                f"{keys_toml(names, columns)}\n(or declare PRIMARY KEY and FOREIGN KEY ... REFERENCES in the "
                "database's schema)."
            )
        for table in declared:
            for column in table.key_columns:
                if column not in columns.get(table.name, ()):
                    raise RelationalError(f"table {table.name!r} has no column {column!r}, which is declared as a key; "
                                          f"its columns are {list(columns.get(table.name, ()))}. Fix the key's name.")
        roots = [t for t in declared if not t.foreign_keys]
        if len(roots) != 1:
            raise RelationalError(
                f"a relational release needs exactly one root table (one without a foreign key); this database has "
                f"{len(roots)}: {[t.name for t in roots]}. Several roots (or none) are not supported yet: release "
                "the tables as separate releases, or declare the foreign keys that link them in a profile."
            )
        root = roots[0]
        if not root.primary_key:
            raise RelationalError(f"the root table {root.name!r} declares no primary key; declare one "
                                  f"(primary_key = \"...\" under [tables.{root.name}] in a profile).")
        by_name = {t.name: t for t in declared}
        for table in declared:
            if table is root:
                continue
            if len(table.foreign_keys) > 1:
                raise RelationalError(
                    f"table {table.name!r} has {len(table.foreign_keys)} foreign keys; a table with more than one "
                    "parent is not supported yet. Keep the one foreign key that leads to the person in a profile.")
            fk = table.foreign_keys[0]
            parent = by_name.get(fk.parent)
            if parent is None:
                raise RelationalError(f"table {table.name!r} references {fk.parent!r}, which is not in the database.")
            if not parent.primary_key or fk.parent_column != parent.primary_key:
                raise RelationalError(
                    f"table {table.name!r}'s foreign key {fk.column!r} references {fk.parent}.{fk.parent_column}, "
                    f"which is not {fk.parent!r}'s primary key ({parent.primary_key!r}); reference the primary key "
                    f"(and declare one for {fk.parent!r}).")
        ordered, level = [], [root]
        while level:  # parents before children, level by level from the root
            level = [t for parent in level for t in declared if t.foreign_keys and t.foreign_keys[0].parent == parent.name]
            ordered += level
        unreached = [t.name for t in declared if t is not root and t not in ordered]
        if unreached:
            raise RelationalError(
                f"table(s) {unreached} do not lead to the root table {root.name!r} through their foreign keys (their "
                "keys form a cycle). Each table must reference the root or a table that leads to it.")
        return cls(root, tuple(ordered))
