"""Persistent judge-answer cache: SQLite at ``<work>/cache/judge.sqlite``.

Key: (backend, model, prompt version, task, instance key).  Each answer is committed as it arrives,
so a crash loses nothing and a rerun repeats no paid call.  Parse failures are real (paid) answers
and are cached too; transport errors that outlived their retries are not, so a rerun retries them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from .judge import Judgement

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgements (
  backend TEXT NOT NULL, model TEXT NOT NULL, prompt_version TEXT NOT NULL, task TEXT NOT NULL,
  instance_key TEXT NOT NULL, value INTEGER, raw TEXT, prob TEXT, error TEXT,
  input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, seconds REAL, created REAL,
  PRIMARY KEY (backend, model, prompt_version, task, instance_key))
"""


class JudgeCache:
    """Thread-safe get/put of Judgements; use as a context manager or call ``close``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, key: tuple[str, str, str, str, str]) -> Judgement | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value, raw, prob, error, input_tokens, output_tokens, cost_usd FROM judgements "
                "WHERE backend=? AND model=? AND prompt_version=? AND task=? AND instance_key=?", key
            ).fetchone()
        if row is None:
            return None
        prob = {int(k): v for k, v in json.loads(row[2]).items()} if row[2] else None
        return Judgement(value=row[0], raw=row[1] or "", prob=prob, error=row[3],
                         input_tokens=row[4] or 0, output_tokens=row[5] or 0,
                         cost_usd=row[6] or 0.0, cached=True)

    def contains(self, key: tuple[str, str, str, str, str]) -> bool:
        with self._lock:
            return self._db.execute(
                "SELECT 1 FROM judgements WHERE backend=? AND model=? AND prompt_version=? AND task=? "
                "AND instance_key=?", key).fetchone() is not None

    def put(self, key: tuple[str, str, str, str, str], j: Judgement, seconds: float = 0.0) -> None:
        prob = json.dumps(j.prob) if j.prob is not None else None
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO judgements VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*key, j.value, j.raw, prob, j.error, j.input_tokens, j.output_tokens, j.cost_usd,
                 seconds, time.time()))   # autocommit: each answer is durable when put returns

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["JudgeCache"]
