"""The built-in PDF path (no server): PyMuPDF text with layout -> references, citations, contexts.

Steps: read text lines with their boxes, drop running headers/footers (lines repeated on many
pages near the top or bottom, page numbers), order two-column pages column by column, join
hyphenated line breaks; find the last "References"/"Bibliography" heading; split entries by
number (``[n]``, ``n.``) or by hanging indentation (author-year lists); parse each entry with the
shared :func:`parse_reference_string`; count in-text citations from the PDF's internal links to
the bibliography when the PDF has them (LaTeX ``hyperref`` ``cite.*`` destinations), else from the
text (numeric brackets, or "Surname et al., 2017" / "Surname (2017)" for author-year lists).
A PDF with no text layer fails with "no text layer (scanned PDF?)".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from .contexts import add_context
from .failures import FailureReport
from .model import ExtractedPaper
from .records import Context, Reference
from .references import parse_reference_string
from .tei import sentence_spans, window_at

_REF_HEAD = re.compile(r"^(?:\d+\.?\s*|[A-Z]\.?\s+)?(references|bibliography|literature cited|reference list)\s*:?$",
                       re.I)
_END_HEAD = re.compile(r"^(?:[A-H](?:\.\d+)?\.?\s+)?"
                       r"(?:appendix|appendices|supplementary|checklist|neurips paper checklist)\b"
                       r"|^[A-H](?:\.\d+)?\.?\s+[A-Z].{2,70}$", re.I)
_NUM_BRACKET = re.compile(r"^\[(\d{1,3})\]\s*")
_NUM_DOT = re.compile(r"^(\d{1,3})\.\s+(?=[A-Z])")
_CITE_BRACKET = re.compile(r"\[(\d{1,3}(?:\s*[,–-]\s*\d{1,3})*)\]")
_DIGITS = re.compile(r"\d+")
_WS = re.compile(r"\s+")
_SECTION = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*)\.?\s+([A-Z][^.]{1,80})$")

MAX_PAGES = 400


@dataclass
class _Line:
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    col: int = 0


@dataclass
class _Entry:
    text: str
    page: int
    y0: float
    x0: float
    num: int | None = None


@dataclass
class _Layout:
    body: list[_Line] = field(default_factory=list)
    refs: list[_Line] = field(default_factory=list)


def _page_lines(page, pno: int) -> list[_Line]:
    out = []
    width = page.rect.width
    mid = width / 2
    for b in page.get_text("dict", flags=0)["blocks"]:
        if b.get("type") != 0:
            continue
        for ln in b["lines"]:
            spans = [s for s in ln["spans"] if s["text"].strip()]
            if not spans:
                continue
            text = _WS.sub(" ", "".join(s["text"] for s in ln["spans"])).strip()
            x0, y0, x1, y1 = ln["bbox"]
            size = max(s["size"] for s in spans)
            bold = all(("Bold" in s["font"] or "Medi" in s["font"] or s["flags"] & 16) for s in spans)
            col = 0 if x1 <= mid + 10 else (1 if x0 >= mid - 10 else -1)
            out.append(_Line(pno, x0, y0, x1, y1, text, size, bold, col))
    # two-column pages: read the left column, then the right (full-width lines go with the left)
    if any(line.col == 1 for line in out) and any(line.col == 0 for line in out):
        for line in out:
            if line.col == -1:
                line.col = 0
    else:
        for line in out:
            line.col = 0
    out.sort(key=lambda ln: (ln.col, round(ln.y0, 1), ln.x0))
    # fragments on the same baseline ("1" + "Introduction", "2018." + "Title ...") form one line
    merged: list[_Line] = []
    for ln in out:
        prev = merged[-1] if merged else None
        if prev and prev.col == ln.col and abs(prev.y0 - ln.y0) < 2.5 and ln.x0 >= prev.x1 - 1:
            prev.text = f"{prev.text} {ln.text}"
            prev.x1, prev.y1 = ln.x1, max(prev.y1, ln.y1)
            prev.size = max(prev.size, ln.size)
            prev.bold = prev.bold and ln.bold
        else:
            merged.append(ln)
    return merged


def _running_keys(pages: list[list[_Line]], heights: list[float]) -> set[str]:
    """Lines (digits masked) that recur near the top or bottom margin on at least 40% of pages."""
    counts: Counter[str] = Counter()
    for lines, h in zip(pages, heights):
        keys = {_DIGITS.sub("#", ln.text) for ln in lines if ln.y1 < 0.09 * h or ln.y0 > 0.91 * h}
        counts.update(keys)
    need = max(2, int(0.4 * len(pages) + 0.5))
    return {k for k, c in counts.items() if c >= need}


def _is_margin_noise(line: _Line, running: set[str], height: float) -> bool:
    in_margin = line.y1 < 0.09 * height or line.y0 > 0.91 * height
    if not in_margin:
        return False
    key = _DIGITS.sub("#", line.text)
    return key in running or bool(re.fullmatch(r"[#\s\-–]+|page #( of #)?", key, re.I))


def join_lines(lines: list[str]) -> str:
    """Join text lines, removing end-of-line hyphenation ("Bhagavat-" + "ula" -> "Bhagavatula")."""
    out = ""
    for text in lines:
        if not out:
            out = text
        elif out.endswith("-") and not out.endswith(" -") and text[:1].islower():
            out = out[:-1] + text
        elif out.endswith("-") and not out.endswith(" -") and text[:1].isupper():
            out = out + text  # "Valenzuela-" + "Escarcega": a real hyphen, keep it
        else:
            out += " " + text
    return out


def _layout(doc) -> _Layout:
    """Body lines and bibliography lines of the whole document, in reading order."""
    pages = [_page_lines(doc[i], i) for i in range(min(doc.page_count, MAX_PAGES))]
    heights = [doc[i].rect.height for i in range(len(pages))]
    running = _running_keys(pages, heights)
    lines = [ln for pl, h in zip(pages, heights) for ln in pl if not _is_margin_noise(ln, running, h)]
    # the last References heading starts the bibliography
    start = None
    for i, ln in enumerate(lines):
        if _REF_HEAD.match(ln.text):
            start = i
    lay = _Layout()
    if start is None:
        lay.body = lines
        return lay
    lay.body = lines[:start]
    end = len(lines)
    for j in range(start + 1, len(lines)):
        ln = lines[j]
        if ((ln.bold or ln.size > lines[start].size - 0.5) and _END_HEAD.match(ln.text)
                and ln.size >= lines[start].size - 1):
            end = j
            break
    lay.refs = lines[start + 1:end]
    lay.body += lines[end:]  # appendix text can cite too
    return lay


def _split_entries(lines: list[_Line]) -> list[_Entry]:
    if not lines:
        return []
    numbered = sum(1 for ln in lines if _NUM_BRACKET.match(ln.text))
    dotted = sum(1 for ln in lines if _NUM_DOT.match(ln.text))
    entries: list[_Entry] = []
    buf: list[_Line] = []

    def flush() -> None:
        if buf:
            text = join_lines([b.text for b in buf]).strip()
            num = None
            m = _NUM_BRACKET.match(text) or _NUM_DOT.match(text)
            if m and (numbered >= 3 or dotted >= 3):
                num = int(m.group(1))
                text = text[m.end():].strip()
            entries.append(_Entry(text, buf[0].page, buf[0].y0, buf[0].x0, num))
            buf.clear()

    if numbered >= 3 or dotted >= 3:
        pat = _NUM_BRACKET if numbered >= dotted else _NUM_DOT
        for ln in lines:
            if pat.match(ln.text):
                flush()
            buf.append(ln)
        flush()
        return [e for e in entries if e.num is not None]
    # hanging indentation: a line at the column's left edge starts an entry
    left: dict[tuple[int, int], float] = {}
    for ln in lines:
        key = (ln.page, ln.col)
        left[key] = min(left.get(key, 1e9), ln.x0)
    for ln in lines:
        if ln.x0 <= left[(ln.page, ln.col)] + 2.0:
            flush()
        buf.append(ln)
    flush()
    return entries


@dataclass
class _Body:
    text: str
    line_starts: list[tuple[int, _Line]]   # (char offset, line)
    sections: list[tuple[int, str]]        # (char offset, label)


def _body_text(lines: list[_Line]) -> _Body:
    parts: list[str] = []
    starts: list[tuple[int, _Line]] = []
    sections: list[tuple[int, str]] = []
    pos = 0
    body_size = Counter(round(ln.size) for ln in lines).most_common(1)[0][0] if lines else 10
    for ln in lines:
        text = ln.text
        m = _SECTION.match(text)
        if m and (ln.bold or ln.size > body_size + 0.5) and len(text) < 90:
            sections.append((pos, f"{m.group(1)} {m.group(2).strip()}"))
        elif ln.bold and ln.size > body_size + 0.5 and len(text) < 60 and text[:1].isupper() and not text.endswith("."):
            sections.append((pos, text))
        if parts and parts[-1].endswith("-") and text[:1].islower():
            parts[-1] = parts[-1][:-1]
            pos -= 1
            sep = ""
        else:
            sep = " " if parts else ""
        starts.append((pos + len(sep), ln))
        parts.append(sep + text)
        pos += len(sep) + len(text)
    return _Body("".join(parts), starts, sections)


def _section_at(body: _Body, offset: int) -> str:
    label = ""
    for pos, lab in body.sections:
        if pos > offset:
            break
        label = lab
    return label


def _offset_of(body: _Body, page: int, rect) -> int | None:
    """Character offset in the body text of a point on a page (a link's anchor)."""
    best = None
    for off, ln in body.line_starts:
        if ln.page != page:
            continue
        if ln.y0 - 1 <= (rect.y0 + rect.y1) / 2 <= ln.y1 + 1 and ln.x0 - 2 <= rect.x0 <= ln.x1 + 2:
            frac = (rect.x0 - ln.x0) / max(1.0, ln.x1 - ln.x0)
            best = off + int(max(0.0, min(1.0, frac)) * len(ln.text))
            break
    return best


def _surname(author: str) -> str:
    author = author.strip()
    if "," in author:
        return author.split(",")[0].strip()
    parts = author.split()
    return parts[-1] if parts else ""


def _cite_key_author_year(authors: list[str], year: int | None) -> str:
    names = [_surname(a) for a in authors if _surname(a)]
    when = f", {year}" if year else ""
    if not names:
        return str(year or "")
    if len(names) == 1:
        return f"{names[0]}{when}"
    if len(names) == 2:
        return f"{names[0]} and {names[1]}{when}"
    return f"{names[0]} et al.{when}"


def _text_citations(body: _Body, refs: list[Reference], entries: list[_Entry],
                    numbered: bool) -> list[tuple[int, Reference]]:
    found: list[tuple[int, Reference]] = []
    if numbered:
        by_num = {e.num: r for e, r in zip(entries, refs) if e.num is not None}
        for m in _CITE_BRACKET.finditer(body.text):
            nums: list[int] = []
            for part in re.split(r"\s*,\s*", m.group(1)):
                if re.search(r"[–-]", part):
                    a, b = (int(x) for x in re.split(r"\s*[–-]\s*", part)[:2])
                    if 0 < b - a < 50:
                        nums.extend(range(a, b + 1))
                else:
                    nums.append(int(part))
            for n in nums:
                if n in by_num:
                    found.append((m.start(), by_num[n]))
        return found
    # author-year: "Surname et al., 2017", "Surname and Other (2017)", "Surname, 2017"
    for ref in refs:
        sur = _surname(ref.authors[0]) if ref.authors else ""
        if len(sur) < 2 or ref.year is None:      # an author-year marker needs the year
            continue
        pat = re.compile(re.escape(sur) + r"(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'\-]+)?,?\s*\(?\s*"
                         + str(ref.year) + r"[a-z]?\b")
        for m in pat.finditer(body.text):
            found.append((m.start(), ref))
    return found


def _link_citations(doc, body: _Body, entries: list[_Entry],
                    refs: list[Reference]) -> list[tuple[int, Reference]] | None:
    """Citations from internal links that point into the bibliography; None when there are none."""
    if not entries:
        return None
    ordered = sorted(zip(entries, refs), key=lambda er: (er[0].page, er[0].y0))

    def entry_at(page: int, point) -> Reference | None:
        best = None
        for e, r in ordered:
            if e.page != page:
                continue
            same_col = abs(e.x0 - point.x) < 60
            if same_col and e.y0 <= point.y + 6:
                best = r
        return best

    found: list[tuple[int, Reference]] = []
    last: tuple[int, float, float, str] | None = None
    ref_pages = {e.page for e in entries}
    any_link = False
    for page in doc:
        for link in page.get_links():
            if link.get("kind") not in (pymupdf.LINK_GOTO, pymupdf.LINK_NAMED):
                continue
            dest = link.get("nameddest", "") or ""
            target_page = link.get("page", -1)
            if target_page not in ref_pages or (dest and not dest.startswith("cite.")):
                continue
            any_link = True
            rect = link["from"]
            # one callout can be several link boxes ("Radford et al." + "2018", or wrapped onto the
            # next line): merge consecutive boxes of the same destination
            same_line = last and abs(last[1] - rect.y0) < 2 and rect.x0 - last[2] < 30
            wrapped = last and 0 < rect.y0 - last[1] < 16 and rect.x0 < last[2]
            if last and last[0] == page.number and last[3] == dest and (same_line or wrapped):
                last = (page.number, rect.y0, rect.x1, dest)
                continue
            last = (page.number, rect.y0, rect.x1, dest)
            to = link["to"]
            if link.get("kind") == pymupdf.LINK_NAMED:
                # named destinations come in PDF user space (origin bottom-left): flip y
                to = pymupdf.Point(to.x, doc[target_page].rect.height - to.y)
            ref = entry_at(target_page, to)
            off = _offset_of(body, page.number, rect)
            if ref is not None and off is not None:
                found.append((off, ref))
    return found if any_link else None


_INITIAL_NAME = re.compile(r"(?:^|,\s*)(?:[A-Z]\.\s*){1,3}[A-Z][a-z]+,")
_ACL_ENTRY = re.compile(r"^(?P<authors>.+?)\.\s+(?P<year>(?:19|20)\d\d)[a-z]?\.\s+(?P<title>.+?[^A-Z])[.?!](?:\s|$)")


def parse_reference(raw: str) -> tuple[list[str], str, int | None]:
    """The shared :func:`parse_reference_string`, with a fallback for ACL-style entries
    ("Authors. 2014. Title. In Venue.") whose title it returns as the bare year or as part of
    the author list ("F. Pedregosa, G. Varoquaux, ..." split at the initials)."""
    authors, title, year = parse_reference_string(raw)
    bad = (not title or re.fullmatch(r"(?:19|20)\d\d[a-z]?", title.strip())
           or (title.count(",") >= 2 and _INITIAL_NAME.search(title)))  # an author list, not a title
    if year is not None and bad:
        m = _ACL_ENTRY.match(raw)
        if m and int(m.group("year")) == year:
            title = m.group("title").strip()
    return authors, title, year


def _failed(source_path: str, message: str, mode: str) -> ExtractedPaper:
    return FailureReport().add(mode, message).finish(ExtractedPaper(source_path=source_path, method="pdf"))


def _title_abstract(doc) -> tuple[str, str]:
    title = (doc.metadata or {}).get("title", "") or ""
    page = doc[0]
    lines = _page_lines(page, 0)
    if not title.strip() and lines:
        top = [ln for ln in lines if ln.y0 < 0.35 * page.rect.height]
        if top:
            biggest = max(ln.size for ln in top)
            title = " ".join(ln.text for ln in sorted(top, key=lambda t: t.y0) if ln.size >= biggest - 0.5)
    abstract = ""
    texts = [ln.text for ln in lines]
    for i, t in enumerate(texts):
        if t.strip().lower() in ("abstract", "abstract.") or t.lower().startswith("abstract"):
            rest = []
            for ln in lines[i + 1:]:
                if _SECTION.match(ln.text) and ln.size >= lines[i].size - 0.5:
                    break
                rest.append(ln.text)
            abstract = join_lines(rest)
            if t.lower().startswith("abstract") and len(t) > 10:
                abstract = join_lines([t[8:].lstrip(" .:—-")] + rest)
            break
    return title.strip(), abstract.strip()


def extract_pdf(path: str | Path, source_path: str = "", *, keep_undated: bool = False) -> ExtractedPaper:
    """Extract references and citation contexts from a PDF file with PyMuPDF (``keep_undated``:
    keep the entries without a year, as a draft's audit must)."""
    source_path = source_path or str(path)
    try:
        doc = pymupdf.open(str(path))
    except Exception as exc:  # pymupdf raises its own FileDataError / RuntimeError variants
        return _failed(source_path, f"not a readable PDF: {exc}", "unreadable_pdf")
    with doc:
        if not doc.is_pdf:
            return _failed(source_path, "not a PDF document", "unreadable_pdf")
        if doc.needs_pass:
            return _failed(source_path, "PDF is encrypted (needs a password)", "unreadable_pdf")
        chars = sum(len(doc[i].get_text("text").strip()) for i in range(min(doc.page_count, MAX_PAGES)))
        if chars < 200:
            return _failed(source_path, "no text layer (scanned PDF?)", "no_text_layer")
        title, abstract = _title_abstract(doc)
        lay = _layout(doc)
        if not lay.refs:
            return FailureReport().add("empty_reference_list", "no References section found").finish(
                ExtractedPaper(source_path=source_path, method="pdf", title=title, abstract=abstract,
                               stats={"pages": doc.page_count}))
        entries_all = _split_entries(lay.refs)
        numbered = any(e.num is not None for e in entries_all)
        entries: list[_Entry] = []
        refs: list[Reference] = []
        for e in entries_all:
            authors, rtitle, year = parse_reference(e.text)
            if year is None and not keep_undated:
                continue
            year = int(year) if year is not None else None
            entries.append(e)
            refs.append(Reference(target=len(refs) + 1, title=rtitle or "", year=year,
                                  cite=str(e.num) if e.num is not None else _cite_key_author_year(authors, year),
                                  raw=e.text, authors=list(authors)))
        body = _body_text(lay.body)
        cites = _link_citations(doc, body, entries, refs)
        source = "links"
        if cites is None:
            cites = _text_citations(body, refs, entries, numbered)
            source = "text"
        spans = sentence_spans(body.text)
        seen: dict[int, set[tuple[str, str]]] = {}
        for off, ref in sorted(cites, key=lambda c: c[0]):
            ref.mentions += 1
            ctx = window_at(spans, off)
            if ctx:
                add_context(ref.contexts, seen.setdefault(ref.target, set()), _section_at(body, off), ctx, Context)
        report = FailureReport()
        messages: list[str] = []
        undated = sum(1 for r in refs if r.year is None)
        if undated:
            messages.append(f"{undated} reference(s) without a year, matched by title alone")
        if not refs:
            report.add("empty_reference_list", "no reference entry" + ("" if keep_undated else " with a year"))
        elif sum(r.mentions for r in refs) == 0:
            report.add("no_citations", "no in-text citation matched a reference")
        stats = {"pages": doc.page_count, "raw_entries": len(entries_all), "references": len(refs),
                 "dropped_no_year": len(entries_all) - len(refs), "mentions": sum(r.mentions for r in refs),
                 "cited_references": sum(1 for r in refs if r.mentions), "citation_source": source,
                 "numbered": numbered}
        return report.finish(ExtractedPaper(source_path=source_path, method="pdf", title=title, abstract=abstract,
                                            references=refs, messages=messages, stats=stats))
