"""Output formats for recommendations: JSON lines, TREC run lines, BibTeX entries, a text table."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence

from ..bibwrite import braced_value, entry, latex_text
from ..errors import UsageError
from ..shown import json_shown, markdown_key, markdown_shown, markdown_url, shown, shown_line
from .reasons import reasons
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
    return json_shown("".join(json.dumps(query_dict(qid, rs), ensure_ascii=False) + "\n"
                              for qid, rs in results.items()))


def trec_lines(results: Mapping[str, Sequence[Recommendation]], tag: str = "mustcite") -> str:
    return "".join(f"{shown_line(qid)} Q0 {shown_line(r.paper_id)} {i} {r.score:.6f} {tag}\n"
                   for qid, rs in results.items() for i, r in enumerate(rs, 1))


def _ascii(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()


def bibtex_key(r: Recommendation) -> str:
    last = _ascii(r.authors[0].split()[-1]).lower() if r.authors else "anon"
    word = next((w for w in re.findall(r"[a-z]+", _ascii(r.title).lower()) if len(w) > 3), "paper")
    return re.sub(r"[^a-z0-9]", "", f"{last}{r.year or ''}{word}") or "paper"


def booktitle(venue: str) -> str:
    """The proceedings' title of a corpus venue (``NeurIPS``: "Advances in Neural Information
    Processing Systems"); any other venue as it is."""
    return _VENUE_BOOK.get(venue, venue)


def bibtex(r: Recommendation, key: str | None = None) -> str:
    """A BibTeX entry: ``@inproceedings`` for a corpus paper; for a cited work the entry its kind
    and venue call for (``@article`` for a journal or arXiv, ``@book``, ``@misc`` for datasets,
    software and web pages without a venue). Values are written by :func:`~mustcite.bibwrite.latex_text`
    (special characters escaped outside math, braces balanced; the title in a second pair of braces,
    its casing as published)."""
    fields = [("title", "{" + latex_text(r.title) + "}")]
    if r.authors:
        fields.append(("author", " and ".join(latex_text(a) for a in r.authors)))
    kind = "inproceedings"
    venue = latex_text(booktitle(r.venue)) if r.venue else ""
    arxiv = re.search(r"arxiv\.org/abs/(\S+)", r.url or "")
    if r.source == "references":
        if r.kind == "book":
            kind, where = "book", "publisher"
        elif arxiv or re.search(r"journal|transactions|letters|review|arxiv|nature|science", venue, re.I):
            kind, where = "article", "journal"
        elif re.search(r"proceedings|conference|workshop|symposium", venue, re.I):
            kind, where = "inproceedings", "booktitle"
        else:
            kind, where = "misc", "howpublished"
        if arxiv and not venue:
            venue = latex_text(f"arXiv preprint arXiv:{arxiv.group(1)}")
        if venue:
            fields.append((where, venue))
    elif venue:
        fields.append(("booktitle", venue))
    if r.year:
        fields.append(("year", str(r.year)))
    if r.url:
        fields.append(("url", braced_value(r.url)))
    return entry(kind, key or bibtex_key(r), fields)


def bibtex_all(results: Mapping[str, Sequence[Recommendation]]) -> str:
    seen, out = set(), []
    for rs in results.values():
        for r in rs:
            if r.paper_id not in seen:
                seen.add(r.paper_id)
                out.append(bibtex(r))
    return shown("\n".join(out))


def work_note(r: Recommendation) -> str:
    """`` (dataset; from reference lists)`` for a cited work outside the corpus, else ``""``."""
    if r.source != "references":
        return ""
    return f" ({r.kind}; from reference lists)" if r.kind != "paper" else " (from reference lists)"


def table(results: Mapping[str, Sequence[Recommendation]]) -> str:
    """A plain-text table per query: rank, score, tier, year, venue, title, why."""
    lines = []
    for qid, rs in results.items():
        year = query_year(rs)
        lines.append(f"# {shown_line(qid)}" + (f" (as of {year}: papers of {year} or earlier)" if year else ""))
        lines.append(f"{'rank':>4}  {'score':>6}  {'tier':<19} {'year':<4} {'venue':<8} title  [why]")
        for i, r in enumerate(rs, 1):
            why = r.reasons or reasons(r.evidence or {}, r)
            lines.append(f"{i:>4}  {r.score:6.3f}  {r.tier_name or r.tier:<19} {r.year or '':<4} "
                         f"{shown_line(r.venue or '')[:8]:<8} {shown_line(r.title)[:90]}{work_note(r)}"
                         + (f"  [{shown_line(' '.join(why))}]" if why else ""))
        lines.append("")
    return "\n".join(lines)


def unique_keys(rs: Sequence[Recommendation], taken: set[str]) -> list[str]:
    """A BibTeX key per result that collides neither with ``taken`` (the draft's own keys) nor with
    another result's: the usual key, else the same with a, b, c ... appended."""
    used = {k.lower() for k in taken}
    out = []
    for r in rs:
        base = bibtex_key(r)
        key, n = base, 0
        while key.lower() in used:
            key = f"{base}{_suffix(n)}"
            n += 1
        used.add(key.lower())
        out.append(key)
    return out


