"""``python -m benchmarks`` (from the repository root): see :mod:`benchmarks.runner.cli`."""

import sys

from benchmarks.runner.cli import main

sys.exit(main())
