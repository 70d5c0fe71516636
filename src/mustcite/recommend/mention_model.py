"""A learned confidence for names: does the field cite the work a name stands for, at this mention?

Learned from the mention table (:mod:`mustcite.extract.works.mention_table`): every occurrence, in
the NeurIPS full texts, of a name citing papers give a work, labelled by whether the paper cites the
work (or a version of it) in the sentence that writes the name (``cited_sentence``; the variant
``cited_paper``: anywhere in its reference list).

The features (:data:`FEATURES`) are what a draft shows whether or not it cites the work: the
name's form (all capitals, inner capitals, digits, a version or size after it, part of a hyphenated
word, possessive, spelled out in the sentence as "true positive rate (TPR)", in math), where it
stands (section, table, caption, checklist, author block), its neighbours (other names in the
sentence, a head noun such as "dataset" after it, "et al." after it), whether a citation marker
right at it or in its clause cites *another* work, what the name stands for (a corpus paper or a
dataset/software work, a name from citing papers or from a title, how many works share it, whether
it is an author's surname), how often the paper writes it, and the name's link probability, cite
share and commonness counted over the train papers out of fold
(:func:`~mustcite.extract.works.linkprob.out_of_fold_stats`). Whether a marker cites the work itself
is the label, never a feature.

:func:`fit_mention_model` fits scikit-learn's ``HistGradientBoostingClassifier`` on the train papers'
rows only and scores the held-out papers (Brier score against the base rate's, ROC AUC, a
reliability table of 10 bins); :class:`MentionModel` is what the audit loads (``model.joblib`` and
``card.json`` in one folder).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import lazy_libs
from ..errors import DataMissingError, MustciteError
from ..io import atomic_write_json, read_json

#: the labels a model can learn
LABELS = ("cited_sentence", "cited_paper")
SECTION_CLASSES = ("title", "abstract", "intro", "related", "method", "experiments", "conclusion", "impact",
                   "appendix", "back_matter", "checklist", "front", "other")
UNITS = ("text", "title", "table", "caption", "footnote", "checklist", "front")
TARGET_KINDS = ("paper", "dataset", "software", "book", "web page")
_FLAGS = ("all_caps", "has_digit", "inner_caps", "capitalised", "lower", "possessive", "hyphen_part",
          "version_suffix", "size_suffix", "in_parens", "spelled_out", "in_math", "sentence_start", "next_head",
          "next_et_al", "in_front_matter", "author_surname", "other_adjacent", "other_clause",
          "adjacent_title_has_name")
_COUNTS = ("words", "names_in_sentence", "names_close", "candidates")
_STATS = ("link_probability", "link_probability_sentence", "linked_share", "cite_share", "cite_share_sentence",
          "commonness")
#: the name as written, case kept (:func:`~mustcite.extract.works.linkprob.case_key`): the share of
#: the papers writing it so that cite the work (smoothed towards the form's ``cite_share``), and how
#: many write it so
_CASE = ("case_cite_share", "log_case_papers")
#: how close the sentence is to those in which the field cites the work (:mod:`.mention_sense`)
_SENSE = ("sense_similarity",)
FEATURES = (*_FLAGS, *_COUNTS, "from_title", "prev_our", "log_form_papers", "log_uses_in_paper",
            "sections_in_paper", *_STATS, *_CASE, *_SENSE,
            *(f"section_{c}" for c in SECTION_CLASSES), *(f"unit_{u}" for u in UNITS),
            *(f"kind_{k.replace(' ', '_')}" for k in TARGET_KINDS))
MODEL_FILE = "model.joblib"
CARD_FILE = "card.json"
#: rows of train papers the model is fit on at most (a seeded sample of whole papers beyond it)
MAX_FIT_ROWS = 500_000


def feature_rows(con, table: str | Path, stats: str, case: str | None = None,
                 ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The feature matrix (columns :data:`FEATURES`) of every row of a mention table joined with its
    out-of-fold statistics (``stats``: the name of a table of
    :func:`~mustcite.extract.works.linkprob.out_of_fold_stats` rows; ``case``: of
    :func:`~mustcite.extract.works.linkprob.out_of_fold_case_stats` rows, counted here when not
    given), with the columns that are no features (paper, split, key, target, labels) alongside."""
    from ..extract.works.linkprob import CASE_KEY_SQL, PRIOR_PAPERS, arrow_table, fold_of, out_of_fold_case_stats
    from .mention_sense import out_of_fold_similarity

    if case is None:
        case = "_oof_case_stats"
        con.register(case, out_of_fold_case_stats(con, table))
    sect = ", ".join(f"(m.section_class = '{c}')::float as section_{c}" for c in SECTION_CLASSES)
    unit = ", ".join(f"(m.unit = '{u}')::float as unit_{u}" for u in UNITS)
    kind = ", ".join(f"(m.target_kind = '{k}')::float as kind_{k.replace(' ', '_')}" for k in TARGET_KINDS)
    flags = ", ".join(f"m.{f}::float as {f}" for f in _FLAGS)
    counts = ", ".join(f"m.{c}::float as {c}" for c in _COUNTS)
    stat_cols = ", ".join(f"coalesce(s.{c}, 0)::float as {c}" for c in _STATS)
    a = PRIOR_PAPERS
    rel = arrow_table(con, f"""
        with m as (select *, count(*) over (partition by paper, key, target) as uses,
                          count(distinct section) over (partition by paper, key, target) as sections,
                          {CASE_KEY_SQL} as case_key
                   from read_parquet('{table}'))
        select m.paper, m.split, m.key, m.target, m.family, m.year, m.cited_sentence, m.cited_paper, m.cited_adjacent,
               m.unit, m.section_class, m.surface, m.sentence,
               {flags}, {counts}, (m.name_source = 'title')::float as from_title,
               (lower(m.prev_word) in ('our', 'we', 'ours'))::float as prev_our,
               ln(1 + coalesce(s.form_papers, 0))::float as log_form_papers, ln(m.uses)::float as log_uses_in_paper,
               m.sections::float as sections_in_paper, {stat_cols},
               ((coalesce(c.case_cited_papers, 0) + {a} * coalesce(s.cite_share, 0))
                / (coalesce(c.case_papers, 0) + {a}))::float as case_cite_share,
               ln(1 + coalesce(c.case_papers, 0))::float as log_case_papers,
               {sect}, {unit}, {kind}
        from m left join {stats} s on s.paper = m.paper and s.key = m.key and s.target = m.target
        left join {case} c on c.paper = m.paper and c.case_key = m.case_key and c.target = m.target
        order by m.paper, m.key, m.target""")
    meta = {c: rel.column(c).to_numpy(zero_copy_only=False)
            for c in ("paper", "split", "key", "target", "family", "year", "cited_sentence", "cited_paper",
                      "cited_adjacent", "unit", "section_class", "surface")}
    sense = out_of_fold_similarity(rel.column("sentence").to_numpy(zero_copy_only=False), meta["family"],
                                   meta["paper"], meta["split"], meta["cited_sentence"], fold_of)
    X = np.column_stack([sense if f == "sense_similarity" else rel.column(f).to_numpy(zero_copy_only=False)
                         for f in FEATURES]).astype(np.float32)
    return X, meta


