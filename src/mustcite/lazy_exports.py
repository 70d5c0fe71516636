"""Names a package exports but imports only when first asked for (PEP 562).

A stage package lists its public names in a table, ``name -> "submodule"`` (or
``"submodule:other_name"`` where the submodule calls it otherwise), and takes its module-level
``__getattr__`` and ``__dir__`` from :func:`lazy_exports`, so that importing the package stays cheap
and each name loads its own submodule the first time it is used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, table: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package named ``package`` whose names in ``table`` are
    imported on first use; a name once imported is kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        try:
            module, _, attr = table[name].partition(":")
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f".{module}", package), attr or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
