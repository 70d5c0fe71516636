"""Every place a full text writes a name the field gives a cited work, with what stands around it.

A :class:`NameLexicon` holds the names (the key of :func:`~.names.name_key` -> the corpus papers and
works it stands for, each with the family of versions it belongs to). :func:`find_names` walks a
sentence's words once: from each word it extends a run of at most :data:`MAX_WORDS` words while the
joined key is a prefix of some name's key (a token trie over the keys), and keeps the longest run
that is a name ("Stable Diffusion", "CIFAR 10" as well as "CIFAR-10"). A word that is no name as a
whole may start with one: "SAGA-like", "PyTorch's", "Llama-2-7B" (then "Llama-2", then "Llama"). A
name written with capitals or digits ("CLIP") is only found where the text writes it with capitals
or digits too ("clip the gradients" names nothing), as in the audit.

:func:`paper_occurrences` (a pure function of one paper's full text, its reference list and the
lexicon) re-reads the Nougat Markdown exactly as the extraction does (the same reference entries,
targets and in-text citations), so each citation marker of a sentence resolves to the corpus paper
or work its reference links to, and gives one row per (occurrence, candidate work) with the
occurrence's form, place and neighbours and its labels: whether the paper cites the work (or a
version of it) right at the name, in the same clause, in the same sentence, and anywhere in its
reference list.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..citations import RefIndex, find_citations
from ..markdown import Paragraph, citation_style, parse_document, reference_entries, reference_targets
from ..mathspans import math_spans
from ..sections import ABSTRACT, APPENDIX, BACK_MATTER, CHECKLIST, REFERENCES
from ..sentences import split_sentences
from .names import HEADS, TOKEN, name_key

#: words a name may span
MAX_WORDS = 4
#: the sentence kept with each row, at most this many characters either side of the name
SENTENCE_WINDOW = 160

_VERSION_WORD = re.compile(r"v?\d+(?:\.\d+)*[a-z]?", re.I)
_SIZE_WORD = re.compile(r"\d+(?:\.\d+)?[BMKbmk]|(?:base|large|small|tiny|mini|medium|huge|giant|xl|xxl|"
                        r"pro|ultra|plus|lite|turbo|instruct|chat|max)", re.I)
_CLAUSE = re.compile(r"[;:]|\s[\u2014\u2013-]{1,2}\s|,\s+(?:but|while|whereas|which|although)\b")
#: what may stand between a name and a marker that cites it there: nothing, a head noun, "et al."
_ADJACENT = re.compile(r"^[\s~*_`\\]*(?:'s)?[\s~*_`\\]*(?:(?:\(?[A-Za-z0-9\-]+\)?)[\s~*_`\\]*){0,2}$")
_NEXT_WORD = re.compile(r"\s*([A-Za-z0-9][\w.\-]*)")
_PREV_WORD = re.compile(r"([A-Za-z][\w\-]*)[^\w]{0,12}$")
_SECTION_CLASSES = (("introduction", "intro"), ("related", "related"), ("background", "related"),
                    ("preliminar", "method"), ("method", "method"), ("approach", "method"), ("model", "method"),
                    ("experiment", "experiments"), ("evaluation", "experiments"), ("result", "experiments"),
                    ("setup", "experiments"), ("benchmark", "experiments"), ("conclusion", "conclusion"),
                    ("discussion", "conclusion"), ("limitation", "conclusion"), ("impact", "impact"))


# ---------------------------------------------------------------------------------- lexicon


@dataclass(frozen=True)
class Candidate:
    """A corpus paper or work a name stands for."""

    target: str            # corpus paper id or work id (w-...)
    family: str            # the id standing for all its versions
    name: str              # the commonest form citing papers write
    source: str            # "mined" (citing papers call it so) or "title" (its title starts with the name)
    support: int           # train papers that call it so (0 for a title name)
    kind: str              # "paper" (a corpus paper), or the work's kind ("dataset", "software", ...)
    surnames: frozenset[str] = frozenset()    # its authors' surnames, normalised


@dataclass
class NameLexicon:
    """The names, by key, with the families of versions the resolved references belong to."""

    entries: dict[str, list[Candidate]]
    family: dict[str, str] = field(default_factory=dict)      # id -> family id (absent: its own)
    prefixes: frozenset[str] = frozenset()
    cased: dict[str, bool] = field(default_factory=dict)      # the name needs capitals or digits in the text
    #: where a name written in lower case ("fairseq") may start; None when there is none
    plain_start: re.Pattern[str] | None = None
    #: every corpus paper and work the names stand for and their versions: id -> (its titles (the
    #: other titles a work is cited under after the first), year, identifier keys), what a new
    #: text's reference is linked with (:meth:`target_index`)
    records: dict[str, tuple[tuple[str, ...], int | None, tuple[str, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.prefixes:
            self.prefixes = frozenset(k[:i] for k in self.entries for i in range(1, len(k) + 1))
        for k, cands in self.entries.items():
            self.cased.setdefault(k, any(ch.isupper() or ch.isdigit() for c in cands for ch in c.name))
        firsts = sorted({TOKEN.match(c.name).group().lower() for k, cased in self.cased.items() if not cased
                         for c in self.entries[k] if TOKEN.match(c.name)})
        if firsts and self.plain_start is None:
            self.plain_start = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, firsts)) + r")(?![a-z])")

    def family_of(self, pid: str | None) -> str | None:
        return self.family.get(pid, pid) if pid else None

    def versions(self) -> dict[str, frozenset[str]]:
        """Per name key, the versions written after it that the lexicon holds as names of other
        works ("llama" -> {"2"}: Llama 2 is not LLaMA), computed once: a text writing the name
        with another version ("Llama 3") names neither."""
        got = self.__dict__.get("_versions")
        if got is None:
            fams = {k: {c.family for c in cs} for k, cs in self.entries.items()}
            out: dict[str, set[str]] = {}
            for k in self.entries:
                for m in _KEY_VERSION.finditer(k):
                    base = k[:m.start()]
                    if base in fams and not fams[base] & fams[k]:
                        out.setdefault(base, set()).add(k[m.start():])
            got = self.__dict__["_versions"] = {k: frozenset(v) for k, v in out.items()}
        return got

    def target_index(self):
        """A :class:`~mustcite.extract.link.TitleIndex` over :attr:`records` (title, the other
        titles it is cited under, identifiers): a reference of a new text is linked to the corpus
        paper or work it names as the extraction links references."""
        from ..link import TitleIndex

        recs = getattr(self, "records", None) or {}
        rows = [(i, t, year, keys) for i, (titles, year, keys) in recs.items() for t in dict.fromkeys(titles) if t]
        idx = TitleIndex.build([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
        by_key: dict[str, list[int]] = {}
        for n, (_, _, _, keys) in enumerate(rows):
            for k in keys:
                by_key.setdefault(k, []).append(n)
        idx.id_rows = {k: v[:1] for k, v in by_key.items()}
        return idx


# ---------------------------------------------------------------------------------- finding


@dataclass
class Hit:
    """One occurrence of a name in a sentence."""

    start: int
    end: int
    surface: str
    key: str
    words: int
    hyphen_rest: str = ""      # what follows the name inside its word ("-7B" of "Llama-2-7B", "-like")
    possessive: bool = False


def _cased_ok(lex: NameLexicon, key: str, surface: str) -> bool:
    return not lex.cased.get(key, False) or any(ch.isupper() or ch.isdigit() for ch in surface)


def _word_prefixes(word: str) -> list[tuple[int, str]]:
    """``(end, rest)`` of the names a hyphenated or possessive word may start with, longest first."""
    out = []
    if word[-2:].lower() == "'s":
        out.append((len(word) - 2, "'s"))
        word = word[:-2]
    cuts = [m.start() for m in re.finditer("-", word)]
    for c in reversed(cuts):
        out.append((c, word[c:]))
    return out


_KEY_DROP = str.maketrans("", "", "-+'.")
#: where a version may start at the end of a name key ("llama2", "gpt4o", "dinov2": one digit, a
#: "v" before it, a letter after it; "imagenet100" and "llama27b" are a subset and a size)
_KEY_VERSION = re.compile(r"(?=(?<=[a-z])v?\d[a-z]?$)")


def _token_key(tok: str) -> str:
    """:func:`~.names.name_key` of one :data:`~.names.TOKEN` (letters, digits, ``-+'.`` only)."""
    return tok.lower().translate(_KEY_DROP)


#: where a name may start: a word with a capital, a digit, a hyphen or an apostrophe
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z0-9+.]*[A-Z0-9\-'])[A-Za-z0-9]")
_GAP = re.compile(r"[ \-]*")


#: a version written right after a name: "-3", " 3", "-4o", "v2", "3.5" (a size such as "7B", a
#: subset such as "-100", is none)
_NEXT_VERSION = re.compile(r"[ \-]?(v?\d(?:\.\d+)?[a-zA-Z]?)(?![A-Za-z0-9])")
_SIZE_ONLY = re.compile(r"\d+(?:\.\d+)?[bmk]", re.I)


def _other_version(lex: NameLexicon, key: str, m: re.Match[str] | None) -> bool:
    """Whether the version after the name ``key`` (``m``) is one the lexicon does not hold while it
    holds other versions of the name as other works ("Llama 3" when it knows LLaMA and Llama 2)."""
    if m is None or _SIZE_ONLY.fullmatch(m.group(1)):
        return False
    known = lex.versions().get(key)
    return bool(known) and _token_key(m.group(1)) not in known


def find_names(text: str, lex: NameLexicon) -> list[Hit]:
    """Every occurrence of a lexicon name in ``text``, longest first where runs overlap.

    A run starts only at a word written with a capital, a digit, a hyphen or an apostrophe, or at
    one that starts a name written in lower case ("fairseq"), which leaves most words untouched."""
    prefixes, entries = lex.prefixes, lex.entries
    starts = [m.start() for m in _CANDIDATE.finditer(text)]
    if lex.plain_start is not None:
        starts = sorted(set(starts) | {m.start() for m in lex.plain_start.finditer(text)})
    out: list[Hit] = []
    done = 0
    for pos in starts:
        if pos < done or (pos >= 2 and text[pos - 1] in "-+'." and text[pos - 2].isalnum()):
            continue                                  # inside a word or a name already found
        first = TOKEN.match(text, pos)
        if first is None:
            continue
        word = first.group()
        hyphenated = "-" in word or "'" in word
        best = None
        acc = ""
        tok, words = first, 0
        while tok is not None and words < MAX_WORDS:
            acc += _token_key(tok.group())
            words += 1
            if acc not in prefixes:
                break
            if acc in entries and _cased_ok(lex, acc, text[pos:tok.end()]):
                best = (tok.end(), acc, words)
            if len(tok.group()) < 2:
                break                                 # "S D" is no "SD"
            gap = _GAP.match(text, tok.end())
            tok = TOKEN.match(text, gap.end()) if gap.end() > tok.end() else None
        if best is not None:
            end, key, w = best
            surface = text[pos:end]
            if not _other_version(lex, key, _NEXT_VERSION.match(text, end)):
                out.append(Hit(pos, end, surface, key, w, possessive=surface.lower().endswith("'s")))
            done = end
            continue
        if hyphenated:
            for end, rest in _word_prefixes(word):
                key = _token_key(word[:end])
                if key in entries and _cased_ok(lex, key, word[:end]):
                    if not _other_version(lex, key, _NEXT_VERSION.match(rest)):
                        out.append(Hit(pos, pos + end, word[:end], key, 1, hyphen_rest=rest if rest != "'s" else "",
                                       possessive=rest == "'s"))
                    break
        done = first.end()
    return out


# ---------------------------------------------------------------------------------- per paper


@dataclass
class PaperInput:
    """What :func:`paper_occurrences` needs of one paper."""

    paper: str
    text_path: str
    year: int | None
    split: str                          # "train" or "held_out"
    #: per reference (by target, 1-based): the corpus paper or work it resolves to, or None
    resolved: dict[int, str | None]
    #: per reference: the name key of its title (letters and digits), to tell a marker that cites a
    #: paper of that name apart
    title_keys: dict[int, str] = field(default_factory=dict)


@dataclass
class PaperOccurrences:
    paper: str
    status: str                          # "ok", or why the paper gave no rows
    rows: list[dict[str, Any]]
    sentences: int = 0


def section_class(section: str, kind: str) -> str:
    """A coarse class of a section label: abstract, intro, related, method, experiments,
    conclusion, impact, appendix, back_matter, checklist, references, title, front, other."""
    if kind in ("checklist", "front"):
        return kind
    fixed = {ABSTRACT: "abstract", APPENDIX: "appendix", BACK_MATTER: "back_matter", CHECKLIST: "checklist",
             REFERENCES: "references", "Title": "title", "": "front"}
    if section in fixed:
        return fixed[section]
    low = section.lower()
    return next((c for w, c in _SECTION_CLASSES if w in low), "other")


def _units(doc, title: str) -> list[tuple[Paragraph, bool]]:
    """The text units to search, in order: the title, the body paragraphs, then the skipped lines
    (tables, captions, the checklist, the author block), each with whether it is body prose."""
    out: list[tuple[Paragraph, bool]] = []
    if title:
        out.append((Paragraph("Title", title, False, "title"), False))
    out += [(p, True) for p in doc.paragraphs]
    out += [(p, False) for p in doc.skipped if p.kind != "math"]
    return out


def _by_sentence(text: str, hits: list[Hit], split: bool) -> list[tuple[str, list[Hit]]]:
    """The sentences of ``text`` (one when not ``split``), each with the hits inside it, their
    offsets made relative to the sentence."""
    sents = split_sentences(text) if split else [text]
    out: list[tuple[str, list[Hit]]] = []
    pos, k = 0, 0
    for sent in sents:
        a = text.find(sent, pos)
        if a < 0:                           # split_sentences keeps the text as is; never expected
            a = pos
        b = a + len(sent)
        pos = b
        inside = []
        while k < len(hits) and hits[k].start < b:
            h = hits[k]
            if h.start >= a and h.end <= b:
                inside.append(Hit(h.start - a, h.end - a, h.surface, h.key, h.words, h.hyphen_rest, h.possessive))
            k += 1
        out.append((sent, inside))
    return out


def _initials_spell(before: str, acronym: str) -> bool:
    """Whether the words right before ``(ACRONYM)`` start with its letters ("true positive rate (TPR)")."""
    letters = [c.lower() for c in acronym if c.isalpha()]
    if len(letters) < 2:
        return False
    words = re.findall(r"[A-Za-z][A-Za-z\-]*", before)[-(len(letters) + 3):]
    initials = "".join(w[0].lower() for part in words for w in part.split("-") if w)
    return "".join(letters) in initials


def paper_occurrences(inp: PaperInput, lex: NameLexicon) -> PaperOccurrences:
    """The rows of one paper (see the module doc); a paper whose re-read reference list does not
    match its reference file gives none (status says why)."""
    try:
        text = read_fulltext(inp.text_path)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        return PaperOccurrences(inp.paper, f"unreadable: {exc}", [])
    doc = parse_document(text, keep_skipped=True)
    entries = reference_entries(doc)
    if not entries:
        return PaperOccurrences(inp.paper, "no reference entries", [])
    style, _, _ = citation_style(entries, doc.paragraphs if doc.n_reference_sections <= 1
                                 else [p for p in doc.paragraphs if not p.after_references])
    index = RefIndex(entries)
    targets = reference_targets(entries, index, style)
    kept = [t for t in targets if t is not None]
    if len(kept) != len(inp.resolved):
        return PaperOccurrences(inp.paper, f"reference list differs ({len(kept)} entries, "
                                           f"{len(inp.resolved)} in the reference file)", [])
    cited_families = {lex.family_of(r) for r in inp.resolved.values() if r}
    front = " ".join(p.text for p in doc.skipped if p.kind == "front")
    units: list[TextUnit] = []
    for unit, body in _units(doc, doc.title):
        searched = body and not (doc.n_reference_sections > 1 and unit.after_references)
        unit_hits = find_names(unit.text, lex)
        if not unit_hits:
            continue
        sents: list[TextSentence] = []
        for si, (sent, hits) in enumerate(_by_sentence(unit.text, unit_hits, unit.kind in ("text", "title"))):
            if not hits:
                continue
            markers: list[Marker] = []
            if searched or unit.kind in ("table", "caption", "checklist"):
                groups: dict[tuple[int, int], list[int]] = {}
                for m in find_citations(sent, style, index):
                    if m.entry is not None and targets[m.entry] is not None:
                        groups.setdefault((m.start, m.end), []).append(targets[m.entry])
                    else:
                        groups.setdefault((m.start, m.end), [])
                markers = [(a, b, [(inp.resolved.get(t), inp.title_keys.get(t, "")) for t in ts])
                           for (a, b), ts in sorted(groups.items())]
            sents.append(TextSentence(sent, si, markers, hits))
        units.append(TextUnit(unit.section, unit.kind, sents))
    rows = text_rows(TextOf(inp.paper, inp.year, inp.split), units, lex, cited_families, front)
    return PaperOccurrences(inp.paper, "ok", rows, sum(len(u.sentences) for u in units))


#: a citation marker of a sentence: (start, end, [(the corpus paper or work its reference resolves
#: to or None, the name key of the reference's title)])
Marker = tuple[int, int, list[tuple[str | None, str]]]


@dataclass
class TextSentence:
    """A sentence of a text, with its citation markers and the names found in it (offsets in it)."""

    text: str
    index: int                     # its place in its unit
    markers: list[Marker]
    hits: list[Hit] | None = None  # None: found by :func:`text_rows`


@dataclass
class TextUnit:
    """A unit of a text (a paragraph, the title, a table, a caption ...) as its sentences."""

    section: str
    kind: str                      # "text", "title", "table", "caption", "footnote", "checklist", "front"
    sentences: list[TextSentence]


@dataclass(frozen=True)
class TextOf:
    paper: str
    year: int | None
    split: str


def text_rows(text: TextOf, units: list[TextUnit], lex: NameLexicon, cited_families: set[str | None],
              front: str = "") -> list[dict[str, Any]]:
    """The mention rows of a text read as units of sentences: a full text (:func:`paper_occurrences`)
    or a draft the audit reads, with the same features. ``cited_families``: the families of every
    work its reference list cites; ``front``: its author block (a name there is an author's)."""
    front_keys = {name_key(m.group()) for m in TOKEN.finditer(front)}
    rows: list[dict[str, Any]] = []
    for unit in units:
        sclass = section_class(unit.section, unit.kind)
        for ts in unit.sentences:
            sent = ts.text
            hits = find_names(sent, lex) if ts.hits is None else ts.hits
            if not hits:
                continue
            maths = math_spans(sent) if "\\" in sent or "$" in sent else []
            clause_cuts = [0, *[m.end() for m in _CLAUSE.finditer(sent)], len(sent) + 1]
            for h in hits:
                rows += _rows_of(text, lex, h, sent, ts.index, unit, sclass, ts.markers, maths, clause_cuts, hits,
                                 cited_families, front_keys)
    return rows


def is_adjacent(sent: str, start: int, end: int, a: int, b: int) -> bool:
    """Whether the citation marker ``sent[a:b]`` stands right at the name ``sent[start:end]``: after
    it with at most two words or "et al." between, or right before it ("[12] ImageNet")."""
    return (a >= end and _ADJACENT.match(sent[end:a]) is not None) or (b <= start and not sent[b:start].strip())


def _rows_of(inp: TextOf, lex: NameLexicon, h: Hit, sent: str, si: int, unit: TextUnit, sclass: str,
             markers: list[Marker], maths: list[tuple[int, int]], cuts: list[int],
             hits: list[Hit], cited_families: set[str | None], front_keys: set[str]) -> list[dict[str, Any]]:
    after = sent[h.end:]
    before = sent[:h.start]
    nxt = _NEXT_WORD.match(after)
    next_word = nxt.group(1) if nxt and not h.hyphen_rest else ""
    prv = _PREV_WORD.search(before[-80:])
    prev_word = prv.group(1) if prv else ""
    rest = h.hyphen_rest.lstrip("-")
    version_suffix = bool(_VERSION_WORD.fullmatch(rest.split("-")[0])) if rest else \
        bool(next_word and _VERSION_WORD.fullmatch(next_word))
    size_suffix = bool(_SIZE_WORD.fullmatch(rest.split("-")[-1])) if rest else \
        bool(next_word and _SIZE_WORD.fullmatch(next_word))
    letters = re.sub(r"[^A-Za-z]", "", h.surface)
    in_parens = before.rstrip().endswith("(") and after.lstrip().startswith(")")
    clause = next(((a, b) for a, b in zip(cuts, cuts[1:]) if a <= h.start < b), (0, len(sent)))
    adjacent, in_clause, in_sentence = [], [], []
    for a, b, ts in markers:
        in_sentence.append(ts)
        if clause[0] <= a < clause[1]:
            in_clause.append(ts)
        if is_adjacent(sent, h.start, h.end, a, b):
            adjacent.append(ts)
    # the works cited right at the name or in its clause (what the field cites for the name, counted over papers)
    clause_families = sorted({f for ts in adjacent + in_clause for t, _ in ts if (f := lex.family_of(t))})
    neighbours = [o for o in hits if o is not h]
    close = [o for o in neighbours if 0 <= h.start - o.end <= 12 or 0 <= o.start - h.end <= 12]
    base = {
        "paper": inp.paper, "year": inp.year, "split": inp.split,
        "section": unit.section[:80], "section_class": sclass, "unit": unit.kind, "sentence_index": si,
        "sentence": sent[max(0, h.start - SENTENCE_WINDOW):h.end + SENTENCE_WINDOW],
        "offset": h.start, "surface": h.surface, "key": h.key, "words": h.words,
        "all_caps": bool(letters) and letters.isupper() and len(letters) >= 2,
        "has_digit": any(c.isdigit() for c in h.surface),
        "inner_caps": any(c.isupper() for c in h.surface[1:]) and not letters.isupper(),
        "capitalised": h.surface[:1].isupper(), "lower": h.surface == h.surface.lower(),
        "possessive": h.possessive, "hyphen_part": bool(h.hyphen_rest), "hyphen_rest": h.hyphen_rest[:20],
        "version_suffix": version_suffix, "size_suffix": size_suffix,
        "in_parens": in_parens, "spelled_out": in_parens and _initials_spell(before[:-1], h.surface),
        "in_math": any(a <= h.start < b for a, b in maths),
        "sentence_start": not before.strip(" *_#"), "prev_word": prev_word[:30], "next_word": next_word[:30],
        "next_head": next_word.lower() in HEADS, "next_et_al": next_word == "et",
        "in_front_matter": h.key in front_keys,
        "names_in_sentence": len(neighbours), "names_close": len(close),
        "markers_sentence": len(in_sentence), "markers_clause": len(in_clause), "markers_adjacent": len(adjacent),
        "clause_families": clause_families,
    }
    out = []
    cands = lex.entries[h.key]
    for c in cands:
        fam = c.family

        def cites(groups: list[list[int]], fam: str = fam) -> bool:
            return any(lex.family_of(t) == fam for ts in groups for t, _ in ts)

        def other(groups: list[list[int]], fam: str = fam) -> bool:
            return any(ts and not cites([ts], fam) for ts in groups)

        titled = any(h.key and h.key in tk for ts in adjacent for _, tk in ts)
        out.append({**base, "target": c.target, "family": fam, "target_kind": c.kind, "name_source": c.source,
                    "support": c.support, "candidates": len(cands),
                    "author_surname": h.key in c.surnames,
                    "other_adjacent": other(adjacent), "other_clause": other(in_clause),
                    "adjacent_title_has_name": titled and not cites(adjacent),
                    "cited_adjacent": cites(adjacent), "cited_clause": cites(in_clause),
                    "cited_sentence": cites(in_sentence), "cited_paper": fam in cited_families})
    return out


def read_fulltext(path: str | Path) -> str:
    """A full text, gzipped or not."""
    p = str(path)
    with gzip.open(p, "rt", encoding="utf-8") if p.endswith(".gz") else open(p, encoding="utf-8") as fh:
        return fh.read()