def reliability(y: np.ndarray, p: np.ndarray, bins: int = 10) -> list[dict[str, Any]]:
    """Equal-width bins of the predicted probability: rows, mean prediction, observed share."""
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    out = []
    for b in range(bins):
        sel = idx == b
        n = int(sel.sum())
        out.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "rows": n,
                    "mean_predicted": round(float(p[sel].mean()), 4) if n else None,
                    "observed": round(float(y[sel].mean()), 4) if n else None})
    return out


def scores(y: np.ndarray, p: np.ndarray, base: float) -> dict[str, Any]:
    """Brier score, the Brier score of the constant ``base`` (the train base rate), ROC AUC, log loss."""
    metrics = lazy_libs.sklearn_metrics("mention model scores")
    log_loss, roc_auc_score = metrics.log_loss, metrics.roc_auc_score

    return {"rows": int(len(y)), "positives": int(y.sum()), "share_positive": round(float(y.mean()), 4),
            "brier": round(float(np.mean((p - y) ** 2)), 4),
            "brier_base_rate": round(float(np.mean((base - y) ** 2)), 4),
            "auc": round(float(roc_auc_score(y, p)), 4) if 0 < y.sum() < len(y) else None,
            "log_loss": round(float(log_loss(y, np.clip(p, 1e-6, 1 - 1e-6), labels=[0, 1])), 4)}


