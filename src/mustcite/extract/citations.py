"""In-text citations: find them in a sentence and resolve each to its reference entry.

Three styles: ``numeric`` (``[4]``, ``[3, 7, 14]``, ``[2-5]``, ``[2\u20135]``, ``[4; 9]``), ``author-year``
(``(Smith et al., 2020; Lee and Kim, 2019a)``, ``Smith et al. (2020a, b)``, ``[Smith, 2020]``) and
``alpha`` (``[DKS17]``, ``[KPR+17, Abo18]``). Numeric keys resolve by the number in the entry's own
``[n]`` label (list position only when the list has no labels), author-year keys by surname + year +
suffix, alpha keys by tag. OCR look-alikes in numeric keys (``[l0]``, ``[1O]``) are repaired when the
repaired number names an entry.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from .mathspans import math_spans
from .references import RefEntry, fold, normalize_tag, ocr_digits, surname

STYLES = ("numeric", "author-year", "alpha")


@dataclass
class Mention:
    """One key of an in-text citation, with the entry (index into the entry list) it names."""
    start: int
    end: int
    key: str                  # the key as written: "14", "Smith et al., 2020", "DKS17"
    entry: int | None         # index into RefIndex.entries, None when unresolved
    repaired: bool = False    # an OCR digit was repaired to resolve it


class RefIndex:
    """Look-up tables from cite keys to entries of one reference list."""

    def __init__(self, entries: list[RefEntry], *, by_position: bool | None = None):
        self.entries = entries
        self.by_number: dict[int, int] = {}
        self.number_of: dict[int, int] = {}       # entry index -> the number that cites it
        self.superseded: set[int] = set()          # entries whose number a later entry took over
        self.by_tag: dict[str, int] = {}
        self.by_author_year: dict[tuple[str, str], list[int]] = defaultdict(list)
        labelled = sum(e.number is not None for e in entries)
        # True when most entries carry no [n] label: numbers then mostly follow list position
        self.numbers_by_position = by_position if by_position is not None else labelled < len(entries) / 2
        prev = 0
        for i, e in enumerate(entries):
            # an entry's own label wins; an unlabelled entry takes the previous label + 1
            # (its list position when the list has no labels at all)
            n = e.number if (e.number is not None and not by_position) else prev + 1
            if n in self.by_number:
                # a repeated label: Nougat restarted the list (a page re-read after a run of
                # made-up entries); the later entry is the one the body means
                self.superseded.add(self.by_number[n])
            self.by_number[n] = i
            self.number_of[i] = n
            prev = n
        for i, e in enumerate(entries):
            if e.tag:
                self.by_tag.setdefault(e.tag.lower(), i)
        self._index_author_year()

    def _index_author_year(self) -> None:
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, e in enumerate(self.entries):
            # Nougat's natbib key in front of an entry is sometimes wrong (another entry's key),
            # so each entry is indexed under the key's name/year and under its parsed first
            # author and year
            keys: set[tuple[str, str]] = set()
            if e.key_names and e.key_year:
                first = re.split(r"\s+(?:et al\.?|and|&)\b|,", e.key_names)[0]
                keys.add((fold(first.split()[-1] if first.split() else first), e.key_year))
            if e.authors and e.year:
                keys.add((fold(surname(e.authors[0])), str(e.year)))
            for n, year in keys:
                if not n:
                    continue
                self.by_author_year[(n, year)].append(i)
                groups[(n, year[:4])].append(i)
        # natbib adds a/b suffixes to same-first-author same-year entries in list order
        for (n, y), idx in groups.items():
            idx = sorted(set(idx))
            if len(idx) > 1:
                for k, i in enumerate(idx[:26]):
                    sfx = (n, y + chr(97 + k))
                    if i not in self.by_author_year[sfx]:
                        self.by_author_year[sfx].append(i)

    def _shape(self, i: int) -> str:
        """'one', 'two' or 'many' authors, from the natbib key when there is one."""
        e = self.entries[i]
        if e.key_names:
            return _names_shape(e.key_names)
        return {0: "one", 1: "one", 2: "two"}.get(len(e.authors), "many")

    # --- resolution --------------------------------------------------------------------------
    def resolve_number(self, n: int) -> int | None:
        return self.by_number.get(n)

    def resolve_tag(self, tag: str) -> int | None:
        return self.by_tag.get(normalize_tag(tag).lower())

    def resolve_author_year(self, names: str, year: str) -> int | None:
        """Entry cited as ``names, year`` ("Smith et al.", "2020a"); None if absent or ambiguous."""
        parts = [p for p in re.split(r"\s+(?:et al\.?|and|&)\s*|,\s*", names.strip()) if p.strip()]
        # a leading word caught as a name ("Recently, Smith and Lee") gets one retry without it
        for start in range(min(2, len(parts))):
            found, idx = self._resolve_parts(parts[start:], names, year)
            if found:
                return idx
        return None

    def _resolve_parts(self, parts: list[str], names: str, year: str) -> tuple[bool, int | None]:
        first = fold(parts[0].split()[-1])
        cands = self.by_author_year.get((first, year), [])
        if not cands and len(year) == 5:
            cands = self.by_author_year.get((first, year[:4]), [])
        if not cands and len(parts[0].split()) > 1:      # "van den Oord": try the whole phrase
            cands = self.by_author_year.get((fold(parts[0]), year), [])
        cands = sorted(set(cands))
        if not cands:
            return False, None
        if len(cands) > 1:        # entries whose own key or parsed author+year say exactly this
            strong = [i for i in cands if self._exact(i, first, year)]
            if strong:
                cands = strong
        if len(cands) > 1:        # "Bietti, 2021" vs "Bietti et al., 2021"
            narrowed = [i for i in cands if self._shape(i) == _names_shape(names)]
            if narrowed:
                cands = narrowed
        if len(cands) > 1 and len(parts) > 1:
            second = fold(parts[1].split()[-1]) if parts[1].split() else ""
            narrowed = [i for i in cands if len(self.entries[i].authors) > 1
                        and fold(surname(self.entries[i].authors[1])) == second]
            if narrowed:
                cands = narrowed
        if len(cands) == 1 or len(year) == 5:
            return True, cands[0]
        return True, None

    def _exact(self, i: int, first: str, year: str) -> bool:
        e = self.entries[i]
        if e.key_names and e.key_year == year:
            k = re.split(r"\s+(?:et al\.?|and|&)\b|,", e.key_names)[0].split()
            if k and fold(k[-1]) == first:
                return True
        return bool(len(year) == 4 and e.authors and e.year == int(year)
                    and fold(surname(e.authors[0])) == first)


# --- patterns -------------------------------------------------------------------------------
_BRACKET = re.compile(r"\[([^\[\]]{1,200})\]")
_NUM_TOKEN = r"[0-9lIO]{1,4}"
_NUM_GROUP = re.compile(rf"^\s*{_NUM_TOKEN}(?:\s*[-\u2013\u2014]\s*{_NUM_TOKEN})?"
                        rf"(?:\s*[,;]\s*{_NUM_TOKEN}(?:\s*[-\u2013\u2014]\s*{_NUM_TOKEN})?)*\s*$")
_ALPHA_TOKEN = re.compile(r"^[A-Z][A-Za-z+\-]{0,10}(?:\\\(\{\}\^\{[^{}]*\}\\\))?[A-Za-z+]{0,4}\d{2}[a-z]?$")
_YEAR_TOK = r"(?:1[89]|20)\d{2}[a-z]?"
_NAME = (r"(?:(?:[Vv]an|[Vv]on|[Dd]e|[Dd]a|[Dd]er|[Dd]en|[Ll]e|[Dd]ella|[Dd]i|[Dd]u|[Ee]l|[Aa]l)\s+){0,3}"
         r"[A-Z][\w'\u2019\-]+")
_NAMES = rf"{_NAME}(?:\s+et\s+al\.?|\s*(?:,\s*{_NAME})*,?\s+(?:and|&)\s+{_NAME})?"
# narrative: "Smith et al. (2020a)", "Smith and Lee [2019]", "Smith (2020, 2021b)"
_NARRATIVE = re.compile(rf"({_NAMES})(?:'s)?\s*[(\[]\s*"
                        rf"((?:{_YEAR_TOK}|[a-z])(?:\s*[,;]\s*(?:{_YEAR_TOK}|[a-z]))*)\s*[)\]]")
# one part of a parenthetical group: "e.g., Smith et al., 2020a, 2021"
_PAREN_PART = re.compile(rf"({_NAMES})(?:'s)?,?\s+((?:{_YEAR_TOK}|[a-z]\b)(?:\s*,\s*(?:{_YEAR_TOK}|[a-z]\b))*)")
_PAREN = re.compile(r"[(\[]([^()\[\]]{4,400})[)\]]")
_YEAR_IN = re.compile(r"(?:1[89]|20)\d\d")
# cheap narrative marker for style detection: "Smith (2020)", "et al. [2020a]"
_NARRATIVE_CHEAP_YEAR = re.compile(r"[(\[]\s*(?:1[89]|20)\d\d")
_NARRATIVE_CHEAP = re.compile(r"(?:et al\.|[A-Z][a-z]+)\s*[(\[](?:1[89]|20)\d\d[a-z]?[)\],;]")


# A numeric bracket that is a list of values, not a citation: "num_layers in [2, 3, 4]",
# "batch size from [16, 32, 64]". Cue words in the sentence plus a bracket right after
# "in"/"from"/"of"/"=", or a sibling bracket that is plainly numeric data ([0.3, 0.5], [0, 1, 2]).
_VALUE_CUE = re.compile(r"\b(?:grid|search(?:ed|es)?|sweep(?:s|ed)?|ranges?|hyper-?parameters?|tun(?:e|ed|es|ing)|"
                        r"values?|candidates?|chosen|selected|learning rates?|batch[ _-]?sizes?|layers|epochs|"
                        r"dim(?:ension)?s?|seeds?)\b", re.I)
_VALUE_LEAD = re.compile(r"(?:\bin|\bfrom|\bof|=|\u2208|:)\s*$")
_DATA_BRACKET = re.compile(r"\[\s*-?\d*\.\d+|\[\s*\d+(?:\.\d+)?e-?\d|\[\s*0\s*[,;\]]")


def _is_value_list(text: str, m: re.Match, index: RefIndex) -> bool:
    """True when the numeric bracket ``m`` is a list of values rather than a citation."""
    body = m.group(1)
    toks = [t.strip() for t in re.split(r"[,;\-\u2013\u2014]", body)]
    nums = [int(t) for t in toks if t.isdigit()]      # OCR look-alikes ("l0") are not judged here
    if not nums:
        return False
    if 0 in nums:
        return True
    top = max(index.by_number) if index.by_number else 0
    if top and len(nums) > 1 and max(nums) > 1.5 * top + 5:
        return True                       # "[64, 128, 256]" in a paper with 65 references
    lead = text[max(0, m.start() - 12):m.start()]
    if _VALUE_LEAD.search(lead) and (_VALUE_CUE.search(text) or _DATA_BRACKET.search(text)):
        return True
    return False


def _mask_math(s: str) -> str:
    """``s`` with inline math ``\\( .. \\)`` and display math ``\\[ .. \\]`` blanked (same length)."""
    parts: list[str] = []
    last = 0
    for a, b in math_spans(s, dollars=False):
        parts += [s[last:a], " " * (b - a)]
        last = b
    parts.append(s[last:])
    return "".join(parts)


def _expand_numeric(body: str, index: RefIndex, start: int, end: int) -> tuple[list[Mention], int]:
    """Mentions of one numeric bracket; returns (mentions, number of repaired tokens)."""
    out: list[Mention] = []
    repaired = 0
    for part in re.split(r"[,;]", body):
        part = part.strip()
        if not part:
            continue
        rng = re.split(r"\s*[-\u2013\u2014]\s*", part)
        nums: list[tuple[str, int | None, bool]] = []
        vals = []
        rep = False
        for tok in rng:
            if tok.isdigit():
                vals.append(int(tok))
            else:
                fixed = ocr_digits(tok)
                vals.append(int(fixed) if fixed is not None else None)
                rep = True
        if None in vals:
            continue
        if len(vals) == 2 and 0 < vals[1] - vals[0] <= 60:
            seq = list(range(vals[0], vals[1] + 1))
        else:
            seq = vals[:1] if len(vals) == 1 else vals
        for n in seq:
            i = index.resolve_number(n)
            if rep and i is None:
                continue                      # a repair that names nothing is not a citation
            if rep:
                repaired += 1
            nums.append((str(n), i, rep))
        out.extend(Mention(start, end, k, i, r) for k, i, r in nums)
    return out, repaired


def find_citations(sentence: str, style: str, index: RefIndex) -> list[Mention]:
    """All citation keys of ``style`` in ``sentence``, each resolved against ``index``.

    Returns mentions in text order; a group citation gives one mention per key. Unresolved keys
    come back with ``entry=None``.
    """
    text = _mask_math(sentence)
    out: list[Mention] = []
    if style == "numeric":
        for m in _BRACKET.finditer(text):
            body = m.group(1)
            if not _NUM_GROUP.match(body):
                continue
            if not any(c.isdigit() for c in body):
                continue
            if re.fullmatch(r"\s*[lIO]\s*", body) or re.fullmatch(r"\s*0\s*[,;]\s*1\s*", body):
                continue                      # "[l]" or the interval "[0, 1]"
            if _is_value_list(text, m, index):
                continue                      # hyper-parameter grid, not a citation
            ms, _ = _expand_numeric(body, index, m.start(), m.end())
            out.extend(ms)
    elif style == "alpha":
        for m in _BRACKET.finditer(text):
            toks = [t.strip() for t in re.split(r"[,;]", m.group(1))]
            if not toks or not all(_ALPHA_TOKEN.match(t) for t in toks):
                continue
            for t in toks:
                out.append(Mention(m.start(), m.end(), normalize_tag(t), index.resolve_tag(t)))
    elif style == "author-year":
        taken: list[tuple[int, int]] = []
        if not _YEAR_IN.search(text):
            return out
        for m in (_NARRATIVE.finditer(text) if _NARRATIVE_CHEAP_YEAR.search(text) else ()):
            names = m.group(1)
            for y in _years(m.group(2)):
                out.append(Mention(m.start(), m.end(), _key(names, y), index.resolve_author_year(names, y)))
            taken.append(m.span())
        for m in _PAREN.finditer(text):
            if any(a <= m.start() < b or a < m.end() <= b for a, b in taken):
                continue
            for part in m.group(1).split(";"):
                pm = _PAREN_PART.search(part)
                if not pm:
                    continue
                names = pm.group(1)
                for y in _years(pm.group(2)):
                    out.append(Mention(m.start(), m.end(), _key(names, y),
                                       index.resolve_author_year(names, y)))
        out.sort(key=lambda x: x.start)
    else:
        raise ValueError(f"unknown citation style {style!r}; expected one of {STYLES}")
    return out


def _names_shape(names: str) -> str:
    if re.search(r"et\s+al", names):
        return "many"
    if re.search(r"\s(?:and|&)\s", names):
        return "two" if names.count(",") == 0 else "many"
    return "one"


def _years(s: str) -> list[str]:
    """'2020a, b, 2021' -> ['2020a', '2020b', '2021']."""
    out: list[str] = []
    for tok in re.split(r"\s*[,;]\s*", s.strip()):
        if re.fullmatch(_YEAR_TOK, tok):
            out.append(tok)
        elif re.fullmatch(r"[a-z]", tok) and out:
            out.append(out[-1][:4] + tok)
    return out


def _key(names: str, year: str) -> str:
    return " ".join(names.split()) + ", " + year


def count_style_markers(text: str) -> dict[str, int]:
    """Rough counts of numeric, author-year and alpha citation markers in body text."""
    t = _mask_math(text)
    num = alpha = 0
    for m in _BRACKET.finditer(t):
        body = m.group(1)
        if _NUM_GROUP.match(body) and any(c.isdigit() for c in body):
            num += 1
        elif all(_ALPHA_TOKEN.match(x.strip()) for x in re.split(r"[,;]", body)):
            alpha += 1
    ay = len(_NARRATIVE_CHEAP.findall(t))
    ay += sum(1 for m in _PAREN.finditer(t) if _YEAR_IN.search(m.group(1)) and _PAREN_PART.search(m.group(1)))
    return {"numeric": num, "author-year": ay, "alpha": alpha}
