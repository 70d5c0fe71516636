"""The extraction runner: files and folders in, one reference file per paper plus a summary out.

For every input paper ``abc.{md,mmd,md.gz,mmd.gz,tei.xml,pdf}`` it writes (atomically):

- ``DIR/abc.json``: the reference list (MasterSet Appendix C schema, validated) unless it failed;
- ``DIR/abc.meta.json``: title, abstract, year, source path, method, status, messages, counts;

and at the end ``DIR/papers.jsonl`` (the metadata of every paper, one line each) and
``DIR/summary.json`` (per paper: status, path, references, mentions, failure modes, messages;
plus totals). :func:`extract_one` is a pure function of (path, options), mapped with
:func:`mustcite.parallel.pmap`. One bad file never stops a run: it gets status ``failed`` and a
message. A rerun skips papers whose ``.meta.json`` is newer than the input (unless ``force``).

Routing (as in MasterSet, Section 3): a paper whose first path flags or fails goes to the next available
path: Markdown -> a sibling ``abc.tei.xml`` -> a sibling ``abc.pdf`` (GROBID when a URL is set,
then the built-in PDF path); a PDF goes built-in -> GROBID (when a URL is set).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MustciteError, UsageError
from ..io import atomic_write_json, iter_jsonl, read_json, read_text, write_jsonl
from ..run_markers import run_marker, warn_if_partial
from .failures import FailureReport
from .model import ExtractedPaper
from .records import validate_reference_list

# Imported inside the functions that need them: the extractors (.markdown, .tei, .pdf with PyMuPDF,
# .grobid with httpx) and ..parallel (tqdm, multiprocessing); the command line loads this module at
# start-up.

MARKDOWN_SUFFIXES = (".md", ".mmd", ".md.gz", ".mmd.gz")
TEI_SUFFIXES = (".tei.xml",)
PDF_SUFFIXES = (".pdf",)
SUFFIXES = MARKDOWN_SUFFIXES + TEI_SUFFIXES + PDF_SUFFIXES
DEFAULT_MAX_BYTES = 64 * 2**20
#: Text a Markdown paper may hold once decompressed (a long paper with appendices is ~0.5 M).
DEFAULT_MAX_CHARS = 8_000_000
SUMMARY = "summary.json"
PAPERS = "papers.jsonl"
META_SUFFIX = ".meta.json"
#: Written into every ``.meta.json``; a rerun re-extracts papers of an older version. 2: failed OCR
#: pages and ``incomplete_bibliography``; 3: ``empty_reference_list`` for PDF and TEI papers too.
EXTRACTOR_VERSION = 3


@dataclass(frozen=True)
class ExtractOptions:
    out_dir: str
    grobid_url: str | None = None
    force: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    max_chars: int = DEFAULT_MAX_CHARS
    #: try a sibling ``abc.tei.xml`` / ``abc.pdf`` when ``abc.md`` fails (a corpus run); a user's
    #: draft is exactly the file named (``fallbacks=False``)
    fallbacks: bool = True
    #: keep references without a year (a draft: every reference it has must count as cited); a
    #: corpus run leaves them out, as the reference file's schema requires a year
    keep_undated: bool = False
    #: keep the sentences of the citation contexts with every marker resolved (a Markdown draft's
    #: audit reads them, :attr:`~.model.ExtractedPaper.cited_sentences`)
    keep_sentences: bool = False


@dataclass
class RunSummary:
    out_dir: str
    papers: int = 0
    ok: int = 0
    flagged: int = 0
    failed: int = 0
    skipped: int = 0            # up to date from an earlier run (still counted in the totals)
    references: int = 0
    mentions: int = 0
    elapsed_s: float = 0.0
    by_method: dict[str, int] = field(default_factory=dict)
    failure_modes: dict[str, int] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("rows")
        return d

    def to_dict(self) -> dict[str, Any]:
        return {"totals": self.totals(), "papers": self.rows}


def kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(MARKDOWN_SUFFIXES):
        return "markdown"
    if name.endswith(TEI_SUFFIXES):
        return "tei"
    if name.endswith(PDF_SUFFIXES):
        return "pdf"
    return None


def stem_of(path: Path) -> str:
    """``abc.md``, ``abc.md.gz``, ``abc.pdf``, ``abc.tei.xml`` -> ``abc``."""
    name = path.name
    low = name.lower()
    for suf in sorted(SUFFIXES, key=len, reverse=True):
        if low.endswith(suf):
            return name[: -len(suf)]
    return path.stem


def discover(paths: list[str | Path]) -> list[Path]:
    """Input files: explicit files as given, folders walked recursively for known suffixes.

    When one stem exists in several forms in a folder (``abc.md.gz`` and ``abc.pdf``), only the
    first in routing order (Markdown, TEI, PDF) is a paper; the others are its fallback paths.
    """
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and kind_of(f) and not f.name.startswith("."))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            raise UsageError(f"no such file or folder: {p}")
    order = {"markdown": 0, "tei": 1, "pdf": 2, None: 3}
    best: dict[tuple[Path, str], Path] = {}
    for f in files:
        key = (f.parent.resolve(), stem_of(f))
        if key not in best or order[kind_of(f)] < order[kind_of(best[key])]:
            best[key] = f
    keep = set(best.values())
    out, seen = [], set()
    for f in files:
        if f in keep and f not in seen:
            seen.add(f)
            out.append(f)
    return out


def _manifest_for(folder: Path) -> dict[str, dict[str, Any]]:
    """``manifest.jsonl`` next to the inputs (as in shared/data/neurips): id -> {year, title, venue}."""
    mf = folder / "manifest.jsonl"
    if not mf.is_file():
        return {}
    out = {}
    for _, rec in iter_jsonl(mf):
        pid = rec.get("id") or rec.get("openreview_id")
        if pid:
            out[str(pid)] = {k: rec.get(k) for k in ("year", "title", "venue") if rec.get(k) is not None}
    return out


# ---- one paper -----------------------------------------------------------------------------

def _failed(path: Path, method: str, message: str, mode: str) -> ExtractedPaper:
    return FailureReport().add(mode, message).finish(ExtractedPaper(source_path=str(path), method=method))


def _run_markdown(path: Path, opts: ExtractOptions) -> ExtractedPaper:
    from .markdown import extract_markdown
    try:
        text = read_text(path, max_chars=opts.max_chars)
    except MustciteError as exc:
        return _failed(path, "markdown", exc.message, "unreadable")
    if "\x00" in text:
        return _failed(path, "markdown", "binary content (NUL bytes), not Markdown text", "binary")
    return extract_markdown(text, source_path=str(path), keep_undated=opts.keep_undated,
                            keep_sentences=opts.keep_sentences)


def _run_tei(path: Path, opts: ExtractOptions) -> ExtractedPaper:
    from .tei import parse_tei
    return parse_tei(path.read_bytes(), source_path=str(path), keep_undated=opts.keep_undated)


def _run_pdf(path: Path, opts: ExtractOptions) -> ExtractedPaper:
    from .pdf import extract_pdf
    return extract_pdf(path, source_path=str(path), keep_undated=opts.keep_undated)


def _run_grobid(path: Path, opts: ExtractOptions) -> ExtractedPaper:
    from .grobid import GrobidClient
    from .tei import parse_tei
    try:
        tei = GrobidClient(opts.grobid_url or "").process_pdf(path)
    except MustciteError as exc:
        return _failed(path, "tei", f"GROBID: {exc.message}", "grobid_error")
    paper = parse_tei(tei, source_path=str(path), keep_undated=opts.keep_undated)
    paper.method = "grobid"
    return paper


_RUNNERS = {"markdown": _run_markdown, "tei": _run_tei, "pdf": _run_pdf, "grobid": _run_grobid}


def route(path: Path, opts: ExtractOptions) -> list[tuple[str, Path]]:
    """The extraction paths to try for ``path``, in order (its siblings only with ``opts.fallbacks``)."""
    kind = kind_of(path)
    stem = stem_of(path)
    sib = {k: path.with_name(stem + s) for k, s in (("tei", ".tei.xml"), ("pdf", ".pdf"))}
    have = {k: opts.fallbacks and p.is_file() for k, p in sib.items()}
    steps: list[tuple[str, Path]] = [(kind, path)] if kind else []
    if kind == "markdown" and have["tei"]:
        steps.append(("tei", sib["tei"]))
    if kind in ("markdown", "tei") and have["pdf"]:
        steps.append(("pdf", sib["pdf"]))
        if opts.grobid_url:
            steps.append(("grobid", sib["pdf"]))
    if kind == "pdf" and opts.grobid_url:
        steps.append(("grobid", path))
    return steps


def _precheck(path: Path, opts: ExtractOptions) -> ExtractedPaper | None:
    kind = kind_of(path) or "unknown"
    try:
        size = path.stat().st_size
    except OSError as exc:
        return _failed(path, kind, f"cannot read: {exc.strerror}", "unreadable")
    if kind == "unknown":
        return _failed(path, kind, "unsupported file type (expected .md, .mmd, .md.gz, .mmd.gz, .tei.xml, .pdf)",
                       "unsupported")
    if size == 0:
        return _failed(path, kind, "empty file", "empty")
    if size > opts.max_bytes:
        return _failed(path, kind, f"too large: {size / 2**20:.1f} MB > {opts.max_bytes / 2**20:.0f} MB cap",
                       "too_large")
    return None


def extract_paper(path: str | Path, options: ExtractOptions) -> ExtractedPaper:
    """One paper through its routed paths (nothing written); never raises for bad input: a bad
    file comes back with status ``failed`` and messages saying why."""
    return _extract_routed(Path(path), options)[0]


def _extract_routed(path: Path, opts: ExtractOptions) -> tuple[ExtractedPaper, list[str]]:
    pre = _precheck(path, opts)
    if pre is not None:
        return pre, [pre.method]
    attempts: list[ExtractedPaper] = []
    tried: list[str] = []
    for method, p in route(path, opts):
        if attempts and method == "grobid" and "no_text_layer" in attempts[-1].failure_modes:
            continue  # GROBID needs a text stream too (MasterSet paper, Appendix D)
        if p != path and _precheck(p, opts) is not None:
            continue
        try:
            paper = _RUNNERS[method](p, opts)
        except MustciteError as exc:
            paper = _failed(p, method, exc.message, "error")
        except Exception as exc:  # noqa: BLE001 - one bad file must never stop the run
            paper = _failed(p, method, f"unexpected {exc.__class__.__name__}: {exc}", "crash")
        tried.append(method)
        attempts.append(paper)
        if paper.status == "ok":
            break
    rank = {"ok": 0, "flagged": 1, "failed": 2}
    best = min(attempts, key=lambda a: rank.get(a.status, 3))  # first of the best status
    if len(attempts) > 1:
        for a in attempts:
            if a is not best:
                best.messages.extend(f"[{a.method}: {a.status}] {m}" for m in a.messages)
    return best, tried


def extract_one(path: str | Path, options: ExtractOptions,
                manifest: dict[str, Any] | None = None) -> tuple[ExtractedPaper, dict[str, Any]]:
    """Extract one paper (trying the routed paths) and write its files; pure apart from those files.

    Returns the paper and its summary row. Never raises for bad input.
    """
    path = Path(path)
    t0 = time.perf_counter()
    paper, tried = _extract_routed(path, options)
    refs = paper.to_reference_list() if paper.status != "failed" else []
    out = Path(options.out_dir)
    stem = stem_of(path)
    if paper.status != "failed":
        try:
            validate_reference_list(refs, path=out / f"{stem}.json")
        except MustciteError as exc:
            FailureReport().add("schema", exc.message + (f" (field '{exc.field}')" if exc.field else "")).finish(paper)
            refs = []
    manifest = manifest or {}
    year = manifest.get("year")
    year_source = "manifest" if year else None
    if year is None and refs:
        year, year_source = max(r["year"] for r in refs), "max_reference_year"
    row = {
        "paper": stem,
        "source_path": str(path),
        "status": paper.status,
        "method": paper.method,
        "path": ">".join(tried),
        "references": len(refs),
        "mentions": sum(r.get("mentions", 0) for r in refs),
        "contexts": sum(len(r["contexts"]) for r in refs),
        "failure_modes": list(paper.failure_modes),
        "messages": list(paper.messages),
        "seconds": round(time.perf_counter() - t0, 4),
    }
    meta = {
        "paper": stem,
        "extractor_version": EXTRACTOR_VERSION,
        "title": manifest.get("title") or paper.title,
        "abstract": paper.abstract,
        "year": year,
        "year_source": year_source,
        "venue": manifest.get("venue"),
        "source_path": str(path),
        "method": paper.method,
        "status": paper.status,
        "failure_modes": list(paper.failure_modes),
        "messages": list(paper.messages),
        "stats": paper.stats,
        # the row without its timing: a sidecar is a pure function of the input, byte for byte the
        # same whichever engine or machine wrote it
        "row": {k: v for k, v in row.items() if k != "seconds"},
    }
    if paper.status != "failed":
        atomic_write_json(out / f"{stem}.json", refs, indent=None)  # C encoder: ~10x faster
    else:
        try:
            (out / f"{stem}.json").unlink()  # a stale file from an earlier, better run would mislead
        except FileNotFoundError:
            pass
    atomic_write_json(out / f"{stem}{META_SUFFIX}", meta)
    return paper, row


def _job(args: tuple[str, ExtractOptions, dict[str, Any]]) -> dict[str, Any]:
    path, opts, manifest = args
    _, row = extract_one(path, opts, manifest)
    return row


def _lost(args: tuple[str, ExtractOptions, dict[str, Any]], message: str) -> dict[str, Any]:
    """The summary row of a paper the engine could not run (its worker died): failed, and written
    nowhere, so a rerun extracts it again."""
    path = Path(args[0])
    report = FailureReport().add("worker_lost", message)
    return {"paper": stem_of(path), "source_path": str(path), "status": report.status,
            "method": kind_of(path) or "unknown", "path": "", "references": 0, "mentions": 0, "contexts": 0,
            "failure_modes": list(report.modes), "messages": list(report.messages), "seconds": 0.0}


def _up_to_date(path: Path, out: Path) -> dict[str, Any] | None:
    meta = out / f"{stem_of(path)}{META_SUFFIX}"
    try:
        if meta.stat().st_mtime < path.stat().st_mtime:
            return None
        m = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if m.get("status") != "failed" and not (out / f"{stem_of(path)}.json").is_file():
        return None
    if m.get("source_path") != str(path) or m.get("extractor_version") != EXTRACTOR_VERSION:
        return None
    row = m.get("row")
    return {**row, "seconds": row.get("seconds", 0.0)} if isinstance(row, dict) else None


def extract_paths(paths: list[str | Path], out_dir: str | Path, workers: int | None = None,
                  grobid_url: str | None = None, force: bool = False, *,
                  max_bytes: int = DEFAULT_MAX_BYTES, progress: bool = True, engine: Any = None) -> RunSummary:
    """Extract every paper under ``paths`` into ``out_dir``; returns (and writes) the summary.

    ``engine`` (:mod:`mustcite.engine`; default the process-wide one, a local process pool) runs
    :func:`extract_one` per paper; each paper's files are written where it runs, so on a cluster
    ``out_dir`` and the inputs must be on a filesystem every node sees. A paper whose worker was
    lost is reported ``failed`` (failure mode ``worker_lost``) with no files, so a rerun does it.

    The run is recorded in the run marker ``out_dir/.mustcite/run-extract.json`` (:mod:`mustcite.run_markers`):
    after a crash it reads ``interrupted`` until a rerun (which skips the finished papers) completes."""
    from ..parallel import pmap

    t0 = time.perf_counter()
    files = discover(paths)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    opts = ExtractOptions(out_dir=str(out), grobid_url=grobid_url, force=force, max_bytes=max_bytes)
    manifests: dict[Path, dict[str, dict[str, Any]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, ExtractOptions, dict[str, Any]]] = []
    skipped = 0
    for f in files:
        row = None if force else _up_to_date(f, out)
        if row is not None:
            rows[str(f)] = dict(row, skipped=True)
            skipped += 1
            continue
        if f.parent not in manifests:
            try:
                manifests[f.parent] = _manifest_for(f.parent)
            except MustciteError:
                manifests[f.parent] = {}
        todo.append((str(f), opts, manifests[f.parent].get(stem_of(f), {})))
    with run_marker(out, "extract", expected=len(files),
                    options={"inputs": [str(p) for p in paths], "grobid_url": grobid_url, "force": force,
                             "max_bytes": max_bytes}) as counts:
        for row in pmap(_job, todo, workers=workers, desc="extract", progress=progress, engine=engine,
                        on_fail=_lost, unit="paper"):
            rows[row["source_path"]] = row
        ordered = [rows[str(f)] for f in files]
        summary = RunSummary(out_dir=str(out), papers=len(ordered), skipped=skipped, rows=ordered)
        for r in ordered:
            setattr(summary, r["status"], getattr(summary, r["status"]) + 1)
            summary.references += r["references"]
            summary.mentions += r["mentions"]
            summary.by_method[r["method"]] = summary.by_method.get(r["method"], 0) + 1
            for mode in r["failure_modes"]:
                summary.failure_modes[mode] = summary.failure_modes.get(mode, 0) + 1
        summary.elapsed_s = round(time.perf_counter() - t0, 3)
        _write_papers_jsonl(out, files)
        previous = _read_previous(out / SUMMARY)
        doc = summary.to_dict()
        if isinstance(previous, dict) and "link" in previous and not todo:
            doc["link"] = previous["link"]  # nothing changed: the link figures still hold
        atomic_write_json(out / SUMMARY, doc)
        counts.update(papers=summary.papers, ok=summary.ok, flagged=summary.flagged, failed=summary.failed,
                      skipped=summary.skipped)
    return summary


def _read_previous(path: Path) -> Any:
    """A file an earlier run wrote (its summary, a paper's meta), or None when it is missing or
    damaged: such a file is only a hint, and this run writes it anew."""
    try:
        return read_json(path, missing_ok=True)
    except MustciteError:
        return None


def _write_papers_jsonl(out: Path, files: list[Path]) -> None:
    rows = []
    for f in files:
        m = _read_previous(out / f"{stem_of(f)}{META_SUFFIX}")
        if isinstance(m, dict):
            rows.append({k: m.get(k) for k in ("paper", "title", "abstract", "year", "venue", "source_path",
                                                "method", "status")})
    write_jsonl(out / PAPERS, rows)


#: run-level files of an extraction folder that are not reference files
RUN_FILES = {SUMMARY, "labels_summary.json", "manifest.json"}
#: where `mustcite annotate` writes the labelled copy of each reference file
LABELS_SUBDIR = "labels"


_WARNED: set[str] = set()   # warnings already printed by this process


def _warn_partial(folder: Path, what: str) -> None:
    if not folder.is_dir():
        return
    message = warn_if_partial(folder, what)
    if message and message not in _WARNED:
        _WARNED.add(message)
        print(f"warning: {message}; reading the papers it has", file=sys.stderr)


def iter_reference_files(out_dir: str | Path, *, labelled: bool = False):
    """``(stem, path)`` of every per-paper reference file in an extraction folder.

    With ``labelled=True`` the path is the labelled copy ``labels/<stem>.json`` written by
    ``mustcite annotate`` where there is one, else the extraction's own file. A folder whose run
    marker says it is partial (:mod:`mustcite.run_markers`) gets one warning on stderr per process.
    """
    out = Path(out_dir)
    _warn_partial(out, "extraction folder")
    if labelled:
        _warn_partial(out / LABELS_SUBDIR, "labels folder")
    for p in sorted(out.glob("*.json")):
        if p.name in RUN_FILES or p.name.endswith(META_SUFFIX) or p.name.startswith("."):
            continue
        if labelled and (out / LABELS_SUBDIR / p.name).is_file():
            p = out / LABELS_SUBDIR / p.name
        yield p.name[: -len(".json")], p
