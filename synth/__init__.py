"""synth: differentially private synthetic data.

The verbs mirror the command line: ``describe`` a private table under a privacy budget (the only
step that touches private data), ``generate`` synthetic rows from the resulting Description,
``run`` both and write a release (``run_database`` for a database, per person), ``evaluate`` a
synthetic table against the original (``evaluate_database`` a relational release). ``fit``
turns a Description into a model that samples (with conditions, too), saves and ``load_model``
loads again.

The public names are imported from their modules on first use, so ``import synth`` (and with it
the command line's start-up) loads neither pandas nor the evaluation stack (scikit-learn,
scipy.stats, matplotlib) until something needs them.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from synth.defaults import VERSION as __version__  # noqa: F401 (synth.__version__, defined with the other constants)

_HOMES = {  # public name -> the module that defines it
    **dict.fromkeys(("RunResult", "describe", "draft_profile", "evaluate", "evaluate_database", "resolve_profile", "run",
                     "run_database"), "synth.api"),
    **dict.fromkeys(("Description", "load_description", "save_description"), "synth.release.description"),
    "SynthError": "synth.errors",
    **dict.fromkeys(("FittedModel", "fit", "generate", "load_model"), "synth.generation.generate"),
    **dict.fromkeys(("Profile", "load_profile", "save_profile"), "synth.domains.profile"),
}

__all__ = [
    "Description", "FittedModel", "Profile", "RunResult", "SynthError", "describe", "draft_profile", "evaluate",
    "evaluate_database", "fit", "generate", "load_description", "load_model", "load_profile", "resolve_profile", "run", "run_database",
    "save_description", "save_profile",
]

if TYPE_CHECKING:  # what type checkers see: the names as if imported here
    from synth.api import (
        RunResult,
        describe,
        draft_profile,
        evaluate,
        evaluate_database,
        resolve_profile,
        run,
        run_database,
    )
    from synth.domains.profile import Profile, load_profile, save_profile
    from synth.errors import SynthError
    from synth.generation.generate import FittedModel, fit, generate, load_model
    from synth.release.description import Description, load_description, save_description


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'synth' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(ModuleType):
    """The package's module type. Importing a submodule sets it as an attribute of the package; the
    subpackage ``synth.evaluate`` shares its name with a public verb, and must not replace the verb
    (``synth.evaluate(original, synthetic)`` stays the function)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, ModuleType):
            return  # the submodule stays reachable through sys.modules and `from synth.x import y`
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