def _suffix(n: int) -> str:
    s = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(97 + r) + s
    return s


def render(results: Mapping[str, Sequence[Recommendation]], fmt: str) -> str:
    if fmt == "json":
        return json_lines(results)
    if fmt == "trec":
        return trec_lines(results)
    if fmt == "bibtex":
        return bibtex_all(results)
    return table(results)


# ---------------------------------------------------------------------- audits
def draft_keys(audit) -> set[str]:
    """The citation keys an audited draft already uses (BibTeX keys of a LaTeX draft, else the
    in-text markers)."""
    return {str(r.get("bibkey") or r.get("cite") or "") for r in audit.reference_list} - {""}


def audit_bibtex(audit) -> str:
    """BibTeX entries of the missing papers, ready to paste: keys never collide with the draft's."""
    papers = [r for r in audit.missing if r.paper_id]
    keys = unique_keys(papers, draft_keys(audit))
    head = f"% mustcite audit of {shown_line(audit.draft)} (as of {audit.year}): {len(papers)} missing papers\n"
    head += f"% {shown_line(audit.main_file)}\n" if getattr(audit, "main_file", None) else ""
    head += "".join(f"% note: {shown_line(n)}\n" for n in audit.notes)
    head += "".join(f"% {shown_line(r.message or '')}\n" for r in audit.missing if not r.paper_id)
    return head + "\n".join(shown(f"% {shown_line(r.message)}\n{bibtex(r, k)}" if r.message else bibtex(r, k))
                             for r, k in zip(papers, keys))


def _finding_paper(r: Recommendation) -> str:
    return shown_line(f"{r.title} ({r.venue or 'unknown venue'} {r.year or ''}){work_note(r)}".strip()) \
        if r.paper_id else ""


def _shown_line(audit) -> str:
    threshold = getattr(audit, "threshold", None)
    total = len(getattr(audit, "findings", ()) or ())
    if threshold is None:
        return f"{len(audit.missing)} shown"
    if getattr(audit, "show_all", False):
        above = sum(f.confidence >= threshold for f in audit.findings)
        return (f"{len(audit.missing)} shown of {total} (--all: every finding, whatever its confidence; the default "
                f"threshold, confidence >= {threshold:.2f}, shows {above})")
    if any("learned_confidence" in f.features for f in audit.findings):      # the mention models decided names
        return (f"{len(audit.missing)} shown of {total} (confidence >= {threshold:.2f}: for a work the text names, "
                f"the probability that authors of the field cite it; --all shows every one)")
    return (f"{len(audit.missing)} shown of {total} (confidence >= {threshold:.2f}: the probability that a careful "
            f"reviewer calls it a genuine omission; --all shows every one)")


def _where(loc: Mapping) -> str:
    """``file:line`` of a finding's location, or the file alone, or nothing."""
    if loc.get("file") and loc.get("line"):
        return shown_line(f"{loc.get('file')}:{loc.get('line')}")
    return shown_line(loc.get("file") or "")


def audit_markdown(audit) -> str:
    """A Markdown report: the draft, what was read, the missing papers with tier, score and why.
    Every value from the draft or the corpus is escaped (:func:`~mustcite.shown.markdown_shown`):
    nothing in them becomes an image, a link, HTML or a terminal control."""
    out = [f"# Must-cite audit: {markdown_shown(audit.title or audit.draft)}", "",
           f"- draft: {markdown_key(audit.draft)} (as of {audit.year}: only papers of {audit.year} or earlier)",
           f"- references: {audit.references}, {audit.linked} linked to the pool; "
           f"recommended and already cited: {len(audit.cited)}"]
    if getattr(audit, "main_file", None):
        out.append(f"- {markdown_shown(audit.main_file)}")
    if audit.notice:
        out.append(f"- note: {markdown_shown(audit.notice)}")
    if audit.notes:
        out += ["", f"Notes on reading the draft ({len(audit.notes)}):", ""]
        out += [f"- {markdown_shown(n)}" for n in audit.notes]
    if audit.closest_bibliographies:
        out += ["", "Labelled papers whose references are closest to yours:", ""]
        out += [f"- {markdown_shown(c['title'])} ({c['shared']} shared references)"
                for c in audit.closest_bibliographies]
    out += ["", f"## Findings ({_shown_line(audit)})", ""]
    if not audit.missing:
        out.append("None found.")
    else:
        out += ["| # | confidence | finding | where | paper | what |", "|---:|---:|---|---|---|---|"]
        for i, r in enumerate(audit.missing, 1):
            url = markdown_url(r.url)
            link = f"[{markdown_shown(r.title)}]({url})" if url else markdown_shown(r.title)
            where_from = markdown_shown(f"({r.venue or 'unknown venue'} {r.year or ''}){work_note(r)}".strip())
            paper = f"{link} {where_from}" if r.paper_id else ""
            loc = r.location or {}
            where = _where(loc)
            what = r.message or ' '.join(r.reasons or reasons(r.evidence or {}, r))
            if loc.get("quote"):
                what += f' "{loc["quote"]}"'
            conf = r.confidence if r.confidence is not None else r.score
            out.append(f"| {i} | {conf:.2f} | {markdown_shown(r.finding or '')} | {markdown_shown(where)} | {paper} "
                       f"| {markdown_shown(what)} |")
    return "\n".join(out) + "\n"