def _model_card(folder: Path, files, features, what: str) -> dict[str, Any]:
    """The card of the model ``what`` saved in ``folder``: DataMissingError naming the first of
    ``files`` missing, or the card when it was fit on other ``features``."""
    for name in files:
        if not (folder / name).is_file():
            raise DataMissingError(f"no {what}", path=folder / name, hint="run `mustcite works fit-mentions` first")
    card = read_json(folder / CARD_FILE)
    if list(card.get("features") or []) != list(features):
        raise DataMissingError(f"the {what} was fit on other features", path=folder / CARD_FILE,
                               hint="refit it with `mustcite works fit-mentions`")
    return card


@dataclass
class MentionModel:
    """A fitted model with its card (features, label, what it was fit on, held-out scores)."""

    model: Any
    card: dict[str, Any]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """P(the label) per row of a feature matrix of :data:`FEATURES`."""
        if X.shape[1] != len(self.card["features"]):
            raise ValueError(f"{X.shape[1]} features given, the model takes {len(self.card['features'])}")
        return self.model.predict_proba(X)[:, 1]

    def save(self, folder: str | Path) -> None:
        import joblib

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        joblib.dump(self.model, folder / MODEL_FILE)
        atomic_write_json(folder / CARD_FILE, self.card)

    @classmethod
    def load(cls, folder: str | Path) -> MentionModel:
        import joblib

        folder = Path(folder)
        card = _model_card(folder, (MODEL_FILE, CARD_FILE), FEATURES, "mention model")
        return cls(joblib.load(folder / MODEL_FILE), card)


def _fit_rows(papers: np.ndarray, train: np.ndarray, seed: int, max_rows: int) -> np.ndarray:
    """The train rows to fit on: all, or whole papers drawn with ``seed`` up to ``max_rows`` rows."""
    idx = np.flatnonzero(train)
    if len(idx) <= max_rows:
        return idx
    rng = np.random.default_rng(seed)
    ids = np.unique(papers[idx])
    rng.shuffle(ids)
    counts = dict(zip(*np.unique(papers[idx], return_counts=True)))
    keep, total = set(), 0
    for p in ids:
        if total + counts[p] > max_rows:
            continue
        keep.add(p)
        total += counts[p]
    return idx[np.isin(papers[idx], list(keep))]


def fit_mention_model(X: np.ndarray, meta: dict[str, np.ndarray], *, label: str = "cited_sentence", seed: int = 0,
                      max_rows: int = MAX_FIT_ROWS, inputs: dict[str, Any] | None = None,
                      ) -> tuple[MentionModel, np.ndarray]:
    """Fit on the train papers' rows, score the held-out papers'; the model and the held-out
    predictions (aligned with the held-out rows, in table order)."""
    HistGradientBoostingClassifier = lazy_libs.sklearn_ensemble("the mention model").HistGradientBoostingClassifier

    if label not in LABELS:
        raise ValueError(f"unknown label {label!r}; expected one of {LABELS}")
    t0 = time.perf_counter()
    y = meta[label].astype(np.int8)
    train = meta["split"] == "train"
    held = meta["split"] == "held_out"
    if not train.any() or not held.any():
        raise DataMissingError("the mention table needs train and held-out papers")
    rows = _fit_rows(meta["paper"], train, seed, max_rows)
    few = int(min(y[rows].sum(), len(rows) - y[rows].sum())) < 20      # too few of a class to stop early on
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                           min_samples_leaf=100, l2_regularization=1.0, early_stopping=not few,
                                           validation_fraction=0.1, n_iter_no_change=20, random_state=seed)
    model.fit(X[rows], y[rows])
    base = float(y[train].mean())
    p_held = model.predict_proba(X[held])[:, 1]
    p_train = model.predict_proba(X[rows])[:, 1]
    y_held = y[held].astype(float)
    card = {
        "label": label, "features": list(FEATURES), "model": "HistGradientBoostingClassifier",
        "params": {k: v for k, v in model.get_params().items() if isinstance(v, (int, float, str, bool, type(None)))},
        "iterations": int(model.n_iter_), "seed": seed, "train_base_rate": round(base, 4),
        "train_papers": int(len(np.unique(meta["paper"][train]))), "fit_rows": int(len(rows)),
        "held_out_papers": int(len(np.unique(meta["paper"][held]))),
        "train_fit": scores(y[rows].astype(float), p_train, base),
        "held_out": {**scores(y_held, p_held, base), "reliability": reliability(y_held, p_held)},
        "inputs": inputs or {}, "fit_s": round(time.perf_counter() - t0, 1),
    }
    return MentionModel(model, card), p_held


