"""The works a draft names, decided by what the field does: the mention model applied to a draft.

A draft's sentences (as the audit reads them, LaTeX or Markdown) become mention rows with exactly
the features of the mention table (:func:`~mustcite.extract.works.occurrences.text_rows`, the same
code that reads the full texts): every occurrence of a name the field gives a cited work, with its
form, place, neighbours and the citation markers around it, each marker resolved to the work its
reference is linked to. The link probabilities are those of every full text of the draft's year or
earlier (:func:`~.mention_model.serving_stats`).

Per work the draft names (a family of versions), the per-work models give two calibrated
probabilities (:class:`~.mention_model.WorkModel`): that authors of the field writing these mentions
cite the work (the confidence of ``named_not_cited``), and that, given the work is in their
bibliography, they cite it where they name it (the confidence of ``bib_not_cited``).

A name resolves to the longest name the lexicon knows ("Gemma 2" before "Gemma", "Qwen2.5-VL" before
"Qwen2.5"); whether a citation right at a name cites the work it stands for, a successor of it or
a paper the field cites for the concept is what the model weighs (a marker right at the name citing
another work, the title of that reference holding the name, the share of the field's markers at
that form that cite the work).
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus.records import title_short_name
from ..errors import DataMissingError
from ..extract.link import match_reference
from ..extract.works import name_key
from ..extract.works.occurrences import (
    NameLexicon,
    TextOf,
    TextSentence,
    TextUnit,
    find_names,
    is_adjacent,
    text_rows,
)
from .findings import title_starts_with
from .mention_model import TARGETS_FILE, WORK_LABELS, MentionScorer, WorkModel, work_matrix

#: the lexicon the table was built with, copied beside the models
LEXICON_FILE = "lexicon.pkl"
#: where the audit looks for the name models when none is given: ``<work>/models/mentions``, beside
#: the recommender's folder, or this environment variable's folder
ENV_FOLDER = "MUSTCITE_MENTION_MODEL"
MENTIONS_DIR = "mentions"


@dataclass
class NameModel:
    """The lexicon, the statistics and the per-work models the audit decides names with."""

    folder: Path
    lexicon: NameLexicon
    work: dict[str, WorkModel]
    _scorers: dict[int | None, MentionScorer] = field(default_factory=dict)
    _targets: Any = None

    def targets(self):
        """The title index of the lexicon's records (built on first use), see
        :meth:`~mustcite.extract.works.occurrences.NameLexicon.target_index`."""
        if self._targets is None:
            self._targets = self.lexicon.target_index()
        return self._targets

    @classmethod
    def load(cls, folder: str | Path) -> NameModel:
        folder = Path(folder)
        if not (folder / LEXICON_FILE).is_file():
            raise DataMissingError("no name lexicon beside the mention models", path=folder / LEXICON_FILE,
                                   hint="run `mustcite works fit-mentions` first")
        with open(folder / LEXICON_FILE, "rb") as fh:
            lexicon = pickle.load(fh)
        nm = cls(folder, lexicon, {label: WorkModel.load(folder / label) for label in WORK_LABELS})
        if (folder / TARGETS_FILE).is_file() and (folder / TARGETS_FILE).stat().st_mtime >= \
                (folder / LEXICON_FILE).stat().st_mtime:
            with open(folder / TARGETS_FILE, "rb") as fh:
                nm._targets = pickle.load(fh)
        return nm

    def scorer(self, year: int | None) -> MentionScorer:
        if year not in self._scorers:
            self._scorers[year] = MentionScorer(self.folder, label=None, year=year)
        return self._scorers[year]


def name_model_folder(rec) -> Path | None:
    """Where the audit's name models are: :data:`ENV_FOLDER`, else ``mentions`` beside the
    recommender's folder; None when neither holds them."""
    env = os.environ.get(ENV_FOLDER)
    if env:
        return Path(env)
    folder = getattr(rec, "folder", None)
    if folder is None:
        return None
    cand = Path(folder).parent / MENTIONS_DIR
    return cand if (cand / LEXICON_FILE).is_file() else None


def load_name_model(rec) -> NameModel | None:
    """The recommender's name models (loaded once and kept on it), or None without them."""
    cached = getattr(rec, "_name_model", False)
    if cached is not False:
        return cached
    folder = name_model_folder(rec)
    nm = NameModel.load(folder) if folder is not None else None
    try:
        rec._name_model = nm
    except AttributeError:
        pass
    return nm


def _marker_end(text: str, off: int) -> int:
    """The end of the rendered citation at ``off`` ("[12]", "(Smith et al., 2020)")."""
    close = {"[": "]", "(": ")"}.get(text[off:off + 1])
    if close:
        j = text.find(close, off, off + 300)
        if j >= 0:
            return j + 1
    return off


