"""What an audit tells a draft: findings, each with its evidence, where it is, and a calibrated
confidence (the probability that a careful reviewer would call it a genuine omission).

Kinds, strongest first:

* ``placeholder``: a citation left to do: ``[ref]``, ``[?]``, ``[citation needed]``, an empty
  ``\\cite{}``;
* ``undefined_key``: a ``\\cite`` key that no ``.bib``/``.bbl`` entry defines ("add a .bib entry
  for dalle2"): the draft cites the work, its bibliography lacks the entry;
* ``bib_not_cited``: an entry of the draft's own bibliography that no citation uses, while the text
  names the work;
* ``named_not_cited``: a work the text uses by name (a dataset, benchmark, model, method or
  software, named as citing papers name it or as its title starts) with no citation next to the
  name and no version of it in the bibliography;
* ``likely_missing``: a paper the closest papers cite and compare against that the draft does not
  cite, and whose name or title words the draft's text uses.

Whether a word is a work's name, which work it means and whether the field cites it there is
decided by the mention models learned from the field's full texts (:mod:`.draft_mentions`); their
calibrated probability is the confidence of ``named_not_cited`` and ``bib_not_cited``. What stays
here is the structural reading of a draft: its sentences and their citations, where a text is in
the sources, the names a draft gives its own contributions (:func:`own_names`), placeholders,
cross-references left to do and undefined keys. :func:`named_candidates` gives the recommender the
pool papers a draft's text names (a signal of its ranking, not a finding).

Confidence of the other kinds: a logistic model over each finding's features (:data:`FEATURES`), fit
on the real development drafts with :func:`fit_calibration` and shipped as
``finding_calibration.json``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..corpus.records import normalize_title, title_short_name
from ..extract.latex.includes import blank_comments
from ..extract.latex.macros import defining_macro, first_use
from ..extract.latex.verbatim import blank_verbatim
from ..extract.sentences import split_sentences
from ..extract.works import name_key

KINDS = ("placeholder", "undefined_key", "bib_not_cited", "named_not_cited", "likely_missing")
#: the features the confidence is computed from, in the calibration's order
FEATURES = ("kind_placeholder", "kind_undefined_key", "kind_bib_not_cited", "kind_named", "kind_likely",
            "log_support", "from_title", "log_occurrences", "use_verb", "experiment_section", "cite_in_sentence",
            "ambiguous", "recommender_logit", "acronym", "log_age", "title_overlap", "coupling", "cite_next_other",
            "in_longer_name", "with_scores", "cites_for_others", "in_heading", "name_share")
CALIBRATION_FILE = Path(__file__).with_name("finding_calibration.json")

#: sections about the paper rather than its work (headings): a name there is no use of a work
_ABOUT = re.compile(r"^(?:back matter|checklist)$|acknowledg|funding|impact statement|broader impact", re.I)
_OWN = re.compile(r"\b(?:we|this (?:paper|work))\s+(?:propose|introduce|present|call|dub|term|name|develop|design)"
                  r"\w*\s+(?:a |an |the )?(?:new |novel )?(?:\w+\s+){0,4}?(?:called |named |dubbed |termed )?"
                  r"([A-Z][A-Za-z0-9-]{1,20})", re.I)
_PLACEHOLDER = re.compile(r"\[\s*(?:ref|refs|reference|citation needed|cite|citation|\?+)\s*\]|"
                          r"\\(?:cite[tp]?|autocite|parencite|textcite)\*?\s*\{\s*\}", re.I)
_STOP = frozenset("a an and the of for in on to with from by via at as is are its our we using towards toward "
                  "through into over under".split())


@dataclass
class Location:
    """Where a finding is: the file and line when the text could be found in the sources, the
    section and the sentence."""

    file: str | None = None
    line: int | None = None
    section: str | None = None
    quote: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "section": self.section, "quote": self.quote}

    def where(self) -> str:
        if self.file:
            return f"{self.file}:{self.line}" if self.line else self.file
        return self.section or ""


@dataclass
class Finding:
    """One thing the audit tells the draft (see the module doc)."""

    kind: str
    message: str
    features: dict[str, float]
    location: Location = field(default_factory=Location)
    paper_id: str | None = None       # the pool paper or work, when the finding is about one
    name: str | None = None           # the name the text uses
    key: str | None = None            # the citation key, for placeholders, undefined keys and .bib entries
    confidence: float = 0.0
    row: int | None = None            # the pool row of ``paper_id``

    def to_dict(self) -> dict[str, Any]:
        return {"finding": self.kind, "confidence": round(self.confidence, 4), "message": self.message,
                "location": self.location.to_dict(), "paper_id": self.paper_id, "name": self.name, "key": self.key,
                "features": {k: round(v, 4) for k, v in self.features.items()}}


# ---- reading the draft's text ---------------------------------------------------------------------

@dataclass
class Sentence:
    text: str
    section: str
    start: int                        # offset in its passage's text
    cites: list[tuple[int, list[str]]]   # (offset in the sentence, keys)
    heading: bool = False             # a heading's text ("\\paragraph{METEOR.}")


def sentences(passages: list[dict[str, Any]]) -> list[Sentence]:
    """The body's sentences with the citations each holds (offsets within the sentence)."""
    out: list[Sentence] = []
    for p in passages:
        text = p.get("text") or ""
        cites = sorted(p.get("cites") or [], key=lambda c: c[0])     # by offset, in order of writing
        offsets = [off for off, _ in cites]
        at = 0
        for s in split_sentences(text):
            # the sentence where the splitter left it: looked for close by only (a sentence it rewrote
            # is not searched for to the end of a long passage, once per sentence)
            i = text.find(s, at, at + len(s) + _FIND_SLACK)
            i = at if i < 0 else i
            end = i + len(s)
            a, b = bisect_left(offsets, i), bisect_right(offsets, end + 1)
            out.append(Sentence(s, p.get("section") or "", i, [(off - i, keys) for off, keys in cites[a:b]],
                                bool(p.get("heading"))))
            at = end
    return out


