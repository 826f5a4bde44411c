"""`python -m pipeline.cli`: the same as the `mfu` console script."""

import sys

from pipeline.cli import main

sys.exit(main())