FORMS_FILE = "forms.parquet"
FORM_TARGETS_FILE = "form_targets.parquet"
CONCEPTS_FILE = "concepts.parquet"
#: per (name as written, case kept; work): papers writing it so, and those citing the work
CASE_FILE = "case_forms.parquet"
SENSE_FILE = "sense.npz"
#: a work the field cites at a form counts as citing what the form names when at least this many
#: papers and this share of the papers citing anything there do
CONCEPT_MIN_PAPERS = 2
CONCEPT_MIN_SHARE = 0.05


def train_mention_models(table: str | Path, out: str | Path, *, labels: tuple[str, ...] = LABELS, seed: int = 0,
                         max_rows: int = MAX_FIT_ROWS, inputs: dict[str, Any] | None = None,
                         work: bool = True) -> dict[str, MentionModel]:
    """From a mention table: the link probability and commonness of every form over all train
    papers (``out/forms.parquet``, ``out/form_targets.parquet``), and one model per label, fit on the
    train papers with out-of-fold statistics and scored on the held-out papers (``out/<label>/``);
    with ``work``, the per-work decisions too (:func:`fit_work_models`), and the statistics a draft is
    served with (:func:`serving_stats`)."""
    import duckdb
    import pyarrow.parquet as pq

    from ..extract.works.linkprob import case_stats, form_stats, out_of_fold_stats, paper_uses, target_stats

    table, out = Path(table), Path(out)
    if not table.is_file():
        raise DataMissingError("no mention table", path=table, hint="run `mustcite works mentions` first")
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    con.execute("set threads to 2").fetchall()
    try:
        uses = paper_uses(con, table, split="train")
    except duckdb.Error as exc:
        raise MustciteError(f"not a mention table: {str(exc).splitlines()[0]}", path=table,
                            hint="rebuild it with `mustcite works mentions`") from None
    con.register("train_uses", uses)
    pq.write_table(form_stats(con, "train_uses"), out / FORMS_FILE)
    pq.write_table(target_stats(con, "train_uses"), out / FORM_TARGETS_FILE)
    pq.write_table(case_stats(con, table, "split = 'train'"), out / CASE_FILE)
    sense_profiles(con, table, "split = 'train'").save(out / SENSE_FILE)
    stats = out_of_fold_stats(con, table)
    con.register("oof_stats", stats)
    X, meta = feature_rows(con, table, "oof_stats")
    serving_stats(con, table, out)
    con.close()
    models = {}
    for label in labels:
        model, _ = fit_mention_model(X, meta, label=label, seed=seed, max_rows=max_rows, inputs=inputs)
        model.save(out / label)
        models[label] = model
    if work:
        fit_work_models(X, meta, out, seed=seed, inputs=inputs)
        lexicon = table.parent / "lexicon.pkl"          # what the audit reads names with
        if lexicon.is_file():
            import shutil

            shutil.copyfile(lexicon, out / lexicon.name)
            write_target_index(out)
    return models


#: the title index of the lexicon's records beside the models (:func:`write_target_index`; an audit
#: builds it on first use without it)
TARGETS_FILE = "targets.pkl"


def write_target_index(folder: str | Path) -> Path:
    """Build the title index of the records of the lexicon (``lexicon.pkl``) in ``folder`` and save it
    beside it, so that an audit does not build it on every first use."""
    import pickle

    folder = Path(folder)
    with open(folder / "lexicon.pkl", "rb") as fh:
        lexicon = pickle.load(fh)
    with open(folder / TARGETS_FILE, "wb") as fh:
        pickle.dump(lexicon.target_index(), fh, protocol=5)
    return folder / TARGETS_FILE


