"""Exception classes of synth: one base, ``SynthError``, and a subclass per kind of bad input.

Every message says what was wrong and what to do about it; the CLI prints the message (no
traceback) and exits non-zero. Messages must never quote private values (a row count, a value
seen in the data), because they are printed to consoles and logs.
"""

from __future__ import annotations


class SynthError(Exception):
    """Base class of every error synth raises on purpose."""

    exit_code = 2


class InputFileError(SynthError):
    """A data or profile file is missing, unreadable, empty, or of an unknown format."""


class RowFieldsError(InputFileError):
    """A CSV row has more fields than the header (every reader refuses it alike)."""


class DataError(SynthError):
    """The table does not fit what was asked: header only, a missing column, no usable columns."""


class SchemaError(SynthError):
    """A column's kind or public domain is invalid (bounds reversed, no categories, bad kind)."""


class ProfileError(SynthError):
    """A release profile is malformed or contradicts itself."""


class BudgetError(SynthError):
    """A privacy parameter is invalid: epsilon not a positive number, delta outside [0, 1), ..."""


class BudgetExhaustedError(SynthError):
    """A query would spend more privacy budget than is left; it was refused before any noise was drawn."""


class DiscoveryError(SynthError):
    """A column's domain could not be found under DP with this budget (a column was *lost*)."""


class EngineError(SynthError):
    """An unknown engine, or engine options that are invalid."""


class DescriptionError(SynthError):
    """A Description file is malformed, of an unsupported version, or inconsistent."""


class OutputError(SynthError):
    """An output could not be written (exists already without --force, unwritable directory)."""


class ConditionError(SynthError):
    """A condition for sampling names an unknown column or value, cannot be met by the model, or
    cannot be applied exactly to it."""


class ModelFileError(SynthError):
    """A saved model file is unreadable, damaged, of another format, or not the model of its Description."""


class SamplingError(SynthError):
    """An unknown sampling scheme was asked for (the choices are named in the message)."""


class RelationalError(SynthError):
    """A database's tables or keys do not make a release synth supports (several roots, a
    grandchild table, a foreign key to no primary key), or a database file cannot be read."""


class NoKeysError(RelationalError):
    """A database declares no primary and foreign keys, and no profile declares them."""


class ReleaseFolderError(InputFileError):
    """A release folder is incomplete, or a file of it is missing or differs from its manifest."""


class SigningError(SynthError):
    """A signing key cannot be made, read or used, or the signing library is not installed."""


class VerificationError(SynthError):
    """A signed release does not verify: a changed or missing file, another key, or a damaged signature."""


class AttackError(SynthError):
    """Attacks on a release cannot run as asked: no control set of held-out rows, a holdout that
    cannot be set aside as asked (a bad share, a database, a place inside the release folder), or
    the anonymeter library is missing."""
