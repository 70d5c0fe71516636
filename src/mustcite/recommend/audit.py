"""Auditing a draft: which predicted must-cite papers does its bibliography lack?

The draft (Markdown/Nougat ``.md``/``.mmd`` (optionally ``.gz``), GROBID ``.tei.xml``, ``.pdf``, or
a LaTeX project, see :mod:`.draft`) goes through extraction; its references are linked to the
recommender's pool with the corpus linker. The recommender scores papers for the draft's title +
abstract, and the draft's linked references add their own evidence (:mod:`.bibliography_signals`): the
papers the labelled papers cite together with them, and what the labelled papers with the most
similar bibliographies cite. Every scored paper the draft does not cite is reported with its
evidence, best first.

Score (:func:`blend`): ``logit(P(must-cite)) + cocite * log1p(cocited_by) + share *
references_cocited / references + coupling * coupling_votes + named * [the draft's text names it]``,
shown as a probability (the logistic of that sum: exactly P(must-cite) for a draft without linked
references). The weights (:data:`DEFAULT_WEIGHTS`) were chosen on the benchmark's dev queries by
removing a seeded 30% of each paper's must-cite references and asking the audit to find them again
(``benchmarks/audit_simulation.py``).

Time order: the draft is audited as of ``year`` (given by the user, else today's calendar year):
only papers of that year or earlier are recommended, and only labelled papers of that year or
earlier give evidence; ``AuditResult.year`` says which year it was.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..corpus.records import normalize_title, title_short_name
from ..errors import DataMissingError, UsageError
from ..extract.homoglyphs import describe, mixed_words
from ..extract.latex import main_file_line
from ..extract.link import link_references
from ..extract.works import name_key
from ..numeric import logit
from . import arguments as args
from .bibliography_signals import BibliographySignals
from .draft import Draft, read_draft
from .draft_mentions import NameModel, load_name_model, named_works, one_per_name
from .features import Candidate
from .findings import (
    _ABOUT,
    Finding,
    Location,
    confidence,
    content_words,
    crossref_notes,
    crossref_notes_text,
    defined_acronyms,
    kind_features,
    load_calibration,
    locate,
    named_candidates,
    named_findings,
    own_names,
    placeholder_findings,
    same_work_keys,
    sentences,
    title_starts_with,
    undefined_key_findings,
)
from .method import Recommender
from .query import parse_year
from .ranking import empty_notice, top_indices
from .results import Ranked, Recommendation, evidence_for, recommendation
from .text import terms

if TYPE_CHECKING:
    from .draft import Draft


@dataclass(frozen=True)
class AuditWeights:
    """How much the draft's references and words move a paper's score (see the module doc)."""

    cocite: float = 0.0
    share: float = 0.0
    coupling: float = 8.0
    named: float = 4.0           # the draft's text names the paper ("HDTF", or its title's "Name: ...")
    coupled_k: int = 10          # bibliographies that vote
    extra_k: int = 150           # papers added as candidates by co-citation, coupling and names, each

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: chosen on the neurips-2024 dev queries by recall@20 of the removed must-cite papers (180 settings,
#: ``benchmarks/audit_simulation.py --grid``; results/audit_simulation_dev.json): the co-citation
#: terms added nothing once coupling and names were in
DEFAULT_WEIGHTS = AuditWeights()


@dataclass
class AuditResult:
    draft: str
    title: str
    abstract: str
    references: int
    linked: int
    missing: list[Recommendation] = field(default_factory=list)
    cited: list[Recommendation] = field(default_factory=list)     # recommended and already cited
    extraction: dict[str, Any] = field(default_factory=dict)
    year: int | None = None       # the year audited for (papers of that year or earlier)
    notice: str | None = None     # why nothing was recommended, when nothing was
    #: the labelled papers whose bibliographies are closest to the draft's
    closest_bibliographies: list[dict[str, Any]] = field(default_factory=list)
    #: the draft's references as the audit read them (key, title, linked pool paper, mentions)
    reference_list: list[dict[str, Any]] = field(default_factory=list)
    #: every finding, shown or not, strongest first (:mod:`.findings`)
    findings: list[Finding] = field(default_factory=list)
    #: the confidence a finding needs to be shown (in ``missing``)
    threshold: float | None = None
    #: every finding was shown (up to ``top``), whatever its confidence
    show_all: bool = False

    @property
    def notes(self) -> list[str]:
        """What the reader of the audit must know about how the draft was read: the extraction's
        status when it was not clean, then each of its messages (includes not read, bibliographies
        missing, keys defined nowhere, references without a year)."""
        status = self.extraction.get("status")
        head = [f"extraction {status}: the audit may miss or misjudge references"] if status not in (None, "ok") else []
        return head + [str(m) for m in self.extraction.get("messages") or ()]

    @property
    def main_file(self) -> str | None:
        """Which file of a LaTeX project was read, and which others have a ``\\documentclass``:
        ``main file: paper.tex (also a \\documentclass: old_submission.tex)``; None for other drafts."""
        main = self.extraction.get("main_file")
        return main_file_line(main, list(self.extraction.get("main_others") or [])) if main else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["main_file"] = self.main_file
        d["notes"] = self.notes
        d["missing"] = [r.to_dict() for r in self.missing]
        d["cited"] = [r.to_dict() for r in self.cited]
        d["findings"] = [f.to_dict() for f in self.findings]
        return d


@dataclass
class DraftScores:
    """One draft's candidates with the recommender's score and feature rows (what does not depend
    on the weights, so that weights can be tried without scoring again)."""

    doc: Any                      # the parsed query (Doc)
    year: int
    candidates: list[Candidate]
    features: np.ndarray
    base: np.ndarray              # logit of P(main tier), after the optional cross-encoder
    references: list[str]         # the draft's linked pool references


#: notes on words written with look-alike letters of another script, at most
MAX_HOMOGLYPH_NOTES = 5


def homoglyph_notes(sents) -> list[str]:
    """A note for each word of the sentences written with letters of another script that look
    Latin ("BЕRT" with a Cyrillic "Е"): names are read as the Latin word, and the note says so."""
    seen: dict[str, str] = {}
    for s in sents:
        for word, read in mixed_words(s.text):
            seen.setdefault(word, read)
    notes = [f"'{word}' is written with letters of another script that look Latin ({describe(word)}); "
             f"names are read as '{read}'" for word, read in list(seen.items())[:MAX_HOMOGLYPH_NOTES]]
    if len(seen) > MAX_HOMOGLYPH_NOTES:
        notes.append(f"... and {len(seen) - MAX_HOMOGLYPH_NOTES} more such words")
    return notes


def score_draft(rec: Recommender, query: dict[str, Any], references: list[str], *, text: str = "",
                weights: AuditWeights = DEFAULT_WEIGHTS, named: dict[str, str] | None = None,
                ) -> tuple[DraftScores, BibliographySignals]:
    """Score the candidates of a draft ``query`` (``{"id","title","abstract","year"}``) citing
    the pool papers ``references`` (``text``: the draft's words around its citations, searched for
    the names of pool papers, or ``named``: those names already found, ``{pool id: name}``); the
    papers its bibliography and its text point to join the candidates."""
    year = rec.effective_year(parse_year(query.get("year")))
    bib = rec.draft_indexes.bibliography(rec.nindex)
    refs = list(dict.fromkeys(references))
    if named is None:       # the names ``text`` uses (a caller that found them already passes them)
        hits = rec.names.named(text, year, rec.pool_years) if text and rec.names is not None else {}
        named = {pid: hit.name for pid, hit in hits.items()}
    signals = bib.signals(refs, year, query.get("title") or "", coupled_k=weights.coupled_k, named=named)
    extra = signals.best(weights.extra_k, set(refs))
    main = rec.tiers.main
    parsed, cands, feats, probs = rec.score([query], tiers=(main,), extra=[extra])
    (doc, year), cs, X = parsed[0], cands[0], feats[0]
    p = probs.get(main, np.zeros(len(cs)))
    learned = main in probs and "tiers" not in rec.config.disable
    if not learned:     # untrained: the fused rank and votes, as the recommender ranks them
        base = np.asarray(rec.ranking_score(X, probs, None)[0], dtype=np.float64)
    elif rec.cross is not None and rec.config.cross_top > 0:
        base = rec.rescored(doc, cs, p, True, {})      # already on the logit scale
    else:
        base = logit(p)
    return DraftScores(doc, year, cs, X, base, refs), signals


def blend(ds: DraftScores, signals: BibliographySignals, weights: AuditWeights = DEFAULT_WEIGHTS) -> np.ndarray:
    """The audit score of every candidate (logit scale; see the module doc)."""
    if not (signals.references or signals.named) or not ds.candidates:
        return ds.base.copy()
    named = np.array([c.paper_id in signals.named for c in ds.candidates], dtype=np.float64)
    col = [signals.col.get(c.paper_id, -1) for c in ds.candidates]
    idx = np.array(col)
    has = idx >= 0
    take = np.where(has, idx, 0)

    def arr(a: np.ndarray) -> np.ndarray:
        return np.where(has, a[take], 0.0)

    return (ds.base + weights.cocite * np.log1p(arr(signals.cocited_by))
            + weights.share * arr(signals.references_cocited) / max(1, len(signals.references))
            + weights.coupling * arr(signals.coupling) + weights.named * named)


def missing_order(ds: DraftScores, score: np.ndarray, cited: set[str], top: int) -> list[int]:
    """Indices of the ``top`` best candidates the draft does not cite."""
    keep = [j for j in top_indices(score, ds.candidates, top + len(cited)) if ds.candidates[j].paper_id not in cited]
    return keep[:top]


def bibliography_evidence(signals: BibliographySignals, paper_id: str) -> dict[str, Any]:
    """The evidence fields the draft's references add to a result."""
    return {"references_cocited": int(signals.value("references_cocited", paper_id)),
            "cocited_with_references_by": int(signals.value("cocited_by", paper_id)),
            "closest_bibliographies_type1": int(signals.value("coupled_type1", paper_id)),
            "coupling_votes": round(signals.value("coupling", paper_id), 4),
            "named_in_text": signals.named.get(paper_id)}


