"""Waiting for a state the test cannot be told about directly (a file written by another process,
what a server reports), by looking at that state itself until it holds.

The deadline is a cut-off for a hang, never a bound on speed: it is generous, and running past it
fails the test with a message that says what never happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: seconds after which a wait gives up: something that has not happened by then never will
HANG_S = 60.0


def wait_until(predicate: Callable[[], T], timeout: float = HANG_S, *, what: str = "",
               poll: float = 0.01) -> T:
    """The first true value of ``predicate()``, called every ``poll`` seconds; AssertionError
    naming ``what`` (what was waited for) when it is still false after ``timeout`` seconds. An
    exception ``predicate`` raises (an assertion that the wait is still worth it) ends the wait."""
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise AssertionError(f"still waiting after {timeout:g} s for {what or predicate!r}")
        time.sleep(poll)