class MentionScorer:
    """The confidence of new mentions (a draft's), from a model folder of :func:`train_mention_models`:
    rows shaped like the mention table's (:func:`~mustcite.extract.works.occurrences.paper_occurrences`
    of the draft) get the features the model was fit on, the statistics being those of all train
    papers (smoothed as the held-out papers' were)."""

    def __init__(self, folder: str | Path, label: str = "cited_sentence", year: int | None = None):
        import pyarrow.parquet as pq

        from ..extract.works.linkprob import PRIOR_PAPERS
        from .mention_sense import SenseProfiles

        folder = Path(folder)
        self.model = MentionModel.load(folder / label) if label else None
        self.stats_year = None
        self.stats_folder = folder
        if year is not None:        # the statistics of every paper of that year or earlier
            years = sorted(int(d.name) for d in (folder / SERVING_DIR).glob("*") if d.name.isdigit())
            fit = [y for y in years if y <= year] or years[:1]
            if fit:
                self.stats_year = fit[-1]
                folder = folder / SERVING_DIR / str(fit[-1])
        for name in (FORMS_FILE, FORM_TARGETS_FILE):
            if not (folder / name).is_file():
                raise DataMissingError("no link probabilities beside the mention model", path=folder / name,
                                       hint="run `mustcite works fit-mentions` first")
        forms = pq.read_table(folder / FORMS_FILE).to_pylist()
        targets = pq.read_table(folder / FORM_TARGETS_FILE).to_pylist()
        self.forms = {f["key"]: f for f in forms}
        self.targets = {(t["key"], t["target"]): t for t in targets}
        n = sum(f["papers"] for f in forms) or 1
        self.prior = {"cp": sum(f["cited_papers"] for f in forms) / n,
                      "cs": sum(f["cited_sentence_papers"] for f in forms) / n,
                      "ln": sum(f["linked_papers"] for f in forms) / n}
        linked = sum(f["linked_papers"] for f in forms)
        self.prior["com"] = sum(t["linked_to_target"] for t in targets) / linked if linked else 0.0
        self.strength = PRIOR_PAPERS
        self.case: dict[tuple[str, str], tuple[int, int]] = {}
        if (folder / CASE_FILE).is_file():
            t = pq.read_table(folder / CASE_FILE)
            self.case = {(k, g): (int(n), int(c)) for k, g, n, c in zip(
                *(t.column(x).to_pylist() for x in ("case_key", "target", "case_papers", "case_cited_papers")))}
        self.sense = SenseProfiles.load(folder / SENSE_FILE) if (folder / SENSE_FILE).is_file() else None
        self.concepts: dict[str, set[str]] = {}
        if (folder / CONCEPTS_FILE).is_file():
            for c in pq.read_table(folder / CONCEPTS_FILE).to_pylist():
                if c["papers"] >= CONCEPT_MIN_PAPERS and c["papers"] >= CONCEPT_MIN_SHARE * c["linked_papers"]:
                    self.concepts.setdefault(c["key"], set()).add(c["family"])

    def stats(self, key: str, target: str) -> dict[str, float]:
        """The link probability, cite shares and commonness of a (form, work), smoothed."""
        f = self.forms.get(key) or {"papers": 0, "cited_papers": 0, "cited_sentence_papers": 0, "linked_papers": 0}
        t = self.targets.get((key, target)) or {"cited_papers": 0, "cited_sentence_papers": 0, "linked_to_target": 0}
        a, p, n = self.strength, self.prior, f["papers"]
        return {"form_papers": n,
                "link_probability": (f["cited_papers"] + a * p["cp"]) / (n + a),
                "link_probability_sentence": (f["cited_sentence_papers"] + a * p["cs"]) / (n + a),
                "linked_share": (f["linked_papers"] + a * p["ln"]) / (n + a),
                "cite_share": (t["cited_papers"] + a * p["cp"]) / (n + a),
                "cite_share_sentence": (t["cited_sentence_papers"] + a * p["cs"]) / (n + a),
                "commonness": (t["linked_to_target"] + a * p["com"]) / (f["linked_papers"] + a)}

    def features(self, rows: list[dict[str, Any]]) -> np.ndarray:
        """The feature matrix (:data:`FEATURES`) of mention rows of one text."""
        from collections import Counter, defaultdict

        from ..extract.works.linkprob import case_key

        sense = (self.sense.similarity([r["sentence"] for r in rows], [r["family"] for r in rows])
                 if self.sense is not None and rows else np.zeros(len(rows), dtype=np.float32))

        uses = Counter((r["key"], r["target"]) for r in rows)
        sections: dict[tuple[str, str], set[str]] = defaultdict(set)
        for r in rows:
            sections[(r["key"], r["target"])].add(r["section"])
        out = np.zeros((len(rows), len(FEATURES)), dtype=np.float32)
        col = {f: i for i, f in enumerate(FEATURES)}
        for i, r in enumerate(rows):
            k = (r["key"], r["target"])
            st = self.stats(*k)
            n_case, c_case = self.case.get((case_key(r["surface"]), r["target"]), (0, 0))
            vals = {"case_cite_share": (c_case + self.strength * st["cite_share"]) / (n_case + self.strength),
                    "sense_similarity": float(sense[i]),
                    "log_case_papers": float(np.log1p(n_case)),
                    **{f: float(bool(r[f])) for f in _FLAGS}, **{c: float(r[c]) for c in _COUNTS},
                    "from_title": float(r["name_source"] == "title"),
                    "prev_our": float(str(r["prev_word"]).lower() in ("our", "we", "ours")),
                    "log_form_papers": float(np.log1p(st["form_papers"])), "log_uses_in_paper": float(np.log(uses[k])),
                    "sections_in_paper": float(len(sections[k])), **{s: float(st[s]) for s in _STATS},
                    f"section_{r['section_class']}": 1.0, f"unit_{r['unit']}": 1.0,
                    f"kind_{str(r['target_kind']).replace(' ', '_')}": 1.0}
            for f, v in vals.items():
                if f in col:
                    out[i, col[f]] = v
        return out

    def cited_for(self, key: str) -> set[str]:
        """The works (families) the field cites at the form ``key`` (right at it or in its clause), by
        at least :data:`CONCEPT_MIN_PAPERS` papers and :data:`CONCEPT_MIN_SHARE` of those citing
        anything there: a draft citing one of them there cites what the name stands for."""
        return self.concepts.get(key, set())

    def score(self, rows: list[dict[str, Any]]) -> np.ndarray:
        """P(the field cites the work at this mention) per row."""
        return self.model.predict(self.features(rows)) if rows else np.zeros(0)