def reference_ids(nm: NameModel, refs: list[dict[str, Any]], year: int | None) -> list[str | None]:
    """Per reference, the corpus paper or work of the lexicon it stands for: the one the audit linked
    it to when the lexicon knows it (or a version of it), else the record of the lexicon the
    reference names, linked as the extraction links references (identifiers, the title, repairs of
    a mis-read title), else the audit's link."""
    lex = nm.lexicon
    known = getattr(lex, "records", None) or {}
    out: list[str | None] = []
    for r in refs:
        pid = r.get("paper_id") or None
        if pid and (pid in known or pid in lex.family):
            out.append(pid)
            continue
        hit = match_reference(r, nm.targets(), citing_year=year) if known else None
        out.append(hit[0] if hit else pid)
    return out


def _targets_of(r: dict[str, Any] | None, rid: str | None) -> tuple[str | None, str]:
    return (rid, name_key((r or {}).get("title") or ""))


def draft_units(sents, title: str, key_refs: dict[str, dict[str, Any]], lex: NameLexicon | None = None,
                ids: dict[str, str | None] | None = None) -> list[TextUnit]:
    """The audit's sentences as the units :func:`text_rows` reads: the title, then one unit per run
    of sentences of one section (a checklist's as a checklist), each citation resolved to its
    reference's linked work (``ids``: per key, the work :func:`reference_ids` gives it). With ``lex``,
    the names written inside a rendered citation ("(Banerjee and Lavie, 2005)") are left out: they
    are its authors."""
    ids = ids or {}
    units = [TextUnit("Title", "title", [TextSentence(title, 0, [])])] if title else []
    count: dict[tuple[str, str], int] = {}          # sentences of a section: numbered across its runs
    for s in sents:
        markers = []
        for off, keys in s.cites:
            targets = []
            for k in keys:
                r = key_refs.get(k) or {}
                targets.append(_targets_of(r, ids.get(k, r.get("paper_id") or None)))
            markers.append((off, _marker_end(s.text, off), targets))
        _add_sentence(units, count, s.text, s.section or "", markers, lex)
    return units


def marked_units(cited: list[dict[str, Any]], title: str, by_target: dict[int, tuple[dict[str, Any], str | None]],
                 lex: NameLexicon | None = None) -> list[TextUnit]:
    """A Markdown draft's units from its contexts' sentences with every marker resolved
    (:attr:`~mustcite.extract.model.ExtractedPaper.cited_sentences`): each key of each marker is
    joined to its reference (``by_target``: target -> (reference, the work it stands for)), as the
    mention table's full texts are read."""
    units = [TextUnit("Title", "title", [TextSentence(title, 0, [])])] if title else []
    count: dict[tuple[str, str], int] = {}
    for c in cited:
        markers = []
        for a, b, targets in c.get("cites") or ():
            markers.append((int(a), int(b), [_targets_of(*by_target.get(int(t), ({}, None))) for t in targets]))
        _add_sentence(units, count, c.get("text") or "", c.get("section") or "", markers, lex)
    return units


def _add_sentence(units: list[TextUnit], count: dict[tuple[str, str], int], text: str, section: str,
                  markers: list, lex: NameLexicon | None) -> None:
    hits = None
    if lex is not None:
        hits = [h for h in find_names(text, lex) if not any(a <= h.start < b for a, b, _ in markers)]
    kind = "checklist" if "checklist" in section.lower() else "text"
    i = count[(section, kind)] = count.get((section, kind), -1) + 1
    if units and units[-1].section == section and units[-1].kind == kind:
        units[-1].sentences.append(TextSentence(text, i, markers, hits))
    else:
        units.append(TextUnit(section, kind, [TextSentence(text, i, markers, hits)]))


@dataclass
class NamedWork:
    """A work (family of versions) a draft names, with the model's decision."""

    family: str
    target: str                   # the record the best-scored name stands for
    name: str                     # the form the text writes
    key: str
    rows: list[dict[str, Any]]
    p_cite: float                 # P(authors of the field cite it, from these mentions)
    p_bib: float                  # P(cited where named | in the bibliography)
    cited: bool                   # the draft cites a version of it