def audit_ranking(rec: Recommender, query: dict[str, Any], references: list[str], *, text: str = "",
                  top: int = 50, min_score: float = 0.0, weights: AuditWeights = DEFAULT_WEIGHTS,
                  ) -> tuple[Ranked, Ranked, BibliographySignals]:
    """(missing, recommended and already cited, signals) for a draft ``query`` citing the pool
    papers ``references`` with ``text`` around its citations; each result's ``score`` is the
    audit score as a probability."""
    if min_score != min_score:   # NaN compares false with everything: it would silently list nothing
        raise UsageError("min_score must be a number, not NaN")
    ds, signals = score_draft(rec, query, references, text=text, weights=weights)
    if not ds.candidates:
        empty = Ranked([], ds.year, empty_notice(ds.doc.text, ds.year))
        return empty, Ranked([], ds.year), signals
    score = blend(ds, signals, weights)
    prob = 1.0 / (1.0 + np.exp(-np.clip(score, -50, 50)))
    cited = set(ds.references)
    chosen = [j for j in missing_order(ds, score, cited, top) if prob[j] >= min_score]
    have = [j for j in top_indices(score, ds.candidates, top + len(cited)) if ds.candidates[j].paper_id in cited]
    out = results_for(rec, ds, signals, chosen + have, prob)
    return Ranked(out[:len(chosen)], ds.year), Ranked(out[len(chosen):], ds.year), signals


