"""The paper record and its stable id.

``paper_id`` is a UUID5 over the normalised title, venue, year and source id, as MasterSet does
(MasterSet paper, Section 3): the same input always gives the same id, on any machine.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

#: Namespace for paper ids (fixed forever: changing it changes every id).
PAPER_NAMESPACE = uuid.UUID("6f1c0d1e-8a53-5b0e-9a57-6d75737463a1")

#: The 15 MasterSet venue codes.
VENUES: tuple[str, ...] = ("NeurIPS", "ICML", "ICLR", "AAAI", "IJCAI", "CVPR", "ICCV", "ECCV",
                           "ACL", "EMNLP", "NAACL", "COLT", "UAI", "AISTATS", "JMLR")

_WS = re.compile(r"\s+")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


_SHORT_NAME = re.compile(r"^\s*([^:]{2,40}?)\s*:\s+\S")


def title_short_name(title: str | None) -> str:
    """The method or dataset name a title starts with, lower-cased ("SqueezeLLM: Dense-and-Sparse
    Quantization" -> "squeezellm"): the text before a colon when it is at most three words; else ""."""
    m = _SHORT_NAME.match(title or "")
    if not m or len(m.group(1).split()) > 3:
        return ""
    return m.group(1).strip().lower()


@lru_cache(maxsize=1 << 19)
def normalize_title(title: str | None) -> str:
    """Lower-case ASCII-folded title with punctuation and whitespace collapsed to single spaces.

    Used for ids, exact-title dedup and exact-title linking (so ``"BERT: Pre-training..."`` and
    ``"BERT_ Pre-Training..."`` normalise alike).
    """
    if not title:
        return ""
    if title.isascii():  # fast path, same result: NFKD and combining marks only touch non-ASCII
        t = title.lower()
    else:
        t = unicodedata.normalize("NFKD", title)
        t = "".join(ch for ch in t if not unicodedata.combining(ch))
        t = t.lower()
    t = _NON_ALNUM.sub(" ", t)
    return _WS.sub(" ", t).strip()


@lru_cache(maxsize=1 << 18)
def surname_key(name: str | None) -> str:
    """The family name of an author, folded for comparison ("Smith, J." and "John Smith" -> "smith")."""
    name = (name or "").strip()
    family = name.split(",")[0] if "," in name else (name.split() or [""])[-1]
    return normalize_title(family)


def make_paper_id(title: str, venue: str, year: int | None, source_id: str = "") -> str:
    key = "|".join([normalize_title(title), venue.lower(), str(year or ""), source_id or ""])
    return str(uuid.uuid5(PAPER_NAMESPACE, key))


@dataclass
class Paper:
    """One paper of the corpus (a pool candidate or a query)."""

    paper_id: str
    title: str
    venue: str
    year: int | None
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    source: str = ""             # dataset/source folder the record came from, e.g. "paperlists"
    source_id: str = ""          # the id inside that source (OpenReview id, Anthology id, ...)
    url: str = ""
    pdf: str = ""
    track: str = ""
    #: every (source, source_id) this paper was seen under, after cross-source dedup
    source_ids: list[str] = field(default_factory=list)
    #: the other venues of the same work ("ICML 2024"), folded into this, its earliest version
    also_published: list[str] = field(default_factory=list)
    doi: str = ""
    #: field -> the source its value came from ("abstract" -> "mlanthology")
    field_sources: dict[str, str] = field(default_factory=dict)

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract and self.abstract.strip())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Paper:
        known = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in known}
        if isinstance(kw.get("field_sources"), list):          # a Parquet map reads as (key, value) pairs
            kw["field_sources"] = dict(kw["field_sources"])
        for k in ("doi",):
            if kw.get(k) is None:
                kw.pop(k, None)
        if kw.get("field_sources") is None:
            kw.pop("field_sources", None)
        return cls(**kw)
