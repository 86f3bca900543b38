"""`python -m psbench`: the CLI entry point."""

import sys

from psbench.cli.main import main

sys.exit(main())
