"""Names as evidence: the pool papers and works a text names ("we evaluate on VoxCeleb and HDTF").

Two sources of names:

* **what citing papers call them**: the short names the labelled papers give the pool entries they
  cite ("HDTF [35]", "CIFAR-10 [23]", :func:`mustcite.extract.works.paper_names`). For a text of
  year ``Y``, a name stands for a pool entry when at least ``MIN_SUPPORT`` labelled papers of year
  ``Y`` or earlier use it for that entry (``MIN_SUPPORT_PLAIN`` for a name of capitalised words
  only, "Adam") and at least ``MIN_SHARE`` of the labelled papers using the name point to it.
  A labelled paper never supports the names found in its own text (leave-one-out);
* **what the title says**: the name a pool title starts with ("SqueezeLLM: ..." -> "SqueezeLLM"),
  unless more than three pool papers share it or it is generic ("Survey: ...").

A text names an entry when a run of its words has the name's key (letters and digits,
lower-cased: "CIFAR 10", "CIFAR-10" and "cifar10" alike). A name written with capitals or digits
("CLIP", "GPT-4") is only found where the text writes it with capitals or digits too, so "clip the
gradients" names nothing.
"""

from __future__ import annotations

import pickle
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus.records import title_short_name
from ..extract.homoglyphs import fold
from ..extract.works import name_key
from ..extract.works.names import MIN_SHARE, MIN_SUPPORT, MIN_SUPPORT_PLAIN, TOKEN, is_plain
from ..io import load_pickle
from ..labels.papers import LabelledPaper
from .pool_table import PoolTable

#: title names too generic to say which paper is meant
_GENERIC = frozenset({"introduction", "review", "survey", "position", "tutorial", "overview", "abstract",
                      "preface", "editorial", "erratum", "keynote", "invitedtalk", "benchmark", "dataset"})
#: a title name shared by more pool papers than this names none of them
MAX_TITLE_PAPERS = 3
#: words a name may span in the text
MAX_WORDS = 4


@dataclass
class NameHit:
    """A pool entry a text names."""

    name: str           # as the text writes it
    support: int        # labelled papers that call the entry so (0: the name is its title's)
    from_title: bool    # the entry's title starts with the name


#: what may follow a name in a hyphenated word and leave it another name: a size or version ("GPT-4o",
#: "YOLO-v5", "Llama-2-7B") or one letter ("GPT-J") makes the whole word the name
_VERSION = re.compile(r"v?\d|[A-Za-z]$", re.I)


def _name_prefixes(word: str) -> list[int]:
    """The ends of the names a hyphenated or possessive word starts with, longest first: "SAGA" of
    "SAGA-like", "PyTorch" of "PyTorch's", "RADAR" of "RADAR-Vicuna-7B"; none followed by a version,
    a size or one letter ("GPT" of "GPT-4o", "Llama" of "Llama-2-7B", "GPT" of "GPT-J")."""
    out = []
    if word[-2:].lower() == "'s":
        word = word[:-2]
        out.append(len(word))
    for m in re.finditer("-", word):
        if _VERSION.match(word[m.end():]):
            break
        out.append(m.start())
    return sorted(out, reverse=True)


