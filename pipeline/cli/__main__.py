"""`python -m pipeline.cli`: the same as the `mfu` console script."""

import sys

from pipeline.cli import console

sys.exit(console())