#: how far past the previous sentence the next one is looked for in its passage
_FIND_SLACK = 2000


@lru_cache(maxsize=256)
def _code(text: str) -> str:
    """``text`` with every LaTeX comment and verbatim block (``\\verb|...|``, ``\\lstinline``,
    ``verbatim``, ``lstlisting`` ...) blanked in place (offsets and lines kept, so offsets give line
    numbers)."""
    return blank_comments(blank_verbatim(text))


def locate(sources: dict[str, str], needle: str) -> tuple[str | None, int | None]:
    """The first file and line (outside comments and verbatim) whose text holds ``needle`` (its words
    in order, any spacing or markup between them), in reading order. Words written only in the body of
    a macro's definition (``\\newcommand{\\method}{DataComp}``) are where the macro is used: the first
    use of ``\\method`` then, unless the words are written out earlier."""
    words = [re.escape(w) for w in re.findall(r"[A-Za-z0-9]+", needle)]
    if not words:
        return None, None
    pattern = re.compile(r"(?<![A-Za-z0-9])" + r"[^A-Za-z0-9\n]{0,6}".join(words) + r"(?![A-Za-z0-9])")
    order = {rel: i for i, rel in enumerate(sources)}
    use: tuple[str, int] | None = None          # the first use of a macro whose body holds the words
    for rel, text in sources.items():
        if use is not None and order[use[0]] < order[rel]:
            return use
        code = _code(text)
        for m in pattern.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            if use is not None and use[0] == rel and use[1] <= line:
                return use
            name = defining_macro(code, m.start())
            if name is None:
                return rel, line
            if use is None:
                use = first_use(sources, name)
                if use is not None and (order[use[0]], use[1]) <= (order[rel], line):
                    return use
    return use if use is not None else (None, None)


