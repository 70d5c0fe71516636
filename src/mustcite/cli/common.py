"""Helpers shared by the command modules: the work folder, option parsing and writing a report."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path

from ..config import Workspace
from ..errors import UsageError
from ..io import atomic_write_text


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
        atomic_write_text(out, text)
    else:
        sys.stdout.write(text)


def exit_now(code: int, *, wait_for_threads: bool = True) -> None:
    """End the process with ``code`` without tearing down its objects one by one.

    A command that loaded the look-up index or a model holds millions of small objects; freeing
    them at interpreter exit takes more than a second on 2 cores, after the work is done. So, as
    mypy does, the process ends at once: the output streams are flushed and the ``atexit``
    handlers run (temporary folders, Ray), then ``os._exit``. When a thread other than the main
    one is still running, the normal exit waits for it instead, unless ``wait_for_threads`` is
    False (the language server: a check still running must not hold the exit the protocol asks for)."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if wait_for_threads and others:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):     # a closed pipe: nothing more can be said
            pass
    atexit._run_exitfuncs()
    os._exit(code)
