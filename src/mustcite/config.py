"""Where data, work products and caches live.

* data directory (read only inputs): ``--data`` option, else ``$MUSTCITE_DATA``, else the first
  ``shared/data`` found beside the current directory or any parent of it (``../shared/data`` in
  this project's checkout).
* work directory (everything mustcite writes): ``--work`` option, else ``$MUSTCITE_WORK``, else
  ``./mustcite-work``.
* cache (embeddings, judge answers, extraction results): ``<work>/cache`` unless
  ``$MUSTCITE_CACHE`` says otherwise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import DataMissingError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def find_data_dir(explicit: str | Path | None = None) -> Path:
    """Return the data directory, or raise DataMissingError saying how to get one."""
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_dir():
            raise DataMissingError(f"data directory {p} does not exist",
                                   hint="pass --data DIR or set MUSTCITE_DATA")
        return p.resolve()
    env = os.environ.get("MUSTCITE_DATA")
    if env:
        return find_data_dir(env)
    here = Path.cwd().resolve()
    for base in [here, *here.parents]:
        cand = base / "shared" / "data"
        if cand.is_dir():
            return cand
        cand = base.parent / "shared" / "data"
        if cand.is_dir():
            return cand
    raise DataMissingError(
        "no data directory found (looked for shared/data beside the current directory and its parents)",
        hint="pass --data DIR or set MUSTCITE_DATA; `mustcite data list` says where each dataset "
             "comes from")


@dataclass(frozen=True)
class Workspace:
    """The folder tree mustcite writes into."""

    root: Path

    @classmethod
    def resolve(cls, explicit: str | Path | None = None) -> Workspace:
        root = Path(explicit or os.environ.get("MUSTCITE_WORK") or "mustcite-work").expanduser()
        return cls(root.resolve())

    def dir(self, *parts: str) -> Path:
        p = self.root.joinpath(*parts)
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def cache(self) -> Path:
        env = os.environ.get("MUSTCITE_CACHE")
        p = Path(env).expanduser().resolve() if env else self.root / "cache"
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def corpus_dir(self) -> Path:
        return self.dir("corpus")
