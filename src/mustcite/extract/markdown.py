"""Nougat Markdown (``.mmd``) -> :class:`ExtractedPaper` (the main extraction path).

:func:`parse_document` splits the text into labelled body paragraphs, the reference-section
lines, the title and the abstract, dropping the author block, captions, tables, display math,
footnotes and the NeurIPS paper checklist. :func:`extract_markdown` then parses the reference
list, finds and resolves every in-text citation, builds context windows and checks the failure
modes. It never raises on bad text: it returns a paper with status ``failed`` and a message.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .citations import Mention, RefIndex, count_style_markers, find_citations
from .contexts import add_context, context_windows, window_bounds
from .failures import FailureReport, detect_failures
from .model import ExtractedPaper
from .records import Context, Reference
from .references import RefEntry, find_year, parse_entries, split_entries, surname
from .sections import ABSTRACT, APPENDIX, BACK_MATTER, BACK_MATTER_RE, CHECKLIST, REFERENCES, classify, parse_heading
from .sentences import split_sentences

MAX_CHARS = 3_000_000
#: A failed page this many non-blank lines before the reference heading (about one Nougat page) or
#: this many after the last entry counts as next to the reference list.
NEAR_REFERENCES_LINES = 40
NEAR_AFTER_REFERENCES_LINES = 3          # real Nougat papers are < 0.4 MB; beyond this is not a paper

_SKIP_LINE = re.compile(
    r"^(?:(?:Figure|Fig\.|Table|Tab\.|Algorithm|Listing)\s*[A-Z]?\d+(?:\.\d+)*\s*[:.|]"
    r"|Footnote\s*\d*\s*:|\\\(\s*\{\}\^\{|\[MISSING_PAGE|\\\[|\$\$|\\begin\{|\\end\{|\|)")
_CHECKLIST_LINE = re.compile(r"^(?:\d+\.\s+\*\*Claims\*\*|(?:#+\s*)?\**\s*NeurIPS Paper Checklist)", re.I)
_MAIN_NUM_TEXT = re.compile(r"^\d{1,2}\.?\s")
_CHECKLIST_ITEM = re.compile(r"Question|Answer|Justification|Guidelines|^\d+\.\s", re.I)
_ABSTRACT_LINE = re.compile(r"^[*_#\s]*abstract[*_]*\s*[.:\u2014-]?\s*[*_]*\s*", re.I)


@dataclass
class Paragraph:
    section: str
    text: str
    after_references: bool = False   # below the (first) reference list
    #: ``text`` for body prose; for the lines :func:`parse_document` keeps apart with ``keep_skipped``:
    #: ``table``, ``caption``, ``math``, ``footnote``, ``checklist`` or ``front`` (the author block)
    kind: str = "text"


@dataclass
class Document:
    title: str = ""
    abstract: str = ""
    paragraphs: list[Paragraph] = field(default_factory=list)
    reference_lines: list[str] = field(default_factory=list)
    has_reference_heading: bool = False
    has_checklist: bool = False
    missing_pages: int = 0
    n_reference_sections: int = 0
    #: positions (in non-blank lines) of the pages Nougat failed on (``[MISSING_PAGE_FAIL:n]``)
    failed_page_lines: list[int] = field(default_factory=list)
    #: first and last non-blank line of the (first) reference list; (-1, -1) when there is none
    references_span: tuple[int, int] = (-1, -1)
    #: the lines left out of ``paragraphs`` (tables, captions, display math, footnotes, the checklist,
    #: the author block), each with its kind; filled only by ``parse_document(text, keep_skipped=True)``
    skipped: list[Paragraph] = field(default_factory=list)

    @property
    def failed_pages(self) -> int:
        return len(self.failed_page_lines)

    @property
    def bibliography_may_be_incomplete(self) -> bool:
        """A failed page inside the reference list or next to it (the page before its heading, or
        right after its last entry): entries may be lost. Also true when a page failed and no
        reference heading was found at all."""
        if not self.failed_page_lines:
            return False
        start, end = self.references_span
        if start < 0:
            return True
        return any(start - NEAR_REFERENCES_LINES <= f <= end + NEAR_AFTER_REFERENCES_LINES
                   for f in self.failed_page_lines)


def _skip_kind(line: str) -> str:
    """What a line left out of the body is: ``table``, ``caption``, ``math`` or ``footnote``."""
    if line.startswith(("|", "\\begin", "\\end")) or (line.count("&") >= 2 and "\\\\" in line):
        return "table"
    if line.startswith(("\\[", "$$")):
        return "math"
    if line.startswith(("Footnote", "\\(")):
        return "footnote"
    return "caption"


def parse_document(text: str, *, keep_skipped: bool = False) -> Document:
    """Split Nougat Markdown into title, abstract, labelled body paragraphs and reference lines
    (``keep_skipped``: also keep the lines left out of the body in ``Document.skipped``)."""
    doc = Document()

    def skip(section: str, line: str, kind: str) -> None:
        if keep_skipped:
            doc.skipped.append(Paragraph(section, line, after_refs, kind))

    lines = text.split("\n")
    label = ""                     # "" = front matter (title, authors) until abstract/first section
    after_refs = False
    in_refs = False
    abstract_parts: list[str] = []
    numbered = _numbered_main_headings(lines)
    pos = -1                       # index of the current non-blank line
    for li, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        pos += 1
        if line.count("&") >= 2 and "\\\\" in line:
            skip(label, line, "table")
            continue                 # a table row
        if line.startswith("[MISSING_PAGE"):
            doc.missing_pages += 1
            if line.startswith("[MISSING_PAGE_FAIL"):
                doc.failed_page_lines.append(pos)
            continue
        if _CHECKLIST_LINE.match(line):
            doc.has_checklist = True
            label, in_refs = CHECKLIST, False
            continue
        h = parse_heading(line)
        if h is not None and label == CHECKLIST and _CHECKLIST_ITEM.search(h.text):
            continue                # a checklist question set as a heading
        if h is not None:
            if not doc.title and label == "" and (h.level == 1 or not _MAIN_NUM_TEXT.match(h.text)) \
                    and not re.fullmatch(r"abstract", h.text, re.I):
                doc.title = h.text        # the first heading, whatever its level
                continue
            new = classify(h, after_references=after_refs, current=label)
            if new == CHECKLIST:
                doc.has_checklist = True
                label, in_refs = CHECKLIST, False
                continue
            if new == REFERENCES:
                doc.n_reference_sections += 1
                doc.has_reference_heading = True
                # a second list (a supplement's) numbers its entries anew: it is not collected
                in_refs, after_refs = doc.n_reference_sections == 1, True
                label = REFERENCES if in_refs else APPENDIX
                if in_refs:
                    doc.references_span = (pos, pos)
                continue
            in_refs = False
            label = new
            continue
        if in_refs:
            if line.startswith(("* ", "- ")) or re.match(r"^[\[(]\d+[\])]", line) or find_year(line):
                doc.reference_lines.append(line)
                doc.references_span = (doc.references_span[0], pos)
                continue
            if _SKIP_LINE.match(line):
                skip(label, line, _skip_kind(line))
                continue
            in_refs = False          # prose after the list without a heading: appendix material
            label = APPENDIX
        if _SKIP_LINE.match(line) or label == CHECKLIST:
            skip(label, line, "checklist" if label == CHECKLIST else _skip_kind(line))
            continue                # captions, tables, math, footnotes; the paper checklist
        if label == "":
            if not doc.title and not line.startswith("*"):
                doc.title = line.lstrip("# ").strip()
                continue
            m = _ABSTRACT_LINE.match(line)
            if m and re.match(r"[*_#\s]*abstract", line, re.I):
                label = ABSTRACT
                line = line[m.end():].strip()
                if not line:
                    continue
            elif len(line) >= 400 and line.count(". ") >= 2:
                label = ABSTRACT    # prose before any heading: an abstract Nougat left unmarked
            else:
                skip(label, line, "front")
                continue            # author block
        if not after_refs and (plain := _plain_heading(line)) is not None:
            new = _plain_heading_label(plain, label, numbered, li)
            if new is not None:
                label = new
                continue
        if line.startswith(("* ", "- ")):
            line = line[2:].strip()
        if label == ABSTRACT:
            abstract_parts.append(line)
        doc.paragraphs.append(Paragraph(label, line, after_refs))
    doc.abstract = " ".join(abstract_parts)
    return doc


_MAIN_HEADING_LINE = re.compile(r"^#{1,6}\s*\**\s*(\d{1,2})\.?\s+[A-Z]")
_PLAIN_HEADING = re.compile(r"^(?:\d{1,2}\.?\s+)?[A-Z][A-Za-z'\-]*(?:[ ,\-]+[A-Za-z][A-Za-z'\-]*){0,7}$")
_NOT_HEADING = re.compile(r"^(?:Theorem|Lemma|Proof|Definition|Corollary|Proposition|Assumption|Remark|"
                          r"Example|Algorithm|Step|Input|Output|Require|Ensure|Figure|Table|Note|Claim)\b")
_PROSE_LINE = re.compile(r"^(?:We|Then|Thus|Hence|Therefore|Since|Now|Let|Here|So|This|It|In|For|By)\b|"
                         r"\b(?:that|we|have|has|is|are|of|the|and|to|with|as|by|for|a|an)$")
SECTION_WORDS = frozenset("""introduction|related work|related works|background|preliminaries|preliminary|
method|methods|methodology|approach|our approach|proposed method|experiments|experiment|
experimental setup|experimental results|experimental evaluation|results|evaluation|discussion|conclusion|
conclusions|conclusion and future work|conclusions and future work|limitations|analysis|problem setup|
problem formulation|problem statement|setup|theoretical analysis|main results|broader impact|
broader impacts|limitations and future work|discussion and conclusion|related literature"""
                          .replace("\n", "").split("|"))


def _numbered_main_headings(lines: list[str]) -> list[tuple[int, int]]:
    """(line index, section number) of every '#' heading numbered like a main section."""
    out = []
    for i, ln in enumerate(lines):
        if ln.startswith("#"):
            m = _MAIN_HEADING_LINE.match(ln)
            if m:
                out.append((i, int(m.group(1))))
    return out


def _plain_heading(line: str) -> str | None:
    """A short title-like line without '#' (Nougat drops some heading marks), else None."""
    if len(line) > 70 or not _PLAIN_HEADING.match(line) or _NOT_HEADING.match(line):
        return None
    return line


def _plain_heading_label(text: str, label: str, numbered: list[tuple[int, int]], li: int) -> str | None:
    """The new label when the plain line ``text`` at line ``li`` opens a main section, else None.

    Accepted: a known section name ("Experiments", "Related Work"), a back-matter name, or a
    numbered line ("3 Method") that continues the numbering; a title-like line where the
    numbering has a gap ("2 ..." then this line then "4 ...") gets the missing number.
    """
    if label in ("", REFERENCES, CHECKLIST, APPENDIX):
        return None
    m = re.match(r"^(\d+)\s", label)
    cur = int(m.group(1)) if m else None
    nxt = next((n for i, n in numbered if i > li), None)
    num = re.match(r"^(\d{1,2})\.?\s+(.*)$", text)
    if num:
        n = int(num.group(1))
        return f"{n} {num.group(2)}" if cur is not None and n == cur + 1 else None
    low = text.lower().strip()
    gap = cur is not None and nxt == cur + 2
    if BACK_MATTER_RE.match(text):
        return BACK_MATTER
    if low in SECTION_WORDS:
        return f"{cur + 1} {text}" if gap else text
    if gap and not any(c.isdigit() for c in text) and "," not in text and not _PROSE_LINE.search(text):
        return f"{cur + 1} {text}"
    return None


def _garbage(text: str) -> bool:
    sample = text[:20000]
    if not sample:
        return True
    letters = sum(map(str.isalpha, sample)) + sample.count(" ") + sample.count("\n")
    bad = sample.count("\x00") + sample.count("\ufffd")
    return letters < 0.6 * len(sample) or bad > 0.01 * len(sample) or len(sample.split()) < 20


def _decide_style(entries: list[RefEntry], body_counts: dict[str, int]) -> tuple[str, int]:
    n = len(entries)
    n_tag = sum(e.tag is not None for e in entries)
    num, ay = body_counts["numeric"], body_counts["author-year"]
    if n_tag > 0.3 * n:
        return "alpha", n_tag
    if num >= ay or sum(e.number is not None for e in entries) > n / 2 and num > 0.5 * ay:
        return "numeric", n_tag
    return "author-year", n_tag


def _cite_key(e: RefEntry, style: str, number: int | None) -> str:
    if style == "numeric":
        return str(number if number is not None else e.position)
    if style == "alpha" and e.tag:
        return e.tag
    if e.key_names and e.key_year:
        return f"{e.key_names}, {e.key_year}"
    if e.authors:
        sn = surname(e.authors[0])
        if len(e.authors) == 2:
            sn = f"{sn} and {surname(e.authors[1])}"
        elif len(e.authors) > 2:
            sn += " et al."
        return f"{sn}, {e.year}" if e.year else sn
    return e.tag or (str(e.number) if e.number is not None else str(e.position))


def text_problem(text: str) -> tuple[str, str] | None:
    """``(failure mode, message)`` when ``text`` cannot be a paper (empty, too long, garbled), else None."""
    if not isinstance(text, str) or not text.strip():
        return "empty", "empty text"
    if len(text) > MAX_CHARS:
        return "too_long", f"text has {len(text):,} characters, more than {MAX_CHARS:,}: not a paper"
    if _garbage(text):
        return "garbage", "text does not look like prose (binary or garbled)"
    return None


def reference_entries(doc: Document) -> list[RefEntry]:
    """The parsed entries of the document's (first) reference list."""
    return parse_entries(split_entries(doc.reference_lines))


