"""The language server (``mustcite lsp``): reference checks and the audit inside the editor.

:mod:`.documents` finds keys, bibliography commands, BibTeX blocks and their fields in a document's text;
:mod:`.bibstate` keeps a ``.bib`` document's entries as read and checked across edits;
:mod:`.diagnostics` turns checks and audit results into diagnostics and quick fixes;
:mod:`.server` is the pygls server that keeps them current as files are opened, edited and saved.
"""

from ..lazy_exports import lazy_exports

#: public name -> the submodule that defines it, imported on first use (pygls, asyncio)
_LAZY = {
    "FrameReader": "framing",
}

__all__ = [*_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