def results_for(rec: Recommender, ds: DraftScores, signals: BibliographySignals, rows: list[int],
                prob: np.ndarray) -> list[Recommendation]:
    """The :class:`Recommendation` of the candidates ``rows`` of a draft (score: ``prob``)."""
    shown = rec.tiers.predict(ds.features[rows]) if rows else {}
    qterms = terms(ds.doc.text)
    cite_count = rec.nindex.counts(ds.year)[0]
    out: list[Recommendation] = []
    for k, j in enumerate(rows):
        c = ds.candidates[j]
        ev = evidence_for(c, rec.pool_terms.shared(qterms, c.row), rec.nindex, cite_count)
        ev.update(bibliography_evidence(signals, c.paper_id))
        out.append(recommendation(rec.pool[c.row], float(prob[j]), {t: float(p[k]) for t, p in shown.items()}, ev))
    return out


def context_text(refs: list[dict[str, Any]], drop: set[str] = frozenset()) -> str:
    """The draft's words around its citations: every context of every reference, each once (the
    contexts of the references whose ``cite`` is in ``drop`` left out, and those markers removed)."""
    seen: dict[str, None] = {}
    for r in refs:
        if r.get("cite") in drop:
            continue
        for c in r.get("contexts") or ():
            seen.setdefault(c.get("context") or "")
    text = " ".join(seen)
    for marker in drop:
        if marker and not marker.isdigit():        # author-year markers; numbers carry no name
            text = text.replace(marker, " ")
    return text