def searched_body(doc: Document) -> list[Paragraph]:
    """The body paragraphs searched for citations: with a second reference list (a supplement's,
    numbered anew), the text below the first list is left out."""
    if doc.n_reference_sections > 1:
        return [p for p in doc.paragraphs if not p.after_references]
    return doc.paragraphs


def citation_style(entries: list[RefEntry], body: list[Paragraph]) -> tuple[str, int, dict[str, int]]:
    """``(style, entries with an alpha tag, marker counts per style)`` of a paper's citations."""
    body_counts = count_style_markers("\n".join(p.text for p in body if p.section != APPENDIX))
    style, n_tag = _decide_style(entries, body_counts)
    return style, n_tag, body_counts


def iter_cited_sentences(body: list[Paragraph], style: str, index: RefIndex
                         ) -> Iterator[tuple[int, list[str], int, list[Mention]]]:
    """``(paragraph index, its sentences, sentence index, mentions)`` of every sentence of ``body``
    with at least one citation key (resolved or not), in text order."""
    trigger = "[" if style in ("numeric", "alpha") else None
    for pi, p in enumerate(body):
        if trigger and trigger not in p.text:
            continue
        if style == "author-year" and not re.search(r"(?:1[89]|20)\d\d", p.text):
            continue
        sents = split_sentences(p.text)
        for i, s in enumerate(sents):
            if trigger and trigger not in s:
                continue
            ms = find_citations(s, style, index)
            if ms:
                yield pi, sents, i, ms


