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

A draft cites a work when it cites any version of it: a reference linked to the work, to a record
with the same normalised title, or whose title starts with the name the text uses ("ImageNet Large
Scale Visual Recognition Challenge" for "ImageNet") or gives itself that name; unless that reference
is linked to another pool paper that hardly any citing paper calls by the name ("ImageNet
classification with deep convolutional neural networks" is AlexNet, not ImageNet), or the name only
starts a longer hyphenated word of its title ("pytorch-cifar-models"). A name the draft defines for
itself (its title's name, an acronym it introduces, "our method NAME") is never a finding, and an
acronym the draft spells out ("conformal policy control (CPC)") names only a work whose title has
those words.

Where a name stands for several pool entries, the ones citing papers call so come first (a title
that merely starts with the word, "Transformer: Feedback attention ...", is then not meant), and
among titles the one that writes the name as the text does ("SuperGLUE", not "SuperGlue").

Confidence: a logistic model over each finding's features (:data:`FEATURES`), fit on the real
development drafts with :func:`fit_calibration` and shipped as ``finding_calibration.json``; the
default threshold of what is shown is chosen there too.
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

#: sections where a name is an artefact the work uses (headings, lower-cased)
_EXPERIMENT = re.compile(r"experiment|evaluat|result|setup|set-up|dataset|benchmark|baseline|implementation|"
                         r"training|appendix|ablation|empirical|details", re.I)
#: notes authors leave in a draft, never a work's name however a title spells it
_MARKERS = frozenset({"todo", "fixme", "tbd", "xxx"})
#: sections about what the draft did not do (headings, lower-cased): a name there is a plan, not a use
_PLANS = re.compile(r"future (?:work|direction|research)|limitation|outlook", re.I)
#: sections about the paper rather than its work (headings): a name there is no use of a work
_ABOUT = re.compile(r"^(?:back matter|checklist)$|acknowledg|funding|impact statement|broader impact", re.I)
#: words that say a name is used, not only mentioned, within a few words of it
_USE = re.compile(r"\b(?:use[sd]?|using|fine-?tun\w*|train\w*|evaluat\w*|test\w*|benchmark\w*|compar\w*|"
                  r"baselines?|datasets?|pre-?train\w*|initiali[sz]\w*|implement\w*|adopt\w*|follow\w*|"
                  r"built|build|based|backbone|encoder|model|on)\b", re.I)
#: scores right after a name: a row of a results table or a reported result ("HallusionBench 37.11 37.73")
_SCORES = re.compile(r"(?:[^0-9A-Za-z]{0,12}\d+(?:\.\d+)?%?){2}")
#: an acronym spelled out in the text: "Long Form Words (ACR)"
_DEFINED = re.compile(r"((?:[A-Za-z][\w-]*\s+){1,6}?[A-Za-z][\w-]*)\s*\(\s*([A-Z][A-Za-z0-9-]{1,15}s?)\s*\)")
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


def defined_acronyms(text: str) -> dict[str, str]:
    """``{acronym key: long form}`` of the acronyms the text spells out ("Low-Rank Adaptation
    (LoRA)"), the long form cut to as many words as the acronym has letters where it can be."""
    out: dict[str, str] = {}
    for m in _DEFINED.finditer(text):
        acr, words = m.group(2), m.group(1).split()
        letters = len(re.sub(r"[^A-Z]", "", acr)) or len(acr)
        long_form = " ".join(words[-max(letters, 1):])
        out.setdefault(name_key(acr.rstrip("s")), long_form)
        out.setdefault(name_key(acr), long_form)
    return out


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


def name_parts(titles: list[str]) -> set[str]:
    """The name keys of every run of one to four words in the names titles give themselves (the
    text before a colon, six words at most): a draft citing "Microsoft COCO Captions: ..." or
    "Making the V in VQA Matter: ..." cites what it calls COCO or VQA; "RoBERTa: A Robustly
    Optimized BERT ..." names no BERT."""
    out: set[str] = set()
    for t in titles:
        m = re.match(r"\s*([^:]{1,80}):", t or "")
        words = re.findall(r"[A-Za-z0-9][A-Za-z0-9+\-]*", m.group(1)) if m else []
        if not 0 < len(words) <= 6:
            continue
        for n in range(1, 5):
            for i in range(len(words) - n + 1):
                key = name_key("".join(words[i:i + n]))
                if len(key) >= 3:
                    out.add(key)
    return out


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


def names_the_work(ref_title: str, key: str, title: str) -> bool:
    """Whether a cited title names the work called ``key`` (pool title ``title``): it starts with
    the name, gives itself that name or the work's title name ("U-Net: ..."), or its name holds it
    ("Microsoft COCO Captions: ..." for COCO)."""
    if not ref_title:
        return False
    own = name_key(title_short_name(ref_title))
    return (title_starts_with(ref_title, key) or (bool(own) and own in (key, name_key(title_short_name(title))))
            or key in name_parts([ref_title]))


# ---- the findings of one draft -------------------------------------------------------------------

@dataclass
class Candidate:
    """A pool paper or work the draft's text names, with every place it does."""

    row: int
    name: str
    support: int
    from_title: bool
    ambiguous: int                                  # pool entries the name stands for
    places: list[tuple[Sentence, int, int]] = field(default_factory=list)   # (sentence, start, end)


#: a word of a name (a capital or a digit in it): a citation after it is that name's
_NAME_WORD = re.compile(r"\b[A-Za-z]*[A-Z0-9][\w-]*")


def _near_keys(sent: Sentence, end: int, window: int = 15) -> list[str]:
    """The keys of the citations right after the name (within ``window`` characters), unless
    another name stands between and the citation has one key ("HallusionBench, and AMBER [4]": [4] is
    AMBER's; "BLEU and ROUGE [4, 5]" may cite both); the rest of a hyphenated word the name starts is
    no other name ("VAD-Score [4]" cites VAD)."""
    word_end = end + len(re.match(r"[\w-]*", sent.text[end:]).group(0))    # the rest of its word ("VAD-Score")
    return [k for off, keys in sent.cites
            if (0 <= off - end <= window
                and (len(keys) > 1 or not _NAME_WORD.search(sent.text, word_end, max(word_end, off))))
            or abs(off - end) <= 2 for k in keys]


#: the word right before a citation (only spaces, brackets or punctuation between): the citation is that word's
_CITED_WORD = re.compile(r"([A-Za-z]*[A-Z0-9][\w-]*)[^\w]{0,6}$")
#: a citation as written in the text: "(Cohen et al., 2019)", "[12]", "Cohen et al. (2019)"
_RENDERED = re.compile(r"\s*(?:\([^()]{0,300}\)|\[[^\]]{0,300}\]|[^()\[\];]{0,80}?\(\d{4}[a-z]?\))")
#: what separates a citation before a name from it: a clause or another item
_CLAUSE = re.compile(r"[,;:.]|\b(?:while|whereas|but|and|or)\b")


def _subject_cite(text: str, off: int, start: int, gap: int = 50) -> bool:
    """Whether the citation at ``off`` may cite the name at ``start`` after it: as the sentence's
    subject a few words before, with no clause between ("Defazio et al. (2014) proposed SAGA"; not
    "perturbations (Cohen et al., 2019), while RobustBench")."""
    m = _RENDERED.match(text, off, start)
    between = text[m.end() if m else off:start]
    return len(between) <= gap and _CLAUSE.search(between) is None


def _own_citations(sent: Sentence, start: int, end: int, named_here: dict[str, set[str]],
                   key_refs: dict[str, dict[str, Any]], key: str) -> list[list[str]]:
    """The citations of the sentence that may be the name's at ``sent.text[start:end]``: not placed
    right after another name's word ("BLEU [1], METEOR, CIDEr [3]": neither is METEOR's), not before
    the name unless as its subject, and not to references linked to pool papers that other names of
    the sentence stand for ("RobustBench and AutoAttack standardise evaluation [AutoAttack's paper]").
    ``named_here``: pool id -> the name keys of the sentence that stand for it."""
    word_end = end + len(re.match(r"[\w-]*", sent.text[end:]).group(0))
    out = []
    for off, keys in sent.cites:
        pre = sent.text[max(0, off - 40):off]
        m = _CITED_WORD.search(pre)
        if m is not None:
            w0 = off - len(pre) + m.start(1)
            if start <= w0 < word_end or start < off - len(pre) + m.end(1) <= word_end:
                out.append(keys)       # right after this name
            continue                   # right after another name: that name's
        if off < start and not _subject_cite(sent.text, off, start):
            continue                   # before the name, of what came before it
        linked = [(key_refs.get(k) or {}).get("paper_id") for k in keys]
        if linked and all(p and (named_here.get(p, set()) - {key}) for p in linked):
            continue                   # to works other names of the sentence stand for
        out.append(keys)
    return out


def _title_says_it(ref: dict[str, Any] | None, name: str, pid: str, title: str) -> bool:
    """Whether a cited reference is the named work, or one whose title, or a part of it after a colon
    or question mark, is the name and at most three words more ("KITTI odometry dataset [Vision meets
    robotics: The KITTI dataset]": a version of KITTI is cited; "An Adam variant for ..." is not Adam)."""
    if not ref:
        return False
    ref_title = ref.get("title") or ""
    if ref.get("paper_id") == pid or (ref_title and normalize_title(ref_title) == normalize_title(title)):
        return True
    return len(name) >= 3 and re.search(rf"(?:^|[:?]\s*)(?:the\s+)?{re.escape(name)}(?![\w-])(?:\s+[\w-]+){{0,3}}"
                                        rf"\s*[.?]?\s*$", ref_title, re.I) is not None


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


def _where(sources: dict[str, str], sent: Sentence, start: int, end: int, surface: str) -> Location:
    rel, line = locate(sources, surface) if sources else (None, None)
    return Location(rel, line, sent.section or None, _quote(sent.text, start, end))


#: a clock time right before a word: the word is a time zone ("19:10-23:00 UTC"), not a name
_CLOCK_BEFORE = re.compile(r"\d{1,2}:\d{2}\s*$")
#: a model's name and version, or a dotted version, right before a plain word: the word names a variant
#: ("Claude 3.5 Haiku", "3.5 Haiku's")
_VARIANT_BEFORE = re.compile(r"(?:[A-Z][\w-]*\s+v?\d+(?:\.\d+)*|(?<![\w.])v?\d+\.\d+)[\s-]+$")
_AUTHOR_AFTER = re.compile(r"\s+(?:et\s+al|and\s+[A-Z][a-z]+\s*[,(])|\s*(?:\(\d{4}|,\s*\d{4})")


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


def _starts_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` starts a sentence: nothing but quotes or brackets before it, or
    a full stop right before it where the splitter kept two sentences together ("Diffusion
    formulation.Diffusion models define ..." in text read from a PDF)."""
    before = text[:start]
    return not before.strip(" \"'([") or re.search(r"[a-z][.!?]\s*$", before) is not None


def _alone(text: str, start: int, end: int) -> bool:
    """Whether the word at ``text[start:end]`` stands without a capitalised word right before or
    after it (a person's name does not: "Thomas Pock", "Lady Jane Grey")."""
    before = re.search(r"([A-Za-z]+)[\s~]+$", text[max(0, start - 40):start])
    after = re.match(r"[\s~]+([A-Za-z]+)", text[end:end + 40])
    return not any(m and m.group(1)[0].isupper() for m in (before, after))


_MIN_OTHER_SHARE = 0.05


def _another_work(ref: dict[str, Any], pid: str, title: str, keys: set[str], support: int, name_share) -> bool:
    """Whether a cited reference whose title names the work is another work all the same: it is
    linked to another pool record, the name stands for the named work in citing papers (``support``)
    and hardly any of them (under :data:`_MIN_OTHER_SHARE`) call the cited record so ("ImageNet
    classification with deep convolutional neural networks" for ImageNet; "U-Net: deep learning for
    cell counting" for the U-Net of biomedical segmentation)."""
    other = ref.get("paper_id")
    if not other or other == pid or support <= 0 or name_share is None:
        return False
    if normalize_title(ref.get("title") or "") == normalize_title(title):
        return False
    return max(name_share(k, other) for k in keys) < _MIN_OTHER_SHARE


def _in_url(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is part of a web address or a path ("github.com/Ctrl-Alt-...")."""
    word = text[text.rfind(" ", 0, start) + 1:start] + text[end:(text.find(" ", end) + 1 or len(text) + 1) - 1]
    return "/" in word or "www." in word


def _in_longer_name(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` is the start of a longer hyphenated or possessive word
    ("RADAR" of "RADAR-Vicuna-7B", "SAGA" of "SAGA-like", "PyTorch" of "PyTorch's")."""
    return re.match(r"[-'][A-Za-z0-9]", text[end:end + 2]) is not None


#: what may follow a model's name and still be that model: a size or a variant
_SIZE = re.compile(r"^(?:\d+(?:\.\d+)?[bmk]|base|large|small|tiny|mini|xl|xxl|chat|instruct)")


def _cites_it(ref: dict[str, Any] | None, pid: str, key: str, title: str) -> bool:
    """Whether a citation of ``ref`` next to a name stands for the named work ``pid``: a reference
    the draft does not define or that links nowhere may be it; one linked to another work whose
    title does not start with the name is not ("Llama 2 [LLaMA-1's key]")."""
    if ref is None or not ref.get("paper_id"):
        return True
    ref_title = ref.get("title") or ""
    if ref["paper_id"] == pid or title_starts_with(ref_title, key) or key in name_key(ref_title):
        return True
    short = name_key(title_short_name(ref_title))
    if short and key.startswith(short) and _SIZE.match(key[len(short):]):
        return True                    # "Vicuna-7B-v1.5" next to the Vicuna paper: a size of that model
    return normalize_title(ref_title) == normalize_title(title)


def named_findings(cands: dict[int, Candidate], *, pool, pool_years: np.ndarray, year: int,
                   cited: set[str], cited_titles: set[str], cited_names: set[str], ref_titles: list[str],
                   own: set[str], acronyms: dict[str, str], sources: dict[str, str],
                   score_of, body: str = "", key_refs: dict[str, dict[str, Any]] | None = None,
                   refs: list[dict[str, Any]] | None = None, name_share=None, word_papers=None,
                   ) -> tuple[list[Finding], dict[int, Candidate]]:
    """``named_not_cited`` findings of the candidates (see the module doc), and every candidate
    that is not the draft's own name, whether it is cited or not (for ``bib_not_cited``); ``body``:
    the draft's text, where a name it also writes as a lower-case word is taken for that word;
    ``refs``: the draft's references (title, linked ``paper_id``; else ``ref_titles``, unlinked);
    ``name_share(key, pool id)``: the share of the citing papers using the name ``key`` that call
    that pool paper so (a cited title that names the work may then be another work);
    ``word_papers(word)``: in how many pool papers a word is used (a rare one may be a name)."""
    out: list[Finding] = []
    kept: dict[int, Candidate] = {}
    lower_words = set(re.findall(r"(?<![A-Za-z])[a-z][a-z-]+", body))
    # the parts of a lower-case hyphenated word of letters only are words too ("physics" of
    # "physics-informed"; not "gemma" of "gemma-2-9b", a model's identifier)
    lower_words |= {w for word in re.findall(r"(?<![\w-])[a-z]+(?:-[a-z]+)+(?![\w-])", body)
                    for w in word.split("-") if len(w) > 1}
    key_refs = key_refs or {}
    refs = refs if refs is not None else [{"title": t} for t in ref_titles]
    # a title's name that several pool titles share names the one the recommender ranks first, if it
    # favours it (a score above 0)
    best: dict[str, tuple[float, int]] = {}
    for row, c in cands.items():
        if c.support == 0 and c.ambiguous > 1 and score_of(pool.ids[row]) > 0:
            best[name_key(c.name)] = max(best.get(name_key(c.name), (-math.inf, -1)), (score_of(pool.ids[row]), row))
    named_in: dict[int, dict[str, set[str]]] = {}
    for row, c in cands.items():
        for s, _, _ in c.places:
            named_in.setdefault(id(s), {}).setdefault(pool.ids[row], set()).add(name_key(c.name))
    for row, c in cands.items():
        key = name_key(c.name)
        title = pool.titles[row] or ""
        if key in own or key in _MARKERS:
            continue                   # the draft's own name, or a note its authors left ("TODO")
        words = c.name.split()
        if len(words) > 1 and (any(len(w) == 1 and not w.isdigit() for w in words) or words[0].islower()):
            continue                   # "of A", "in D", "FL a": a word run across a symbol, not a name
        c.places = [(s, a, b) for s, a, b in c.places
                    if not _AUTHOR_AFTER.match(s.text, b) and not _in_url(s.text, a, b)
                    and not _CLOCK_BEFORE.search(s.text, max(0, a - 12), a)]
        if not c.places:
            continue                   # "Sun et al.": an author, not a work
        if all(_PLANS.search(s.section or "") for s, _, _ in c.places):
            continue                   # named only in future work or limitations: a plan, not a use
        c.places = [(s, a, b) for s, a, b in c.places if not _ABOUT.search(s.section or "")]
        if not c.places:
            continue                   # named only in acknowledgements, funding, impact or checklist
        written = any(_as_title_writes_it(s.text[a:b], title, word_papers if _alone(s.text, a, b) else None)
                      for s, a, b in c.places)
        if c.support == 0 and ((c.ambiguous > 1 and best.get(key, (0, -1))[1] != row) or not written):
            continue                   # a title's name counts written as that title writes it
        plain = re.fullmatch(r"[A-Z][a-z]+(?:[ -][A-Z]?[a-z]+)*", c.name) is not None
        if plain and (c.name.lower() in lower_words or c.name.lower().replace("-", " ") in lower_words):
            continue                   # the draft uses the word as a word ("sampling", "data")
        if c.support == 0 and c.name.isupper() and c.name.isalpha() and c.name.lower() in lower_words:
            continue                   # a word of the draft in capitals ("NEED MORE INFO", "defined as STOP")
        if plain:
            c.places = [(s, a, b) for s, a, b in c.places
                        if not s.heading and not _VARIANT_BEFORE.search(s.text, max(0, a - 40), a)]
            if not c.places:
                continue               # capitals of a heading ("Diffusion models"), a variant ("Claude 3.5 Haiku")
        if plain and " " not in c.name and any(c.name.lower() in lf.lower().split() and key != k
                                               for k, lf in acronyms.items()):
            continue                   # a word of another acronym's long form ("Massive" of MMLU's)
        if plain and c.support == 0 and all(_starts_sentence(s.text, a) for s, a, _ in c.places):
            continue                   # capitalised only because a sentence starts with it
        if key in acronyms:            # the draft spells the acronym out: the work must have those words
            long_words = content_words(acronyms[key])
            if len(long_words & content_words(title)) < max(1, len(long_words) // 2):
                continue
        kept[row] = c
        pid = pool.ids[row]
        if (pid in cited or normalize_title(title) in cited_titles or key in cited_names
                or name_key(title_short_name(title)) in cited_names):
            continue
        keys = {key, name_key(title_short_name(title))} - {""}
        if any(names_the_work(r.get("title") or "", key, title)
               and not _another_work(r, pid, title, keys, c.support, name_share) for r in refs):
            continue                   # cited by a title that names it
        near = [k for sent, _, end in c.places for k in _near_keys(sent, end)]
        if any(_cites_it(key_refs.get(k), pid, key, title) for k in near):
            continue                   # a citation right at the name cites it, or may (unlinked)
        # per place, the citations of its sentence that may be this name's
        own_cites = [_own_citations(s, x, y, named_in.get(id(s), {}), key_refs, key) for s, x, y in c.places]
        if any(_title_says_it(key_refs.get(k), c.name, pid, title) for cs in own_cites for keys in cs for k in keys):
            continue                   # a citation further on in its sentence is to a version of it
        # the place to show: a sentence without citations, else any; a heading's text only if nothing else
        sent, a, b = min(c.places, key=lambda p: (p[0].heading, bool(p[0].cites)))
        use = any(_USE.search(s.text[max(0, x - 40):y + 40]) for s, x, y in c.places)
        section = any(_EXPERIMENT.search(s.section or "") for s, _, _ in c.places)
        feats = kind_features("named_not_cited") | {"cite_next_other": float(bool(near)),
            "log_support": math.log1p(c.support), "from_title": float(c.from_title),
            "log_occurrences": math.log1p(len(c.places)), "use_verb": float(use), "experiment_section": float(section),
            "cite_in_sentence": sum(bool(s.cites) for s, _, _ in c.places) / len(c.places),
            "ambiguous": float(c.ambiguous > 1), "recommender_logit": score_of(pid),
            "acronym": float(c.name.isupper()), "log_age": math.log1p(max(0, year - int(pool_years[row]))),
            "in_longer_name": float(any(_in_longer_name(s.text, x, y) for s, x, y in c.places)),
            "with_scores": float(any(_SCORES.match(s.text, y) for s, _, y in c.places)),
            # the sentence cites, and every citation is another name's
            "cites_for_others": sum(bool(s.cites) and not cs for (s, _, _), cs in zip(c.places, own_cites))
                                / len(c.places),
            "in_heading": float(any(s.heading for s, _, _ in c.places)),
            # how consistently citing papers mean this work by the name (1 for a title's own name)
            "name_share": (name_share(key, pid) if name_share is not None else 1.0) if c.support > 0 else 1.0}
        loc = _where(sources, sent, a, b, c.name)
        times = f" ({len(c.places)} times)" if len(c.places) > 1 else ""
        out.append(Finding("named_not_cited", f"the text names {c.name}{times} ({loc.where() or 'body'}) but cites "
                           f"no version of it", feats, loc, pid, c.name, row=row))
    return out, kept
