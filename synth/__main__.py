"""``python -m synth``: the same command line as the ``synth`` script (synth.cli)."""

import sys

from synth.cli import main

sys.exit(main())