# ---------------------------------------------------------------------------------- per work

#: the per-work decisions: ``work``: whether the paper cites the work (a version of it) at all, from
#: every mention of it; ``work_bib``: of the works the paper cites, whether it cites one in a sentence
#: that names it (the evidence of a bibliography entry the text names: the authors mean to cite it)
WORK_LABELS = ("work", "work_bib")
#: per feature of a mention, over the mentions of one work in one paper
WORK_FEATURES = (*(f"max_{f}" for f in FEATURES), *(f"mean_{f}" for f in FEATURES), "log_mentions")
#: the train papers whose pairs calibrate the per-work model (a fold of :func:`fold_of`), never fit on
CALIBRATION_FOLD = 0
SERVING_DIR = "serving"


def work_groups(meta: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(row order sorting the rows by (paper, family), start of each group in that order)."""
    fam = meta["family"] if "family" in meta else meta["target"]
    keys = np.char.add(np.char.add(meta["paper"].astype(str), "\x00"), fam.astype(str))
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    return order, starts


def work_matrix(X: np.ndarray, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The per-work features (:data:`WORK_FEATURES`): max and mean of each mention feature over the
    mentions of the work, and the log of their number."""
    Xs = X[order]
    counts = np.diff(np.r_[starts, len(Xs)]).astype(np.float32)
    mx = np.maximum.reduceat(Xs, starts, axis=0)
    mean = np.add.reduceat(Xs.astype(np.float64), starts, axis=0) / counts[:, None]
    return np.column_stack([mx, mean.astype(np.float32), np.log(counts)]).astype(np.float32)


def work_labels(meta: dict[str, np.ndarray], order: np.ndarray, starts: np.ndarray) -> dict[str, np.ndarray]:
    """Per (paper, work) group: its paper, split, family, and whether the paper cites the work at all
    (``work``) and in a sentence that names it (``sentence``)."""
    fam = meta["family"] if "family" in meta else meta["target"]
    cp = np.maximum.reduceat(meta["cited_paper"][order].astype(np.int8), starts)
    cs = np.maximum.reduceat(meta["cited_sentence"][order].astype(np.int8), starts)
    first = order[starts]
    return {"paper": meta["paper"][first], "split": meta["split"][first], "family": fam[first],
            "work": cp.astype(bool), "sentence": cs.astype(bool)}


@dataclass
class WorkModel:
    """A per-work decision: a gradient-boosted model of :data:`WORK_FEATURES`, kept as plain arrays
    (:class:`~.forest.TreeEnsemble`: the audit loads it without scikit-learn), and the isotonic map of
    its output fitted on other train papers (the calibration fold), as its breakpoints."""

    trees: Any
    calib_x: np.ndarray
    calib_y: np.ndarray
    card: dict[str, Any]

    def predict(self, W: np.ndarray) -> np.ndarray:
        if W.shape[1] != len(WORK_FEATURES):
            raise ValueError(f"{W.shape[1]} features given, the model takes {len(WORK_FEATURES)}")
        raw = np.clip(self.trees.raw(W), -50.0, 50.0)
        return np.clip(np.interp(1.0 / (1.0 + np.exp(-raw)), self.calib_x, self.calib_y), 0.0, 1.0)

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.trees.save(folder / TREES_FILE)
        np.savez(folder / CALIBRATION_FILE, x=self.calib_x, y=self.calib_y)
        atomic_write_json(folder / CARD_FILE, self.card)

    @classmethod
    def load(cls, folder: str | Path) -> WorkModel:
        from .forest import TreeEnsemble

        folder = Path(folder)
        card = _model_card(folder, (TREES_FILE, CALIBRATION_FILE, CARD_FILE), WORK_FEATURES, "per-work mention model")
        with np.load(folder / CALIBRATION_FILE) as z:
            x, y = z["x"], z["y"]
        return cls(TreeEnsemble.load(folder / TREES_FILE), x, y, card)


TREES_FILE = "trees.npz"
CALIBRATION_FILE = "calibration.npz"


def fit_work_model(W: np.ndarray, groups: dict[str, np.ndarray], *, label: str = "work", seed: int = 0,
                   inputs: dict[str, Any] | None = None) -> tuple[WorkModel, np.ndarray, np.ndarray]:
    """Fit the per-work decision ``label`` (:data:`WORK_LABELS`) on the train papers outside the
    calibration fold, calibrate it (isotonic) on the calibration fold, score the held-out papers;
    the model, the held-out predictions and their labels. ``work_bib`` is fit and scored on the pairs
    whose paper cites the work."""
    from ..extract.works.linkprob import fold_of
    from .forest import TreeEnsemble

    HistGradientBoostingClassifier = lazy_libs.sklearn_ensemble("the mention model").HistGradientBoostingClassifier
    IsotonicRegression = lazy_libs.sklearn_isotonic("the mention model").IsotonicRegression
    if label not in WORK_LABELS:
        raise ValueError(f"unknown label {label!r}; expected one of {WORK_LABELS}")
    t0 = time.perf_counter()
    keep = np.ones(len(W), dtype=bool) if label == "work" else groups["work"]
    y = (groups["work"] if label == "work" else groups["sentence"]).astype(np.int8)
    train = (groups["split"] == "train") & keep
    held = (groups["split"] == "held_out") & keep
    calib_papers = {p for p in np.unique(groups["paper"][train]) if fold_of(str(p)) == CALIBRATION_FOLD}
    calib = train & np.isin(groups["paper"], list(calib_papers))
    fit = train & ~calib
    if not fit.any() or not calib.any() or not held.any():
        raise DataMissingError("the per-work model needs train, calibration and held-out papers")
    few = int(min(y[fit].sum(), fit.sum() - y[fit].sum())) < 20
    model = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=50,
                                           l2_regularization=1.0, early_stopping=not few, validation_fraction=0.1,
                                           n_iter_no_change=20, random_state=seed)
    model.fit(W[fit], y[fit])
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
    iso.fit(model.predict_proba(W[calib])[:, 1], y[calib])
    wm = WorkModel(TreeEnsemble.from_sklearn(model), np.asarray(iso.X_thresholds_, dtype=np.float64),
                   np.asarray(iso.y_thresholds_, dtype=np.float64), {})
    p_held = np.clip(iso.predict(model.predict_proba(W[held])[:, 1]), 0.0, 1.0)
    y_held = y[held].astype(float)
    base = float(y[train].mean())
    wm.card = {
        "label": label, "features": list(WORK_FEATURES), "model": "HistGradientBoostingClassifier + isotonic",
        "iterations": int(model.n_iter_), "seed": seed, "train_base_rate": round(base, 4),
        "fit_pairs": int(fit.sum()), "calibration_pairs": int(calib.sum()),
        "calibration_papers": len(calib_papers), "fit_papers": int(len(np.unique(groups["paper"][fit]))),
        "held_out_papers": int(len(np.unique(groups["paper"][held]))),
        "held_out": {**scores(y_held, p_held, base), "reliability": reliability(y_held, p_held)},
        "inputs": inputs or {}, "fit_s": round(time.perf_counter() - t0, 1),
    }
    return wm, p_held, y_held


