"""`python -m psbench`: the CLI entry point."""

import sys

from psbench.cli import main

sys.exit(main())
