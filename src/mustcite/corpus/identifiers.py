"""Identifiers of a paper or a reference: DOIs, arXiv ids and the paper ids inside venue page URLs.

:func:`identifier_keys` gives comparable keys (``doi:...``, ``arxiv:...``, ``acl:...``,
``openreview:...``, ``nips:...``, ``pmlr:...``, ``cvf:...``, ``ecva:...``). The corpus build merges
records of several sources by them, and the linker and check-refs look references up by them.

A NeurIPS proceedings hash alone names no paper: the proceedings reuse hashes across years (the
hash of "Attention is All you Need", 2017, is also that of a 2006 paper), so :func:`year_scoped`
says which keys only identify a paper together with its year.
"""

from __future__ import annotations

import re

_DOI = re.compile(r"(10\.\d{4,9}/[^\s\"<>{}]+)", re.I)
_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
_ARXIV_OLD = re.compile(r"\b([a-z][a-z.\-]+/\d{7})(?:v\d+)?\b", re.I)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf|html)/([^\s?#]+?)(?:v\d+)?(?:\.pdf)?(?:[?#]|$)", re.I)
_ACL_URL = re.compile(r"aclanthology\.org/(?:anthology/)?([A-Z]\d{2}-\d{4}|\d{4}\.[a-z0-9\-]+\.\d+)(?:\.pdf)?/?$", re.I)
_ACL_DOI = re.compile(r"^10\.18653/v1/(.+)$", re.I)
_OPENREVIEW = re.compile(r"openreview\.net/(?:forum|pdf)\?id=([A-Za-z0-9_\-]+)")
_NIPS_HASH = re.compile(r"(?:papers\.nips\.cc|proceedings\.neurips\.cc)/paper(?:_files/paper)?/(?:\d{4}/)?"
                        r"(?:hash|file)/([0-9a-f]{32})")
_PMLR = re.compile(r"proceedings\.mlr\.press/(v\d+/[a-z0-9\-_]+?)(?:/[^/]*)?(?:\.html|\.pdf)?$", re.I)
#: CVF open access: ``content/CVPR2023/html/Liu_Title_CVPR_2023_paper.html`` (html and pdf give one key)
_CVF = re.compile(r"openaccess\.thecvf\.com/content(?:_[a-z]+)?_?/?(?:[A-Za-z]+\d{4}/)?(?:html|papers)/"
                  r"(?:[^/]+/)?([^/]+?)_paper\.(?:html|pdf)", re.I)
#: JMLR: ``jmlr.org/papers/v24/18-080.html`` (and ``.pdf``, ``/papers/volume24/...``)
_JMLR = re.compile(r"jmlr\.org/papers/(?:v|volume)(\d+)/([0-9a-z\-]+?)(?:[./]|$)", re.I)
#: ECVA (ECCV): ``papers/eccv_2022/papers_ECCV/html/8094_ECCV_2022_paper.php``
_ECVA = re.compile(r"ecva\.net/papers/(eccv_\d{4})/papers_ECCV/(?:html|papers)/(\d+)_ECCV", re.I)


def normalize_doi(value: str | None) -> str | None:
    """``https://doi.org/10.1/ABC`` / ``doi:10.1/abc`` -> ``10.1/abc`` (lower case); None if none."""
    m = _DOI.search(value or "")
    return m.group(1).rstrip(".,;").lower() if m else None


def normalize_arxiv(value: str | None) -> str | None:
    """An arXiv id (``1706.03762``, ``cs/0112017``) in an id, URL, DOI or ``arXiv:...`` string,
    without its version; None if none."""
    v = (value or "").strip()
    if not v:
        return None
    m = _ARXIV_URL.search(v)
    if m:
        v = m.group(1)
    m = re.search(r"10\.48550/arxiv\.(.+)$", v, re.I)
    if m:
        v = m.group(1)
    m = _ARXIV_NEW.search(v)
    if m:
        return m.group(1)
    m = _ARXIV_OLD.search(v)
    return m.group(1).lower() if m else None


def identifier_keys(*, doi: str | None = None, arxiv: str | None = None, url: str | None = None,
                    pdf: str | None = None) -> list[str]:
    """Comparable keys (``doi:...``, ``arxiv:...``, ``acl:...``, ``openreview:...``, ``nips:...``,
    ``pmlr:...``, ``cvf:...``, ``ecva:...``, ``jmlr:...``) of a paper or reference; an ACL DOI and an ACL
    Anthology URL give the same key."""
    keys: list[str] = []
    d = normalize_doi(doi)
    a = normalize_arxiv(arxiv)
    for u in (url, pdf):
        u = (u or "").strip()
        if not u:
            continue
        if "arxiv.org" in u.lower():
            a = a or normalize_arxiv(u)
        elif "doi.org/" in u.lower():
            d = d or normalize_doi(u)
        for pat, tag in ((_ACL_URL, "acl"), (_OPENREVIEW, "openreview"), (_NIPS_HASH, "nips"), (_PMLR, "pmlr"),
                         (_CVF, "cvf")):
            m = pat.search(u)
            if m:
                keys.append(f"{tag}:{m.group(1).lower()}")
        m = _JMLR.search(u)
        if m:
            keys.append(f"jmlr:v{m.group(1)}/{m.group(2).lower()}")
        m = _ECVA.search(u)
        if m:
            keys.append(f"ecva:{m.group(1).lower()}/{m.group(2)}")
    if d:
        if d.startswith("10.48550/arxiv."):
            a = a or normalize_arxiv(d)
        keys.append(f"doi:{d}")
        m = _ACL_DOI.match(d)
        if m:
            keys.append(f"acl:{m.group(1).lower()}")
    if a:
        keys.append(f"arxiv:{a}")
    return list(dict.fromkeys(keys))


#: key kinds that name a paper only together with its year
YEAR_SCOPED_KINDS = frozenset({"nips"})


def year_scoped(key: str) -> bool:
    """Whether ``key`` (from :func:`identifier_keys`) identifies a paper only within one year."""
    return key.split(":", 1)[0] in YEAR_SCOPED_KINDS
