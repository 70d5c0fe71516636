"""A result in words: its tier's name and the reasons it was recommended, as short sentences.

:func:`tier_name` spells out a result's tier (``I`` is "baseline or dataset"); :func:`reasons`
turns its evidence (:func:`.results.evidence_for`, plus what an audit adds) into sentences, the
strongest evidence first: the draft naming the work, the papers whose reference lists are closest
to the draft's, the draft's own references, the nearest labelled papers that use it as a baseline
or dataset or must-cite it, the citation contexts that describe it in the draft's words,
co-citation, and last the shared words. A paper that no paper in the model's data cites and that
is of the query's year or the year before (a 2025 paper for a 2025 query) is said to be too
recent to be cited yet (:func:`too_recent`), so its only evidence, closeness to the query's text,
is not taken for a weak citation record.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol


class Described(Protocol):
    """What the sentences read of a result (a :class:`~.results.Recommendation`)."""

    kind: str
    authors: list[str]
    venue: str | None
    year: int | None

#: what each tier label means, in the words a result shows
TIER_WORDS = {"I": "baseline or dataset", "II": "core", "III": "used throughout", "must-cite": "must-cite",
              "cited": "cited"}
#: the same for the tier probabilities (``Recommendation.tiers`` keys)
PROBABILITY_WORDS = {"type1": "baseline or dataset", "type2": "core", "type3": "used throughout",
                     "must_cite": "must-cite", "cited": "cited"}
#: the evidence fields that count papers of the model's data citing a result
CITER_FIELDS = ("labelled_citing", "neighbours_citing", "neighbours_must_citing", "neighbours_baseline_citing",
                "co_cited_by", "described_by", "references_cocited", "closest_bibliographies_type1")


def tier_name(tier: str) -> str:
    """``"baseline or dataset"`` for ``"I"``, and so on (an unknown label as it is)."""
    return TIER_WORDS.get(tier, tier)


def describe(r: Described) -> str:
    """What a result is, in a few words: ``the dataset of Zhang et al., CVPR 2021``."""
    who = ""
    if r.authors:
        last = r.authors[0].split(",")[0].split()[-1] if "," in r.authors[0] else r.authors[0].split()[-1]
        who = f" of {last}" + (" et al." if len(r.authors) > 1 else "")
    venue = re.sub(r"^arxiv\b.*", "arXiv", r.venue or "", flags=re.I)
    when = " ".join(x for x in (venue, str(r.year or "")) if x)
    return f"the {r.kind or 'paper'}{who}" + (f", {when}" if when else "")


def _papers(n: int, verb: str = "") -> str:
    """``3 papers cite`` / ``1 paper cites`` (``verb`` in the plural, or none)."""
    if n == 1:
        return "1 paper" + (f" {verb}s" if verb else "")
    return f"{n} papers" + (f" {verb}" if verb else "")


def uncited(ev: Mapping) -> bool:
    """Whether evidence was gathered and no paper of the model's data cites the result: no
    labelled citer, no neighbour's vote, no co-citation, no citation context, no name that citing
    papers give it."""
    return bool(ev) and not any(ev.get(k) for k in CITER_FIELDS) and not (ev.get("named") or {}).get("support")


def too_recent(ev: Mapping, year: int | None, query_year: int | None) -> bool:
    """Whether a result of ``year`` that nobody in the data cites (:func:`uncited`) is of the
    query's year or the year before: too recent for the labelled papers to have cited it."""
    return (year is not None and query_year is not None and query_year - 1 <= year <= query_year
            and uncited(ev))


def reasons(ev: Mapping, r: Described | None = None, query_year: int | None = None) -> list[str]:
    """The evidence of one result (``r``, for saying what it is) as sentences, strongest first;
    ``query_year``: the year the query was ranked for (to say when a result is too recent to be
    cited, :func:`too_recent`)."""
    what = f": {describe(r)}" if r is not None else ""
    named, strong, weak = [], [], []
    if r is not None and too_recent(ev, r.year, query_year):
        strong.append(f"Published in {r.year}: too recent for any paper in the data to cite it yet; "
                      "recommended for its closeness to your title and abstract.")
    if ev.get("named_in_text"):
        named.append(f"Your text names {ev['named_in_text']}{what}, but does not cite it.")
    elif ev.get("named"):
        n = ev["named"]
        by = f" ({_papers(n['support'], 'call')} it so)" if n.get("support") else ""
        named.append(f"Your abstract names {n['name']}{what}{by}.")
    if ev.get("closest_bibliographies_type1"):
        strong.append(f"{ev['closest_bibliographies_type1']} of the 3 papers whose references are closest to yours "
                      "use it as a baseline.")
    if ev.get("references_cocited"):
        n = ev["references_cocited"]
        strong.append(f"Papers that cite it also cite {n} of your references." if n > 1
                      else "Papers that cite it also cite one of your references.")
    citing, must = ev.get("neighbours_citing") or 0, ev.get("neighbours_must_citing") or 0
    baseline = ev.get("neighbours_baseline_citing") or 0
    if baseline:
        uses = "uses" if baseline == 1 else "use"
        sentence = f"Of the papers closest to yours, {baseline} {uses} it as a baseline or dataset" + \
            (f" and {citing} cite it." if citing > baseline else ".")
        (strong if baseline >= 2 or citing >= 3 else weak).append(sentence)
    elif citing:
        sentence = f"Of the papers closest to yours, {_papers(citing, 'cite')} it" + \
            (f", {must} as a must-cite." if must else ".")
        (strong if must >= 2 or citing >= 3 else weak).append(sentence)
    if ev.get("described_by"):
        strong.append(f"Described in words like yours where {_papers(ev['described_by'], 'cite')} it.")
    if ev.get("co_cited_by"):
        weak.append(f"Cited together with the papers yours most likely cites, by {_papers(ev['co_cited_by'])}.")
    if ev.get("matched_terms"):
        weak.append("It shares your words " + ", ".join(ev["matched_terms"][:4]) + ".")
    return named + strong + weak
