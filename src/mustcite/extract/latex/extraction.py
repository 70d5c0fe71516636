"""A LaTeX project -> :class:`~mustcite.extract.model.ExtractedPaper` (``method="latex"``): the
references in order of first citation, their contexts and mention counts, the title, abstract and
statistics (see :mod:`mustcite.extract.latex` for the steps).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import MustciteError
from ..archive import ArchiveLimits, is_archive, unpacked
from ..bibtex import BibEntry, decode_latex
from ..contexts import add_context, context_windows
from ..failures import FailureReport
from ..model import ExtractedPaper
from ..records import Context, Reference
from ..sections import ABSTRACT
from ..sentences import split_sentences
from .arguments import braced
from .bibliography import bib_names, read_bibliography
from .citations import MARK_START, MARKER, TEXTUAL_COMMANDS, Citation, citation_style, mark_citations
from .includes import Project, load_project, project_files, read_text, rel_path
from .macros import Stop, expand_macros, first_use
from .mainfile import choose_main, read_through
from .text import HEADING_MARK, Segment, drop_refs, paragraphs, split_segments, to_text
from .verbatim import MAX_BRACE_DEPTH, bound_braces


@dataclass
class _Ref:
    key: str
    entry: BibEntry | None
    mentions: int = 0
    contexts: list[Context] = field(default_factory=list)
    seen: set = field(default_factory=set)


def _render(c: Citation, refs: dict[str, _Ref], number: dict[str, int], style: str) -> str:
    def lab(k: str) -> tuple[str, str, str]:          # (names, year, label)
        e = refs[k].entry if k in refs else None
        if e is None or not e.authors:
            return k, "", k
        label = e.label()
        names, _, year = label.rpartition(", ")
        return (names, year, label) if names else (label, "", label)

    keys = [k for k in c.keys if k != "*"]
    cmd = c.command.lower()
    pre = (decode_latex(c.pre) + " ") if c.pre.strip() else ""
    post = (", " + decode_latex(c.post)) if c.post.strip() else ""
    if cmd in ("citeyear", "citeyearpar"):
        return ", ".join(lab(k)[1] or lab(k)[0] for k in keys)
    if cmd == "citeauthor":
        return ", ".join(lab(k)[0] for k in keys)
    if style == "numeric":
        nums = ", ".join(str(number.get(k, "?")) for k in keys)
        if cmd in TEXTUAL_COMMANDS:
            return "; ".join(f"{lab(k)[0]} [{number.get(k, '?')}]" for k in keys)
        return f"[{pre}{nums}{post}]"
    if cmd in TEXTUAL_COMMANDS or cmd.startswith("textcite"):
        return "; ".join(f"{n} ({pre if i == 0 else ''}{y}{post if i == len(keys) - 1 else ''})"
                         if y else n for i, (n, y, _) in enumerate(map(lab, keys)))
    return f"({pre}{'; '.join(lab(k)[2] for k in keys)}{post})"


def _year_from_key(key: str) -> int | None:
    m = re.search(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)", key)
    return int(m.group(1)) if m else None


#: the title: ``\\title[short]{...}`` or an author kit's (``\\icmltitle{...}``)
_TITLE = re.compile(r"\\(?:icml)?title\s*(?:\[[^\]]{0,2000}\])?\s*(?=\{)")
_ABSTRACT_ENV = re.compile(r"\\begin\s*\{abstract\}(.*?)\\end\s*\{abstract\}", re.S)
#: the first words of the venue templates' example abstracts (NeurIPS, ICLR, ICML, ACL, CVPR kits)
_TEMPLATE_ABSTRACT = re.compile(
    r"^\s*(?:The abstract paragraph should be indented|This document provides a basic paper template"
    r"|This document is a supplement to the general instructions|The ABSTRACT is to be in fully justified)", re.I)


def _abstract_elsewhere(marked: str) -> str:
    """An abstract outside the document body: ``\\abstract{...}`` (author kits) or an ``abstract``
    environment in the preamble (classes that typeset it with the title)."""
    am = re.search(r"\\abstract\s*(?=\{)", marked)
    got = braced(marked, am.end()) if am else None
    if got:
        return got[0]
    em = _ABSTRACT_ENV.search(marked)
    return em.group(1) if em else ""


def extract_project(project: Project, all_files: list[Path], source_path: str) -> ExtractedPaper:
    """The :class:`ExtractedPaper` of an expanded project."""
    paper = ExtractedPaper(source_path=source_path, method="latex")
    paper.messages = project.messages
    stops: list[Stop] = []
    expanded, deep = bound_braces(expand_macros(project.text, stops))
    sources = project_sources(project)
    for stop in stops:
        at = first_use(sources, stop.name)
        where = f" (first used at {at[0]}:{at[1]})" if at else ""
        paper.messages.append(
            f"macro expansion stopped at \\{stop.name}{where}: the text would grow past {stop.limit:,} characters; "
            "the rest is read unexpanded" if stop.why == "size" else
            f"macro expansion stopped at \\{stop.name}{where}: it still expands to macros after {stop.limit} rounds "
            "(a macro that uses itself?); it is read unexpanded")
    if deep:
        paper.messages.append(f"braces nested deeper than {MAX_BRACE_DEPTH} once the draft's macros are expanded "
                              f"({len(deep)} group(s)): the text inside is not read")
    marked, cites, nocite = mark_citations(expanded)
    m = re.search(r"\\begin\s*\{document\}", marked)
    preamble, body = (marked[:m.start()], marked[m.end():]) if m else ("", marked)
    body = re.split(r"\\end\s*\{document\}", body)[0]
    style = citation_style(preamble + "\n" + project.text[:2000], cites)
    entries, bib_files, unreadable = read_bibliography(project, body, all_files)

    # references in order of first citation (\nocite in its place), \nocite{*}: every entry
    refs: dict[str, _Ref] = {}
    by_lower: dict[str, str] = {}
    for key in entries:
        by_lower.setdefault(key.lower(), key)

    def entry_of(k: str):
        """The entry of cited key ``k``; BibTeX also matches an entry whose key differs only in case."""
        e = entries.get(k)
        if e is None and k.lower() in by_lower:
            twin = by_lower[k.lower()]
            paper.messages.append(f"\\cite{{{k}}} is the entry {twin!r}: keys differ only in case (BibTeX "
                                  f"matches them with a warning, biber does not)")
            e = entries[twin]
        return e
    for c in cites:
        for k in c.keys:
            if k not in refs:
                refs[k] = _Ref(k, entry_of(k))
            refs[k].mentions += 1
    for k in nocite:
        if k == "*":
            for key, e in entries.items():
                refs.setdefault(key, _Ref(key, e))
        elif k not in refs:
            refs[k] = _Ref(k, entry_of(k))
    order = list(refs)
    years = {k: (refs[k].entry.year if refs[k].entry else None) or _year_from_key(k) for k in order}
    number = {k: i + 1 for i, k in enumerate(order)}

    # title and abstract (rendered with their citations)
    def render_marks(text: str) -> str:
        return MARKER.sub(lambda mm: _render(cites[int(mm.group(1))], refs, number, style), text)

    tm = _TITLE.search(marked)
    if tm:
        got = braced(marked, tm.end())
        if got:
            t = re.sub(r"\\\\|\\newline", " ", got[0])
            paper.title = render_marks(re.sub(r"\s+", " ", to_text(drop_refs(t))).strip())
    segs, abstract_latex = split_segments(body, paper.messages)
    if not abstract_latex:
        abstract_latex = _abstract_elsewhere(marked)
    if abstract_latex and _TEMPLATE_ABSTRACT.search(abstract_latex):
        paper.messages.append("the abstract is the venue template's placeholder text; it is not read")
        abstract_latex = ""
    if abstract_latex:
        segs.insert(0, Segment(ABSTRACT, abstract_latex))
        paper.abstract = render_marks(" ".join(paragraphs(abstract_latex)))

    # contexts: each paragraph's sentences, with the markers rendered
    n_contexts = 0
    for seg in segs:
        for para in paragraphs(seg.latex):
            heading = {"heading": True} if para.startswith(HEADING_MARK) else {}
            para = para.replace(HEADING_MARK, "").strip()
            if not para:
                continue
            if MARK_START not in para:
                if len(paper.passages) < MAX_PASSAGES:
                    paper.passages.append({"section": seg.label, "text": para, "cites": []} | heading)
                continue
            text, spans = _render_paragraph(para, cites, refs, number, style)
            if len(paper.passages) < MAX_PASSAGES:
                paper.passages.append({"section": seg.label, "text": text,
                                       "cites": [[at, list(cites[ci].keys)] for ci, at in spans]} | heading)
            sents = split_sentences(text)
            starts, at = [], 0
            for s in sents:
                i = text.find(s, at, at + len(s) + 2000)     # near the last: never a scan to the end per sentence
                starts.append(i if i >= 0 else at)
                at = (i if i >= 0 else at) + len(s)
            for ci, start in spans:
                si = max(0, bisect_right(starts, start) - 1)
                window = context_windows(sents, si)
                for k in cites[ci].keys:
                    r = refs.get(k)
                    if r is not None and add_context(r.contexts, r.seen, seg.label, window, Context):
                        n_contexts += 1

    # reference records
    out: list[Reference] = []
    undefined, undated = [], []
    for k in order:
        r = refs[k]
        e = r.entry
        if e is None:
            undefined.append(k)
        year = years[k]
        if year is None:        # kept: a cited paper must never come back as missing for want of a year
            undated.append(k)
        if style == "numeric":
            cite = str(number[k])
        else:
            cite = e.label() if e and e.authors else k
            if e and e.authors and not e.year and year:
                cite = f"{cite}, {year}"
        out.append(Reference(target=len(out) + 1, title=e.title if e else "", year=year, cite=cite,
                             contexts=r.contexts, raw=(e.raw if e else k), authors=list(e.authors) if e else [],
                             mentions=r.mentions, bibkey=k, doi=e.doi if e else None,
                             arxiv=e.arxiv if e else None, url=e.url if e else None,
                             venue=(e.venue or None) if e else None))
    paper.references = out
    cited_keys = {k.lower() for k in order}
    paper.uncited = [Reference(target=0, title=e.title, year=e.year, cite=key, raw=e.raw, authors=list(e.authors),
                               bibkey=key, doi=e.doi, arxiv=e.arxiv, url=e.url, venue=e.venue or None)
                     for key, e in entries.items() if key.lower() not in cited_keys][:MAX_UNCITED]
    paper.sources = sources
    missing_bibs = [n for n in bib_names(project.text) if Path(n).name not in bib_files]
    undefined_notes = {}
    for k in undefined:
        if k in unreadable:
            undefined_notes[k] = {"why": "unreadable_entry", "where": unreadable[k]}
        elif missing_bibs:
            undefined_notes[k] = {"why": "missing_bib_file", "files": missing_bibs[:3]}
    if undefined:
        paper.messages.append(f"{len(undefined)} cited key(s) defined in no .bib/.bbl file: "
                              f"{', '.join(undefined[:10])}{' ...' if len(undefined) > 10 else ''}")
    if undated:
        paper.messages.append(f"{len(undated)} reference(s) without a year, matched by title alone: "
                              f"{', '.join(undated[:10])}{' ...' if len(undated) > 10 else ''}")
    report = FailureReport()
    if not cites and not nocite:
        report.add("empty_reference_list", "no \\cite command in the LaTeX project: the draft has no references, "
                   "so the audit ranks from its title and abstract alone")
    elif not out:
        report.add("empty_reference_list")       # \nocite{*} of an empty bibliography
    if undefined and len(undefined) > len(order) / 2:
        report.add("undefined_keys")             # the message naming them is above
    report.finish(paper)
    paper.stats = {"main_file": rel_path(project.main, project.root), "main_others": list(project.others),
                   "files": list(project.files),
                   "bib_files": bib_files, "bib_entries": len(entries), "citation_style": style,
                   "mentions_total": sum(len(c.keys) for c in cites), "citations": len(cites),
                   "nocite": len(nocite), "cited_keys": len(order), "undefined_keys": undefined,
                   "undefined_notes": undefined_notes,
                   "undated_keys": undated, "n_references": len(out), "n_contexts": n_contexts}
    return paper


#: the paragraphs and uncited bibliography entries a reading keeps at most
MAX_PASSAGES = 20_000
MAX_UNCITED = 5_000
#: the source text kept to point at lines, at most (characters, all files together)
MAX_SOURCE_CHARS = 8_000_000


def project_sources(project: Project) -> dict[str, str]:
    """The project's ``.tex`` files as written (relative path -> text), in reading order, within
    :data:`MAX_SOURCE_CHARS`."""
    out: dict[str, str] = {}
    left = MAX_SOURCE_CHARS
    for rel in project.files:
        text = read_text(project.root / rel, project.root, [])
        if text is None:
            continue
        if len(text) > left:
            break
        out[rel] = text
        left -= len(text)
    return out


def _render_paragraph(para: str, cites: list[Citation], refs: dict[str, _Ref], number: dict[str, int],
                      style: str) -> tuple[str, list[tuple[int, int]]]:
    """The paragraph with markers rendered, and ``(citation index, offset)`` of each marker."""
    out, spans, pos, n = [], [], 0, 0
    for m in MARKER.finditer(para):
        out.append(para[pos:m.start()])
        n += m.start() - pos
        ci = int(m.group(1))
        r = _render(cites[ci], refs, number, style) if ci < len(cites) else ""
        spans.append((ci, n))
        out.append(r)
        n += len(r)
        pos = m.end()
    out.append(para[pos:])
    return "".join(out), spans


def _extract_folder(root: Path, main: Path | None, source_path: str, messages: list[str]) -> ExtractedPaper:
    # a .tex file given alone: its folder is the project, but only that folder is listed (it may
    # be a Downloads folder); includes and named .bib files are found wherever they are inside it
    files = project_files(root, messages, recursive=main is None)
    others: list[str] = []
    if main is None:
        choice = choose_main(root, files, messages)
        main, others = choice.main, choice.others
        if others:
            messages.append(f"{len(others) + 1} files have a \\documentclass; read {rel_path(main, root)}: "
                            f"{choice.why}")
    else:
        main = read_through(main, root, messages)
    project = load_project(root, main, messages)
    project.others = others
    if not project.text.strip():
        raise MustciteError("the main .tex file is empty or unreadable"
                            + (f" ({'; '.join(messages)})" if messages else ""), path=source_path)
    return extract_project(project, files, source_path)


def extract_latex(path: str | Path, *, limits: ArchiveLimits | None = None) -> ExtractedPaper:
    """Read a LaTeX draft: a ``.tex`` file (its folder is the project), a project folder or a source
    archive. Raises MustciteError (naming the file) when there is nothing to read; every softer
    problem is a message in the returned paper."""
    path = Path(path)
    if path.is_dir():
        return _extract_folder(path, None, str(path), [])
    if not path.is_file():
        raise MustciteError("LaTeX draft not found", path=path)
    if is_archive(path):
        with unpacked(path, limits) as up:
            messages = list(up.messages)
            try:
                paper = _extract_folder(up.root, None, str(path), messages)
            except MustciteError as exc:
                raise MustciteError(exc.message.replace(str(up.root), path.name), path=path, hint=exc.hint) from None
            paper.stats["archive_members"] = up.members
            return paper
    return _extract_folder(path.parent, path, str(path), [])
