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

from ..errors import DataMissingError
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
from .mention_model import WORK_LABELS, MentionScorer, WorkModel, work_matrix

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

    @classmethod
    def load(cls, folder: str | Path) -> NameModel:
        folder = Path(folder)
        if not (folder / LEXICON_FILE).is_file():
            raise DataMissingError("no name lexicon beside the mention models", path=folder / LEXICON_FILE,
                                   hint="run `mustcite works fit-mentions` first")
        with open(folder / LEXICON_FILE, "rb") as fh:
            lexicon = pickle.load(fh)
        return cls(folder, lexicon, {label: WorkModel.load(folder / label) for label in WORK_LABELS})

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


def draft_units(sents, title: str, key_refs: dict[str, dict[str, Any]], lex: NameLexicon | None = None,
                ) -> list[TextUnit]:
    """The audit's sentences as the units :func:`text_rows` reads: the title, then one unit per run
    of sentences of one section (a checklist's as a checklist), each citation resolved to its
    reference's linked work. With ``lex``, the names written inside a rendered citation ("(Banerjee
    and Lavie, 2005)") are left out: they are its authors."""
    units = [TextUnit("Title", "title", [TextSentence(title, 0, [])])] if title else []
    count: dict[tuple[str, str], int] = {}          # sentences of a section: numbered across its runs
    for s in sents:
        markers = []
        for off, keys in s.cites:
            targets = []
            for k in keys:
                r = key_refs.get(k) or {}
                targets.append((r.get("paper_id") or None, name_key(r.get("title") or "")))
            markers.append((off, _marker_end(s.text, off), targets))
        hits = None
        if lex is not None:
            hits = [h for h in find_names(s.text, lex) if not any(a <= h.start < b for a, b, _ in markers)]
        kind = "checklist" if "checklist" in (s.section or "").lower() else "text"
        i = count[(s.section, kind)] = count.get((s.section, kind), -1) + 1
        if units and units[-1].section == s.section and units[-1].kind == kind:
            units[-1].sentences.append(TextSentence(s.text, i, markers, hits))
        else:
            units.append(TextUnit(s.section, kind, [TextSentence(s.text, i, markers, hits)]))
    return units


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
                skip_rows=None) -> list[NamedWork]:
    """Every work the draft names, with its two probabilities (see the module doc); ``skip_rows(row)``:
    mentions that are no use of a work (the draft's own names, the acknowledgements ...)."""
    key_refs = {str(r.get("bibkey") or r.get("cite") or ""): r for r in refs}
    lex = nm.lexicon
    cited = {lex.family_of(r["paper_id"]) for r in refs if r.get("paper_id")}
    units = draft_units(sents, title, key_refs, lex)
    rows = text_rows(TextOf("draft", year, "draft"), units, lex, cited)
    if skip_rows is not None:
        rows = [r for r in rows if not skip_rows(r)]
    if not rows:
        return []
    at = {(u.section[:80], u.kind, ts.index): ts for u in units for ts in u.sentences}
    X = nm.scorer(year).features(rows)
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(r["family"], []).append(i)
    fams = list(groups)
    order = np.array([i for f in fams for i in groups[f]])
    starts = np.cumsum([0] + [len(groups[f]) for f in fams[:-1]])
    W = work_matrix(X, order, starts)
    scorer = nm.scorer(year)
    p_cite = nm.work["work"].predict(W)
    p_bib = nm.work["work_bib"].predict(W)
    out = []
    for j, f in enumerate(fams):
        rs = [rows[i] for i in groups[f]]
        best = max(rs, key=lambda r: (r["capitalised"] or r["all_caps"], -r["candidates"], len(r["surface"])))
        # cited: a version of it is in the reference list, or a citation right at the name is to a
        # work the field cites for the name
        cited = any(r["cited_paper"] for r in rs) or any(
            adjacent_families(r, at, lex) & scorer.cited_for(r["key"]) for r in rs)
        out.append(NamedWork(f, best["target"], best["surface"], best["key"], rs, float(p_cite[j]), float(p_bib[j]),
                             cited))
    return out


def adjacent_families(row: dict[str, Any], at: dict, lex: NameLexicon) -> set[str]:
    """The works (families) cited by the markers right at a row's name in its sentence."""
    ts = at.get((row["section"], row["unit"], row["sentence_index"]))
    if ts is None:
        return set()
    start = row["offset"]
    end = start + len(row["surface"])
    return {f for a, b, targets in ts.markers if is_adjacent(ts.text, start, end, a, b)
            for t, _ in targets if (f := lex.family_of(t))}


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
