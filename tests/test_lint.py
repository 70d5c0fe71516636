"""The code is clean under ruff (the rules of pyproject.toml), so lint is part of the suite even when
pytest runs without `make test`. Skipped where ruff is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_ruff_check_is_clean():
    got = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests", "scripts"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stdout + got.stderr
