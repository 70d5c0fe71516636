"""Failures worth retrying: the exception that marks them and the server's Retry-After header.

Used by every client that talks to a remote service (the LLM judge backends, the venue collectors).
"""

from __future__ import annotations

import datetime as dt
from email.utils import parsedate_to_datetime


class TransientError(Exception):
    """A failure worth retrying (HTTP 429, 5xx, timeout, connection error)."""

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None if absent/unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
        return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())
    except (TypeError, ValueError):
        return None
