"""synth: differentially private synthetic data.

The verbs mirror the command line: ``describe`` a private table under a privacy budget (the only
step that touches private data), ``generate`` synthetic rows from the resulting Description,
``run`` both and write a release, ``evaluate`` a synthetic table against the original.
"""

__version__ = "0.1.0"

from synth.api import RunResult, describe, evaluate, resolve_profile, run  # noqa: E402
from synth.description import Description, load_description, save_description  # noqa: E402
from synth.errors import SynthError  # noqa: E402
from synth.generate import generate  # noqa: E402
from synth.profile import Profile, draft_profile, load_profile, save_profile  # noqa: E402

__all__ = [
    "Description", "Profile", "RunResult", "SynthError", "describe", "draft_profile", "evaluate",
    "generate", "load_description", "load_profile", "resolve_profile", "run", "save_description",
    "save_profile",
]
