"""The short names citing papers give their references: "we train on CIFAR-10 [23]", "Adam [17]",
"HDTF [35]", "ResNet-50 (He et al., 2016)", "the ImageNet dataset [5]".

Per reference (:func:`reference_names`, a pure function of one reference and its contexts): every
place a context cites it with a marker of at most :data:`MAX_GROUP` references (``[23]``,
``[16, 11]``, ``(He et al., 2016)``), and the words right before that marker when they look like a
name: an acronym or a word with inner capitals or digits ("CIFAR-10", "ImageNet", "GPT-4",
"word2vec"), or a capitalised word that does not start a sentence and is not a common word
("Adam", "Transformer"), with up to three more such words before it ("Stable Diffusion",
"Segment Anything") and a version number after it ("Llama 2"). A trailing head noun is dropped
("the ImageNet dataset" -> "ImageNet"), and so is a name that is the surname of one of the
reference's authors ("Kingma [17]").

Across papers (:func:`aggregate_names`): a name belongs to a target (a corpus paper or a work)
when at least :data:`MIN_SUPPORT` citing papers give it that name (:data:`MIN_SUPPORT_PLAIN` for
a name of capitalised words only) and at least
:data:`MIN_SHARE` of the papers using the name point to that target. One paper's stray word
("Recently [3]", "Following [12]") points everywhere and is left out; "CIFAR-10" points to the
same technical report in hundreds of papers.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: a marker citing more references than this names none of them
MAX_GROUP = 2
#: a name needs this many citing papers ...
MIN_SUPPORT = 2
#: ... and this share of the papers using it pointing to the same target
MIN_SHARE = 0.3
#: a name made only of capitalised words ("Adam", "Transformer") needs this many citing papers
MIN_SUPPORT_PLAIN = 3
#: words a name may span
MAX_NAME_WORDS = 4

#: head nouns dropped after a name ("the CIFAR-10 dataset", "the Adam optimizer")
HEADS = frozenset("""dataset datasets data benchmark benchmarks corpus corpora database suite challenge
model models method methods algorithm algorithms optimizer optimiser architecture architectures network
networks net framework frameworks library toolkit toolbox package environment environments simulator
engine loss objective estimator score metric metrics baseline baselines approach codebase implementation
platform system pipeline tokenizer encoder decoder backbone variant variants family series collection
task tasks""".split())

#: capitalised words that are not names: sentence openers, discourse words, document parts
COMMON = frozenset("""a an the in on at of for to from by with as and or but nor so yet we our us they their
it its this that these those there here such some many most more other others both each all any
following follow followed see e.g. eg i.e. ie cf. cf also recently recent similarly likewise however
moreover furthermore additionally further then thus hence therefore finally first second third lastly
notably specifically particularly instead unlike like compared prior previous previously existing
section sections table tables figure figures fig fig. appendix appendices theorem theorems lemma
lemmas eq eq. eqs equation equations algorithm algorithms definition proposition corollary assumption
assumptions chapter remark remarks example examples step steps part note footnote supplementary
line lines page pages proof proofs claim claims conjecture case cases setting settings stage phase
version work works paper papers study studies approach approaches method methods model models results
result data dataset datasets benchmark benchmarks experiments experiment baseline baselines
given using use used based when while where which who whose whom what how why after before during
since until via per versus vs vs. than into onto upon over under above below between among across
et al al. and/or is are was were be been being has have had do does did can could may might must
shall should will would not no yes only just even still already often usually typically generally
standard classical classic traditional conventional popular common modern original new novel
several various different similar same recent early earlier later last next earlier-work
one two three four five six seven eight nine ten
january february march april may june july august september october november december
english chinese german french japanese""".split())

#: a word of a name: letters, digits, inner hyphens and pluses, a dot only before digits ("GPT-3.5")
TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9\-+']|\.(?=\d))*[A-Za-z0-9+]|[A-Za-z0-9]")
_BRACKET = re.compile(r"\[([^\[\]]{1,120})\]")
_RANGE = re.compile(r"^\s*(\d+)\s*[-–—]\s*(\d+)\s*$")
_TRAILING_JUNK = re.compile(r"[\s~*_`\\]+$")
_SENTENCE_END = re.compile(r"(?:[.!?:;]\s*|^\s*)$")
_KEY = re.compile(r"[^a-z0-9]")


def name_key(name: str) -> str:
    """How names compare: lower-case letters and digits only ("CIFAR-10", "cifar10", "CIFAR 10")."""
    return _KEY.sub("", (name or "").lower())


@dataclass(frozen=True)
class NameUse:
    """One citing paper calling one of its references by a name."""

    name: str          # as written ("CIFAR-10")
    key: str           # :func:`name_key`
    target: int        # the reference's position in the citing paper's reference list


def surname(author: str) -> str:
    """``"D. P. Kingma"`` / ``"Kingma, Diederik P."`` / ``"Diederik Kingma"`` -> ``"kingma"``."""
    a = (author or "").strip()
    if not a:
        return ""
    if "," in a:
        a = a.split(",", 1)[0]
    else:
        words = [w for w in re.split(r"\s+", a) if w]
        tail = [w for w in words if not (re.fullmatch(r"(?:[A-Z]\.?-?)+", w)
                                         or re.fullmatch(r"jr\.?|sr\.?|ii|iii|iv", w, re.I))]
        a = tail[-1] if tail else words[-1]
    a = unicodedata.normalize("NFKD", a)
    a = "".join(ch for ch in a if not unicodedata.combining(ch)).lower()
    a = re.sub(r"[^a-z]", "", a)
    return "" if a in ("et", "al", "etal", "others") else a


# ---------------------------------------------------------------------------------- markers


def _numeric_items(group: str) -> list[str] | None:
    """``"16, 11"`` -> ``["16", "11"]``; ``"3-5"`` -> ``["3", "4", "5"]``; None when the bracket is
    not a numeric citation group."""
    items: list[str] = []
    for part in re.split(r"[,;]", group):
        part = part.strip()
        if part.isdigit():
            items.append(part)
            continue
        m = _RANGE.match(part)
        if not m or int(m.group(2)) - int(m.group(1)) > 20 or int(m.group(2)) < int(m.group(1)):
            return None
        items += [str(i) for i in range(int(m.group(1)), int(m.group(2)) + 1)]
    return items or None


def marker_starts(context: str, cite: str) -> list[int]:
    """Where ``context`` cites the reference whose marker text is ``cite`` (``"23"`` or
    ``"He et al., 2016"``) in a group of at most :data:`MAX_GROUP` references: the offset of the
    group's opening bracket."""
    cite = (cite or "").strip()
    out = []
    if not cite:
        return out
    if cite.isdigit():
        for m in _BRACKET.finditer(context):
            items = _numeric_items(m.group(1))
            if items and cite in items and len(items) <= MAX_GROUP:
                out.append(m.start())
        return out
    variants = {cite, cite.replace(", ", " "), cite.replace(" et al.,", " et al")}
    for v in variants:
        start = 0
        while True:
            i = context.find(v, start)
            if i < 0:
                break
            start = i + len(v)
            opener = max(context.rfind("(", 0, i), context.rfind("[", 0, i))
            if opener < 0 or max(context.rfind(")", opener, i), context.rfind("]", opener, i)) >= 0:
                continue                                         # narrative "He et al. (2016)"
            closer = min((j for j in (context.find(")", i), context.find("]", i)) if j >= 0), default=-1)
            if closer < 0:
                continue
            if len(re.split(r";", context[opener + 1:closer])) <= MAX_GROUP:
                out.append(opener)
    return sorted(set(out))


