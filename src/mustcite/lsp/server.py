"""``mustcite lsp``: a language server (pygls, over stdio) for LaTeX projects and BibTeX files.

What it does, per file the editor opens, changes or saves:

* a ``.bib`` file: every entry is checked against the corpus and the catalogue of cited works
  (:func:`mustcite.refcheck.check.check_entries`); only entries whose text changed are read and
  checked again (:mod:`.bibstate`). Diagnostics as :mod:`.diagnostics` describes them; a quick
  fix's edit is computed from the document's text when it is asked for or resolved, and sent
  with the document's version.
* a ``.tex`` file: its citation keys against the project's bibliographies (the ``.bib`` files its
  ``\\bibliography``/``\\addbibresource`` commands name, read from the editor when open, else from
  disk); a change re-reads that file only.
* on saving either, the project is audited in the background (the workspace folder holding the
  file): the must-cite papers the draft lacks appear as information diagnostics at its
  bibliography command. A save during an audit queues one more audit, no more.

What it reads is bounded. Only files inside a workspace folder are read from disk (symbolic links
resolved first, so a link cannot lead outside), only regular files (never a FIFO or a device), at
most :data:`MAX_FILE_BYTES` each; a folder is searched for ``.bib``/``.tex`` files up to
:data:`MAX_WALK` entries. A document outside every workspace folder (or not a file, such as an
``untitled:`` one) gets its own text checked and nothing else: no bibliography read from disk, no
folder searched, no audit. A ``.bib`` entry longer than :data:`MAX_ENTRY_CHARS` is not checked.
Checks run one at a time off the message loop, each on the document's latest text (a check
overtaken by a newer edit is dropped), so the server answers requests while it checks; messages
are framed by :mod:`.framing` (malformed or oversized input answered with an error, never a hang).

The look-up index and the recommender are loaded once per server, on first need, off the
editor's message loop. Options come as ``initializationOptions``: ``year`` (audit as of that year;
default: this year), ``top`` (missing papers shown, default 10), ``minScore`` (default 0.5),
``model`` (a model folder) and ``audit`` (false: reference checks only).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import stat
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.uris import from_fs_path, to_fs_path

from ..errors import MustciteError
from ..io import decode_text
from ..shown import shown
from ..version import __version__
from . import diagnostics as diag
from .bibstate import BibState
from .documents import Pieces, bibliographies, cites
from .framing import serve

log = logging.getLogger(__name__)


def _shown_message(d: types.Diagnostic) -> types.Diagnostic:
    """A copy of ``d`` whose message is as :func:`~mustcite.shown.shown` writes it."""
    d = copy.copy(d)
    d.message = shown(d.message)
    return d


LATEX_SUFFIXES = (".tex", ".ltx", ".latex")
#: Largest file the server reads from disk (bytes).
MAX_FILE_BYTES = 16 * 2**20
#: Folder entries looked at when searching a workspace folder for ``.bib`` or ``.tex`` files.
MAX_WALK = 20_000
#: Longest ``.bib`` entry checked against the corpus (characters); a longer one gets a hint.
MAX_ENTRY_CHARS = 20_000


def read_regular_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``; MustciteError when it is something else (a FIFO, a
    device: opened without blocking and refused) or larger than ``max_bytes``, OSError when it
    cannot be opened (FileNotFoundError: it does not exist)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MustciteError("not a regular file; not read", path=path)
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise MustciteError(f"larger than {max_bytes // 2**20} MB, the cap on a file the server reads; not read",
                            path=path)
    return data


def walk_files(root: Path, suffix: str, limit: int, max_entries: int = MAX_WALK) -> list[Path]:
    """Up to ``limit`` regular files named ``*suffix`` under ``root``, in sorted order, looking
    at no more than ``max_entries`` folder entries; symbolic links and hidden folders are skipped."""
    out: list[Path] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        seen += len(dirs) + len(files)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d)))
        for f in sorted(files):
            p = os.path.join(folder, f)
            if f.endswith(suffix) and not os.path.islink(p):
                out.append(Path(p))
                if len(out) >= limit:
                    return out
        if seen >= max_entries:
            break
    return out


@dataclass
class Options:
    year: int | None = None
    top: int = 10
    min_score: float = 0.5
    model: str | None = None
    audit: bool = True
    all: bool = False             # every finding of the audit, also those under the confidence threshold

    @classmethod
    def from_client(cls, given: Any, defaults: Options) -> Options:
        given = given if isinstance(given, dict) else {}
        return cls(year=given.get("year", defaults.year), top=int(given.get("top", defaults.top)),
                   min_score=float(given.get("minScore", defaults.min_score)),
                   model=given.get("model", defaults.model), audit=bool(given.get("audit", defaults.audit)),
                   all=bool(given.get("all", defaults.all)))


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
        #: per .bib document: its entries as read and checked (an entry is read again only when it changes)
        self._bibs: dict[str, BibState] = {}
        #: per LaTeX source: its text and the .bib names its bibliography commands give
        self._bib_names: dict[str, tuple[str, list[str]]] = {}
        self._cites: dict[str, tuple[str, list]] = {}            # per LaTeX source: its text and its keys
        #: per document: its diagnostics last published, by id, with their JSON (:meth:`publish`)
        self._wire: dict[str, dict[int, tuple[types.Diagnostic, Any]]] = {}
        self._converter = default_converter()
        #: per document: its pieces as the quick fixes last read them (on the message loop)
        self._fix_pieces: dict[str, Pieces] = {}
        #: per .bib document: its checks by key, in file order
        self.bib_checks: dict[str, dict[str, Any]] = {}
        self._bib_diags: dict[str, list[types.Diagnostic]] = {}
        self._tex_diags: dict[str, list[types.Diagnostic]] = {}
        self._audit_diags: dict[str, list[types.Diagnostic]] = {}
        self._auditing: dict[str, bool] = {}        # project folder -> another audit queued
        self._turns: dict[str, int] = {}            # per document: the number of its latest change
        self._loop: asyncio.AbstractEventLoop | None = None     # the message loop, once running
        #: seconds from the last save to its diagnostics, per kind ("bib", "tex", "audit")
        self.timings: dict[str, float] = {}

    # ---- what is loaded once ------------------------------------------------------------------------
    def index(self):
        with self._index_lock:
            if self._index is None:
                from ..refcheck.index import load_index  # on first need, off the message loop (module doc)

                self._index = load_index()
            return self._index

    def model(self):
        with self._model_lock:
            if self._model is None:
                from ..recommend.shortcuts import load  # on first need, off the message loop (module doc)

                self._model = load(self.options.model)
            return self._model

    # ---- documents -----------------------------------------------------------------------------------
    def roots(self) -> list[Path]:
        """The workspace folders (symbolic links resolved)."""
        uris = [f.uri for f in self.workspace.folders.values()] + [self.workspace.root_uri]
        paths = [file_path(u) for u in uris if u]
        return list(dict.fromkeys(p.resolve() for p in paths if p is not None))

    def project_root(self, uri: str) -> Path | None:
        """The workspace folder holding ``uri`` (links resolved); None for a document outside every
        one, or one that is not a file (``untitled:``)."""
        path = file_path(uri)
        if path is None:
            return None
        path = path.resolve()
        return next((r for r in self.roots() if r in path.parents), None)

    def read_text(self, uri: str) -> str | None:
        """The text of ``uri``: the editor's when open, else the file's when it lies inside a
        workspace folder and is a regular text file within :data:`MAX_FILE_BYTES` ("" when it
        does not exist); None when it may not or cannot be read (said in the log)."""
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.source
        if self.project_root(uri) is None:
            return None
        path = file_path(uri).resolve()
        try:
            return decode_text(read_regular_file(path), path, errors="replace")
        except FileNotFoundError:
            return ""
        except (MustciteError, OSError) as e:
            self.log(f"mustcite: {e}" if isinstance(e, MustciteError) else f"mustcite: {path}: cannot read: {e}")
            return None

    def document(self, uri: str) -> tuple[str, int | None] | None:
        """The current text of ``uri`` and its version: the editor's when open, else the file's
        (version None) as :meth:`read_text` reads it; None when it may not be read."""
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.source, doc.version
        text = self.read_text(uri)
        return (text, None) if text is not None else None

    def find_entry(self, uri: str):
        """:func:`.documents.find_entry` for the fixes of ``uri``, its pieces kept between requests."""
        return self._fix_pieces.setdefault(uri, Pieces()).find

    def kind(self, uri: str) -> str | None:
        """"bib", "tex" or None: by the file name, else (``untitled:``) by the editor's language."""
        if uri.endswith(".bib"):
            return "bib"
        if uri.endswith(LATEX_SUFFIXES):
            return "tex"
        doc = self.workspace.text_documents.get(uri)
        language = doc.language_id if doc is not None else None
        return {"bibtex": "bib", "latex": "tex", "tex": "tex"}.get(language or "")

    def text_of(self, uri: str) -> str:
        """:meth:`read_text`, "" when it gives nothing."""
        return self.read_text(uri) or ""

    def bib_uris(self, tex_uri: str, text: str) -> tuple[list[str], bool]:
        """``(uris, all of them)``: the ``.bib`` files the LaTeX source ``text`` names, else every
        ``.bib`` of its workspace folder; ``all of them`` is False when one it names lies outside
        the workspace folders, and for a document outside every one (none are looked for)."""
        root = self.project_root(tex_uri)
        if root is None:
            return [], False
        here = file_path(tex_uri).parent
        names = self.bib_names(tex_uri, text)
        if not names:
            return [from_fs_path(str(p.resolve())) for p in walk_files(root, ".bib", 20)], True
        paths = [(here / n).resolve() for n in names]
        inside = [p for p in paths if any(r in p.parents for r in self.roots())]
        return [from_fs_path(str(p)) for p in inside], len(inside) == len(paths)

    def bib_names(self, tex_uri: str, text: str) -> list[str]:
        """The ``.bib`` names the bibliography commands of the LaTeX source ``text`` give, found
        once per text of ``tex_uri`` (each ``.bib`` edit asks it of every open LaTeX source)."""
        got = self._bib_names.get(tex_uri)
        if got is None or got[0] is not text and got[0] != text:
            got = self._bib_names[tex_uri] = (text, [n for b in bibliographies(text) for n in b.names])
        return got[1]

    def resolves_edits(self) -> bool:
        """Whether the client resolves a code action's edit when it is chosen (then the edit is
        computed from the text of that moment)."""
        caps = self.client_capabilities
        cap = caps.text_document.code_action if caps and caps.text_document else None
        support = cap.resolve_support if cap is not None else None
        return bool(support and "edit" in (support.properties or ()))

    # ---- checks --------------------------------------------------------------------------------------
    def check_bib(self, uri: str, text: str) -> list[types.Diagnostic]:
        """The diagnostics of a ``.bib`` text; only the entries whose text changed since the last
        check of ``uri`` are read and checked again (:class:`.bibstate.BibState`)."""
        # the checker is imported at the first check, not at start-up: the editor waits for the
        # answer to ``initialize`` before it shows anything, and the import takes a quarter second
        from ..refcheck.check import check_entries

        state = self._bibs.get(uri)
        if state is None:
            name = Path(to_fs_path(uri) or "refs.bib").name
            state = self._bibs[uri] = BibState(name, MAX_ENTRY_CHARS)
        out = state.update(text, lambda entries: check_entries(entries, self.index()))
        self.bib_checks[uri] = state.by_key
        return out

    def ensure_bib(self, uri: str) -> bool:
        """Check the ``.bib`` ``uri`` unless it is checked; False when it cannot be read."""
        if uri in self.bib_checks:
            return True
        text = self.read_text(uri)
        if text is None:
            return False
        self._bib_diags[uri] = self.check_bib(uri, text)
        return True

    def check_tex(self, uri: str, text: str) -> list[types.Diagnostic]:
        bibs, complete = self.bib_uris(uri, text)
        checks: dict[str, Any] = {}
        for b in bibs:
            complete = self.ensure_bib(b) and complete
            for key, c in self.bib_checks.get(b, {}).items():
                checks.setdefault(key, c)
        return diag.cite_diagnostics(self.cites_of(uri, text), checks, [b.rpartition("/")[2] for b in bibs],
                                     complete=complete)

    def cites_of(self, tex_uri: str, text: str) -> list:
        """The citation keys of the LaTeX source ``text`` with their ranges, found once per text of
        ``tex_uri`` (each edit of a ``.bib`` it cites checks its keys again)."""
        got = self._cites.get(tex_uri)
        if got is None or got[0] is not text and got[0] != text:
            got = self._cites[tex_uri] = (text, cites(text))
        return got[1]

    def publish(self, uri: str) -> None:
        """Send the diagnostics of ``uri``. Each is turned into JSON once: a diagnostic that stays
        (an entry that did not move) is sent from its JSON of the last time."""
        items = self._bib_diags.get(uri, []) + self._tex_diags.get(uri, []) + self._audit_diags.get(uri, [])
        before, now = self._wire.get(uri, {}), {}
        out = []
        for d in items:
            got = before.get(id(d))
            if got is None or got[0] is not d:
                # a message holds titles, keys and quotes as read: terminal and bidirectional controls escaped
                got = (d, self._converter.unstructure(_shown_message(d), types.Diagnostic))
            now[id(d)] = got
            out.append(got[1])
        self._wire[uri] = now
        self.protocol._send_data({"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                  "params": {"uri": uri, "diagnostics": out}})

    def checks_of(self, uri: str, turn: int) -> list[tuple[dict, str, list[types.Diagnostic]]] | None:
        """The diagnostics a change of ``uri`` brings, as ``(store, uri, diagnostics)``; None when
        a newer change of ``uri`` is queued (its check will see the latest text)."""
        if self._turns.get(uri) != turn:
            return None
        text, kind = self.text_of(uri), self.kind(uri)
        if kind == "bib":
            out = [(self._bib_diags, uri, self.check_bib(uri, text))]
            # the open LaTeX sources citing from it: their keys' diagnostics follow the entries
            for other, doc in list(self.workspace.text_documents.items()):
                if self.kind(other) == "tex" and uri in self.bib_uris(other, doc.source)[0]:
                    out.append((self._tex_diags, other, self.check_tex(other, doc.source)))
            return out
        if kind == "tex":
            return [(self._tex_diags, uri, self.check_tex(uri, text))]
        return []

    async def refresh(self, uri: str) -> None:
        """Check ``uri`` (a ``.bib`` or ``.tex`` document) again and publish what changed."""
        loop = asyncio.get_running_loop()
        turn = self._turns[uri] = self._turns.get(uri, 0) + 1
        try:
            for store, u, items in await loop.run_in_executor(self._work, self.checks_of, uri, turn) or ():
                store[u] = items
                self.publish(u)
        except MustciteError as e:
            self.show(types.MessageType.Error, f"mustcite: {e}")
        except Exception as e:          # a server outlives a bad file: say what failed, keep serving
            log.exception("checking %s", uri)
            self.show(types.MessageType.Error, f"mustcite: checking {uri} failed: {type(e).__name__}: {e}")

    # ---- the audit -----------------------------------------------------------------------------------
    def audit_folder(self, root: Path):
        """The audit of the project in the workspace folder ``root`` and its bibliography site."""
        from ..recommend.audit import audit_draft  # with the first audit, not at the server's start-up

        result = audit_draft(self.model(), root, top=max(self.options.top * 3, 30), year=self.options.year,
                             show_all=self.options.all)
        return result, self.bibliography_site(root)

    def bibliography_site(self, root: Path) -> tuple[str, Any, str | None] | None:
        """(uri of the LaTeX source holding the bibliography command, the command, its first .bib's uri)."""
        candidates = [u for u in self.workspace.text_documents if u.endswith(".tex") and self.project_root(u) == root]
        candidates += [from_fs_path(str(p.resolve())) for p in walk_files(root, ".tex", 200)]
        for uri in dict.fromkeys(candidates):
            text = self.text_of(uri)
            for b in bibliographies(text):
                here = file_path(uri).parent
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
                result = site = None
                try:
                    result, site = await loop.run_in_executor(self._audits, self.audit_folder, root)
                except MustciteError as e:
                    self.show(types.MessageType.Warning, f"mustcite audit: {e}")
                except Exception as e:      # a server outlives a bad project: say what failed, keep serving
                    log.exception("auditing %s", root)
                    self.show(types.MessageType.Error, f"mustcite audit of {root} failed: {type(e).__name__}: {e}")
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
        self.window_show_message(types.ShowMessageParams(type=kind, message=shown(message)))

    def log(self, message: str) -> None:
        """A line in the client's log (a file the server skips: no pop-up for each), sent from the
        message loop's thread whichever thread says it."""
        message = shown(message)
        log.warning("%s", message)
        params = types.LogMessageParams(type=types.MessageType.Warning, message=message)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.window_log_message, params)

    def start_io(self, stdin=None, stdout=None) -> int:
        """Serve over stdio (:func:`.framing.serve`) until ``exit`` or the end of the input;
        the exit code the protocol asks for (0 after ``shutdown``, else 1)."""
        return serve(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)


def file_path(uri: str) -> Path | None:
    """The path of a ``file:`` URI; None for any other (``untitled:``, ``http:``)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def build_server(options: Options | None = None) -> CitationServer:
    """The language server with its handlers registered (start it with ``start_io()``)."""
    server = CitationServer(options)

    @server.feature(types.INITIALIZE)
    def initialize(ls: CitationServer, params: types.InitializeParams) -> None:
        ls._loop = asyncio.get_running_loop()
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
        ls.timings["bib" if ls.kind(uri) == "bib" else "tex"] = time.perf_counter() - saved_at
        root = ls.project_root(uri)
        if ls.options.audit and root is not None and ls.kind(uri) is not None:
            asyncio.ensure_future(ls.audit(root, saved_at))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CitationServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls._tex_diags.pop(uri, None)
        ls._fix_pieces.pop(uri, None)
        ls._bib_names.pop(uri, None)
        ls._cites.pop(uri, None)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True))
    def code_action(ls: CitationServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        return diag.code_actions(uri, ls.document, params.context.diagnostics, lazy=ls.resolves_edits(),
                                 find=ls.find_entry(uri))

    @server.feature(types.CODE_ACTION_RESOLVE)
    def code_action_resolve(ls: CitationServer, action: types.CodeAction) -> types.CodeAction:
        uri = action.data.get("document") if isinstance(action.data, dict) else None
        return diag.resolve_action(action, ls.document, find=ls.find_entry(uri if isinstance(uri, str) else ""))

    @server.command("mustcite.timings")
    def timings(ls: CitationServer, *args) -> dict[str, float]:
        """Seconds from the last save to its diagnostics (for benchmarks)."""
        return dict(ls.timings)

    return server