def named_works(nm: NameModel, sents, title: str, refs: list[dict[str, Any]], year: int | None,
                skip_rows=None, cited_sentences: list[dict[str, Any]] | None = None) -> list[NamedWork]:
    """Every work the draft names, with its two probabilities (see the module doc); ``skip_rows(row)``:
    mentions that are no use of a work (the draft's own names, the acknowledgements ...);
    ``cited_sentences``: a Markdown draft's sentences with every marker resolved, read instead of
    ``sents``."""
    lex = nm.lexicon
    rids = reference_ids(nm, refs, year)
    key_refs = {str(r.get("bibkey") or r.get("cite") or ""): r for r in refs}
    key_ids = {str(r.get("bibkey") or r.get("cite") or ""): i for r, i in zip(refs, rids)}
    bib = [(r, lex.family_of(i)) for r, i in zip(refs, rids)]
    cited = {f for _, f in bib if f}
    if cited_sentences:
        by_target = {int(r["target"]): (r, i) for r, i in zip(refs, rids) if r.get("target") is not None}
        units = marked_units(cited_sentences, title, by_target, lex)
    else:
        units = draft_units(sents, title, key_refs, lex, key_ids)
    rows = text_rows(TextOf("draft", year, "draft"), units, lex, cited)
    if skip_rows is not None:
        rows = [r for r in rows if not skip_rows(r)]
    if not rows:
        return []
    at = {(u.section[:80], u.kind, ts.index): ts for u in units for ts in u.sentences}
    scorer = nm.scorer(year)
    X = scorer.features(rows)
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(r["family"], []).append(i)
    fams = list(groups)
    order = np.array([i for f in fams for i in groups[f]])
    starts = np.cumsum([0] + [len(groups[f]) for f in fams[:-1]])
    W = work_matrix(X, order, starts)
    p_cite = nm.work["work"].predict(W)
    p_bib = nm.work["work_bib"].predict(W)
    bib_names = {name_key(title_short_name(r.get("title") or "")) for r, _ in bib} - {""}
    ref_titles = {name_key(r.get("title") or ""): r.get("title") or "" for r in refs}
    out = []
    for j, f in enumerate(fams):
        rs = [rows[i] for i in groups[f]]
        best = max(rs, key=lambda r: (r["capitalised"] or r["all_caps"], -r["candidates"], len(r["surface"])))
        keys = {r["key"] for r in rs}
        # cited: the bibliography holds a version of it or a reference whose title gives itself the
        # name; or a citation at a name is to it, a version, or a work the field cites for the name
        # (only there: what the field cites in a clause naming a list of datasets is every one of them)
        is_cited = (f in cited or bool(keys & bib_names)
                    or any(cites_at_name(r, at, lex, scorer, work_title(lex, f, r["target"]), ref_titles) for r in rs))
        out.append(NamedWork(f, best["target"], best["surface"], best["key"], rs, float(p_cite[j]), float(p_bib[j]),
                             is_cited))
    return out


def work_title(lex: NameLexicon, family: str, target: str) -> str:
    """The title of the record a name stands for (its family's when it has none)."""
    recs = getattr(lex, "records", None) or {}
    titles = (recs.get(target) or recs.get(family) or ((),))[0]
    return titles[0] if titles else ""


def cites_at_name(row: dict[str, Any], at: dict, lex: NameLexicon, scorer: MentionScorer, title: str,
                  ref_titles: dict[str, str]) -> bool:
    """Whether a citation marker right at a row's name cites the work it stands for: a key whose
    reference is a version of the work; unless the marker has one key and another name stands
    between (it is that name's): a work the field cites for the name, a reference whose title
    names it ("ImageNet [ImageNet Large Scale Visual Recognition Challenge]"), or a key no
    reference of the reading resolves (an entry the reading lost may be it). ``ref_titles``: the
    draft's reference titles by their name key."""
    ts = at.get((row["section"], row["unit"], row["sentence_index"]))
    if ts is None:
        return False
    start = row["offset"]
    end = start + len(row["surface"])
    fam, key = row["family"], row["key"]
    concepts = scorer.cited_for(key)
    hits = ts.hits if ts.hits is not None else find_names(ts.text, lex)
    for a, b, targets in ts.markers:
        if not is_adjacent(ts.text, start, end, a, b):
            continue
        if any(lex.family_of(t) == fam for t, _ in targets):
            return True
        # a marker of one key after another name is that name's ("ScanNet and SUN-RGBD [58]")
        if len(targets) <= 1 and any(end <= h.start and h.end <= a for h in hits):
            continue
        if not targets:
            return True
        for t, title_key in targets:
            f = lex.family_of(t)
            if f and f in concepts:
                return True
            if title_key and title_names(ref_titles.get(title_key, ""), key, title):
                return True
    return False


def title_names(ref_title: str, key: str, title: str) -> bool:
    """Whether a cited title is the named work's: it starts with the name, or gives itself the name
    or the work's own title name ("Mirror Sinkhorn: ..." names Mirror Sinkhorn, not Sinkhorn)."""
    if not ref_title:
        return False
    own = name_key(title_short_name(ref_title))
    return title_starts_with(ref_title, key) or (bool(own) and own in (key, name_key(title_short_name(title))))


def one_per_name(works: list[NamedWork]) -> list[NamedWork]:
    """Of the works one name stands for, the one the model is surest the field cites (a name means
    one work in one draft); one entry per work."""
    best: dict[str, NamedWork] = {}
    for w in sorted(works, key=lambda w: -w.p_cite):
        keys = {r["key"] for r in w.rows}
        if any(k in best for k in keys):
            continue
        for k in keys:
            best[k] = w
    return list({id(w): w for w in best.values()}.values())
