"""Output formats for recommendations: JSON lines, TREC run lines, BibTeX entries, a text table."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence

from .results import Recommendation

FORMATS = ("table", "json", "bibtex", "trec")
_VENUE_BOOK = {"NeurIPS": "Advances in Neural Information Processing Systems",
               "ICML": "International Conference on Machine Learning",
               "ICLR": "International Conference on Learning Representations"}


def query_year(rs: Sequence[Recommendation]) -> int | None:
    """The year a query's results were computed for (only papers of that year or earlier were
    used): the ``year`` of :class:`~.results.Ranked`, None for a plain list."""
    return getattr(rs, "year", None)


def query_dict(qid: str, rs: Sequence[Recommendation]) -> dict:
    """The public JSON shape of one query's results: ``{"id", "year", "results"}`` (each result
    as :meth:`Recommendation.to_dict`)."""
    return {"id": qid, "year": query_year(rs), "results": [r.to_dict() for r in rs]}


def json_lines(results: Mapping[str, Sequence[Recommendation]]) -> str:
    return "".join(json.dumps(query_dict(qid, rs), ensure_ascii=False) + "\n" for qid, rs in results.items())


def trec_lines(results: Mapping[str, Sequence[Recommendation]], tag: str = "mustcite") -> str:
    return "".join(f"{qid} Q0 {r.paper_id} {i} {r.score:.6f} {tag}\n"
                   for qid, rs in results.items() for i, r in enumerate(rs, 1))


def _ascii(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()


def bibtex_key(r: Recommendation) -> str:
    last = _ascii(r.authors[0].split()[-1]).lower() if r.authors else "anon"
    word = next((w for w in re.findall(r"[a-z]+", _ascii(r.title).lower()) if len(w) > 3), "paper")
    return re.sub(r"[^a-z0-9]", "", f"{last}{r.year or ''}{word}") or "paper"


def _esc(s: str) -> str:
    return s.replace("\\", "\\textbackslash{}").replace("{", "\\{").replace("}", "\\}")


def bibtex(r: Recommendation) -> str:
    fields = [("title", "{" + _esc(r.title) + "}")]
    if r.authors:
        fields.append(("author", _esc(" and ".join(r.authors))))
    if r.venue:
        fields.append(("booktitle", _VENUE_BOOK.get(r.venue, r.venue)))
    if r.year:
        fields.append(("year", str(r.year)))
    if r.url:
        fields.append(("url", r.url))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
    return f"@inproceedings{{{bibtex_key(r)},\n{body}\n}}\n"


def bibtex_all(results: Mapping[str, Sequence[Recommendation]]) -> str:
    seen, out = set(), []
    for rs in results.values():
        for r in rs:
            if r.paper_id not in seen:
                seen.add(r.paper_id)
                out.append(bibtex(r))
    return "\n".join(out)


def table(results: Mapping[str, Sequence[Recommendation]]) -> str:
    """A plain-text table per query: rank, score, tier, year, venue, title, why."""
    lines = []
    for qid, rs in results.items():
        year = query_year(rs)
        lines.append(f"# {qid}" + (f" (as of {year}: papers of {year} or earlier)" if year else ""))
        lines.append(f"{'rank':>4}  {'score':>6}  {'tier':<4} {'year':<4} {'venue':<8} title  [why]")
        for i, r in enumerate(rs, 1):
            ev = r.evidence or {}
            why = []
            if ev.get("neighbours_citing"):
                why.append(f"cited by {ev['neighbours_citing']} similar labelled papers")
            if ev.get("described_by"):
                why.append(f"described in words like yours where {ev['described_by']} labelled papers cite it")
            if ev.get("co_cited_by"):
                why.append(f"co-cited with the likeliest citations by {ev['co_cited_by']} labelled papers")
            if ev.get("matched_terms"):
                why.append("terms: " + ", ".join(ev["matched_terms"][:4]))
            lines.append(f"{i:>4}  {r.score:6.3f}  {r.tier:<4} {r.year or '':<4} {(r.venue or '')[:8]:<8} "
                         f"{r.title[:90]}" + (f"  [{'; '.join(why)}]" if why else ""))
        lines.append("")
    return "\n".join(lines)


def render(results: Mapping[str, Sequence[Recommendation]], fmt: str) -> str:
    if fmt == "json":
        return json_lines(results)
    if fmt == "trec":
        return trec_lines(results)
    if fmt == "bibtex":
        return bibtex_all(results)
    return table(results)
