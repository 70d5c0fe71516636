"""``python -m benchmarks`` (from the repository root): see :mod:`benchmarks.runner.cli`."""

import os
import sys

from benchmarks.runner.cli import main

try:
    code = main()
    sys.stdout.flush()
except BrokenPipeError:             # the output went into `head` or the like, which stopped reading
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 1
sys.exit(code)