# ------------------------------------------------------------------------------------ names


def _shape(tok: str) -> str:
    """``strong``: an acronym or a word with inner capitals or digits ("CIFAR-10", "ImageNet",
    "word2vec"); ``title``: a capitalised word ("Adam"); ``number``: a version ("2", "v2", "360");
    else ``""``."""
    core = tok.strip(".'")
    if not core:
        return ""
    if re.fullmatch(r"v?\d+(?:\.\d+)?[a-z]?", core, re.I):
        return "number"
    letters = re.sub(r"[^A-Za-z]", "", core)
    if not letters or core.lower() in COMMON:
        return ""
    if any(ch.isdigit() for ch in core) or any(ch.isupper() for ch in core[1:]):
        return "strong"
    if core[0].isupper():
        return "title"
    return ""


def name_before(text: str) -> str:
    """The name that ends right before a citation marker in ``text``, or ``""``."""
    text = _TRAILING_JUNK.sub("", text[-160:])
    toks = list(TOKEN.finditer(text))
    if not toks or toks[-1].end() < len(text):          # "..., [3]" or "(see [3])": no name right there
        return ""
    if toks[-1].group().lower() in HEADS and len(toks) >= 2 and text[toks[-2].end():toks[-1].start()].strip() == "":
        toks = toks[:-1]
    picked: list[re.Match[str]] = []
    for m in reversed(toks):
        if picked and text[m.end():picked[-1].start()].strip(" -") != "":
            break                                            # punctuation between words ends a name
        shape = _shape(m.group())
        if shape == "number" and not picked:
            picked.append(m)
            continue
        if shape not in ("strong", "title"):
            break
        picked.append(m)
        if len(picked) >= MAX_NAME_WORDS:
            break
    picked.reverse()
    while picked and _shape(picked[0].group()) == "number":
        picked.pop(0)
    if not picked:
        return ""
    words = [m.group() for m in picked]
    if all(_shape(w) != "strong" for w in words):
        # capitalised words only: not at the start of a sentence (it might be any word there)
        if _SENTENCE_END.search(text[: picked[0].start()]):
            return ""
    name = re.sub(r"'s$", "", text[picked[0].start():picked[-1].end()]).strip(".'")
    return name if len(name_key(name)) >= 2 else ""