def reference_targets(entries: list[RefEntry], index: RefIndex, style: str, *,
                      keep_undated: bool = False) -> list[int | None]:
    """Per entry, its ``target`` (1-based position in the reference file), or None when the entry
    is left out: superseded by a later entry with the same ``[n]`` label (numeric style), or
    without a four-digit year (unless ``keep_undated``: a draft keeps every reference)."""
    superseded = index.superseded if style == "numeric" else set()
    out: list[int | None] = []
    n = 0
    for i, e in enumerate(entries):
        if i in superseded or (e.year is None and not keep_undated):
            out.append(None)
        else:
            n += 1
            out.append(n)
    return out


def cited_sentences(marked: dict[int, tuple[list[str], dict[int, list[tuple[int, int, int | None]]]]],
                    body: list[Paragraph], targets: list[int | None]) -> list[dict[str, Any]]:
    """The sentences of every citation context window, each once and in text order, with each key
    of each marker resolved to the target of its reference (see
    :attr:`ExtractedPaper.cited_sentences`); ``marked``: per paragraph, its sentences and the
    ``(start, end, entry)`` of the keys of its citing sentences."""
    out: list[dict[str, Any]] = []
    for pi in sorted(marked):
        sents, markers = marked[pi]
        keep: set[int] = set()
        for i in markers:
            a, b = window_bounds(len(sents), i)
            keep.update(range(a, b))
        for i in sorted(keep):
            spans: dict[tuple[int, int], list[int]] = {}
            for start, end, entry in markers.get(i, ()):
                t = targets[entry] if entry is not None else None
                spans.setdefault((start, end), [])
                if t is not None:
                    spans[(start, end)].append(t)
            out.append({"section": body[pi].section, "paragraph": pi, "index": i, "text": sents[i],
                        "cites": [[a, b, ts] for (a, b), ts in sorted(spans.items())]})
    return out