def serving_stats(con, table: str | Path, out: str | Path) -> list[int]:
    """The link probabilities and commonness a draft of year Y is scored with: over every paper of
    the table (train and held out) of year Y or earlier, one pair of files per year of the table
    (``out/serving/<Y>/``); the years written."""
    import pyarrow.parquet as pq

    from ..extract.works.linkprob import arrow_table, case_stats, form_stats, target_stats

    years = [int(y) for (y,) in con.execute(f"select distinct year from read_parquet('{table}') "
                                            "where year is not null order by year").fetchall()]
    for y in years:
        uses = arrow_table(con, f"""
            select paper, key, target, bool_or(cited_paper) as cited_paper, bool_or(cited_sentence) as cited_sentence,
                   bool_or(cited_adjacent) as cited_adjacent, bool_or(markers_adjacent > 0) as linked
            from read_parquet('{table}') where year <= {y} group by all""")
        con.register("_serving_uses", uses)
        folder = Path(out) / SERVING_DIR / str(y)
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(form_stats(con, "_serving_uses"), folder / FORMS_FILE)
        pq.write_table(target_stats(con, "_serving_uses"), folder / FORM_TARGETS_FILE)
        con.unregister("_serving_uses")
        pq.write_table(concept_stats(con, table, y), folder / CONCEPTS_FILE)
        pq.write_table(case_stats(con, table, f"year <= {y}"), folder / CASE_FILE)
        sense_profiles(con, table, f"year <= {y}").save(folder / SENSE_FILE)
    return years


