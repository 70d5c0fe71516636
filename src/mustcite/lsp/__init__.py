"""The language server (``mustcite lsp``): reference checks and the audit inside the editor.

:mod:`.documents` finds keys, bibliography commands and BibTeX fields in a document's text;
:mod:`.diagnostics` turns checks and audit results into diagnostics and quick fixes;
:mod:`.server` is the pygls server that keeps them current as files are opened, edited and saved.
"""

import importlib

#: public name -> the submodule that defines it, imported on first use (pygls, asyncio)
_LAZY = {
    "FrameReader": "framing",
}

__all__ = [*_LAZY]


def __getattr__(name: str):
    """The names of :data:`_LAZY`, imported on first use (PEP 562)."""
    try:
        module, _, attr = _LAZY[name].partition(":")
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
