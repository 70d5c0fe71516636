"""The audit's named works decided by the mention models: a real draft read with the models fit on
real full texts, the per-work decision's fit (train papers, a calibration fold, held-out papers),
and an audit without the models says so."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from test_mentions import PAPERS, fixture_table  # noqa: F401 - the module's fixture, shared

from mustcite.extract.works.mention_table import TABLE_FILE


@pytest.fixture(scope="module")
def name_model(fixture_table, tmp_path_factory):  # noqa: F811
    from mustcite.recommend.draft_mentions import LEXICON_FILE, NameModel
    from mustcite.recommend.mention_model import train_mention_models

    tmp, _ = fixture_table
    out = tmp_path_factory.mktemp("models") / "mentions"
    train_mention_models(tmp / "mentions" / TABLE_FILE, out, labels=("cited_sentence",))
    shutil.copyfile(tmp / "mentions" / LEXICON_FILE, out / LEXICON_FILE)
    return NameModel.load(out)


def _draft(data_dir):
    from mustcite.recommend import read_draft
    from mustcite.recommend.audit import _passages
    from mustcite.recommend.findings import sentences

    draft = read_draft(data_dir / "drafts" / "projects" / "moments-embedding-ssl")
    refs = [dict(r) for r in draft.paper.to_reference_list()]
    return draft, refs, sentences(_passages(draft.paper, refs))


@pytest.mark.data("neurips/fulltext_2024", "drafts")
def test_a_real_draft_names_works_the_models_weigh(name_model, data_dir):
    from mustcite.recommend.draft_mentions import named_works, one_per_name, reference_ids

    draft, refs, sents = _draft(data_dir)
    lex = name_model.lexicon
    target = lex.entries["cifar10"][0].target
    by_key = {r["bibkey"]: r for r in refs}
    by_key["cifar10"]["paper_id"] = target              # the draft's CIFAR-10 entry, linked
    works = named_works(name_model, sents, draft.title, refs, 2024)
    fams = [w.family for w in works]
    assert len(fams) == len(set(fams))                  # one decision per work
    cifar = [w for w in works if w.family == lex.family_of(target)]
    assert cifar and cifar[0].cited and cifar[0].name.startswith("CIFAR")
    assert all(0.0 <= w.p_cite <= 1.0 and 0.0 <= w.p_bib <= 1.0 for w in works)
    # the same draft with that entry unlinked: the reference is linked to the work by the lexicon's
    # records, as the extraction links references ("Learning multiple layers of features ...")
    by_key["cifar10"]["paper_id"] = None
    assert lex.family_of(reference_ids(name_model, [by_key["cifar10"]], 2024)[0]) == lex.family_of(target)
    works = named_works(name_model, sents, draft.title, refs, 2024)
    cifar = [w for w in works if w.family == lex.family_of(target)]
    assert cifar and cifar[0].cited
    # without the entry: CIFAR-10 is named and no version of it is cited
    works = named_works(name_model, sents, draft.title, [r for r in refs if r.get("bibkey") != "cifar10"], 2024)
    cifar = [w for w in works if w.family == lex.family_of(target)]
    assert cifar and not cifar[0].cited and len(cifar[0].rows) > 5
    # one work per name
    keys = [k for w in one_per_name(works) for k in {r["key"] for r in w.rows}]
    assert len(keys) == len(set(keys))
    # the statistics are those of the papers of the draft's year or earlier
    assert name_model.scorer(2024).stats_year == 2024
    assert name_model.scorer(2030).stats_year == 2024


def test_the_per_work_decision_is_fit_on_train_papers_calibrated_on_a_fold_and_scored_on_held_out(tmp_path):
    from mustcite.extract.works.linkprob import fold_of
    from mustcite.recommend.mention_model import (
        CALIBRATION_FOLD,
        FEATURES,
        WORK_FEATURES,
        WorkModel,
        fit_work_model,
        work_groups,
        work_labels,
        work_matrix,
    )

    rng = np.random.default_rng(0)
    n = 6000
    X = rng.random((n, len(FEATURES))).astype(np.float32)
    papers = np.array([f"p{i // 30}" for i in range(n)])
    fams = np.array([f"w{i % 10}" for i in range(n)])
    split = np.where(np.arange(n) < 4500, "train", "held_out")
    y = X[:, 0] + 0.05 * rng.standard_normal(n) > 0.9
    meta = {"paper": papers, "family": fams, "target": fams, "split": split, "cited_paper": y, "cited_sentence": y}
    order, starts = work_groups(meta)
    W = work_matrix(X, order, starts)
    groups = work_labels(meta, order, starts)
    assert W.shape == (len(np.unique(np.char.add(papers, fams))), len(WORK_FEATURES))
    model, p, yh = fit_work_model(W, groups, label="work")
    calib = {q for q in np.unique(papers[:4500]) if fold_of(q) == CALIBRATION_FOLD}
    assert model.card["calibration_papers"] == len(calib) > 0
    assert model.card["held_out_papers"] == 50 and len(p) == len(yh)
    assert model.card["held_out"]["brier"] < model.card["held_out"]["brier_base_rate"]
    # the arrays the audit loads give scikit-learn's calibrated probabilities
    from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: F401 - the fit's own library

    model.save(tmp_path / "w")
    back = WorkModel.load(tmp_path / "w")
    held = groups["split"] == "held_out"
    assert np.allclose(back.predict(W[held]), p)
    # held-out labels do not change the fit
    flipped = {**groups, "work": np.where(groups["split"] == "held_out", ~groups["work"], groups["work"])}
    model2, p2, _ = fit_work_model(W, flipped, label="work")
    assert np.allclose(p, p2)


@pytest.mark.data
def test_the_name_rules_decide_by_default_and_learned_without_models_is_refused(monkeypatch):
    from helpers import DATA
    from helpers import recommender as S

    from mustcite.errors import DataMissingError, UsageError
    from mustcite.recommend.audit import audit_draft

    monkeypatch.delenv("MUSTCITE_MENTION_MODEL", raising=False)
    rec = S.trained()
    monkeypatch.setattr(rec, "_name_model", None, raising=False)    # the test model has none beside it
    draft = DATA / "neurips" / "fulltext_2024" / f"{PAPERS[0]}.md.gz"
    res = audit_draft(rec, draft, top=10, year=2024)
    assert not [f for f in res.findings if "learned_confidence" in f.features]
    with pytest.raises(DataMissingError, match="no mention models") as err:
        audit_draft(rec, draft, top=10, year=2024, named="learned")
    assert "fit-mentions" in (err.value.hint or "")
    with pytest.raises(UsageError, match="named must be one of"):
        audit_draft(rec, draft, top=10, year=2024, named="both")


def test_two_records_whose_titles_extend_one_another_are_one_work():
    from mustcite.corpus import normalize_title
    from mustcite.recommend.audit import same_work

    umap = normalize_title("UMAP: Uniform Manifold Approximation and Projection")
    assert same_work(umap, normalize_title("UMAP: Uniform Manifold Approximation and Projection for Dimension "
                                           "Reduction"))
    assert not same_work(normalize_title("BERT"), normalize_title("BERT rediscovers the classical NLP pipeline"))


def _libsvm_cut(data_dir) -> str:
    """A real full text cut to its title and abstract, its experiments section and its reference
    list (NeurIPS 2024, numeric markers; the LIBSVM entry's title is mis-read by the parser)."""
    from mustcite.extract.works.occurrences import read_fulltext

    lines = read_fulltext(data_dir / "neurips" / "fulltext_2024" / "lfY0SUT3m9.md.gz").split("\n")
    at = {h: i for i, line in enumerate(lines) for h in ("## 1 Introduction", "## 5 Numerical", "## 6 Conclusions",
                                                          "## References", "#### NeurIPS Paper Checklist")
          if line.startswith(h)}
    keep = (lines[:at["## 1 Introduction"]] + lines[at["## 5 Numerical"]:at["## 6 Conclusions"]]
            + lines[at["## References"]:at["#### NeurIPS Paper Checklist"]])
    return "\n".join(keep)


@pytest.mark.data("neurips/fulltext_2024")
def test_a_markdown_drafts_markers_are_joined_one_by_one_to_their_references(name_model, data_dir, tmp_path):
    """Each key of each rendered marker is resolved to its reference ("LIBSVM [6]"), the reference is
    linked to the lexicon's record it names (a title the parser mis-read, repaired from the entry),
    and the work cited at its name is not named and uncited; without the record it would be."""
    from mustcite.extract.works.occurrences import Candidate, NameLexicon
    from mustcite.recommend import read_draft
    from mustcite.recommend.draft_mentions import NameModel, named_works, reference_ids

    path = tmp_path / "libsvm.md"
    path.write_text(_libsvm_cut(data_dir))
    draft = read_draft(path)
    refs = [dict(r) for r in draft.paper.to_reference_list()]
    entry = next(r for r in refs if "LIBSVM" in (r.get("raw") or ""))
    assert "LIBSVM" not in entry["title"]                        # "Chang and C.-J": the parser's title
    sent = next(c for c in draft.paper.cited_sentences if "LIBSVM [6]" in c["text"])
    at = sent["text"].index("LIBSVM [6]") + len("LIBSVM ")
    assert [a for a, _, _ in sent["cites"]] == [at]
    assert sent["cites"][0][2] == [entry["target"]]              # this marker, this reference
    # every sentence of every context once, each marker with the targets of its keys
    texts = [(c["paragraph"], c["index"]) for c in draft.paper.cited_sentences]
    assert len(texts) == len(set(texts))
    assert all(t in {r["target"] for r in refs} for c in draft.paper.cited_sentences for _, _, ts in c["cites"]
               for t in ts)

    def model(records) -> NameModel:
        lex = NameLexicon({"libsvm": [Candidate("w-libsvm", "w-libsvm", "LIBSVM", "mined", 12, "software")]},
                          records=records)
        return NameModel(name_model.folder, lex, name_model.work)

    libsvm = {"w-libsvm": (("Libsvm: a library for support vector machines",), 2011, ())}
    linked = model(libsvm)
    assert reference_ids(linked, [entry], 2024) == ["w-libsvm"]
    works = named_works(linked, [], draft.title, refs, 2024, cited_sentences=draft.paper.cited_sentences)
    assert [w.cited for w in works if w.family == "w-libsvm"] == [True]
    # the lexicon without the record: the entry links to nothing, and its title names no LIBSVM
    works = named_works(model({}), [], draft.title, refs, 2024, cited_sentences=draft.paper.cited_sentences)
    assert [w.cited for w in works if w.family == "w-libsvm"] == [False]
    # the marker at the name is another work's: the name is not cited there
    other = [dict(r, raw="") if r is entry else r for r in refs]
    moved = [dict(c, cites=[[a, b, [1]] for a, b, _ in c["cites"]]) for c in draft.paper.cited_sentences]
    works = named_works(linked, [], draft.title, other, 2024, cited_sentences=moved)
    assert [w.cited for w in works if w.family == "w-libsvm"] == [False]


def test_a_marker_after_another_name_is_that_names():
    """"CleanRL and PureJaxRL (Lu et al., 2022)" (a NeurIPS 2024 sentence): the marker is PureJaxRL's,
    even where the field cites Lu et al. for CleanRL; right at CleanRL it would cite what the field
    cites for it, and a marker to the work itself cites it wherever it stands."""
    from mustcite.extract.works.occurrences import Candidate, NameLexicon, TextSentence, TextUnit, find_names
    from mustcite.recommend.draft_mentions import cites_at_name

    lex = NameLexicon({"cleanrl": [Candidate("w-cleanrl", "w-cleanrl", "CleanRL", "mined", 9, "software")],
                       "purejaxrl": [Candidate("w-pjrl", "w-pjrl", "PureJaxRL", "mined", 3, "software")]})

    class Field:
        def cited_for(self, key):
            return {"w-lu"} if key == "cleanrl" else set()

    def cited(text: str, target: str) -> bool:
        a = text.index("(Lu")
        ts = TextSentence(text, 0, [(a, text.index(")", a) + 1, [(target, "discoveredpolicyoptimisation")])],
                          find_names(text, lex))
        at = {("Method", "text", 0): ts}
        row = {"section": "Method", "unit": "text", "sentence_index": 0, "offset": text.index("CleanRL"),
               "surface": "CleanRL", "family": "w-cleanrl", "key": "cleanrl"}
        assert TextUnit("Method", "text", [ts])
        return cites_at_name(row, at, lex, Field(), "CleanRL: high-quality implementations", {})

    both = ("we used the default hyperparameters of other PPO implementations, such as CleanRL and PureJaxRL "
            "(Lu et al., 2022).")
    assert not cited(both, "w-lu")
    assert cited(both, "w-cleanrl")
    assert cited("we used the default hyperparameters of CleanRL (Lu et al., 2022).", "w-lu")


def test_the_title_index_of_the_records_is_saved_beside_the_lexicon(name_model):
    from mustcite.recommend.draft_mentions import NameModel
    from mustcite.recommend.mention_model import write_target_index

    path = write_target_index(name_model.folder)
    back = NameModel.load(name_model.folder)
    assert path.is_file() and back._targets is not None
    assert len(back.targets().ids) == len(name_model.lexicon.target_index().ids) > 0