def sense_profiles(con, table: str | Path, where: str):
    """The profiles (:class:`~.mention_sense.SenseProfiles`) of the works, from the sentences of the
    mention table's papers matching ``where`` (SQL) that cite the work where they name it."""
    from ..extract.works.linkprob import arrow_table
    from .mention_sense import SenseProfiles

    t = arrow_table(con, f"select sentence, family from read_parquet('{table}') where cited_sentence and {where}")
    return SenseProfiles.fit(t.column("sentence").to_pylist(), t.column("family").to_pylist())


def concept_stats(con, table: str | Path, year: int):
    """Per (form, work): the papers of ``year`` or earlier that cite the work right at the form or
    in its clause (whatever work the form names: what the field cites *for* the name), with the
    papers that cite anything there; the pairs :meth:`MentionScorer.cited_for` keeps only."""
    from ..extract.works.linkprob import arrow_table

    return arrow_table(con, f"""
        with m as (select distinct paper, key, clause_families from read_parquet('{table}')
                   where year <= {year} and len(clause_families) > 0),
             linked as (select key, count(distinct paper) as linked_papers from m group by key),
             f as (select paper, key, unnest(clause_families) as family from m)
        select f.key, f.family, count(distinct f.paper)::bigint as papers, any_value(l.linked_papers)::bigint
               as linked_papers
        from f join linked l using (key) group by f.key, f.family
        having count(distinct f.paper) >= {CONCEPT_MIN_PAPERS}
           and count(distinct f.paper) >= {CONCEPT_MIN_SHARE} * any_value(l.linked_papers)""")


def fit_work_models(X: np.ndarray, meta: dict[str, np.ndarray], out: str | Path, *, seed: int = 0,
                    inputs: dict[str, Any] | None = None) -> dict[str, tuple[WorkModel, np.ndarray, np.ndarray]]:
    """Both per-work decisions (:data:`WORK_LABELS`), saved in ``out/<label>/``."""
    order, starts = work_groups(meta)
    W = work_matrix(X, order, starts)
    groups = work_labels(meta, order, starts)
    done = {}
    for label in WORK_LABELS:
        wm, p, y = fit_work_model(W, groups, label=label, seed=seed, inputs=inputs)
        wm.save(Path(out) / label)
        done[label] = (wm, p, y)
    return done