def extract_markdown(text: str, source_path: str = "", *, keep_undated: bool = False,
                     keep_sentences: bool = False) -> ExtractedPaper:
    """Extract references, contexts, mention counts and failure modes from Nougat Markdown
    (``keep_undated``: keep the entries without a four-digit year, as a draft's audit must;
    ``keep_sentences``: keep the contexts' sentences with every marker resolved,
    :attr:`ExtractedPaper.cited_sentences`)."""
    paper = ExtractedPaper(source_path=source_path, method="markdown")
    paper.stats = {"n_raw_entries": 0, "n_dropped_no_year": 0, "max_ref_number": 0,
                   "mentions_total": 0, "mentions_resolved": 0, "citation_style": None}
    problem = text_problem(text)
    if problem is not None:
        return FailureReport().add(*problem).finish(paper)
    doc = parse_document(text)
    paper.title, paper.abstract = doc.title, doc.abstract
    entries = reference_entries(doc)
    body = doc.paragraphs
    paper.stats.update(n_raw_entries=len(entries), has_checklist=doc.has_checklist,
                       missing_pages=doc.missing_pages, failed_pages=doc.failed_pages,
                       bibliography_may_be_incomplete=doc.bibliography_may_be_incomplete,
                       n_paragraphs=len(body), n_reference_sections=doc.n_reference_sections)
    if not doc.has_reference_heading or not entries:
        return FailureReport().add("no_references", "no reference section found" if not doc.has_reference_heading
                                   else "the reference section has no entries").finish(paper)

    body = searched_body(doc)
    if doc.n_reference_sections > 1:
        # the supplement has its own list and numbering: its citations cannot be resolved
        # against the main list, so text below the first list is left out
        paper.messages.append(f"{doc.n_reference_sections} reference lists: only the first is used, "
                              "and text below it is not searched for citations")
    style, n_tag, body_counts = citation_style(entries, body)
    index = RefIndex(entries)
    paper.stats.update(citation_style=style, body_markers=body_counts,
                       numeric_keys_by_position=(style == "numeric" and index.numbers_by_position))
    if style == "numeric" and index.numbers_by_position:
        paper.messages.append("most reference entries carry no [n] label: "
                              "numeric keys resolved by list position")

    contexts: dict[int, list[Context]] = {i: [] for i in range(len(entries))}
    seen: dict[int, set] = {i: set() for i in range(len(entries))}
    mentions = Counter()
    written_key: dict[int, str] = {}
    total = resolved = repairs = unknown = 0
    #: per paragraph: its sentences, and the markers of each citing sentence (start, end, entry)
    marked: dict[int, tuple[list[str], dict[int, list[tuple[int, int, int | None]]]]] = {}
    for pi, sents, i, ms in iter_cited_sentences(body, style, index):
        if keep_sentences:
            marked.setdefault(pi, (sents, {}))[1][i] = [(m.start, m.end, m.entry) for m in ms]
        window = None
        for m in ms:
            total += 1
            if m.entry is None:
                unknown += 1
                continue
            resolved += 1
            repairs += m.repaired
            mentions[m.entry] += 1
            written_key.setdefault(m.entry, m.key)
            if window is None:
                window = context_windows(sents, i)
            add_context(contexts[m.entry], seen[m.entry], body[pi].section, window, Context)

    numbers = [e.number for e in entries]
    rep = detect_failures(numbers=numbers, n_tagged=n_tag, n_entries=len(entries), style=style,
                          body_counts=body_counts, mentions_total=total, mentions_resolved=resolved,
                          ocr_repairs=repairs + sum(e.ocr_repaired_label for e in entries),
                          unknown_numbers=unknown if style == "numeric" else 0)
    if doc.bibliography_may_be_incomplete:
        rep.add("incomplete_bibliography", f"{doc.failed_pages} page(s) failed in OCR, in or next to the "
                "reference list: some references may be missing")

    refs: list[Reference] = []
    dropped = 0
    superseded = index.superseded if style == "numeric" else set()
    if superseded:
        paper.messages.append(f"dropped {len(superseded)} entries whose [n] label a later entry repeats")
    targets = reference_targets(entries, index, style, keep_undated=keep_undated)
    undated = sum(1 for i, e in enumerate(entries) if e.year is None and targets[i] is not None)
    if undated:
        paper.messages.append(f"{undated} reference(s) without a year, matched by title alone")
    for i, e in enumerate(entries):
        if targets[i] is None:
            dropped += i not in superseded       # no four-digit year
            continue
        # numeric: the entry's own number; otherwise the key as first written in the text
        cite = (written_key.get(i) if style != "numeric" else None) \
            or _cite_key(e, style, index.number_of.get(i))
        refs.append(Reference(target=targets[i], title=e.title, year=e.year, cite=cite,
                              contexts=contexts[i], raw=e.raw, authors=e.authors,
                              mentions=mentions[i]))
    if not refs:
        rep.add("no_references", f"none of the {len(entries)} reference entries has a four-digit year")
    paper.references = refs
    if keep_sentences:
        paper.cited_sentences = cited_sentences(marked, body, targets)
    rep.finish(paper)
    nums = [e.number for e in entries if e.number is not None]
    paper.stats.update(n_dropped_no_year=dropped, n_references=len(refs),
                       max_ref_number=max(nums) if nums else 0, n_labelled=len(nums),
                       mentions_total=total, mentions_resolved=resolved, ocr_repairs=repairs,
                       unknown_keys=unknown, n_contexts=sum(len(r.contexts) for r in refs),
                       n_alpha_tags=n_tag, n_superseded=len(superseded))
    return paper
