"""Person names: folding, "same person", and the alignment of two author lists.

Names are compared by their words folded to ASCII lower case (``"Nikola Đukić"`` ->
``["nikola", "dukic"]``, ``"Jean-Philippe Thiran"`` -> ``["jean", "philippe", "thiran"]``). Two names
are the same person when their last words agree, or the last word of one is a word of the other
(particles and name order: "Luc Van Gool" / "L. Van Gool" / "Gool", "Wei Zhang" / "Zhang Wei"), or
their last words differ by an OCR/transliteration slip (rapidfuzz ratio >= 85 on words of 5+
letters, or one letter apart under the same first name: "Daniel Kuhn" / "Daniel Huhn"); first names are
not compared otherwise (initials, nicknames and middle names vary too much).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from ..corpus.records import normalize_title

_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
#: letters that Unicode decomposition leaves alone ("Łukasz", "Kıcıman", "Đukić", "Groß")
_FOLD = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ß": "ss", "ı": "i"})


def name_tokens(name: str) -> list[str]:
    """The folded words of a name, without "Jr."/"III"; ``["ashish", "vaswani"]``."""
    n = re.sub(r"['’`]", "", (name or "").translate(_FOLD))        # "Ch'ng" / "Chng", "O'Brien" / "OBrien"
    if not n.isascii():
        n = unicodedata.normalize("NFKD", n)
    if n.count(",") == 1:                  # "Zimmert, J." -> "J. Zimmert"
        family, given = n.split(",")
        n = f"{given} {family}"
    toks = normalize_title(n).split()
    while len(toks) > 1 and toks[-1] in _SUFFIXES:
        toks.pop()
    return toks


def same_person(a: str, b: str) -> bool:
    ta, tb = name_tokens(a), name_tokens(b)
    if not ta or not tb:
        return False
    la, lb = ta[-1], tb[-1]
    if la == lb:
        return True
    if (len(la) > 1 and la in tb) or (len(lb) > 1 and lb in ta):
        return True
    if len(la) >= 5 and len(lb) >= 5 and fuzz.ratio(la, lb) >= 85:
        return True
    if len(ta) >= 2 and len(tb) >= 2 and ta[0] == tb[0] and len(ta[0]) > 1 and min(len(la), len(lb)) >= 4 \
            and Levenshtein.distance(la, lb) == 1:
        return True          # one letter apart under the same first name: a slip ("Daniel Kuhn" / "Daniel Huhn")
    # one side wrote family and given names run together or the other way round ("Zhang Wei" / "Wei Zhang")
    return len(ta) >= 2 and len(tb) >= 2 and ta[0] == lb and tb[0] == la


@dataclass
class Alignment:
    """How an entry's author list lines up with a record's."""

    matched: list[tuple[int, int]] = field(default_factory=list)   # (entry index, record index)
    extra: list[int] = field(default_factory=list)                  # entry authors not in the record
    missing: list[int] = field(default_factory=list)                # record authors not in the entry

    @property
    def in_order(self) -> bool:
        rec = [j for _, j in self.matched]
        return rec == sorted(rec)


def align(entry: list[str], record: list[str]) -> Alignment:
    """Each entry author matched to the first unmatched record author who is the same person,
    preferring the one at the same position."""
    used: set[int] = set()
    out = Alignment()
    for i, a in enumerate(entry):
        j_hit = None
        if i < len(record) and i not in used and same_person(a, record[i]):
            j_hit = i
        else:
            for j, b in enumerate(record):
                if j not in used and same_person(a, b):
                    j_hit = j
                    break
        if j_hit is None:
            out.extra.append(i)
        else:
            used.add(j_hit)
            out.matched.append((i, j_hit))
    out.missing = [j for j in range(len(record)) if j not in used]
    return out