class NameIndex:
    """The pool entries by name: from the labelled papers' citation contexts and from the titles."""

    def __init__(self, pool: PoolTable | list[dict[str, Any]], labelled: list[LabelledPaper],
                 labelled_years: np.ndarray):
        pool = PoolTable.from_records(pool)
        self.ids = pool.ids
        row = {pid: i for i, pid in enumerate(self.ids)}
        by_title: dict[str, list[int]] = defaultdict(list)
        for i, title in enumerate(pool.titles):
            key = name_key(title_short_name(title))
            if len(key) >= 3 and not key.isdigit() and key not in _GENERIC:
                by_title[key].append(i)
        self.title_rows = {k: rows for k, rows in by_title.items() if len(rows) <= MAX_TITLE_PAPERS}
        uses: dict[str, list[tuple[int, int]]] = defaultdict(list)     # key -> (labelled row, pool row)
        forms: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.labelled_row = {p.id: i for i, p in enumerate(labelled)}
        for li, p in enumerate(labelled):
            for pid, names in p.names.items():
                if pid not in row:
                    continue
                for name in dict.fromkeys(names):
                    key = name_key(name)
                    if len(key) >= 2:
                        uses[key].append((li, row[pid]))
                        forms[key][name] += 1
        self.years = labelled_years
        self.uses = {k: np.asarray(v, dtype=np.int64) for k, v in uses.items()}
        #: whether a mined name needs capitals or digits in the text, and the support it needs
        self.cased = {k: any(ch.isupper() or ch.isdigit() for ch in max(f, key=f.get)) for k, f in forms.items()}
        self.need = {k: MIN_SUPPORT_PLAIN if is_plain(max(f, key=f.get)) else MIN_SUPPORT for k, f in forms.items()}

    def __len__(self) -> int:
        return len(self.uses) + len(self.title_rows)

    def save(self, path: str | Path) -> None:
        """Write the index into the file ``path`` (read back by :meth:`load`)."""
        with open(path, "wb") as fh:
            pickle.dump({k: v for k, v in self.__dict__.items() if k != "ids"}, fh, protocol=5)

    @classmethod
    def load(cls, path: str | Path, pool: PoolTable) -> NameIndex:
        """The index :meth:`save` wrote for this ``pool``."""
        state = load_pickle(path)
        new = object.__new__(cls)
        new.__dict__.update(state)
        new.ids = pool.ids
        return new

    def mined(self, key: str, year: int, exclude: str | None = None) -> dict[int, int]:
        """``{pool row: support}`` of the entries a mined name stands for, as of ``year``, without
        the labelled paper ``exclude``."""
        arr = self.uses.get(key)
        if arr is None:
            return {}
        ok = self.years[arr[:, 0]] <= year
        own = self.labelled_row.get(exclude) if exclude else None
        if own is not None:
            ok &= arr[:, 0] != own
        arr = arr[ok]
        if not len(arr):
            return {}
        citing = len(np.unique(arr[:, 0]))
        rows, counts = np.unique(np.unique(arr, axis=0)[:, 1], return_counts=True)   # papers per entry
        need = self.need.get(key, MIN_SUPPORT)
        return {int(r): int(c) for r, c in zip(rows, counts) if c >= need and c / citing >= MIN_SHARE}

    def share(self, key: str, row: int, year: int) -> float:
        """The share of the labelled papers of ``year`` or earlier using the name ``key`` that use it
        for the pool entry ``row`` (0 when none uses it)."""
        arr = self.uses.get(key)
        if arr is None:
            return 0.0
        arr = arr[self.years[arr[:, 0]] <= year]
        citing = len(np.unique(arr[:, 0]))
        return len(np.unique(arr[arr[:, 1] == row, 0])) / citing if citing else 0.0

    def occurrences(self, text: str, year: int, pool_years: np.ndarray, *, exclude: str | None = None):
        """Every run of ``text``'s words that names pool entries of ``year`` or earlier, as
        ``(start, end, surface, {pool row: NameHit})`` with ``start``/``end`` the run's character
        offsets (``exclude``: the labelled paper the text is, left out of the support). A name
        written with look-alike letters of another script ("BЕRT", a Cyrillic "Е") is read as the
        Latin name (:func:`~mustcite.extract.homoglyphs.fold`; the same offsets)."""
        found = list(TOKEN.finditer(fold(text or "")))
        toks = [m.group(0) for m in found]
        for n in range(1, MAX_WORDS + 1):
            for i in range(len(toks) - n + 1):
                words = toks[i:i + n]
                key = name_key("".join(words))
                if len(key) < 2 or (key not in self.uses and key not in self.title_rows):
                    continue
                if n > 1 and any(len(w) < 2 for w in words[:-1]):
                    continue            # "S D" is no "SD"; "Llama 2" is "Llama2"
                surface = " ".join(words)
                cased = any(ch.isupper() or ch.isdigit() for ch in surface)
                hits: dict[int, NameHit] = {}
                if key in self.uses and (cased or not self.cased[key]):
                    for r, support in self.mined(key, year, exclude).items():
                        if pool_years[r] <= year:
                            hits[r] = NameHit(surface, support, False)
                for r in self.title_rows.get(key, ()) if cased else ():
                    if pool_years[r] <= year:
                        hits.setdefault(r, NameHit(surface, 0, True)).from_title = True
                if hits:
                    yield found[i].start(), found[i + n - 1].end(), surface, hits
        for m in found:         # the name a hyphenated or possessive word starts with ("SAGA-like")
            for end in _name_prefixes(m.group(0)):
                surface = m.group(0)[:end]
                for start, stop, _, hits in self.occurrences(surface, year, pool_years, exclude=exclude):
                    if start == 0 and stop == end:
                        yield m.start(), m.start() + end, surface, hits

    def named(self, text: str, year: int, pool_years: np.ndarray, *, exclude: str | None = None,
              ) -> dict[str, NameHit]:
        """``{pool id: NameHit}`` of the entries of ``year`` or earlier that ``text`` names
        (``exclude``: the labelled paper the text is, left out of the support)."""
        out: dict[str, NameHit] = {}
        for _, _, _, hits in self.occurrences(text, year, pool_years, exclude=exclude):
            for r, hit in hits.items():
                have = out.setdefault(self.ids[r], NameHit(hit.name, 0, False))
                have.support = max(have.support, hit.support)
                have.from_title = have.from_title or hit.from_title
        return out
