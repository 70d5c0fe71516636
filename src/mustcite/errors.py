"""Errors a user can act on. Front ends print them without a traceback.

Exit codes: 0 ok, 1 failure (``MustciteError``), 2 usage (``UsageError``).
"""

from __future__ import annotations

from pathlib import Path


class MustciteError(Exception):
    """A failure caused by input or environment, with the file and line/field where known."""

    exit_code = 1

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None,
                 field: str | None = None, hint: str | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        text = where + self.message
        if self.field:
            text += f" (field '{self.field}')"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class UsageError(MustciteError):
    """The command was called wrongly (bad option combination, unknown name)."""

    exit_code = 2


class DataMissingError(MustciteError):
    """A dataset or a built artefact the command needs is not there."""


class MissingLibraryError(MustciteError):
    """An optional (or heavy) library the command needs is not installed; the hint says which pip
    extra installs it (:mod:`mustcite.lazy_libs`)."""
