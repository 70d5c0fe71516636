"""The ``meta.json`` a retriever saves with its index (what :meth:`metadata` returned), read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DataMissingError


def read_meta(path: str | Path) -> dict[str, Any]:
    """The saved index metadata at ``path``; a missing file raises DataMissingError."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataMissingError(f"no saved index metadata at {path}") from None
