"""What venue a reference claims, read from its free text.

:func:`classify_venue` maps a ``booktitle``/``journal`` text (or the tail of a reference string)
to a :class:`VenueClaim`:

* ``held``: the main proceedings of one of the 15 corpus venues (``code`` = "NeurIPS", "ICML", ...),
  in any of the forms people write: DBLP's "Advances in Neural Information Processing Systems 36:
  Annual Conference ...", Google Scholar's "International Conference on Learning Representations",
  abbreviations ("Proc. ICML", "{CVPR}", "NIPS"), ACL Anthology's "Proceedings of the 2019
  Conference of the North American Chapter ...", LNCS's "Computer Vision -- ECCV 2020";
* ``ancillary``: a workshop, Findings, demo, student, tutorial or Datasets-and-Benchmarks track of
  such a venue, or a transactions journal named after one (TACL): the corpus keeps main tracks only;
* ``arxiv``: an arXiv / CoRR preprint;
* ``other``: any other journal, conference, book or publisher (not held by the corpus);
* ``none``: no venue at all.

Two more things are read beside the kind, for the side records of the corpus build
(``side_tracks.parquet``): ``side``, the venue outside the 15 the text names by its usual name or
abbreviation (:data:`SIDE_VENUES`: "Transactions on Machine Learning Research"/TMLR -> ``TMLR``,
WACV, CoRL, ALT, the journal *Machine Learning* -> ``MLJ``, ...; an ``other`` claim, or an
``ancillary`` one of such a venue: "WACV Workshops"), and ``track``, the kind of track an
``ancillary`` text names (:data:`TRACK_KINDS`: ``workshop``, ``findings``, ``demo``,
``datasets-benchmarks``, ...). A journal named by common words (*Machine Learning*, *Neural
Computation*, *Distill*) counts only when the text is that name alone (volume and page numbers
aside): "Ensemble machine learning: methods and applications" names no journal.

The order of the tests matters and is fixed: ancillary words first, then the venues, with the
shorter patterns that other names contain (ACL inside NAACL, "computer vision" inside CVPR) after
the longer ones; JMLR's "Workshop and Conference Proceedings" and PMLR are proceedings series,
never the journal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..corpus.records import normalize_title

KINDS = ("held", "ancillary", "arxiv", "other", "none")


@dataclass(frozen=True)
class VenueClaim:
    kind: str                 # one of KINDS
    code: str | None = None   # the corpus venue code for held (and the named venue of ancillary)
    text: str = ""            # the venue text as written
    year: int | None = None   # a year written inside the venue text ("NeurIPS 2020")
    side: str | None = None   # a venue of the side records (:data:`SIDE_VENUES`) the text names
    track: str | None = None  # for ancillary: the kind of track (:data:`TRACK_KINDS`)

    def label(self) -> str:
        if self.kind == "held":
            return self.code or ""
        if self.kind == "arxiv":
            return "arXiv"
        return self.text


#: (code, pattern on the normalised text); first match wins
_VENUES: list[tuple[str, re.Pattern]] = [(c, re.compile(p)) for c, p in [
    ("NeurIPS", r"neural information processing systems|\bneurips\b|\bnips\b"),
    ("ICLR", r"international conference (?:on )?learning representations?|\biclr\b"),
    ("ICML", r"international conference (?:on )?machine learning(?! and (?:applications|cybernetics))|\bicml\b"),
    ("AISTATS", r"artificial intelligence and statistics|\baistats\b"),
    ("UAI", r"uncertainty in artificial intelligence|\buai\b"),
    ("COLT", r"(?:computational )?learning theory|\bcolt\b"),
    ("IJCAI", r"international joint conferences? on artificial intelligence|\bijcai\b"),
    ("AAAI", r"\baaai\b"),
    ("CVPR", r"computer vision (?:and )?pattern recognition|\bcvpr\b"),
    ("ICCV", r"international conference (?:on )?computer vision|\biccv\b"),
    ("ECCV", r"european conference (?:on )?computer vision|\beccv\b"),
    ("EMNLP", r"empirical methods (?:in )?natural language processing|\bemnlp\b"),
    ("NAACL", r"(?:north american|nations of the americas) chapter of the association for computational linguistics|"
              r"\bnaacl\b"),
    ("ACL", r"annual meeting (?:of )?(?:the )?association (?:for )?comput(?:ational|er) linguistics|\bacl\b"),
    ("JMLR", r"journal of machine learning research|\bjmlr\b|\bj mach learn res\b"),
]]

#: (side venue, pattern on the normalised text): venues outside the 15 that the side records hold,
#: named as in ``side_tracks.parquet``; first match wins
SIDE_VENUES: list[tuple[str, re.Pattern]] = [(c, re.compile(p)) for c, p in [
    ("TMLR", r"trans(?:actions)? (?:on )?machine learning research|\btmlr\b"),
    ("DMLR", r"journal of data centric machine learning research|\bdmlr\b"),
    ("JAIR", r"journal (?:of )?artificial intelligence research|\bjair\b"),
    ("WACV", r"winter conference on applications? of computer vision|\bwacv\b"),
    ("CoRL", r"conference on robot learning|\bcorl\b"),
    ("ALT", r"algorithmic learning theory|^(?:proceedings of )?(?:the )?alt\b"),
    ("ECML-PKDD", r"european conference on machine learning|machine learning and knowledge discovery in databases|"
                  r"principles and practice of knowledge discovery in databases|\becml\b|\bpkdd\b"),
    ("ACML", r"asian conference on machine learning|\bacml\b"),
    ("L4DC", r"learning for dynamics and control|\bl4dc\b"),
    ("MLHC", r"machine learning for healthcare|\bmlhc\b"),
    ("CHIL", r"conference on health inference and learning|\bchil\b"),
    ("PGM", r"(?:conference|workshop) on probabilistic graphical models|\bpgm\b"),
    ("MIDL", r"medical imaging with deep learning|\bmidl\b"),
    ("CLeaR", r"conference on causal learning and reasoning|\bclear 20\d\d\b"),
    ("CoLLAs", r"conference on lifelong learning agents|\bcollas\b"),
    ("ISIPTA", r"imprecise probabilit(?:y|ies)|\bisipta\b"),
    ("LoG", r"learning on graphs conference|\blog 20\d\d\b"),
    ("AutoML", r"international conference on automated machine learning|\bautoml (?:20\d\d )?conference\b"),
    ("CPAL", r"conference on parsimony and learning|\bcpal\b"),
    ("FTML", r"foundations and trends (?:r )?in machine learning"),
    ("MLJ", r"^machine learning(?: journal)?$|\bmlj\b"),
    ("Neural Computation", r"^neural comput(?:ation|er)?$"),
    ("Distill", r"^distill(?: pub)?$"),
]]
#: the record venues each side venue stands for (ECML, 1993-2007, was joined with PKDD in 2008)
SIDE_GROUPS = {"ECML-PKDD": ("ECML-PKDD", "ECML")}
#: (kind, pattern): the kind of track an ancillary venue text names; first match wins
TRACK_KINDS: list[tuple[str, re.Pattern]] = [(k, re.compile(p)) for k, p in [
    ("datasets-benchmarks", r"datasets? (?:and )?benchmarks?"),
    ("findings", r"\bfindings\b"),
    ("workshop", r"\bwork(?:s?hop|hop)s?\b"),
    ("demo", r"\bdemo|system demonstrations?"),
    ("student", r"\bstudent research\b|\bsrw\b|\bdoctoral\b"),
    ("tutorial", r"\btutorial"),
    ("industry", r"\bindustry\b"),
]]
#: a journal name, then only numbers and volume words ("Machine learning, 20(3):273-297, 1995")
_TRAILING_NUMBERS = re.compile(r"(?: (?:\d+|vol|volume|no|number|pp|pages|issue))+$")

#: words that make a venue text name a track or publication the corpus does not hold
_ANCILLARY = re.compile(
    r"\bwork(?:s?hop|hop)s?\b|\bfindings\b|\bdemo|\bstudent research\b|\bsrw\b|\btutorial|\bdoctoral\b|"
    r"datasets? (?:and )?benchmarks?|\btiny papers?\b|\bblog ?post|\bblog track\b|\bshared task\b|"
    r"\bcompanion\b|\bposition papers?\b|\bsymposium\b|\bextended abstracts?\b|\bjournal track\b|"
    r"\btransactions of the association for computational linguistics\b|\btacl\b|\bsister conference")
#: proceedings series (not a venue of their own): "JMLR W&CP", "Proceedings of Machine Learning Research"
_SERIES = re.compile(r"workshop and conference proceedings|\bw ?cp\b|proceedings of machine learning research|\bpmlr\b")
#: other venues whose names contain a held venue's words ("ICMLA", "ACML", "AAAI Press" is a publisher)
_NOT_HELD = re.compile(r"\bicmla\b|\bacml\b|\bcolt ?\d|\bijcnn\b|\beacl\b|\baacl\b|\bcoling\b|\bconll\b|"
                       r"\bwacv\b|\bbmvc\b|\baccv\b|\bicpr\b|\bkdd\b|\baistats workshop\b|\btransactions on\b|"
                       r"\bieee transactions\b|\binternational journal\b|\bmachine learning journal\b|"
                       r"\bicassp\b|\binterspeech\b|\biros\b|\bicra\b|\bcorl\b|\brss\b|\bmiccai\b|\btmlr\b|"
                       r"\bwww\b|\bsigir\b|\bcikm\b|\bwsdm\b|\bicdm\b|\bsdm\b|\becml\b|\bpakdd\b|\baamas\b|\bcikm\b|"
                       r"\bnature\b|\bscience\b|\bpnas\b|\bjournal of artificial intelligence research\b|\bjair\b|"
                       r"\bartificial intelligence journal\b|\bneural computation\b|\bpublished in transactions\b")
#: venues named with a held venue's words that are not it (AAAI's sister conferences; EMMCVPR)
_NOT_THE_VENUE = {"AAAI": re.compile(r"ethics and society|\baies\b|human computation|\bhcomp\b|web and social media|"
                                     r"\bicwsm\b|\baaai acm\b"),
                  "CVPR": re.compile(r"energy minimi[sz]ation methods|\bemmcvpr\b")}
_ARXIV = re.compile(r"\barxiv\b|\bcorr\b|\bpreprint\b|\bopenreview\b")
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_AAAI_PUBLISHER = re.compile(r"\baaai press\b")


#: abbreviated words of venue names ("Proc. IEEE Int. Conf. Comput. Vis.") -> their full form
_ABBREV = {"proc": "proceedings", "conf": "conference", "int": "international", "intl": "international",
           "comput": "computer", "vis": "vision", "recog": "recognition", "recognit": "recognition",
           "mach": "machine", "learn": "learning", "artif": "artificial", "intell": "intelligence",
           "assoc": "association", "linguist": "linguistics", "ling": "linguistics", "inf": "information",
           "process": "processing", "syst": "systems", "adv": "advances", "neural inf": "neural information",
           "eur": "european", "euro": "european", "annu": "annual", "meet": "meeting", "stat": "statistics",
           "res": "research", "inform": "information", "represent": "representations", "nat": "natural",
           "lang": "language", "j": "journal", "uncertain": "uncertainty"}

#: "CVPRW" and its kind: the workshops of a venue
_WORKSHOP_ABBREV = {f"{v}w": f"{v} workshop" for v in ("cvpr", "iccv", "eccv", "wacv", "iclr", "icml")}


def _norm(text: str) -> str:
    """Normalised venue text with abbreviations spelled out ("ACL-IJCNLP", "NAACL-HLT" become words)."""
    words = re.sub(r"\bint l\b", "intl", normalize_title(text)).split()      # "Int'l"
    t = " ".join(_WORKSHOP_ABBREV.get(w) or _ABBREV.get(w, w) for w in words)
    return t.replace("journal machine learning research", "journal of machine learning research")


def classify_venue(text: str | None, *, arxiv_id: str | None = None) -> VenueClaim:
    """The :class:`VenueClaim` of a venue text (``arxiv_id``: the entry carries an arXiv id, which
    makes an entry without a venue an arXiv one)."""
    raw = (text or "").strip()
    t = _norm(raw)
    year = None
    m = _YEAR.search(raw)
    if m:
        year = int(m.group(1))
    if not re.search(r"[a-z]{2,}", re.sub(r"\b(?:pp|pages?|vol|volume|no|url|https?|doi|in|and|et|al)\b", "", t)):
        return VenueClaim("arxiv" if arxiv_id else "none", None, raw, year)
    t_nopub = _AAAI_PUBLISHER.sub(" ", t)
    code = next((c for c, p in _VENUES if p.search(t_nopub)), None)
    if code in _NOT_THE_VENUE and _NOT_THE_VENUE[code].search(t):
        code = None
    if code == "JMLR" and _SERIES.search(t):
        code = None          # "JMLR W&CP" without a conference name: a series, the venue unknown
    if (code == "COLT" and "learning theory" in t
            and not re.search(r"\bcolt\b|conference on (?:computational )?learning theory", t)):
        code = None
    side = side_venue(t)
    if _ANCILLARY.search(_SERIES.sub(" ", t)):
        return VenueClaim("ancillary", code, raw, year, side if code is None else None, track_kind(t))
    if code is not None and not (_NOT_HELD.search(t) and not _strong_name(code, t)):
        return VenueClaim("held", code, raw, year)
    if side is not None:
        return VenueClaim("other", None, raw, year, side)
    if _ARXIV.search(t) or (arxiv_id and not code and _SERIES.search(t) is None and len(t) < 12):
        return VenueClaim("arxiv", None, raw, year)
    if _SERIES.search(t):
        return VenueClaim("none", None, raw, year)     # a proceedings series alone names no venue
    return VenueClaim("other", None, raw, year)


#: words of a venue's name that say what kind of venue it is, not which (left out of :func:`venue_key`)
_GENERIC = re.compile(r"\b(?:\d+(?:st|nd|rd|th)?|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                      r"eleventh|twelfth|annual|proceedings|of|the|in|on|for|and|vol|volume|pp|pages|no|ieee|acm|cvf|"
                      r"international|conference|journal|symposium|workshop|transactions|advances)\b")
#: a venue text that spells out what kind of venue it names
_NAMED_KIND = re.compile(r"\b(?:conference|symposium|journal|transactions)\b", re.I)


def venue_key(text: str) -> str:
    """The words that name a venue ("Conference on Reward Learning and Alignment" -> "reward
    learning alignment"), for telling whether any paper of the data names it."""
    return " ".join(_GENERIC.sub(" ", _norm(text or "")).split())


def names_a_kind(text: str) -> bool:
    """Whether a venue text spells out a conference, symposium, journal or transactions by name
    (two words or more besides), so that its name can be looked up (:func:`venue_key`)."""
    return bool(_NAMED_KIND.search(text or "")) and len(venue_key(text).split()) >= 2


def _strong_name(code: str, t: str) -> bool:
    """Whether ``t`` names ``code`` by its own abbreviation or full name (not only by shared words)."""
    short = code.lower()
    if short == "neurips":
        return bool(re.search(r"\bneurips\b|\bnips\b|neural information processing systems", t))
    return bool(re.search(rf"\b{short}\b", t))


def side_venue(t: str) -> str | None:
    """The side venue (:data:`SIDE_VENUES`) a normalised venue text names, or None."""
    bare = _TRAILING_NUMBERS.sub("", re.sub(r"^(?:in |the )+", "", t)).strip()
    return next((code for code, pat in SIDE_VENUES if pat.search(bare) or pat.search(t)), None)


def track_kind(text: str) -> str:
    """The kind of track a venue text or a record's ``track`` names: a :data:`TRACK_KINDS` kind,
    ``main`` (empty, ``main``, oral/poster/spotlight), ``journal``, or ``other``."""
    t = (text or "").lower().replace("&", "and").replace("-", " ")
    if t.strip() in ("", "main", "oral", "poster", "spotlight", "long", "short"):
        return "main"
    if t.strip() == "journal":
        return "journal"
    return next((k for k, p in TRACK_KINDS if p.search(t)), "other")
