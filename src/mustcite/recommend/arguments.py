"""Checks of the arguments of the public Python API (``mustcite.must_cite``/``audit``/``load`` and the
:class:`~.method.Recommender` methods): a wrong one raises :class:`~mustcite.errors.UsageError`
naming it (its ``field``), as the command line and the REST API refuse it, never a raw TypeError
from deep inside or an empty answer."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import MustciteError, UsageError
from .query import parse_year

#: the largest ``top`` each entry point takes (the command line's caps; ranking many for evaluation)
MAX_TOP = {"recommend": 1000, "audit": 500, "rank": 100_000}


def _shown(value: Any) -> str:
    return repr(value)[:80]


def whole_number(value: Any, name: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (not a bool, a float or a string of digits)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number such as {max(low, min(high, 20))}, got {_shown(value)}",
                         field=name)
    if not low <= value <= high:
        raise UsageError(f"{name} must be between {low} and {high}, got {value}", field=name)
    return value


def fraction(value: Any, name: str, low: float = 0.0, high: float = 1.0, *, open_low: bool = False) -> float:
    """A number from ``low`` to ``high`` (above ``low`` with ``open_low``), not a bool or NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise UsageError(f"{name} must be a number, got {_shown(value)}", field=name)
    if value > high or value < low or (open_low and value == low):
        raise UsageError(f"{name} must be {'over' if open_low else 'at least'} {low} and at most {high}, got {value}",
                         field=name)
    return float(value)


def top(value: Any, entry: str) -> int:
    """``top`` of the entry point ``entry`` (a key of :data:`MAX_TOP`): 1 to its cap."""
    return whole_number(value, "top", 1, MAX_TOP[entry])


def year(value: Any, name: str = "year") -> int | None:
    """A year as the command line and the REST API read it (None, a whole number, digits)."""
    try:
        return parse_year(value, name)
    except MustciteError as exc:
        raise UsageError(exc.message, field=name) from None


def text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{name} must be a string, got {type(value).__name__}", field=name)
    return value


def flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be True or False, got {_shown(value)}", field=name)
    return value


def choice(value: Any, name: str, options: Iterable[str], *, optional: bool = True) -> str | None:
    options = tuple(options)
    if (value is None and optional) or (isinstance(value, str) and value in options):
        return value
    raise UsageError(f"{name} must be one of {', '.join(options)}{' or None' if optional else ''}, got "
                     f"{_shown(value)}", field=name)


def path(value: Any, name: str, *, optional: bool = False) -> Path | None:
    """A non-empty ``str`` or ``os.PathLike`` without NUL (``optional``: None or "" is None)."""
    if optional and (value is None or value == ""):
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise UsageError(f"{name} must be a path (str or pathlib.Path), got {_shown(value)}", field=name)
    return Path(value)


def sequence(value: Any, name: str, *, empty: bool = True) -> list:
    """A list or tuple (not a string, a dict or a generator already used up)."""
    if not isinstance(value, (list, tuple)):
        raise UsageError(f"{name} must be a list, got {type(value).__name__}", field=name)
    if not empty and not value:
        raise UsageError(f"{name} must not be empty", field=name)
    return list(value)


def instance(value: Any, name: str, kind: type, *, optional: bool = False) -> Any:
    if (value is None and optional) or isinstance(value, kind):
        return value
    raise UsageError(f"{name} must be a {kind.__name__}{' or None' if optional else ''}, got "
                     f"{type(value).__name__}", field=name)
