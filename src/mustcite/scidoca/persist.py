"""How a learned SCIDOCA system is kept on disk: ``config.json`` (``format``, ``task`` and the
system's metadata) beside ``model.joblib`` (its fitted scikit-learn parts); sub-systems and a
cross-encoder go in sub-folders named by the system."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import joblib

from ..errors import MustciteError
from ..io import atomic_write_json, read_json

#: the on-disk format of every SCIDOCA system (config.json ``format``)
FORMAT = 1
HINTS = {1: "train one with `mustcite scidoca train --task 1`", 2: "train one with `mustcite scidoca train --task 2`",
         3: "train one with `mustcite scidoca train --task 3`"}


def write_model(folder: str | Path, payload: Any, metadata: dict[str, Any]) -> Path:
    """``payload`` to ``model.joblib``, then ``config.json`` (written last: a folder with a config is complete)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    joblib.dump(payload, folder / "model.joblib")
    atomic_write_json(folder / "config.json", {"format": FORMAT, **metadata})
    return folder


def read_config(folder: str | Path, task: int) -> dict[str, Any]:
    """The ``config.json`` of a Task ``task`` system of this format, else a clear error naming it."""
    path = Path(folder) / "config.json"
    meta = read_json(path)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("task") != task:
        raise MustciteError(f"not a Task {task} model of this version", path=path, hint=HINTS[task])
    return meta


def read_payload(folder: str | Path) -> Any:
    path = Path(folder) / "model.joblib"
    try:
        return joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - a damaged model file: name it
        raise MustciteError(f"cannot load the model: {exc}", path=path) from None