def _quote(sentence: str, start: int, end: int, width: int = 220) -> str:
    if len(sentence) <= width:
        return sentence.strip()
    a = max(0, min(start - width // 2, len(sentence) - width))
    return ("..." if a else "") + sentence[a:a + width].strip() + ("..." if a + width < len(sentence) else "")


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", (text or "").lower()) if w not in _STOP and len(w) > 1}


def own_names(title: str, text: str) -> set[str]:
    """Name keys the draft gives its own contributions: its title's name and the names it says it
    proposes ("we propose MAGNET", "our method, X")."""
    own = {name_key(title_short_name(title))} if title_short_name(title) else set()
    text = re.sub(r"(?<!\w)[_*]+|[_*]+(?!\w)", " ", text)    # Markdown emphasis: "we propose _VATT_"
    for m in _OWN.finditer(text):
        own.add(name_key(m.group(1)))
    short = title_short_name(title)
    if short:       # a plain word right after the title's name names a part of it ("AutoLibra Ladder")
        for m in re.finditer(rf"(?<![\w-]){re.escape(short)}\s+([A-Z][a-z]+)\b(?!-)", text, re.I):
            if m.group(1)[0].isupper() and m.group(1)[1:].islower():
                own.add(name_key(m.group(1)))
    for m in re.finditer(r"\b([A-Z][A-Za-z0-9-]{1,20})\s*\((?:ours|our method|this work)\)", text):
        own.add(name_key(m.group(1)))
    return {k for k in own if len(k) >= 2}


# ---- confidence -----------------------------------------------------------------------------------

@lru_cache(maxsize=4)
def load_calibration(path: str = str(CALIBRATION_FILE)) -> dict[str, Any]:
    """The shipped calibration: ``{"features", "coef", "intercept", "threshold", ...}``."""
    return json.loads(Path(path).read_text())


def confidence(features: dict[str, float], calibration: dict[str, Any]) -> float:
    x = np.array([features.get(f, 0.0) for f in calibration["features"]], dtype=np.float64)
    z = float(x @ np.asarray(calibration["coef"], dtype=np.float64) + calibration["intercept"])
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def fit_calibration(rows: list[dict[str, float]], labels: list[int], *, c: float = 1.0) -> dict[str, Any]:
    """A logistic model of ``labels`` (1: a genuine omission) on the findings' ``rows`` of features."""
    LogisticRegression = lazy_libs.sklearn_linear_model().LogisticRegression
    X = np.array([[r.get(f, 0.0) for f in FEATURES] for r in rows], dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    lr = LogisticRegression(C=c, max_iter=2000).fit(X, y)
    return {"features": list(FEATURES), "coef": [round(float(v), 6) for v in lr.coef_[0]],
            "intercept": round(float(lr.intercept_[0]), 6), "n": int(len(y)), "positives": int(y.sum())}


def kind_features(kind: str) -> dict[str, float]:
    col = {"placeholder": "kind_placeholder", "undefined_key": "kind_undefined_key",
           "bib_not_cited": "kind_bib_not_cited", "named_not_cited": "kind_named", "likely_missing": "kind_likely"}
    return {col[kind]: 1.0}


def same_work_keys(refs: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(normalised titles, name keys) of the draft's references: what it cites, in any version."""
    titles, names = set(), set()
    for r in refs:
        t = r.get("title") or ""
        if t:
            titles.add(normalize_title(t))
            short = title_short_name(t)
            if short:
                names.add(name_key(short))
    return titles, names


#: what may follow a name in a hyphenated word and leave it the same work: a version or size
#: ("ImageNet-21K", "GPT-4", "Llama-2") or one letter
_VERSION_AFTER = re.compile(r"-(?:v?\d|[A-Za-z](?![A-Za-z]))", re.I)


def title_starts_with(title: str, key: str) -> bool:
    """Whether ``title``'s first words spell the name key ``key`` ("ImageNet Large Scale ..." for
    "imagenet"); not when the name only starts a longer hyphenated word that is another name
    ("pytorch-cifar-models", "BERT-based ...")."""
    acc = ""
    for m in list(re.finditer(r"[A-Za-z0-9]+", title or ""))[:4]:
        acc += m.group(0).lower()
        if acc == key:
            rest = (title or "")[m.end():]
            return not (re.match(r"-[A-Za-z0-9]", rest) and not _VERSION_AFTER.match(rest))
        if not key.startswith(acc):
            return False
    return False


@dataclass
class Candidate:
    """A pool paper or work the draft's text names, with every place it does."""

    row: int
    name: str
    support: int
    from_title: bool
    ambiguous: int                                  # pool entries the name stands for
    places: list[tuple[Sentence, int, int]] = field(default_factory=list)   # (sentence, start, end)


def _title_name_key(title: str) -> str:
    """A title's name as a key that keeps letters beyond ASCII ("SOTOPIA-π" -> "sotopiaπ"; accents
    folded)."""
    folded = unicodedata.normalize("NFKD", title_short_name(title))
    return re.sub(r"[\W_]", "", "".join(ch for ch in folded if not unicodedata.combining(ch)))


def _by_citing_papers(hits: dict, surface: str, titles=None) -> dict:
    """The entries a name at one place stands for: what citing papers call so, when they call any
    entry so (a title that merely starts with the word, "Transformer: Feedback attention ...", is then
    not meant); else the titles whose name it is ("SOTOPIA-π" is not "Sotopia")."""
    if not any(h.support > 0 for h in hits.values()):
        if titles is None:
            return hits
        key = name_key(surface)
        return {r: h for r, h in hits.items() if _title_name_key(titles[r] or "") in ("", key)}
    hits = {r: h for r, h in hits.items() if h.support > 0}
    if titles is not None and len(hits) > 1:
        # of the entries citing papers call so, a title that writes its name exactly as the text does
        # is the one meant ("SuperGLUE: A Stickier Benchmark ...", not "SuperGlue: Learning Feature ...")
        exact = {r: h for r, h in hits.items() if _as_title_writes_it(surface, titles[r] or "")}
        if exact:
            hits = exact
    return hits


def _works(titles: list[str]) -> int:
    """How many works the records ``titles`` are: one title that starts as another ends is the same
    work ("UMAP: Uniform Manifold Approximation and Projection" and "... for Dimension Reduction")."""
    seen: list[str] = []
    for t in sorted({normalize_title(t) for t in titles}, key=len):
        if not any(t == s or t.startswith(s + " ") for s in seen if len(s.split()) >= 3):
            seen.append(t)
    return len(seen)


class _Spans:
    """Spans taken in a sentence, asked whether a span lies inside another one (a Fenwick tree of
    the largest end by start: each question and each span added costs a logarithm, not a scan)."""

    def __init__(self, starts):
        self.pos = sorted(set(starts))
        self.tree = [-1] * (len(self.pos) + 1)
        self.same: dict[int, int] = {}          # start -> the largest end of a span taken from it

    def add(self, start: int, end: int) -> None:
        self.same[start] = max(self.same.get(start, -1), end)
        k = bisect_left(self.pos, start) + 1
        while k < len(self.tree):
            self.tree[k] = max(self.tree[k], end)
            k += k & -k

    def inside_another(self, start: int, end: int) -> bool:
        """Whether a span taken, other than ``(start, end)`` itself, holds ``start..end``."""
        if self.same.get(start, -1) > end:
            return True
        k, best = bisect_left(self.pos, start), -1      # spans starting before ``start``
        while k > 0:
            best = max(best, self.tree[k])
            k -= k & -k
        return best >= end


def named_candidates(names, sents: list[Sentence], year: int, pool_years: np.ndarray,
                     titles=None) -> dict[int, Candidate]:
    """The pool entries the sentences name, longest name first: a name inside a longer one that
    names something else ("Stable Diffusion" in "Stable Diffusion XL") does not count."""
    out: dict[int, Candidate] = {}
    for sent in sents:
        occ = list(names.occurrences(sent.text, year, pool_years))
        occ.sort(key=lambda o: (-(o[1] - o[0]), o[0]))
        taken = _Spans(o[0] for o in occ)
        for start, end, surface, hits in occ:
            if taken.inside_another(start, end):
                continue
            hits = _by_citing_papers(hits, surface, titles)
            if not hits:
                continue
            taken.add(start, end)
            # records of one work are one candidate work, not a choice
            works = _works([titles[r] or "" for r in hits]) if titles is not None else len(hits)
            for r, hit in hits.items():
                c = out.setdefault(r, Candidate(r, surface, hit.support, hit.from_title, works))
                c.support = max(c.support, hit.support)
                c.from_title = c.from_title or hit.from_title
                c.ambiguous = min(c.ambiguous, works)
                c.places.append((sent, start, end))
    return out


def placeholder_findings(sources: dict[str, str]) -> list[Finding]:
    """``[ref]``, ``[?]``, ``[citation needed]`` and empty citation commands in the sources; not a
    placeholder right after "Appendix", "Table", "Figure", "Section", "Eq." ... ("see Appendix [ref]"):
    that is a cross-reference left to do (:func:`crossref_notes`), not a citation."""
    out: list[Finding] = []
    for rel, text in sources.items():
        for n, line in enumerate(_code(text).split("\n"), 1):
            code = line
            for m in _PLACEHOLDER.finditer(code):
                if m.group(0).startswith("[") and m.start() > 0 and code[m.start() - 1] in "\\]}":
                    continue            # "\\[2pt]", an optional argument after a command
                if m.group(0).startswith("[") and _XREF_BEFORE.search(code, max(0, m.start() - 40), m.start()):
                    continue            # "Appendix [ref]": a cross-reference
                what = m.group(0).strip()
                out.append(Finding("placeholder", f"a citation is still to be added here: '{what}'",
                                   kind_features("placeholder"), Location(rel, n, None, _quote(code.strip(), 0, 0)),
                                   key=what))
    return out


#: the word a cross-reference follows: "Appendix", "Table 2" is a reference to a part of the draft
_XREF_WORDS = (r"(?:Appendix|Appendices|App\.|Tables?|Tab\.|Figures?|Figs?\.|Sections?|Sec\.|Secs\.|§|Equations?|"
               r"Eqs?\.|Eqn\.|Algorithms?|Alg\.|Theorems?|Thm\.|Lemmas?|Corollary|Proposition|Prop\.|Definition|"
               r"Def\.|Chapter|Listing|Line|Remark|Assumption|Example)")
_XREF_GAP = r"(?:[\s~]|\\[ ,;])*"           # spaces, ties and spacing commands ("Eq.\\ [?]")
_XREF_BEFORE = re.compile(r"(?<![A-Za-z])" + _XREF_WORDS + _XREF_GAP + r"(?:\(\s*)?$", re.I)
#: a cross-reference left unresolved in text: "Appendix [?]", "Table [ref]", "Section ??", "Eq. (??)"
_XREF_TEXT = re.compile(r"(?<![A-Za-z])" + _XREF_WORDS + _XREF_GAP
                        + r"(?:\[\s*(?:\?+|ref|reference)\s*\]|\(\s*\?\?+\s*\)|\?\?+)", re.I)
_REF_CMD = re.compile(r"\\(?:ref|eqref|cref|Cref|autoref|Autoref|pageref|nameref|vref|Vref|labelcref|cpageref)\*?"
                      r"\s*\{([^{}]{0,500})\}")
_LABEL = re.compile(r"\\label\s*(?:\[[^\]]{0,100}\])?\s*\{([^{}]{0,500})\}|\blabel\s*=\s*\{?([^,\]{}\s]+)")
#: cross-reference notes listed one by one, at most; then one count
MAX_CROSSREF_NOTES = 20


def crossref_notes(sources: dict[str, str]) -> list[str]:
    """Cross-references left unresolved in LaTeX sources, one note each (file:line): a placeholder
    after "Appendix", "Table", "Section" ... ("see Appendix [ref]", "Section ??"), an empty ``\\ref{}``,
    and a ``\\ref`` (``\\cref``, ``\\eqref`` ...) to a label no ``\\label`` defines (not told when the
    project reads labels of another document, ``\\externaldocument``). None of them is a citation."""
    codes = {rel: _code(text) for rel, text in sources.items()}
    labels = {(a or b).strip() for code in codes.values() for a, b in _LABEL.findall(code)}
    labels |= {(a or b).strip() for text in sources.values() for a, b in _LABEL.findall(text)}   # listings' label=
    external = any("\\externaldocument" in code for code in codes.values())
    out: list[str] = []
    for rel, code in codes.items():
        for n, line in enumerate(code.split("\n"), 1):
            for m in _XREF_TEXT.finditer(line):
                out.append(f"{rel}:{n}: unresolved cross-reference '{' '.join(m.group(0).split())}': a reference to a "
                           "part of the draft still to be filled in, not a missing citation")
            for m in _REF_CMD.finditer(line):
                keys = [k.strip() for k in m.group(1).split(",")]
                if any("#" in k or "\\" in k for k in keys):
                    continue            # a macro's parameter: its uses are read where they are
                bad = [k for k in keys if not k] if external else [k for k in keys if not k or k not in labels]
                if bad:
                    what = "an empty reference" if not any(bad) else f"no \\label{{{', '.join(k for k in bad if k)}}}"
                    out.append(f"{rel}:{n}: unresolved cross-reference '{m.group(0)}' ({what} in the project): "
                               "it prints '??', not a missing citation")
    return _capped(out)


def crossref_notes_text(texts: list[str]) -> list[str]:
    """Cross-references left unresolved in a draft's plain text ("see Appendix [?]", "Table ??"),
    one note each, for a draft read from Markdown or a PDF."""
    out = []
    for text in dict.fromkeys(texts):
        for m in _XREF_TEXT.finditer(text):
            out.append(f"unresolved cross-reference '{' '.join(m.group(0).split())}' "
                       f"(\"{_quote(text, m.start(), m.end(), 120)}\"): not a missing citation")
    return _capped(list(dict.fromkeys(out)))


def _capped(notes: list[str]) -> list[str]:
    if len(notes) <= MAX_CROSSREF_NOTES:
        return notes
    return notes[:MAX_CROSSREF_NOTES] + [f"... and {len(notes) - MAX_CROSSREF_NOTES} more unresolved cross-references"]


def undefined_key_findings(undefined: list[str], sources: dict[str, str], bib_entries: int,
                           notes: dict[str, dict[str, Any]] | None = None) -> list[Finding]:
    """One finding per cited key no bibliography file defines; one for all when the project has no
    bibliography at all, or for all the keys a bibliography file the project lacks may hold (the file
    is then missing, not its entries); ``notes``: what the reader knows of a key (``{"why":
    "unreadable_entry", "where": "refs.bib:12"}``, ``{"why": "missing_bib_file", "files": [...]}``)."""
    if not undefined:
        return []
    if bib_entries == 0:
        return [Finding("undefined_key", f"{len(undefined)} cited key(s) and no .bib or .bbl file in the project: "
                        f"add the bibliography file ({', '.join(undefined[:5])}{' ...' if len(undefined) > 5 else ''})",
                        kind_features("undefined_key"), Location(), key=undefined[0])]
    notes = notes or {}
    out = []
    in_missing = [k for k in undefined if (notes.get(k) or {}).get("why") == "missing_bib_file"]
    if in_missing:
        files = ", ".join(notes[in_missing[0]].get("files") or [])
        rel, line = locate_key(sources, in_missing[0])
        keys = ", ".join(in_missing[:5]) + (" ..." if len(in_missing) > 5 else "")
        out.append(Finding("undefined_key", f"{len(in_missing)} cited key(s) have no entry ({keys}): {files}, which "
                           f"\\bibliography names, is not in the project: add it, or entries for them",
                           kind_features("undefined_key"), Location(rel, line), key=in_missing[0]))
    for key in undefined:
        note = notes.get(key) or {}
        if note.get("why") == "missing_bib_file":
            continue
        rel, line = locate_key(sources, key)
        message = (f"\\cite{{{key}}} has no entry the bibliography can use: its entry at {note.get('where')} could "
                   f"not be read: mend the entry" if note.get("why") == "unreadable_entry"
                   else f"\\cite{{{key}}} has no entry in the bibliography: add a .bib entry for {key}")
        out.append(Finding("undefined_key", message, kind_features("undefined_key"), Location(rel, line), key=key))
    return out


def locate_key(sources: dict[str, str], key: str) -> tuple[str | None, int | None]:
    """The first file and line (outside comments) where a citation command uses ``key``."""
    pat = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?(?:\[[^\]\n]*\]){0,2}\{[^}\n]*(?<![\w:-])" + re.escape(key)
                     + r"(?![\w:-])")
    for rel, text in sources.items():
        code = _code(text)
        m = pat.search(code)
        if m:
            return rel, code.count("\n", 0, m.start()) + 1
    return None, None


#: a word in at most this many pool papers' titles and abstracts is no word of the language but a name
RARE_WORD_PAPERS = 10


def _as_title_writes_it(name: str, title: str, word_papers=None) -> bool:
    """Whether ``name`` is written as the title writes its name (case kept; spaces and hyphens
    aside): "Mamba" for "Mamba: ...", not "First" for "FIRST: ..."; a capitalised word of four
    letters or more also for the title's name in capitals when hardly any paper uses it as a word
    (``word_papers(word)``: in how many pool papers; "Sotopia" for "SOTOPIA: ...", not "Trust" for
    "TRUST: ...")."""
    m = re.match(r"\s*([^:]{1,60}):", title or "")
    if not m:
        return False
    squash = lambda t: re.sub(r"[\s\-_]", "", t)  # noqa: E731
    if squash(name) == squash(m.group(1)):
        return True
    return (word_papers is not None and re.fullmatch(r"[A-Z][a-z]{3,}", name) is not None
            and squash(m.group(1)) == name.upper() and word_papers(name) <= RARE_WORD_PAPERS)

