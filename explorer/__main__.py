"""`python -m explorer` runs the same entry point as the `interview-explorer` script."""

import sys

from explorer.cli import main

sys.exit(main())
