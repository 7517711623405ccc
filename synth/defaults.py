"""The version, and the defaults and limits that the command line states in its ``--help``, kept here, away from numpy and pandas,
so that ``synth --help`` shows them without importing the modules that use them.

Only plain constants: nothing here reads data or imports anything.
"""

VERSION = "0.1.0"  # synth's version (`synth --version`, ``synth.__version__``), recorded in every Description and model file
DEFAULT_DELTA_WITHOUT_PROFILE = 1e-9  # delta of a release made without a profile and without --delta
MAX_DELTA = 1e-4  # the largest delta a profile accepts without accept_large_delta (see synth.domains.profile)
FIT_ITERATIONS = 1000  # graphical-model fitting iterations before sampling (`synth generate --iterations`)