def is_plain(name: str) -> bool:
    """Whether a name is made only of capitalised words ("Adam", "Stable Diffusion"), which need
    more support than "CIFAR-10" or "ImageNet" (see :data:`MIN_SUPPORT_PLAIN`)."""
    return all(_shape(w) != "strong" for w in name.split())


def reference_names(ref: dict[str, Any], surnames: Iterable[str] = ()) -> list[str]:
    """The names one reference's contexts give it (with repeats), never an author's surname."""
    cite = str(ref.get("cite") or "").strip()
    if not cite:
        return []
    banned = {name_key(s) for s in surnames if s}
    out = []
    for c in ref.get("contexts") or []:
        text = c.get("context") if isinstance(c, dict) else None
        if not isinstance(text, str):
            continue
        for start in marker_starts(text, cite):
            name = name_before(text[:start])
            key = name_key(name)
            if name and key not in banned and not re.search(r"\bet\b", name):
                out.append(name)
    return out


def paper_names(refs: list[dict[str, Any]]) -> list[NameUse]:
    """Every (name, reference) of one citing paper's reference list, once each (pure)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for r in refs:
        if not isinstance(r, dict):
            continue
        surnames = [surname(str(a)) for a in (r.get("authors") or []) if a]
        target = int(r.get("target") or 0)
        for name in reference_names(r, surnames):
            key = name_key(name)
            if (key, target) not in seen:
                seen.add((key, target))
                out.append(NameUse(name, key, target))
    return out


# ------------------------------------------------------------------------------ across papers


@dataclass
class Name:
    """A name and the target it stands for, with its support."""

    key: str
    name: str           # the commonest surface form
    target: str         # corpus paper id or work id
    support: int        # citing papers using the name for the target
    share: float        # of the citing papers using the name, the share pointing to the target
    first_year: int | None   # the earliest citing paper's year


def aggregate_names(uses: Iterable[tuple[str, str, str, int | None]], *, min_support: int = MIN_SUPPORT,
                    min_share: float = MIN_SHARE) -> list[Name]:
    """``(citing paper, target, name, citing year)`` uses -> the names that stand for a target
    (see the module doc), strongest first."""
    papers: dict[tuple[str, str], set[str]] = defaultdict(set)
    forms: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    years: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_key: dict[str, set[str]] = defaultdict(set)
    for citing, target, name, year in uses:
        k = name_key(name)
        papers[(k, target)].add(citing)
        forms[(k, target)][name] += 1
        by_key[k].add(citing)
        if year is not None:
            years[(k, target)].append(year)
    out = []
    for (k, target), citing in papers.items():
        share = len(citing) / len(by_key[k])
        form = max(forms[(k, target)].items(), key=lambda kv: (kv[1], kv[0]))[0]
        need = max(min_support, MIN_SUPPORT_PLAIN) if is_plain(form) else min_support
        if len(citing) >= need and share >= min_share:
            ys = years.get((k, target))
            out.append(Name(k, form, target, len(citing), round(share, 4), min(ys) if ys else None))
    return sorted(out, key=lambda n: (-n.support, n.key, n.target))
