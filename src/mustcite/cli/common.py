"""Helpers shared by the command modules: the work folder and option parsing."""

from __future__ import annotations

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
