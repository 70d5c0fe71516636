"""A paragraph view of a Nougat Markdown full text, from the same parser as extraction.

:func:`paragraph_view` gives, for every body paragraph that extraction searches for citations, its
text, section label, sentences (with character spans in the paragraph) and every in-text citation
marker (its character span, the keys written in it and, per key, the reference it resolves to).
References are named by ``target``, their 1-based position in the paper's reference file
(``<paper>.json`` of ``mustcite extract``), so a marker joins that file's ``paper_id`` links.

Every step is the one :func:`mustcite.extract.markdown.extract_markdown` takes
(:func:`parse_document`, :func:`reference_entries`, :func:`searched_body`, :func:`citation_style`,
:class:`RefIndex`, :func:`iter_cited_sentences` with :func:`find_citations` and
:func:`split_sentences`, :func:`reference_targets`), so the view and the reference file agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .citations import Mention, RefIndex
from .markdown import (
    citation_style,
    iter_cited_sentences,
    parse_document,
    reference_entries,
    reference_targets,
    searched_body,
    text_problem,
)
from .sentences import split_sentences


@dataclass(frozen=True)
class Sentence:
    """One sentence of a paragraph: ``text == paragraph.text[start:end]``."""
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class CitationMarker:
    """One in-text citation marker (``[3, 7]``, ``(Smith et al., 2020; Lee, 2019)``, ``Smith (2020)``).

    ``text == paragraph.text[start:end]``. ``keys`` are the cite keys written in it, in order;
    ``targets[k]`` is the reference ``target`` key ``k`` resolves to, None when it names no entry
    or an entry the reference file leaves out (no year, or superseded).
    """
    start: int
    end: int
    text: str
    sentence: int                       # index into ParagraphView.sentences
    keys: tuple[str, ...]
    targets: tuple[int | None, ...]

    @property
    def resolved(self) -> tuple[int, ...]:
        """The distinct targets of the marker, in key order."""
        return tuple(dict.fromkeys(t for t in self.targets if t is not None))


@dataclass
class ParagraphView:
    """One body paragraph (a Nougat text line) with its sentences and citation markers."""
    index: int                          # position among the searched body paragraphs
    section: str                        # "1 Introduction", "Appendix", "Abstract", ...
    text: str
    sentences: list[Sentence] = field(default_factory=list)
    citations: list[CitationMarker] = field(default_factory=list)

    @property
    def targets(self) -> set[int]:
        """Every reference target cited in the paragraph."""
        return {t for c in self.citations for t in c.resolved}


@dataclass(frozen=True)
class ReferenceHead:
    """What the view knows of a reference-file entry: enough to check it is the same list."""
    target: int
    title: str
    year: int


@dataclass
class PaperParagraphs:
    """The paragraph view of one paper; ``problem`` is set (and the rest empty) when it has none."""
    source_path: str
    title: str = ""
    abstract: str = ""
    style: str | None = None
    paragraphs: list[ParagraphView] = field(default_factory=list)
    references: list[ReferenceHead] = field(default_factory=list)
    failed_pages: int = 0
    bibliography_may_be_incomplete: bool = False
    problem: str | None = None          # failure mode: empty, too_long, garbage, no_references


def sentence_spans(text: str, sentences: list[str]) -> list[Sentence]:
    """Locate each sentence (a substring, as :func:`split_sentences` returns) in ``text``, in order."""
    out: list[Sentence] = []
    pos = 0
    for s in sentences:
        i = text.find(s, pos)
        if i < 0:
            raise ValueError(f"sentence not found in its paragraph: {s[:60]!r}")
        out.append(Sentence(s, i, i + len(s)))
        pos = i + len(s)
    return out


def group_markers(mentions: list[Mention], sentence: Sentence, sentence_index: int, paragraph: str,
                  targets: list[int | None]) -> list[CitationMarker]:
    """Mentions of one sentence -> markers (keys sharing a span form one marker), spans in ``paragraph``."""
    by_span: dict[tuple[int, int], list[Mention]] = {}
    for m in mentions:
        by_span.setdefault((m.start, m.end), []).append(m)
    out = []
    for (a, b), ms in sorted(by_span.items()):
        start, end = sentence.start + a, sentence.start + b
        out.append(CitationMarker(
            start=start, end=end, text=paragraph[start:end], sentence=sentence_index,
            keys=tuple(m.key for m in ms),
            targets=tuple(targets[m.entry] if m.entry is not None else None for m in ms)))
    return out


def paragraph_view(text: str, source_path: str = "") -> PaperParagraphs:
    """The paragraph view of a Nougat Markdown full text. Never raises on bad text: a text with
    no usable reference list comes back with ``problem`` set and no paragraphs."""
    out = PaperParagraphs(source_path=source_path)
    problem = text_problem(text)
    if problem is not None:
        out.problem = problem[0]
        return out
    doc = parse_document(text)
    out.title, out.abstract = doc.title, doc.abstract
    out.failed_pages = doc.failed_pages
    out.bibliography_may_be_incomplete = doc.bibliography_may_be_incomplete
    entries = reference_entries(doc)
    if not doc.has_reference_heading or not entries:
        out.problem = "no_references"
        return out
    body = searched_body(doc)
    style, _, _ = citation_style(entries, body)
    index = RefIndex(entries)
    targets = reference_targets(entries, index, style)
    out.style = style
    out.references = [ReferenceHead(t, e.title, e.year) for e, t in zip(entries, targets) if t is not None]

    cited: dict[int, tuple[list[str], dict[int, list[Mention]]]] = {}
    for pi, sents, si, ms in iter_cited_sentences(body, style, index):
        cited.setdefault(pi, (sents, {}))[1][si] = ms
    for pi, p in enumerate(body):
        sents, by_sentence = cited.get(pi) or (split_sentences(p.text), {})
        view = ParagraphView(index=pi, section=p.section, text=p.text,
                             sentences=sentence_spans(p.text, sents))
        for si, ms in sorted(by_sentence.items()):
            view.citations.extend(group_markers(ms, view.sentences[si], si, p.text, targets))
        out.paragraphs.append(view)
    return out
