"""``mustcite lsp``: a language server (pygls, over stdio) for LaTeX projects and BibTeX files.

What it does, per file the editor opens, changes or saves:

* a ``.bib`` file: every entry is checked against the corpus and the catalogue of cited works
  (:func:`mustcite.refcheck.check.check_entries`); only entries whose text changed are checked
  again. Diagnostics as :mod:`.diagnostics` describes them.
* a ``.tex`` file: its citation keys against the project's bibliographies (the ``.bib`` files its
  ``\\bibliography``/``\\addbibresource`` commands name, read from the editor when open, else from
  disk); a change re-reads that file only.
* on saving either, the project is audited in the background (the folder of the workspace holding
  the file, else the file's folder): the must-cite papers the draft lacks appear as information
  diagnostics at its bibliography command. A save during an audit queues one more audit, no more.

The look-up index and the recommender are loaded once per server, on first need, off the
editor's message loop. Options come as ``initializationOptions``: ``year`` (audit as of that year;
default: this year), ``top`` (missing papers shown, default 10), ``minScore`` (default 0.5),
``model`` (a model folder) and ``audit`` (false: reference checks only).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ..errors import MustciteError
from ..version import __version__
from . import diagnostics as diag
from .documents import bibliographies, cites

log = logging.getLogger(__name__)


@dataclass
class Options:
    year: int | None = None
    top: int = 10
    min_score: float = 0.5
    model: str | None = None
    audit: bool = True

    @classmethod
    def from_client(cls, given: Any, defaults: "Options") -> "Options":
        given = given if isinstance(given, dict) else {}
        return cls(year=given.get("year", defaults.year), top=int(given.get("top", defaults.top)),
                   min_score=float(given.get("minScore", defaults.min_score)),
                   model=given.get("model", defaults.model), audit=bool(given.get("audit", defaults.audit)))


class CitationServer(LanguageServer):
    """The server's state: options, the loaded index and model, and per-file results."""

    def __init__(self, options: Options | None = None):
        super().__init__("mustcite", __version__)
        self.options = options or Options()
        self._index = None
        self._model = None
        self._index_lock, self._model_lock = threading.Lock(), threading.Lock()
        self._work = ThreadPoolExecutor(1, thread_name_prefix="mustcite-check")
        self._audits = ThreadPoolExecutor(1, thread_name_prefix="mustcite-audit")
        #: per .bib document: entry text -> its check (an entry is checked again only when it changes)
        self._checked: dict[str, dict[str, Any]] = {}
        #: per .bib document: its checks by key, in file order
        self.bib_checks: dict[str, dict[str, Any]] = {}
        self._bib_diags: dict[str, list[types.Diagnostic]] = {}
        self._tex_diags: dict[str, list[types.Diagnostic]] = {}
        self._audit_diags: dict[str, list[types.Diagnostic]] = {}
        self._auditing: dict[str, bool] = {}        # project folder -> another audit queued
        #: seconds from the last save to its diagnostics, per kind ("bib", "tex", "audit")
        self.timings: dict[str, float] = {}

    # ---- what is loaded once ------------------------------------------------------------------------
    def index(self):
        with self._index_lock:
            if self._index is None:
                from ..refcheck.index import load_index

                self._index = load_index()
            return self._index

    def model(self):
        with self._model_lock:
            if self._model is None:
                from ..recommend.shortcuts import load

                self._model = load(self.options.model)
            return self._model

    # ---- documents -----------------------------------------------------------------------------------
    def text_of(self, uri: str) -> str:
        """The text of ``uri``: the editor's, when open, else the file's ("" when neither)."""
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.source
        path = to_fs_path(uri)
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace") if path else ""
        except OSError:
            return ""

    def project_root(self, uri: str) -> Path:
        path = Path(to_fs_path(uri) or ".").resolve()
        for folder in self.workspace.folders.values():
            root = Path(to_fs_path(folder.uri) or "").resolve()
            if root in path.parents:
                return root
        root = self.workspace.root_path
        if root and Path(root).resolve() in path.parents:
            return Path(root).resolve()
        return path.parent

    def bib_uris(self, tex_uri: str, text: str) -> list[str]:
        """The ``.bib`` files the LaTeX source ``text`` names, else every ``.bib`` of its project."""
        here = Path(to_fs_path(tex_uri) or ".").parent
        names = [n for b in bibliographies(text) for n in b.names]
        if names:
            return [from_fs_path(str((here / n).resolve())) for n in names]
        root = self.project_root(tex_uri)
        return [from_fs_path(str(p.resolve())) for p in sorted(root.rglob("*.bib"))[:20]]

    # ---- checks --------------------------------------------------------------------------------------
    def check_bib(self, uri: str, text: str) -> list[types.Diagnostic]:
        """Check the entries of a ``.bib`` text (only those not checked before) and return its diagnostics."""
        from ..refcheck.check import check_entries
        from ..refcheck.entries import entries_from_bib

        name = Path(to_fs_path(uri) or "refs.bib").name
        try:
            entries, _ = entries_from_bib(text, name)
        except MustciteError:
            entries = []
        cache = self._checked.setdefault(uri, {})
        todo = [e for e in entries if e.raw not in cache]
        if todo:
            for e, c in zip(todo, check_entries(todo, self.index())):
                cache[e.raw] = c
        current, by_key, out = {}, {}, []
        for e in entries:
            c = cache[e.raw]
            current[e.raw] = c
            c.source = e.source           # where the entry is now (lines move as the file is edited)
            by_key.setdefault(e.key, c)
            out.extend(diag.entry_diagnostics(text, c))
        self._checked[uri] = current
        self.bib_checks[uri] = by_key
        return out

    def ensure_bib(self, uri: str) -> None:
        if uri not in self.bib_checks:
            self._bib_diags[uri] = self.check_bib(uri, self.text_of(uri))

    def check_tex(self, uri: str, text: str) -> list[types.Diagnostic]:
        bibs = self.bib_uris(uri, text)
        checks: dict[str, Any] = {}
        for b in bibs:
            self.ensure_bib(b)
            for key, c in self.bib_checks.get(b, {}).items():
                checks.setdefault(key, c)
        return diag.cite_diagnostics(cites(text), checks, [b.rpartition("/")[2] for b in bibs])

    def publish(self, uri: str) -> None:
        items = self._bib_diags.get(uri, []) + self._tex_diags.get(uri, []) + self._audit_diags.get(uri, [])
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=items))

    async def refresh(self, uri: str) -> None:
        """Check ``uri`` (a ``.bib`` or ``.tex`` document) again and publish what changed."""
        loop = asyncio.get_running_loop()
        text = self.text_of(uri)
        try:
            if uri.endswith(".bib"):
                self._bib_diags[uri] = await loop.run_in_executor(self._work, self.check_bib, uri, text)
                self.publish(uri)
                # the open LaTeX sources citing from it: their keys' diagnostics follow the entries
                for other, doc in list(self.workspace.text_documents.items()):
                    if other.endswith(".tex") and uri in self.bib_uris(other, doc.source):
                        self._tex_diags[other] = await loop.run_in_executor(self._work, self.check_tex, other, doc.source)
                        self.publish(other)
            elif uri.endswith(".tex"):
                self._tex_diags[uri] = await loop.run_in_executor(self._work, self.check_tex, uri, text)
                self.publish(uri)
        except MustciteError as e:
            self.show(types.MessageType.Error, f"mustcite: {e}")
        except Exception as e:          # a server outlives a bad file: say what failed, keep serving
            log.exception("checking %s", uri)
            self.show(types.MessageType.Error, f"mustcite: checking {uri} failed: {type(e).__name__}: {e}")

    # ---- the audit -----------------------------------------------------------------------------------
    def audit_folder(self, root: Path):
        from ..recommend.audit import audit_draft

        return audit_draft(self.model(), root, top=max(self.options.top * 3, 30), year=self.options.year)

    def bibliography_site(self, root: Path) -> tuple[str, Any, str | None] | None:
        """(uri of the LaTeX source holding the bibliography command, the command, its first .bib's uri)."""
        candidates = [u for u in self.workspace.text_documents if u.endswith(".tex")]
        candidates += [from_fs_path(str(p.resolve())) for p in sorted(root.rglob("*.tex"))[:200]]
        for uri in dict.fromkeys(candidates):
            text = self.text_of(uri)
            for b in bibliographies(text):
                here = Path(to_fs_path(uri) or ".").parent
                bib = from_fs_path(str((here / b.names[0]).resolve())) if b.names else None
                return uri, b, bib
        return None

    async def audit(self, root: Path, saved_at: float) -> None:
        key = str(root)
        if key in self._auditing:
            self._auditing[key] = True          # one more after the running one
            return
        self._auditing[key] = False
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    result = await loop.run_in_executor(self._audits, self.audit_folder, root)
                except MustciteError as e:
                    self.show(types.MessageType.Warning, f"mustcite audit: {e}")
                    result = None
                except Exception as e:      # a server outlives a bad project: say what failed, keep serving
                    log.exception("auditing %s", root)
                    self.show(types.MessageType.Error, f"mustcite audit of {root} failed: {type(e).__name__}: {e}")
                    result = None
                site = self.bibliography_site(root)
                for uri in list(self._audit_diags):
                    self._audit_diags[uri] = []
                    self.publish(uri)
                if result is not None and site is not None:
                    uri, command, bib = site
                    shown = [r for r in result.missing if r.score >= self.options.min_score][:self.options.top]
                    self._audit_diags[uri] = diag.missing_diagnostics(command, shown, bib)
                    self.publish(uri)
                self.timings["audit"] = time.perf_counter() - saved_at
                if not self._auditing.get(key):
                    break
                self._auditing[key] = False
                saved_at = time.perf_counter()
        finally:
            self._auditing.pop(key, None)

    def show(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))


def build_server(options: Options | None = None) -> CitationServer:
    """The language server with its handlers registered (start it with ``start_io()``)."""
    server = CitationServer(options)

    @server.feature(types.INITIALIZE)
    def initialize(ls: CitationServer, params: types.InitializeParams) -> None:
        ls.options = Options.from_client(params.initialization_options, ls.options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: CitationServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: CitationServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: CitationServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        saved_at = time.perf_counter()
        await ls.refresh(uri)
        ls.timings["bib" if uri.endswith(".bib") else "tex"] = time.perf_counter() - saved_at
        if ls.options.audit and uri.endswith((".tex", ".bib")):
            asyncio.ensure_future(ls.audit(ls.project_root(uri), saved_at))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CitationServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls._tex_diags.pop(uri, None)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: CitationServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return diag.code_actions(params.text_document.uri, ls.text_of, params.context.diagnostics)

    @server.command("mustcite.timings")
    def timings(ls: CitationServer, *args) -> dict[str, float]:
        """Seconds from the last save to its diagnostics (for benchmarks)."""
        return dict(ls.timings)

    return server