def audit_table(audit) -> str:
    """The plain-text audit: a header and the missing papers as :func:`table` lays them out."""
    head = (f"draft: {shown_line(audit.draft)}\ntitle: {shown_line(audit.title)}\nas of {audit.year}: only papers "
            f"of {audit.year} or "
            f"earlier (--year to change)\nreferences: {audit.references} ({audit.linked} linked to the pool); "
            f"recommended and already cited: {len(audit.cited)}\n")
    if getattr(audit, "main_file", None):
        head += shown_line(audit.main_file) + "\n"
    if audit.closest_bibliographies:
        head += "closest bibliographies: " + "; ".join(
            f"{shown_line(c['title'])[:60]} ({c['shared']} shared)" for c in audit.closest_bibliographies) + "\n"
    notes = audit.notes
    if notes:
        few = notes[:MAX_TABLE_NOTES]
        head += f"notes on reading the draft ({len(notes)}):\n" + "".join(f"  - {shown_line(n)}\n" for n in few)
        if len(notes) > len(few):
            head += f"  ... and {len(notes) - len(few)} more (--format json or markdown lists all)\n"
    return head + f"\nfindings: {_shown_line(audit)}\n" + findings_table(audit.missing)


def findings_table(rs: Sequence[Recommendation]) -> str:
    """The findings as plain text: confidence, kind, where, the paper, what it says and the sentence."""
    lines = []
    for i, r in enumerate(rs, 1):
        loc = r.location or {}
        where = _where(loc)
        conf = r.confidence if r.confidence is not None else r.score
        lines.append(f"{i:>3}. {conf:.2f}  {shown_line(r.finding or 'ranked')}  {where}".rstrip())
        if r.paper_id:
            lines.append(f"     {_finding_paper(r)[:140]}")
        lines.append(f"     {shown_line(r.message or ' '.join(r.reasons or reasons(r.evidence or {}, r)))}")
        if loc.get("quote"):
            lines.append(f'     "{shown_line(loc["quote"])}"')
    return "\n".join(lines) + ("\n" if lines else "none\n")


#: the plain-text audit shows this many notes on reading the draft; the other formats show all
MAX_TABLE_NOTES = 20

GATE_TIERS = ("type1", "type2", "type3", "must_cite")


def parse_gate(spec: str) -> tuple[str, float]:
    """``"0.5"`` -> ("type1", 0.5); ``"type2:0.6"`` -> ("type2", 0.6); a UsageError otherwise."""
    tier, _, value = spec.rpartition(":")
    tier = tier or "type1"
    try:
        p = float(value)
    except ValueError:
        p = float("nan")
    if tier not in GATE_TIERS or not 0.0 <= p <= 1.0:
        raise UsageError(f"--fail-on takes [TIER:]P with TIER one of {', '.join(GATE_TIERS)} and P in [0, 1], "
                         f"got {spec!r}")
    return tier, p


def likely_missing(audit, threshold: float, tier: str = "type1") -> list:
    """The missing papers whose P(``tier``) reaches ``threshold`` (for a CI check)."""
    return [r for r in audit.missing if r.tiers.get(tier, 0.0) >= threshold]


#: findings about no paper that ``--fail-on`` also fails on: a citation left to do, a key with no entry
GATE_KINDS = ("placeholder", "undefined_key")


def unfinished_citations(audit, threshold: float) -> list:
    """The placeholders and undefined keys whose confidence reaches ``threshold``: every such finding
    of the audit, shown or not (for a CI check)."""
    return [f for f in audit.findings if f.kind in GATE_KINDS and f.confidence >= threshold]


def gate_failure(audit, tier: str, threshold: float) -> str | None:
    """Why ``--fail-on TIER:THRESHOLD`` fails the audit, or None when it passes."""
    papers, todo = likely_missing(audit, threshold, tier), unfinished_citations(audit, threshold)
    parts = []
    if papers:
        parts.append(f"{len(papers)} missing paper(s) with P({tier}) >= {threshold}: "
                     + "; ".join(r.title[:70] for r in papers[:5]))
    for kind in GATE_KINDS:
        these = [f for f in todo if f.kind == kind]
        if these:
            where = "; ".join((f"{f.key} at " if kind == "undefined_key" and f.key else "")
                              + (f.location.where() or "the draft") for f in these[:3])
            parts.append(f"{len(these)} {kind.replace('_', ' ')}(s) with confidence >= {threshold} "
                         f"({where}{' ...' if len(these) > 3 else ''})")
    return "audit failed: " + "; and ".join(parts) if parts else None
