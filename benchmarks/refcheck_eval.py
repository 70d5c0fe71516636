"""Evaluation of ``mustcite check-refs`` on BibTeX written from real corpus papers, intact and perturbed.

Run::

    .venv/bin/python benchmarks/refcheck_eval.py            # writes benchmarks/results/refcheck_eval.json
    .venv/bin/python benchmarks/refcheck_eval.py --split dev  # the figures of the tuning split only

Everything is deterministic (seeded by SHA-1 of each paper id and the case kind); nothing goes online.

**Population.** Corpus papers (``<work>/corpus/papers.parquet``) of the venue-years the corpus holds
completely (:func:`mustcite.refcheck.index.complete_venue_years`), with at least one author and a
title of at least four words. **Split**: a paper is *dev* when ``int(sha1(paper_id)[:8], 16) % 10 < 3``,
else *test*. The rules of the checker were tuned on dev cases only; the figures reported are those
of the test cases (dev figures are written beside them).

**Writing an entry.** Each case's BibTeX style is chosen from the hash of (paper id, kind):

* ``dblp``: ``First Last`` names, DBLP's long booktitle ("Advances in Neural Information Processing
  Systems 33: Annual Conference on ... {NeurIPS} 2020", "Proceedings of the 36th International
  Conference on Machine Learning, {ICML} 2019", "J. Mach. Learn. Res." ...), the record's URL;
* ``scholar``: ``Last, First`` names, Google Scholar's booktitle ("Advances in neural information
  processing systems", "Proceedings of the IEEE/CVF conference on computer vision and pattern
  recognition"), sentence-case title; lists of more than six authors cut to five plus ``and others``;
* ``short``: initials (``A. Vaswani``), abbreviated venue ("{NeurIPS}", "Proc. ICML", "CVPR"), the
  title's capitalised words protected in braces (``{BERT}``);
* ``site``: what the proceedings site gives: PMLR series, Curran Associates volume, CVF
  "(CVPR)" booktitle, ACL Anthology DOI/URL/publisher, OpenReview URL for ICLR, JMLR volume;
* ``latex``: ``Last, First`` with accented letters written as LaTeX (``{\\"o}``, ``{\\'e}``,
  ``{\\l}``), double-braced title.

**Kinds** (the perturbation leaves every other field intact):

* ``intact``: the paper as published; expected ``verified``; a *false positive* is ``mismatch`` or
  ``not_found``;
* ``wrong_year``: the year moved by -2, -1, +1 or +2 (within 1987-2025), also inside the venue text;
* ``wrong_venue``: another held venue of the same field (ML: NeurIPS/ICML/ICLR/AISTATS/UAI/COLT/JMLR;
  vision: CVPR/ICCV/ECCV; language: ACL/EMNLP/NAACL; AI: AAAI/IJCAI), none of the paper's own;
* ``authors_dropped``: one author removed (papers with 2+ authors; no ``and others``);
* ``authors_added``: an author of another corpus paper inserted after the first author;
* ``authors_swapped``: two authors with different family names exchanged;
* ``title_joined``: the first half of the title's words followed by the second half of the title of
  another paper of the same venue (the entry keeps the first paper's authors, venue and year);
* ``arxiv_version``: cited as an arXiv preprint (``journal = {arXiv preprint arXiv:ID}``,
  ``eprint``/``archivePrefix``, or DBLP's ``CoRR abs/ID``) of the same or the previous year; the
  arXiv ids are synthetic (the corpus holds none; they cannot be checked offline);
* ``wrong_identifier``: a DOI or URL of another paper of the same venue: the ACL Anthology DOI
  (``10.18653/v1/ID``) for ACL/EMNLP/NAACL papers, the OpenReview / NeurIPS-proceedings / PMLR
  URL for the others (papers without such an id are skipped);
* ``invented``: a title made of the first half of one corpus title and the second half of another
  (from other venue-years), with the authors of a real paper of the claimed venue-year; the venue-year
  is a held one;
* ``misattributed``: a real work of the catalogue of cited works (not a corpus paper: its title
  matches no corpus title exactly or fuzzily) claimed at a held venue-year in the corpus range near
  its own year.

* ``side_track_intact``: papers of the ancillary tracks the corpus leaves out (``side_tracks.parquet``:
  Findings, Datasets & Benchmarks, workshops, demos, industry tracks) of a held venue, written with
  that venue's main booktitle, as authors usually cite them; expected ``unverifiable`` (the corpus
  holds main tracks only); a false positive is ``mismatch`` or ``not_found``.

* ``real_references``: reference strings as authors wrote them, from the NeurIPS full texts
  (``<work>/extract/*.json``) that the citation linker tied to a corpus paper by its exact title:
  title, authors and year as the extraction parsed them, the venue read from the string after the
  title. Expected ``verified``; the flagged share is an upper bound of the false-positive rate on
  real citations (it also counts the authors' own errors and the parser's).

A perturbed case is *detected* when the status is ``mismatch`` or ``not_found``; ``field_rate``
also counts how often an issue names the perturbed field (year, venue, authors, title, doi/identifier).

* ``outside_intact``: catalogue works (kind ``paper``, not corpus papers, cited by 2+ corpus papers)
  written as an arXiv preprint (when the catalogue has an arXiv id) or as a journal/other entry with
  the catalogue's venue text; expected ``unverifiable`` (or ``verified``); a false positive is
  ``mismatch`` or ``not_found``. Works whose catalogue venue names a held venue are left out (the
  catalogue's venue text is what citing authors wrote, often a workshop or track the corpus lacks).

The JSON gives, per split and kind: n, detected (or false positives), the rate with a Wilson 95 %
interval, the status counts and the share answered ``unverifiable``; then the speed figures: entries
per second from a warm process (:func:`mustcite.refcheck.check_entries` on the test entries) and the
wall time and peak RSS of a new process checking a 60-entry ``.bib``
(``/usr/bin/time -v .venv/bin/mustcite check-refs sample60.bib --format json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "refcheck_eval.json"

KINDS = ("intact", "wrong_year", "wrong_venue", "authors_dropped", "authors_added", "authors_swapped",
         "title_joined", "arxiv_version", "wrong_identifier", "invented", "misattributed")
FIELD_OF = {"wrong_year": ("year",), "wrong_venue": ("venue",), "authors_dropped": ("authors",),
            "authors_added": ("authors",), "authors_swapped": ("authors",), "title_joined": ("title",),
            "arxiv_version": ("venue",), "wrong_identifier": ("doi", "identifier")}
#: kinds whose entries are real and correct: a mismatch or not_found there is a false positive
FP_KINDS = ("intact", "outside_intact", "side_track_intact", "real_references")
STYLES = ("dblp", "scholar", "short", "site", "latex")
GROUPS = [("NeurIPS", "ICML", "ICLR", "AISTATS", "UAI", "COLT", "JMLR"), ("CVPR", "ICCV", "ECCV"),
          ("ACL", "EMNLP", "NAACL"), ("AAAI", "IJCAI")]
PER_KIND = 450          # cases per perturbation kind (both splits together, before skips)
INTACT = 1500
OUTSIDE = 450
SIDE = 450


def h(*parts) -> int:
    return int(hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def split_of(paper_id: str) -> str:
    return "dev" if int(hashlib.sha1(paper_id.encode()).hexdigest()[:8], 16) % 10 < 3 else "test"


def ordinal(n: int) -> str:
    suf = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suf}"


# ---- venue texts -----------------------------------------------------------------------------

#: the venues whose booktitle or journal every style below writes
WRITTEN_VENUES = frozenset({"NeurIPS", "ICML", "ICLR", "AAAI", "IJCAI", "CVPR", "ICCV", "ECCV", "ACL", "EMNLP",
                            "NAACL", "COLT", "UAI", "AISTATS", "JMLR"})

def venue_fields(code: str, year: int, style: str) -> dict[str, str]:
    """The venue fields (booktitle or journal, plus series/publisher/volume) of ``style``."""
    y = year
    if style == "dblp":
        bt = {
            "NeurIPS": f"Advances in Neural Information Processing Systems {y - 1987}: Annual Conference on Neural "
                       f"Information Processing Systems {y}, {{{'NeurIPS' if y >= 2018 else 'NIPS'}}} {y}",
            "ICML": f"Proceedings of the {ordinal(y - 1983)} International Conference on Machine Learning, "
                    f"{{ICML}} {y}",
            "ICLR": f"{ordinal(y - 2012)} International Conference on Learning Representations, {{ICLR}} {y}",
            "AAAI": f"{ordinal(y - 1986)} {{AAAI}} Conference on Artificial Intelligence, {{AAAI}} {y}",
            "IJCAI": f"Proceedings of the {ordinal(y - 1991)} International Joint Conference on Artificial "
                     f"Intelligence, {{IJCAI}} {y}",
            "CVPR": f"{{IEEE/CVF}} Conference on Computer Vision and Pattern Recognition, {{CVPR}} {y}",
            "ICCV": f"{{IEEE/CVF}} International Conference on Computer Vision, {{ICCV}} {y}",
            "ECCV": f"Computer Vision - {{ECCV}} {y} - {ordinal((y - 1988) // 2)} European Conference",
            "ACL": f"Proceedings of the {ordinal(y - 1962)} Annual Meeting of the Association for Computational "
                   f"Linguistics, {{ACL}} {y}",
            "EMNLP": f"Proceedings of the {y} Conference on Empirical Methods in Natural Language Processing, "
                     f"{{EMNLP}} {y}",
            "NAACL": f"Proceedings of the {y} Conference of the North American Chapter of the Association for "
                     f"Computational Linguistics: Human Language Technologies, {{NAACL-HLT}} {y}",
            "COLT": f"Conference on Learning Theory, {{COLT}} {y}",
            "UAI": f"Proceedings of the {ordinal(y - 1984)} Conference on Uncertainty in Artificial Intelligence, "
                   f"{{UAI}} {y}",
            "AISTATS": f"The {ordinal(y - 1997)} International Conference on Artificial Intelligence and "
                       f"Statistics, {{AISTATS}} {y}",
        }
        if code == "JMLR":
            return {"journal": "J. Mach. Learn. Res.", "volume": str(y - 1999)}
        return {"booktitle": bt[code]}
    if style in ("scholar", "latex"):
        bt = {"NeurIPS": "Advances in neural information processing systems",
              "ICML": "International conference on machine learning",
              "ICLR": "International Conference on Learning Representations",
              "AAAI": "Proceedings of the AAAI conference on artificial intelligence",
              "IJCAI": "Proceedings of the International Joint Conference on Artificial Intelligence",
              "CVPR": "Proceedings of the IEEE/CVF conference on computer vision and pattern recognition",
              "ICCV": "Proceedings of the IEEE/CVF international conference on computer vision",
              "ECCV": "European conference on computer vision",
              "ACL": "Proceedings of the Annual Meeting of the Association for Computational Linguistics",
              "EMNLP": f"Proceedings of the {y} Conference on Empirical Methods in Natural Language Processing",
              "NAACL": f"Proceedings of the {y} Conference of the North American Chapter of the Association for "
                       "Computational Linguistics: Human Language Technologies",
              "COLT": "Conference on Learning Theory", "UAI": "Uncertainty in Artificial Intelligence",
              "AISTATS": "International Conference on Artificial Intelligence and Statistics"}
        if code == "JMLR":
            return {"journal": "Journal of Machine Learning Research"}
        if code == "AAAI" and style == "scholar":
            return {"journal": bt[code]}
        return {"booktitle": bt[code]}
    if style == "short":
        name = "NIPS" if code == "NeurIPS" and y < 2018 else code
        form = h(code, y, "short") % 3
        if code == "JMLR":
            return {"journal": "JMLR"}
        return {"booktitle": [f"{{{name}}}", f"Proc. {name}", f"{name} {y}"][form]}
    # site
    if code in ("ICML", "AISTATS", "COLT") or (code == "UAI" and y >= 2019):
        long = {"ICML": f"Proceedings of the {ordinal(y - 1983)} International Conference on Machine Learning",
                "AISTATS": f"Proceedings of The {ordinal(y - 1997)} International Conference on Artificial "
                           "Intelligence and Statistics",
                "COLT": f"Proceedings of Thirty {ordinal(y - 2017 + 1)} Conference on Learning Theory",
                "UAI": f"Proceedings of the {ordinal(y - 1984)} Conference on Uncertainty in Artificial "
                       "Intelligence"}[code]
        return {"booktitle": long, "series": "Proceedings of Machine Learning Research", "publisher": "PMLR"}
    if code == "NeurIPS":
        return {"booktitle": "Advances in Neural Information Processing Systems",
                "publisher": "Curran Associates, Inc.",
                "volume": str(y - 1987)}
    if code in ("CVPR", "ICCV"):
        full = {"CVPR": "Conference on Computer Vision and Pattern Recognition",
                "ICCV": "International Conference on Computer Vision"}[code]
        return {"booktitle": f"Proceedings of the IEEE/CVF {full} ({code})",
                "month": "June" if code == "CVPR" else "October"}
    if code in ("ACL", "EMNLP", "NAACL"):
        return {**venue_fields(code, y, "dblp"), "publisher": "Association for Computational Linguistics"}
    if code == "ICLR":
        return {"booktitle": "International Conference on Learning Representations"}
    if code == "JMLR":
        return {"journal": "Journal of Machine Learning Research", "volume": str(y - 1999)}
    return venue_fields(code, y, "dblp")


# ---- names and titles ------------------------------------------------------------------------

_ACCENTS = {"á": "{\\'a}", "é": "{\\'e}", "í": "{\\'i}", "ó": "{\\'o}", "ú": "{\\'u}", "ä": '{\\"a}', "ö": '{\\"o}',
            "ü": '{\\"u}', "è": "{\\`e}", "à": "{\\`a}", "ç": "{\\c{c}}", "ñ": "{\\~n}", "ł": "{\\l}", "ø": "{\\o}",
            "å": "{\\aa}", "š": "{\\v{s}}", "č": "{\\v{c}}", "ž": "{\\v{z}}", "ć": "{\\'c}", "ß": "{\\ss}",
            "Ö": '{\\"O}', "Ü": '{\\"U}', "Ä": '{\\"A}', "É": "{\\'E}", "Ł": "{\\L}", "Š": "{\\v{S}}"}


def latexify(s: str) -> str:
    return "".join(_ACCENTS.get(c, c) for c in s)


def split_name(name: str) -> tuple[str, str]:
    parts = name.split()
    if len(parts) == 1:
        return "", parts[0]
    # particles belong to the family name
    i = len(parts) - 1
    while i > 1 and parts[i - 1].lower() in ("van", "von", "de", "der", "den", "da", "di", "del", "la", "le"):
        i -= 1
    return " ".join(parts[:i]), " ".join(parts[i:])


def format_name(name: str, style: str) -> str:
    given, family = split_name(name)
    if style == "scholar":
        return f"{family}, {given}" if given else family
    if style == "latex":
        return latexify(f"{family}, {given}" if given else family)
    if style == "short":
        ini = " ".join(w[0] + "." for w in re.split(r"[\s]+", given) if w and w[0].isalpha())
        return f"{ini} {family}".strip()
    return name


def format_title(title: str, style: str) -> str:
    t = title.replace("&", "\\&")
    if style == "scholar":
        words = t.split()
        out = [words[0]] + [w if (sum(c.isupper() for c in w) > 1 or ":" in words[i]) else w.lower()
                            for i, w in enumerate(words[1:])]
        return " ".join(out)
    if style == "short":
        return " ".join(f"{{{w}}}" if sum(c.isupper() for c in w) > 1 else w for w in t.split())
    if style == "latex":
        return "{" + latexify(t) + "}"
    return t


def bibtex(kind: str, key: str, fields: dict[str, str]) -> str:
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields.items() if v)
    return f"@{kind}{{{key},\n{body}\n}}\n"


def render(key: str, title: str, authors: list[str], others: bool, year: int, code: str | None, style: str,
           extra: dict[str, str] | None = None, venue: dict[str, str] | None = None) -> str:
    names = [format_name(a, style) for a in authors]
    author = " and ".join(names + (["others"] if others else []))
    fields = {"title": format_title(title, style), "author": author}
    vf = venue if venue is not None else venue_fields(code, year, style)
    fields.update(vf)
    fields["year"] = str(year)
    fields.update(extra or {})
    kind = "article" if "journal" in vf else ("misc" if "howpublished" in vf else "inproceedings")
    return bibtex(kind, key, fields)


# ---- building the cases -------------------------------------------------------------------------

def load(work: Path):
    import pyarrow.parquet as pq

    from mustcite.refcheck import load_index

    idx = load_index(work)
    t = pq.read_table(work / "corpus" / "papers.parquet",
                      columns=["paper_id", "title", "authors", "venue", "year", "url"])
    papers = [r for r in t.to_pylist() if r["year"] is not None]
    w = pq.read_table(work / "corpus" / "works.parquet",
                      columns=["work_id", "title", "year", "authors", "venue", "identifiers", "kind", "n_citing"])
    return idx, papers, w.to_pylist()


def id_url(url: str) -> str | None:
    from mustcite.extract import identifier_keys

    keys = identifier_keys(url=url)
    return url if any(k.split(":")[0] in ("openreview", "nips", "pmlr", "acl") for k in keys) else None


def make_cases(idx, papers, works) -> list[dict]:
    from mustcite.corpus import normalize_title
    from mustcite.refcheck import classify_venue

    pool = [p for p in papers if (p["venue"], p["year"]) in idx.complete and p["authors"]
            and len(normalize_title(p["title"]).split()) >= 4]
    by_vy: dict[tuple, list] = defaultdict(list)
    by_venue: dict[str, list] = defaultdict(list)
    for p in pool:
        by_vy[(p["venue"], p["year"])].append(p)
        by_venue[p["venue"]].append(p)
    complete = sorted(idx.complete)
    cases = []

    def sample(kind: str, n: int, ok=lambda p: True) -> list[dict]:
        ranked = sorted(pool, key=lambda p: h(kind, p["paper_id"]))
        return [p for p in ranked[: n * 4] if ok(p)][:n]

    def style_of(pid: str, kind: str) -> str:
        return STYLES[h("style", pid, kind) % len(STYLES)]

    def base(p: dict, kind: str, style: str, **over) -> dict:
        authors = over.get("authors", p["authors"])
        others = False
        if (style == "scholar" and len(authors) > 6
                and kind not in ("authors_dropped", "authors_added", "authors_swapped")):
            authors, others = authors[:5], True
        extra = {}
        if style == "dblp" and p.get("url"):
            extra["url"] = p["url"]
        if style == "site":
            if p["venue"] in ("ACL", "EMNLP", "NAACL") and "aclanthology.org/" in (p.get("url") or ""):
                aid = p["url"].rstrip("/").rsplit("/", 1)[1]
                extra["doi"] = f"10.18653/v1/{aid}"
                extra["url"] = p["url"]
            elif p.get("url") and id_url(p["url"]):
                extra["url"] = p["url"]
        extra.update(over.get("extra", {}))
        key = f"{kind}-{p['paper_id'][:8]}"
        text = render(key, over.get("title", p["title"]), authors, others, over.get("year", p["year"]),
                      over.get("venue_code", p["venue"]), style, extra, over.get("venue_fields"))
        return {"key": key, "kind": kind, "style": style, "split": split_of(p["paper_id"]), "paper_id": p["paper_id"],
                "bibtex": text}

    for p in sample("intact", INTACT):
        cases.append(base(p, "intact", style_of(p["paper_id"], "intact")))
    for p in sample("wrong_year", PER_KIND):
        r = h("wy", p["paper_id"])
        shifts = [d for d in (-2, -1, 1, 2) if 1987 <= p["year"] + d <= 2025]
        y = p["year"] + shifts[r % len(shifts)]
        cases.append(base(p, "wrong_year", style_of(p["paper_id"], "wrong_year"), year=y))
    for p in sample("wrong_venue", PER_KIND):
        row = idx.row_of(p["paper_id"])
        own = {v for v, _ in idx.record(row).venue_years()}
        group = next(g for g in GROUPS if p["venue"] in g)
        choices = [v for v in group if v not in own]
        v = choices[h("wv", p["paper_id"]) % len(choices)]
        cases.append(base(p, "wrong_venue", style_of(p["paper_id"], "wrong_venue"), venue_code=v))
    for p in sample("authors_dropped", PER_KIND, lambda p: len(p["authors"]) >= 2):
        a = list(p["authors"])
        del a[h("ad", p["paper_id"]) % len(a)]
        cases.append(base(p, "authors_dropped", style_of(p["paper_id"], "authors_dropped"), authors=a))
    for p in sample("authors_added", PER_KIND):
        other = pool[h("aa", p["paper_id"]) % len(pool)]
        from mustcite.refcheck import same_person

        name = next((n for n in other["authors"] if not any(same_person(n, x) for x in p["authors"])), None)
        if name is None:
            continue
        a = list(p["authors"])
        a.insert(1 + h("aa-pos", p["paper_id"]) % len(a), name)
        cases.append(base(p, "authors_added", style_of(p["paper_id"], "authors_added"), authors=a))
    for p in sample("authors_swapped", PER_KIND, lambda p: len(p["authors"]) >= 2):
        from mustcite.refcheck import same_person

        a = list(p["authors"])
        pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a)) if not same_person(a[i], a[j])]
        if not pairs:
            continue
        i, j = pairs[h("as", p["paper_id"]) % len(pairs)]
        a[i], a[j] = a[j], a[i]
        cases.append(base(p, "authors_swapped", style_of(p["paper_id"], "authors_swapped"), authors=a))
    titles = {normalize_title(p["title"]) for p in papers}
    for p in sample("title_joined", PER_KIND):
        others = by_venue[p["venue"]]
        other = others[h("tj", p["paper_id"]) % len(others)]
        wa, wb = p["title"].split(), other["title"].split()
        joined = " ".join(wa[: (len(wa) + 1) // 2] + wb[len(wb) // 2:])
        if other["paper_id"] == p["paper_id"] or normalize_title(joined) in titles:
            continue
        cases.append(base(p, "title_joined", style_of(p["paper_id"], "title_joined"), title=joined))
    for p in sample("arxiv_version", PER_KIND):
        r = h("ax", p["paper_id"])
        y = p["year"] - (r % 2)
        aid = f"{y % 100:02d}{1 + r % 12:02d}.{r % 90000 + 10000:05d}"
        form = (r // 7) % 3
        vf = [{"journal": f"arXiv preprint arXiv:{aid}"},
              {"howpublished": "arXiv", "eprint": aid, "archivePrefix": "arXiv", "primaryClass": "cs.LG"},
              {"journal": "CoRR", "volume": f"abs/{aid}"}][form]
        cases.append(base(p, "arxiv_version", style_of(p["paper_id"], "arxiv_version"), year=y, venue_fields=vf))
    for p in sample("wrong_identifier", PER_KIND, lambda p: bool(id_url(p.get("url") or ""))):
        same = [q for q in by_vy[(p["venue"], p["year"])]
                if q["paper_id"] != p["paper_id"] and id_url(q.get("url") or "")]
        if not same:
            continue
        q = same[h("wi", p["paper_id"]) % len(same)]
        if p["venue"] in ("ACL", "EMNLP", "NAACL") and "aclanthology.org/" in q["url"]:
            extra = {"doi": f"10.18653/v1/{q['url'].rstrip('/').rsplit('/', 1)[1]}"}
        else:
            extra = {"url": q["url"]}
        style = style_of(p["paper_id"], "wrong_identifier")
        style = "scholar" if style in ("dblp", "site") else style     # styles that carry their own url
        cases.append(base(p, "wrong_identifier", style, extra=extra))
    for p in sample("invented", PER_KIND):
        r = h("inv", p["paper_id"])
        vy = complete[r % len(complete)]
        real = by_vy[vy][r % len(by_vy[vy])] if by_vy[vy] else p
        x, y = pool[(r // 3) % len(pool)], pool[(r // 5) % len(pool)]
        if (x["venue"], x["year"]) == vy or (y["venue"], y["year"]) == vy or x is y:
            continue
        wx, wy = x["title"].split(), y["title"].split()
        title = " ".join(wx[: (len(wx) + 1) // 2] + wy[len(wy) // 2:])
        if normalize_title(title) in titles:
            continue
        fake = {"paper_id": p["paper_id"], "title": title, "authors": real["authors"],
                "venue": vy[0], "year": vy[1], "url": ""}
        c = base(fake, "invented", style_of(p["paper_id"], "invented"))
        cases.append(c)
    outside = []
    for w in works:
        if w["kind"] != "paper" or (w["n_citing"] or 0) < 2 or not w["authors"] or not w["year"] or not w["title"]:
            continue
        if len(normalize_title(w["title"]).split()) < 4 or normalize_title(w["title"]) in titles:
            continue
        if idx.titles.match(w["title"]) is not None:
            continue
        outside.append(w)
    outside.sort(key=lambda w: h("out", w["work_id"]))
    years = sorted({y for _, y in complete})
    for w in outside[: PER_KIND * 2]:
        if sum(k["kind"] == "misattributed" for k in cases) >= PER_KIND:
            break
        r = h("mis", w["work_id"])
        near = [vy for vy in complete if abs(vy[1] - w["year"]) <= 1 and vy[0] in ("NeurIPS", "ICML", "ICLR", "CVPR",
                                                                                     "ACL", "EMNLP", "AAAI", "ECCV")]
        if not near or w["year"] < years[0]:
            continue
        vy = near[r % len(near)]
        fake = {"paper_id": w["work_id"], "title": w["title"], "authors": w["authors"],
                "venue": vy[0], "year": vy[1], "url": ""}
        cases.append(base(fake, "misattributed", style_of(w["work_id"], "misattributed")))
    n_out = 0
    for w in outside[PER_KIND * 2:]:
        if n_out >= OUTSIDE:
            break
        claim = classify_venue(w["venue"] or "")
        if claim.kind == "held" or claim.kind == "ancillary" and claim.code:
            continue
        arx = next((i.split(":", 1)[1] for i in w["identifiers"] or () if i.startswith("arxiv:")), None)
        style = style_of(w["work_id"], "outside")
        if arx:
            vf = {"journal": f"arXiv preprint arXiv:{arx}"}
        elif w["venue"] and not re.fullmatch(r"\d{4}", w["venue"].strip()):
            vf = {"journal": w["venue"]}
        else:
            continue
        fake = {"paper_id": w["work_id"], "title": w["title"], "authors": w["authors"],
                "venue": None, "year": w["year"], "url": ""}
        c = base(fake, "outside_intact", style, venue_fields=vf)
        cases.append(c)
        n_out += 1
    # papers of the tracks the corpus leaves out (Findings, Datasets & Benchmarks, workshops, demos),
    # cited the way authors cite them: with their venue's main booktitle
    if idx.side is not None:
        f = idx.side_fields
        side = [{"paper_id": pid, "title": f["title"][i], "authors": f["authors"][i] or [], "venue": f["venue"][i],
                 "year": f["year"][i], "url": f["url"][i] or ""}
                for i, pid in enumerate(idx.side.ids)
                if f["venue"][i] and f["year"][i] and f["authors"][i]
                and len(normalize_title(f["title"][i]).split()) >= 4]
        # only venues whose booktitles the writer knows in every style (side records also hold
        # journals and venues outside the 15, which the cases of other kinds cover)
        side = [sp for sp in side if sp["venue"] in WRITTEN_VENUES]
        for sp in sorted(side, key=lambda x: h("side", x["paper_id"]))[:SIDE]:
            cases.append(base(sp, "side_track_intact", style_of(sp["paper_id"], "side")))
    return cases


def real_reference_cases(work: Path, idx, n: int = 1000) -> list[dict]:
    from mustcite.refcheck import volume_in_text

    refs = []
    for path in sorted((work / "extract").glob("*.json")):
        if path.name.endswith(".meta.json") or path.name == "summary.json":
            continue
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(items, list):
            continue
        for r in items:
            if isinstance(r, dict) and r.get("paper_id") and r.get("link_score") == 1.0 and r.get("raw"):
                row = idx.row_of(r["paper_id"])
                if row is None or (idx.venue[row], idx.year[row]) not in idx.complete:
                    continue
                refs.append((h("real", path.stem, r.get("target")), path.stem, r))
    refs.sort(key=lambda x: x[0])
    out = []
    for _, stem, r in refs[:n]:
        out.append({"key": f"real-{stem}-{r.get('target')}", "kind": "real_references", "style": "reference string",
                    "split": split_of(r["paper_id"]), "paper_id": r["paper_id"],
                    "entry": {"key": f"real-{stem}-{r.get('target')}", "title": r.get("title") or "",
                              "authors": list(r.get("authors") or []), "year": r.get("year"), "raw": r["raw"],
                              "others": bool(re.search(r"\bet al\b", r["raw"][:300])), "structured": False,
                              "volume": volume_in_text(r["raw"]),
                              "source": f"{stem}.json:ref {r.get('target')}"}})
    return out


# ---- scoring ----------------------------------------------------------------------------------

def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    if n == 0:
        return [0.0, 1.0]
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    m = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [round((c - m) / d, 4), round((c + m) / d, 4)]


def score(cases: list[dict], results: dict[str, dict]) -> dict:
    out = {}
    by_kind: dict[str, list] = defaultdict(list)
    for c in cases:
        by_kind[c["kind"]].append((c, results.get(c["key"])))
    flagged = ("mismatch", "not_found")
    for kind, rows in sorted(by_kind.items()):
        rows = [(c, r) for c, r in rows if r is not None]
        n = len(rows)
        st = Counter(r["status"] for _, r in rows)
        # citing the preprint of a published paper is answered "outdated" (not an error, but found)
        hit = (*flagged, "outdated") if kind == "arxiv_version" else flagged
        k = sum(r["status"] in hit for _, r in rows)
        d = {"n": n, "statuses": dict(st), "unverifiable_share": round(st.get("unverifiable", 0) / n, 4) if n else None}
        if kind in FP_KINDS:
            d.update(false_positives=k, rate=round(k / n, 4) if n else None, ci95=wilson(k, n))
        else:
            d.update(detected=k, rate=round(k / n, 4) if n else None, ci95=wilson(k, n))
            fields = FIELD_OF.get(kind)
            if fields:
                kf = sum(any(i["field"] in fields for i in r["issues"]) for _, r in rows)
                d["field_rate"] = round(kf / n, 4) if n else None
        out[kind] = d
    pert = [(c, r) for kind, rows in by_kind.items() if kind not in FP_KINDS
            for c, r in rows if r]
    kp = sum(r["status"] in flagged or (c["kind"] == "arxiv_version" and r["status"] == "outdated") for c, r in pert)
    out["overall_perturbed"] = {"n": len(pert), "detected": kp, "rate": round(kp / len(pert), 4) if pert else None,
                                "ci95": wilson(kp, len(pert))}
    allr = [r for rows in by_kind.values() for _, r in rows if r]
    out["share_unverifiable_all"] = (round(sum(r["status"] == "unverifiable" for r in allr) / len(allr), 4)
                                     if allr else None)
    return out


def run_checks(cases: list[dict], work: Path) -> tuple[dict[str, dict], float, int]:
    from mustcite.refcheck import Entry, check_entries, load_index, read_entries

    idx = load_index(work)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "eval.bib"
        path.write_text("\n".join(c["bibtex"] for c in cases if "bibtex" in c), encoding="utf-8")
        entries, messages = read_entries(path)
    entries += [Entry(**c["entry"]) for c in cases if "entry" in c]
    t0 = time.perf_counter()
    checks = check_entries(entries, idx)
    dt = time.perf_counter() - t0
    return {c.key: c.to_json() for c in checks}, dt, len(messages)


SAMPLE60 = ROOT / "benchmarks" / "results" / "refcheck_sample60.bib"


def write_sample(cases: list[dict]) -> None:
    sample = sorted((c for c in cases if c["split"] == "test" and "bibtex" in c), key=lambda c: h("s60", c["key"]))[:60]
    SAMPLE60.write_text("\n".join(c["bibtex"] for c in sample), encoding="utf-8")


def timed_in_fresh_process(work: Path, out: str) -> None:
    """Run :func:`new_process` from a new interpreter that holds nothing else (this one holds the
    index and every case: a command started beside it measured up to twice its time alone)."""
    subprocess.run([sys.executable, __file__, "--work", str(work), "--out", out, "--speed-only"], check=True)


def new_process(work: Path) -> dict:
    path = SAMPLE60
    n = path.read_text(encoding="utf-8").count("\n@") + 1
    exe = ROOT / ".venv" / "bin" / "mustcite"
    env = dict(os.environ, MUSTCITE_WORK=str(work), HF_HUB_OFFLINE="1")
    runs = []
    for _ in range(3):
        p = subprocess.run(["/usr/bin/time", "-v", str(exe), "check-refs", str(path), "--format", "json"],
                           capture_output=True, text=True, env=env)
        wall = re.search(r"Elapsed \(wall clock\) time.*?: (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)", p.stderr)
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        secs = (int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))) if wall else None
        runs.append({"wall_s": secs, "peak_rss_mb": round(int(rss.group(1)) / 1024, 1) if rss else None,
                     "exit": p.returncode, "lines": len(p.stdout.splitlines())})
    return {"file": str(path.relative_to(ROOT)), "entries": n,
            "command": "/usr/bin/time -v .venv/bin/mustcite check-refs "
                       "benchmarks/results/refcheck_sample60.bib --format json",
            "runs": runs, "median_wall_s": sorted(r["wall_s"] for r in runs)[1],
            "note": "the on-disk index cache is current (built by the warm run before); its first build adds the "
                    "index_build_s seconds once per corpus"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=os.environ.get("MUSTCITE_WORK") or str(ROOT / "mustcite-work"))
    ap.add_argument("--split", choices=("dev", "test", "both"), default="both")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--dump", help="write the cases with their results (JSONL) here, for inspection")
    ap.add_argument("--speed-only", action="store_true",
                    help="time the new process on the existing sample only, into --out's new_process_60")
    args = ap.parse_args(argv)
    work = Path(args.work)
    if args.speed_only:
        doc = json.loads(Path(args.out).read_text(encoding="utf-8"))
        doc["new_process_60"] = new_process(work)
        Path(args.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(json.dumps(doc["new_process_60"]["runs"]))
        return 0
    from mustcite.refcheck import RefIndex

    t0 = time.perf_counter()
    RefIndex.build(work / "corpus" / "papers.parquet", work / "corpus" / "works.parquet")
    build_s = time.perf_counter() - t0
    idx, papers, works = load(work)
    cases = make_cases(idx, papers, works) + real_reference_cases(work, idx)
    if args.split != "both":
        cases = [c for c in cases if c["split"] == args.split]
    results, dt, skipped = run_checks(cases, work)
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for c in cases:
                fh.write(json.dumps({**c, "result": results.get(c["key"])}, ensure_ascii=False) + "\n")
    doc = {"rules": __doc__, "work": str(work), "index_build_s": round(build_s, 2),
           "cases": len(cases), "bibtex_blocks_skipped": skipped,
           "split_sizes": {s: Counter(c["kind"] for c in cases if c["split"] == s) for s in ("dev", "test")},
           "styles": Counter(c["style"] for c in cases)}
    for s in ("dev", "test"):
        part = [c for c in cases if c["split"] == s]
        if part:
            doc[s] = score(part, results)
    doc["warm"] = {"entries": len(cases), "seconds": round(dt, 3), "entries_per_s": round(len(cases) / dt, 1),
                   "note": "check_entries on every case in one warm process (index loaded, BibTeX parsed before)"}
    write_sample(cases)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.no_speed:
        del idx, papers, works, cases, results
        timed_in_fresh_process(work, args.out)
        doc = json.loads(Path(args.out).read_text(encoding="utf-8"))
    show = {k: doc[k] for k in ("cases", "split_sizes", "warm") if k in doc}
    for s in ("dev", "test"):
        if s in doc:
            show[s] = {k: {kk: v[kk] for kk in ("n", "rate", "unverifiable_share", "field_rate") if kk in v}
                       if isinstance(v, dict) else v for k, v in doc[s].items()}
    print(json.dumps(show, indent=1))
    if "new_process_60" in doc:
        print(json.dumps(doc["new_process_60"]["runs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