def _reference_rows(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("cite", "bibkey", "title", "year", "paper_id", "mentions")
    return [{k: r.get(k) for k in keys if r.get(k) is not None} for r in refs]


#: the confidence a finding needs to be shown when the name models decide the named works
LEARNED_THRESHOLD = 0.5
#: how the works a draft names are decided: the name rules (default) or the mention models
NAMED_MODES = ("rules", "learned")
#: how many of the best-ranked papers the draft does not cite are weighed as ``likely_missing``
LIKELY_TOP = 20
#: a cited title's name stands for the paper that at least this share of the citing papers using it mean
CITED_NAME_SHARE = 0.5


def _passages(paper, refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The body as passages: a LaTeX draft's paragraphs, else each reference's citation contexts
    with the citation where its marker is written."""
    if paper.passages:
        return paper.passages
    out = []
    for r in refs:
        for c in r.get("contexts") or ():
            text = c.get("context") or ""
            at = text.find(r.get("cite") or "\x00")
            out.append({"section": c.get("section") or "", "text": text,
                        "cites": [[at if at >= 0 else 0, [r.get("bibkey") or r.get("cite") or ""]]]})
    return out


def draft_findings(rec: Recommender, draft: Draft, refs: list[dict[str, Any]], uncited: list[dict[str, Any]],
                   ds: DraftScores | None, score: np.ndarray | None, signals: BibliographySignals | None,
                   sents, calibration: dict[str, Any], cands=None, names: NameModel | None = None,
                   ) -> list[Finding]:
    """Every finding of a read draft (see :mod:`.findings`), strongest first, with its confidence.
    The works the text names are decided by the name rules of :mod:`.findings` (``cands``: the works
    its sentences name, :func:`.findings.named_candidates`, when found already), or, with ``names``
    (the mention models), by :func:`learned_named_findings`."""
    paper = draft.paper
    year = ds.year if ds is not None else rec.effective_year(None)
    sources = paper.sources
    undefined = list(paper.stats.get("undefined_keys") or [])
    found: list[Finding] = placeholder_findings(sources)
    found += undefined_key_findings(undefined, sources, int(paper.stats.get("bib_entries") or 0),
                                    paper.stats.get("undefined_notes"))
    if ds is None or score is None:
        return _rank(found, calibration)
    body = " ".join(s.text for s in sents)
    cited = {r["paper_id"] for r in refs if r.get("paper_id")}
    cited_titles, cited_names = same_work_keys(refs)
    # a key no entry defines still cites its work: "dalle2", "hu2021lora" (its words, years aside)
    key_names = {name_key(w) for k in undefined for w in re.split(r"[^A-Za-z]*(?:19|20)\d\d[^A-Za-z]*|[_:\-]", k)
                 if len(name_key(w)) >= 3} | {name_key(k) for k in undefined}
    cited_names |= key_names
    ref_titles = [r.get("title") or "" for r in refs]
    own = own_names(draft.title, f"{draft.abstract or ''} {body}")    # a PDF's passages are its citing sentences
    row_of = rec.candidates.row            # pool row by paper id

    def name_share(key: str, pid: str) -> float:
        return rec.names.share(key, row_of[pid], year) if pid in row_of and rec.names is not None else 1.0

    if names is not None:
        found += learned_named_findings(rec, names, draft, sents, refs, uncited, year, own, cited, cited_titles,
                                        key_names, sources)
    else:
        found += _ruled_named_findings(rec, draft, sents, refs, uncited, year, own, cited, cited_titles, key_names,
                                       sources, body, ref_titles, score, ds, name_share, cands)
    # the best-ranked papers the draft does not cite, weighed by what its text says of them
    taken = {f.paper_id for f in found if f.paper_id}
    words = content_words(body)
    # the names the cited titles give themselves ("LLaVA: Large Language-and-Vision Assistant")
    ref_names = {name_key(title_short_name(t)) for t in ref_titles} - {""}

    def cited_by_name(pid: str) -> bool:
        """Whether a cited title's name is what most citing papers call this paper (the draft cites
        "LLaVA: ..." under a title of its own: Visual Instruction Tuning is cited)."""
        return rec.names is not None and pid in row_of and any(
            name_share(k, pid) >= CITED_NAME_SHARE for k in ref_names)
    likely = 0
    for j in top_indices(score, ds.candidates, LIKELY_TOP + len(cited)):
        c = ds.candidates[j]
        title = rec.pool.titles[c.row] or ""
        if c.paper_id in cited or c.paper_id in taken or normalize_title(title) in cited_titles:
            continue
        tw = content_words(title)
        short = name_key(title_short_name(title))
        if short and (short in cited_names or any(title_starts_with(t, short) for t in ref_titles)):
            continue
        if cited_by_name(c.paper_id):
            continue
        feats = kind_features("likely_missing") | {
            "recommender_logit": float(score[j]), "coupling": signals.value("coupling", c.paper_id) if signals else 0.0,
            "title_overlap": len(tw & words) / max(1, len(tw)),
            "log_age": math.log1p(max(0, year - int(rec.pool_years[c.row])))}
        found.append(Finding("likely_missing", "the papers closest to yours cite it and your draft does not",
                             feats, Location(), c.paper_id, None, row=c.row))
        likely += 1
        if likely == LIKELY_TOP:
            break
    return _rank(found, calibration)


def _ruled_named_findings(rec: Recommender, draft: Draft, sents, refs: list[dict[str, Any]],
                          uncited: list[dict[str, Any]], year: int, own: set[str], cited: set[str],
                          cited_titles: set[str], key_names: set[str], sources: dict[str, str], body: str,
                          ref_titles: list[str], score: np.ndarray, ds: DraftScores, name_share, cands=None,
                          ) -> list[Finding]:
    """``bib_not_cited`` and ``named_not_cited`` findings decided by the name rules of :mod:`.findings`,
    their confidence the logistic calibration fit on judged drafts."""
    at = {c.paper_id: j for j, c in enumerate(ds.candidates)}

    def score_of(pid: str) -> float:
        return float(score[at[pid]]) if pid in at else -8.0

    if cands is None:
        cands = ({} if rec.names is None
                 else named_candidates(rec.names, sents, year, rec.pool_years, rec.pool.titles))
    key_refs = {str(r.get("bibkey") or r.get("cite") or ""): r for r in refs}
    # the references' titles are weighed one by one there (a title naming the work may be another work)
    named, kept = named_findings(cands, pool=rec.pool, pool_years=rec.pool_years, year=year, cited=cited,
                                 cited_titles=cited_titles, cited_names=key_names, ref_titles=ref_titles, own=own,
                                 acronyms=defined_acronyms(body), sources=sources, score_of=score_of,
                                 body=body, key_refs=key_refs, refs=refs, name_share=name_share,
                                 word_papers=word_papers(rec))
    # entries of the draft's own bibliography that no citation uses, while the text names them
    by_pid = {rec.pool.ids[row]: (row, c) for row, c in kept.items()}
    in_bib: dict[str, Finding] = {}
    for u in uncited:
        pid = u.get("paper_id")
        if (pid and pid in cited) or normalize_title(u.get("title") or "") in cited_titles:
            continue                   # the same work is cited under another key
        row, c = by_pid.get(pid, (None, None)) if pid else (None, None)
        written = re.match(r"\s*([^:]{3,60}):", u.get("title") or "")
        name = c.name if c is not None else (written.group(1).strip() if written else "")
        if c is None and not (name and re.search(r"[A-Z0-9]", name[1:]) and name_key(name) not in own
                              and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", body)):
            continue                   # a name of its own, as the title writes it, that the text uses
        rel, line = locate(sources, name)
        feats = kind_features("bib_not_cited") | {"log_occurrences": math.log1p(len(c.places)) if c else 0.0,
                                                  "recommender_logit": score_of(pid) if pid else 0.0}
        where = f"{rel}:{line}" if rel else "the text"
        in_bib.setdefault(pid or u.get("bibkey") or name, Finding(
            "bib_not_cited", f"{u.get('bibkey')} is in your bibliography but never cited, while the text names "
            f"{name} ({where}): cite it there", feats, Location(rel, line), pid, name, u.get("bibkey"), row=row))
    return list(in_bib.values()) + [f for f in named if f.paper_id not in in_bib]


def word_papers(rec: Recommender):
    """``word -> in how many pool papers' titles and abstracts it is used`` (its rarest stem), or
    None without the pool's word counts."""
    try:
        doc_freq = rec.pool_terms.doc_freq
    except (AttributeError, TypeError, ValueError):
        return None

    def papers(word: str) -> int:
        return min((doc_freq.get(s) or 0 for s in terms(word)), default=1 << 30)   # a stop word: common
    return papers


def learned_named_findings(rec: Recommender, names: NameModel, draft: Draft, sents, refs: list[dict[str, Any]],
                           uncited: list[dict[str, Any]], year: int, own: set[str], cited: set[str],
                           cited_titles: set[str], key_names: set[str], sources: dict[str, str]) -> list[Finding]:
    """``bib_not_cited`` and ``named_not_cited`` findings decided by the name models (:mod:`.draft_mentions`):
    one per work the text names and does not cite (in any version), its confidence the calibrated
    probability that authors of the field cite it (``bib_not_cited``: that, the work being in the
    bibliography, they cite it where they name it). Mentions in the draft's own names, in the
    acknowledgements, funding, impact statement or checklist are no uses of a work."""
    def skip(row: dict[str, Any]) -> bool:
        return (row["key"] in own or row["unit"] == "checklist"
                or _ABOUT.search(row["section"] or "") is not None)
    # a Markdown or PDF draft is read as its contexts' sentences, each marker joined to its reference
    marked = draft.paper.cited_sentences if not draft.paper.passages else None
    works = named_works(names, sents, draft.title, refs, year, skip_rows=skip, cited_sentences=marked)
    lex = names.lexicon
    row_of = rec.candidates.row
    out: list[Finding] = []
    in_bib: set[str] = set()
    by_family = {w.family: w for w in works}
    by_key = {}
    for w in sorted(works, key=lambda w: -w.p_bib):
        for r in w.rows:
            by_key.setdefault(r["key"], w)
    for u in uncited:
        pid = u.get("paper_id")
        if (pid and pid in cited) or normalize_title(u.get("title") or "") in cited_titles:
            continue                   # the same work is cited under another key
        w = by_family.get(lex.family_of(pid)) if pid else None
        if w is None:
            w = by_key.get(name_key(title_short_name(u.get("title") or "")))
        if w is None or w.cited or w.family in in_bib:
            continue
        in_bib.add(w.family)
        loc = _learned_location(sources, w)
        where = loc.where() or "the text"
        row = row_of.get(pid) if pid else None
        out.append(Finding("bib_not_cited", f"{u.get('bibkey')} is in your bibliography but never cited, while the "
                           f"text names {w.name} ({where}): cite it there",
                           {"kind_bib_not_cited": 1.0, "learned_confidence": w.p_bib,
                            "log_occurrences": math.log1p(len(w.rows))}, loc, pid or w.target, w.name,
                           u.get("bibkey"), row=row))
    shown_titles: list[str] = []       # one finding per work, whatever its records
    for w in sorted(one_per_name([w for w in works if w.family not in in_bib]), key=lambda w: -w.p_cite):
        row = row_of.get(w.target)
        title = normalize_title(rec.pool.titles[row] or "") if row is not None else ""
        if w.cited or (w.target in cited) or w.key in key_names or (title and any(
                same_work(title, t) for t in [*cited_titles, *shown_titles])):
            continue
        if title:
            shown_titles.append(title)
        loc = _learned_location(sources, w)
        times = f" ({len(w.rows)} times)" if len(w.rows) > 1 else ""
        out.append(Finding("named_not_cited", f"the text names {w.name}{times} ({loc.where() or 'body'}) but cites "
                           "no version of it", {"kind_named": 1.0, "learned_confidence": w.p_cite,
                                                "log_occurrences": math.log1p(len(w.rows))},
                           loc, w.target, w.name, row=row))
    return out


def same_work(a: str, b: str) -> bool:
    """Whether two normalised titles are one work's records: equal, or one extends the other after
    three words or more ("umap uniform manifold approximation and projection" and "... for dimension
    reduction")."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short.split()) >= 3 and long_.startswith(short + " ")


def _learned_location(sources: dict[str, str], w) -> Location:
    """Where a named work is shown: its first mention in a sentence without citations, else the first."""
    r = min(w.rows, key=lambda r: (r["section_class"] in ("title", "abstract", "appendix"), r["markers_sentence"] > 0))
    rel, line = locate(sources, r["surface"]) if sources else (None, None)
    return Location(rel, line, r["section"] or None, r["sentence"].strip()[:220])


def _rank(found: list[Finding], calibration: dict[str, Any]) -> list[Finding]:
    for f in found:
        learned = f.features.get("learned_confidence")
        f.confidence = float(learned) if learned is not None else confidence(f.features, calibration)
    return sorted(found, key=lambda f: (-f.confidence, f.kind, f.paper_id or f.key or ""))


def _finding_result(rec: Recommender, f: Finding, by_id: dict[str, Recommendation]) -> Recommendation:
    """A finding as an entry of ``missing``: the paper's result with the finding's fields."""
    if f.paper_id and f.paper_id in by_id:
        r = by_id[f.paper_id]
    elif f.row is not None:
        r = recommendation(rec.pool[f.row], f.confidence, {}, {})
    else:
        r = Recommendation("", f.key or f.name or "", None, None, round(f.confidence, 6), "", {}, kind=f.kind)
    r.finding, r.confidence, r.message, r.location = f.kind, round(f.confidence, 4), f.message, f.location.to_dict()
    return r


def audit_draft(rec: Recommender, path: str | Path | Draft, *, top: int = 50, min_score: float = 0.0,
                year: int | None = None, weights: AuditWeights = DEFAULT_WEIGHTS, show_all: bool = False,
                calibration: dict[str, Any] | None = None, named: str = "rules") -> AuditResult:
    """Read, link and audit one draft as of ``year`` (default: today's). ``findings`` holds every
    finding strongest first; ``missing`` those at or above the calibrated threshold (all of them
    with ``show_all``), at most ``top``, each also at or above ``min_score``. ``path`` may be a
    draft already read with :func:`.draft.read_draft` (a front end reads every input before it
    loads a model). ``named``: how the works the text names are decided: ``"rules"`` (the name
    rules, the default) or ``"learned"`` (the mention models beside the recommender's folder,
    ``mustcite works mentions`` and ``mustcite works fit-mentions`` build them)."""
    if not isinstance(rec, Recommender):
        raise UsageError(f"rec must be a Recommender (mustcite.load()), got {type(rec).__name__}", field="rec")
    if not isinstance(path, Draft):
        path = args.path(path, "path")
    year, top = args.year(year), args.top(top, "rank")
    if named not in NAMED_MODES:
        raise UsageError(f"named must be one of {', '.join(NAMED_MODES)}, got {named!r}"[:160], field="named")
    args.flag(show_all, "show_all")
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float)):
        raise UsageError(f"min_score must be a number, got {min_score!r}"[:120], field="min_score")
    if min_score != min_score:
        raise UsageError("min_score must be a number, not NaN", field="min_score")
    calibration = calibration or load_calibration()
    draft = path if isinstance(path, Draft) else read_draft(path)
    paper, (title, abstract) = draft.paper, draft.query_text
    as_of = rec.effective_year(year)   # a reference cannot be to a later paper either
    index = rec.draft_indexes.titles()
    refs = link_references(paper.to_reference_list(), index, citing_year=as_of)
    uncited = link_references([r.to_dict() for r in paper.uncited], index, citing_year=as_of) if paper.uncited else []
    linked = [r["paper_id"] for r in refs if r.get("paper_id")]
    sents = sentences(_passages(paper, refs))
    cands = named_candidates(rec.names, sents, as_of, rec.pool_years, rec.pool.titles) if rec.names is not None else {}
    named_ids = {rec.pool.ids[row]: c.name for row, c in cands.items()}
    ds, signals = score_draft(rec, {"id": "draft", "title": title, "abstract": abstract, "year": year}, linked,
                              weights=weights, named=named_ids)
    notice, score, prob = None, None, None
    if ds.candidates:
        score = blend(ds, signals, weights)
        prob = 1.0 / (1.0 + np.exp(-np.clip(score, -50, 50)))
    else:
        notice = empty_notice(ds.doc.text, ds.year)
    names = load_name_model(rec) if named == "learned" else None
    if named == "learned" and names is None:
        raise DataMissingError("no mention models beside the recommender (models/mentions)",
                         hint="build them with `mustcite works mentions` and `mustcite works fit-mentions --work-only`,"
                              " or audit with the name rules", field="named")
    findings = draft_findings(rec, draft, refs, uncited, ds if ds.candidates else None, score, signals, sents,
                              calibration, cands, names)
    # a learned confidence is the probability that the field cites the work: shown when more likely than not
    threshold = float(calibration["threshold"]) if names is None else max(float(calibration["threshold"]),
                                                                           LEARNED_THRESHOLD)
    shown = [f for f in findings if show_all or f.confidence >= threshold][:max(0, top)]
    at = {c.paper_id: j for j, c in enumerate(ds.candidates)}
    rows = [at[f.paper_id] for f in shown if f.paper_id in at]
    by_id = {r.paper_id: r for r in results_for(rec, ds, signals, rows, prob)} if rows else {}
    missing = Ranked([_finding_result(rec, f, by_id) for f in shown], ds.year, notice)
    missing = Ranked([r for r in missing if r.score >= min_score or not r.paper_id], ds.year, notice)
    cited = set(linked)
    have = [j for j in top_indices(score, ds.candidates, top + len(cited)) if ds.candidates[j].paper_id in cited] \
        if score is not None else []
    # cross-references left to do ("Appendix [ref]", "Section ??", a \ref to no \label): notes, not findings
    xrefs = crossref_notes(paper.sources) if paper.sources else crossref_notes_text([s.text for s in sents])
    extraction = {"status": paper.status, "method": paper.method,
                  "messages": list(paper.messages) + xrefs + homoglyph_notes(sents)}
    if paper.stats.get("main_file"):
        extraction["main_file"] = paper.stats["main_file"]
        extraction["main_others"] = list(paper.stats.get("main_others") or [])
    return AuditResult(draft.path.name, draft.title, draft.abstract, len(refs), len(cited), missing,
                       Ranked(results_for(rec, ds, signals, have, prob) if have else [], ds.year),
                       extraction,
                       ds.year, notice, [asdict(c) for c in signals.coupled], _reference_rows(refs),
                       findings, threshold, show_all)
