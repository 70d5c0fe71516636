"""The TEI path: read GROBID TEI XML into an :class:`ExtractedPaper`.

GROBID marks everything we need explicitly: ``listBibl/biblStruct`` entries (authors, title,
date), body callouts ``<ref type="bibr" target="#b3">`` and numbered section heads
``<head n="4">Experiments</head>``. Contexts follow the same rule as the Markdown path: the
citing sentence with one sentence before and after, within the paragraph, deduplicated per
reference; entries without a four-digit year are dropped (as in MasterSet, Appendix C).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from .contexts import add_context, context_windows
from .failures import FailureReport
from .model import ExtractedPaper
from .records import Context, Reference
from .references import find_year
from .sentences import split_sentences

TEI_NS = "http://www.tei-c.org/ns/1.0"
_NS = {"t": TEI_NS}
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
_WS = re.compile(r"\s+")


def _text(el) -> str:
    return _WS.sub(" ", "".join(el.itertext())).strip() if el is not None else ""


@dataclass
class _Entry:
    xml_id: str
    title: str
    year: int | None
    authors: list[str]
    raw: str


@dataclass
class _Callout:
    target: str          # xml id without '#'
    text: str            # the callout as written
    section: str
    context: str


@dataclass
class _Body:
    callouts: list[_Callout] = field(default_factory=list)
    unresolved: int = 0  # bibr refs with no target (GROBID could not resolve them)


def _entry(bs) -> _Entry:
    xml_id = bs.get("{http://www.w3.org/XML/1998/namespace}id", "")
    title = ""
    for xp in ("t:analytic/t:title[@type='main']", "t:analytic/t:title",
               "t:monogr/t:title[@level='m']", "t:monogr/t:title"):
        found = bs.find(xp, _NS)
        if found is not None and _text(found):
            title = _text(found)
            break
    authors = []
    for pn in bs.iterfind(".//t:author/t:persName", _NS):
        names = [_text(f) for f in pn.iterfind("t:forename", _NS)]
        sur = _text(pn.find("t:surname", _NS))
        full = " ".join([n for n in names if n] + ([sur] if sur else []))
        if full:
            authors.append(full)
    raw = _text(bs.find("t:note[@type='raw_reference']", _NS))
    year = None
    for date in bs.iterfind(".//t:imprint/t:date", _NS):
        m = _YEAR.search(date.get("when", "") or _text(date))
        if m:
            year = int(m.group(1))
            break
    if year is None and raw:
        year = find_year(raw)
    return _Entry(xml_id, title, year, authors, raw)


def _section_label(div) -> str | None:
    head = div.find("t:head", _NS)
    if head is None:
        return None
    text = _text(head)
    n = (head.get("n") or "").strip().rstrip(".")
    if not text:
        return None
    return f"{n} {text}" if n else text


def _paragraph(p) -> tuple[str, list[tuple[int, str, str | None]]]:
    """Flatten a ``<p>`` to text; return it with ``(offset, callout text, target)`` per bibr ref."""
    parts: list[str] = []
    refs: list[tuple[int, str, str | None]] = []
    pos = 0

    def add(s: str | None) -> None:
        nonlocal pos
        if s:
            parts.append(s)
            pos += len(s)

    add(p.text)
    for child in p:
        tag = etree.QName(child).localname if isinstance(child.tag, str) else ""
        if tag == "ref" and child.get("type") == "bibr":
            target = (child.get("target") or "").lstrip("#") or None
            refs.append((pos, _text(child), target))
        add("".join(child.itertext()) if tag else "")
        add(child.tail)
    return "".join(parts), refs


def sentence_spans(text: str) -> list[tuple[int, int, str]]:
    """Sentences of ``text`` with their character spans (located in order in the source)."""
    spans = []
    cursor = 0
    for sent in split_sentences(text):
        s = sent.strip()
        if not s:
            continue
        start = text.find(s, cursor)
        if start < 0:  # the splitter normalised whitespace; fall back to the cursor position
            start = cursor
        end = start + len(s)
        spans.append((start, end, _WS.sub(" ", s)))
        cursor = end
    return spans


def window_at(spans: list[tuple[int, int, str]], offset: int) -> str:
    """The three-sentence window around ``offset`` (the shared rule of :mod:`.contexts`)."""
    if not spans:
        return ""
    idx = len(spans) - 1
    for i, (_, end, _) in enumerate(spans):
        if offset < end or (i + 1 < len(spans) and offset < spans[i + 1][0]):
            idx = i
            break
    return context_windows([s for _, _, s in spans], idx)


def _body(root) -> _Body:
    body = _Body()
    tei_body = root.find(".//t:text/t:body", _NS)
    if tei_body is None:
        return body
    section = ""
    for div in tei_body.iterfind("t:div", _NS):
        label = _section_label(div)
        if label:
            section = label
        for p in div.iterfind("t:p", _NS):
            text, refs = _paragraph(p)
            if not refs:
                continue
            spans = sentence_spans(text)
            for offset, ctext, target in refs:
                if target is None:
                    body.unresolved += 1
                    continue
                body.callouts.append(_Callout(target, ctext, section, window_at(spans, offset)))
    return body


def _cite_key(callout: str) -> str:
    return callout.strip().strip("()[]").strip(" ;,").strip()


def parse_tei(xml: str | bytes, source_path: str = "", *, keep_undated: bool = False) -> ExtractedPaper:
    """Parse GROBID TEI XML (``keep_undated``: keep the entries without a year, as a draft's audit
    must). Malformed XML gives a ``failed`` paper naming the parser error."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    try:
        root = etree.fromstring(data, parser=etree.XMLParser(resolve_entities=False, no_network=True,
                                                             huge_tree=False))
    except etree.XMLSyntaxError as exc:
        return FailureReport().add("malformed_tei", f"malformed TEI XML: {exc}").finish(
            ExtractedPaper(source_path=source_path, method="tei"))
    if etree.QName(root).localname != "TEI":
        return FailureReport().add("malformed_tei", f"not a TEI document (root element "
                                   f"<{etree.QName(root).localname}>)").finish(
            ExtractedPaper(source_path=source_path, method="tei"))
    title = _text(root.find(".//t:teiHeader//t:titleStmt/t:title", _NS))
    abstract = " ".join(_text(p) for p in root.iterfind(".//t:teiHeader//t:abstract//t:p", _NS))

    entries = [_entry(bs) for bs in root.iterfind(".//t:text//t:listBibl/t:biblStruct", _NS)]
    kept = [e for e in entries if e.year is not None or keep_undated]
    body = _body(root)

    by_id: dict[str, Reference] = {}
    refs: list[Reference] = []
    for i, e in enumerate(kept, 1):
        ref = Reference(target=i, title=e.title, year=e.year, cite="", raw=e.raw, authors=e.authors)
        refs.append(ref)
        by_id[e.xml_id] = ref
    seen: dict[int, set[tuple[str, str]]] = {}
    dangling = 0
    for c in body.callouts:
        ref = by_id.get(c.target)
        if ref is None:
            dangling += 1
            continue
        ref.mentions += 1
        if not ref.cite:
            ref.cite = _cite_key(c.text)
        if c.context:
            add_context(ref.contexts, seen.setdefault(ref.target, set()), c.section, c.context, Context)
    for ref in refs:
        if not ref.cite:  # never cited in the body: fall back to the first author's surname + year
            first = ref.authors[0].split()[-1] if ref.authors else ""
            ref.cite = (f"{first}, {ref.year}" if ref.year else first) if first else str(ref.target)

    report = FailureReport()
    messages: list[str] = []
    undated = sum(1 for r in refs if r.year is None)
    if undated:
        messages.append(f"{undated} reference(s) without a year, matched by title alone")
    if not refs:
        report.add("empty_reference_list", "TEI has no bibliography entries with a year")
    stats = {
        "raw_entries": len(entries),
        "dropped_no_year": len(entries) - len(kept),
        "references": len(refs),
        "mentions": sum(r.mentions for r in refs),
        "callouts_unresolved": body.unresolved,
        "callouts_dangling": dangling,
        "cited_references": sum(1 for r in refs if r.mentions),
    }
    return report.finish(ExtractedPaper(source_path=source_path, method="tei", title=title, abstract=abstract,
                                        references=refs, messages=messages, stats=stats))
