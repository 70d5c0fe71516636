"""Helpers shared by the command modules: the work folder, option parsing and writing a report."""

from __future__ import annotations

import sys
from pathlib import Path

from ..config import Workspace
from ..errors import UsageError


def workspace() -> Workspace:
    """The work folder (``MUSTCITE_WORK`` or ``./mustcite-work``)."""
    return Workspace.resolve()


def year_range(text: str | None, option: str = "--pool-years") -> tuple[int, int] | None:
    """``2018-2023`` -> ``(2018, 2023)``, ``2020`` -> ``(2020, 2020)``, nothing -> None; a usage
    error (exit 2) naming ``option`` otherwise."""
    if not text:
        return None
    try:
        a, _, b = text.partition("-")
        return int(a), int(b or a)
    except ValueError:
        raise UsageError(f"{option} must look like 2018-2023, got {text!r}") from None


def write_report(text: str, out: Path | None) -> None:
    """A command's report: into ``out`` (written whole or not at all) when given, else onto stdout."""
    if out:
        from ..io import atomic_write_text

        atomic_write_text(out, text)
    else:
        sys.stdout.write(text)
