"""Run markers: a long stage records in its output folder whether it is running, complete or failed.

``<folder>/.mustcite/run-<stage>.json`` (schema ``mustcite/schemas/run_marker.schema.json``) is
written atomically as ``running`` when the stage starts and rewritten as ``complete`` (with its
counts) or ``failed`` (with the error) when it ends.  A ``kill -9`` leaves ``running``; a reader
then finds the writer's pid gone (or reused by another process) and reports ``interrupted``.
Readers of a folder call :func:`warn_if_partial` to learn that they are looking at a partial one.
The marker sits in a hidden subfolder so that ``glob("*.json")`` over an output folder never sees it.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from . import lazy_libs
from .errors import MustciteError
from .io import atomic_write_json

MARKER_DIR = ".mustcite"
SCHEMA = "run_marker.schema.json"
#: what a finished paper of each stage is called in messages ("N of M papers labelled")
DONE_VERB = {"extract": "extracted", "link": "linked", "annotate": "labelled"}


def marker_path(folder: str | Path, stage: str) -> Path:
    return Path(folder) / MARKER_DIR / f"run-{stage}.json"


@dataclass(frozen=True)
class RunState:
    """A run marker as read; ``state`` is ``interrupted`` where the file says ``running`` but its
    writer is gone."""

    path: Path
    stage: str
    state: str                      # running | complete | failed | interrupted
    pid: int
    started: str
    finished: str | None = None
    expected: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.state == "complete"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state letter, start time in clock ticks) of a process from /proc, None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            rest = fh.read().rsplit(")", 1)[1].split()
        return rest[0], rest[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, pid_start: str | None) -> bool:
    """Whether the process that wrote a marker still runs (a zombie or a reused pid does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except OSError:
        return False
    stat = _proc_stat(pid)
    if stat is None:
        return True
    return stat[0] not in ("Z", "X") and (pid_start is None or stat[1] == pid_start)


@lru_cache(maxsize=1)
def _validator():
    jsonschema = lazy_libs.jsonschema()
    schema = json.loads(resources.files("mustcite.schemas").joinpath(SCHEMA).read_text())
    return jsonschema.Draft202012Validator(schema)


def read_marker(path: str | Path) -> RunState:
    """One marker file, validated; a corrupt one raises MustciteError naming it."""
    path = Path(path)
    hint = "delete it and rerun the stage that wrote the folder"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MustciteError(f"corrupt run marker: {exc}", path=path, hint=hint) from None
    except OSError as exc:
        raise MustciteError(f"cannot read run marker: {exc.strerror}", path=path) from None
    err = next(iter(sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))), None)
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise MustciteError(f"corrupt run marker: {err.message}", path=path, field=where, hint=hint)
    state = doc["state"]
    if state == "running" and doc.get("host", socket.gethostname()) == socket.gethostname() \
            and not _alive(doc["pid"], doc.get("pid_start")):
        state = "interrupted"
    return RunState(path=path, stage=doc["stage"], state=state, pid=doc["pid"], started=doc["started"],
                    finished=doc.get("finished"), expected=doc.get("expected"),
                    options=doc.get("options") or {}, counts=doc.get("counts") or {}, error=doc.get("error"))


def read_run_state(folder: str | Path, stage: str | None = None) -> RunState | None:
    """The marker of ``stage`` in ``folder`` (None if there is none).  Without ``stage``: of all the
    folder's markers the latest unfinished one, else the latest complete one."""
    if stage is not None:
        path = marker_path(folder, stage)
        return read_marker(path) if path.is_file() else None
    states = [read_marker(p) for p in sorted((Path(folder) / MARKER_DIR).glob("run-*.json"))]
    if not states:
        return None
    return max(states, key=lambda s: (not s.complete, s.started))


def _done(folder: Path, stage: str) -> int | None:
    if stage == "annotate":   # labels/<stem>.json
        return sum(1 for p in folder.glob("*.json") if not p.name.startswith("."))
    if stage == "extract":    # every paper tried gets <stem>.meta.json
        return sum(1 for _ in folder.glob("*.meta.json"))
    return None


def warn_if_partial(folder: str | Path, what: str, stage: str | None = None) -> str | None:
    """A one-line warning if ``folder``'s run marker is not ``complete``, else None (also for a
    folder without a marker: outputs of older versions)."""
    st = read_run_state(folder, stage)
    if st is None or st.complete:
        return None
    why = {"running": f"is still running (pid {st.pid})", "interrupted": f"was interrupted (pid {st.pid} is gone)",
           "failed": "failed"}.get(st.state, st.state)
    msg = f"{what} {folder} is partial: the `mustcite {st.stage}` run started {st.started} {why}"
    if st.error:
        msg += f": {st.error.splitlines()[0]}"
    done = _done(Path(folder), st.stage)
    if done is not None and st.expected is not None:
        msg += f"; {done} of {st.expected} papers {DONE_VERB.get(st.stage, 'done')}"
    return msg + f" (run marker {st.path})"


@contextmanager
def run_marker(folder: str | Path, stage: str, *, expected: int | None = None,
               options: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Mark ``folder`` as written by a running ``stage``; yields a dict of counts the caller fills,
    stored when the block ends (``complete``).  An exception is recorded (``failed``, or
    ``interrupted`` for Ctrl-C) and re-raised."""
    path = marker_path(folder, stage)
    stat = _proc_stat(os.getpid())
    doc: dict[str, Any] = {"stage": stage, "state": "running", "pid": os.getpid(),
                           "pid_start": stat[1] if stat else None, "host": socket.gethostname(),
                           "started": _now(), "finished": None, "options": dict(options or {}),
                           "expected": expected, "counts": {}, "error": None}
    atomic_write_json(path, doc)
    counts: dict[str, Any] = {}
    try:
        yield counts
    except BaseException as exc:
        doc.update(state="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed", finished=_now(),
                   counts=counts, error=str(exc) or type(exc).__name__)
        try:
            atomic_write_json(path, doc)
        except OSError:
            pass            # never hide the error that ended the run
        raise
    doc.update(state="complete", finished=_now(), counts=counts)
    atomic_write_json(path, doc)


__all__ = ["MARKER_DIR", "RunState", "marker_path", "read_marker", "read_run_state", "run_marker",
           "warn_if_partial"]
