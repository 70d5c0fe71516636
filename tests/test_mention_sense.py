"""The sense of a name: a sentence compared with those in which the field cites each work it may be."""

from __future__ import annotations

import numpy as np

from mustcite.extract.works.linkprob import fold_of
from mustcite.recommend.mention_sense import SenseProfiles, out_of_fold_similarity

#: sentences of the NeurIPS full texts naming PaLM the language model, and PALM an optimiser
LM = ["We prompt PaLM with chain-of-thought exemplars for arithmetic reasoning in large language models.",
      "Large language models such as PaLM and GPT-3 are evaluated on few-shot reasoning benchmarks.",
      "PaLM scales language model pretraining to 540 billion parameters with strong few-shot results."]
OPT = ["PALM is a proximal alternating linearized minimization method for nonconvex nonsmooth optimization.",
       "We solve the nonconvex problem with PALM, a proximal alternating minimization scheme with convergence.",
       "The proximal alternating linearized minimization (PALM) converges for nonsmooth objectives."]


def _table(n: int = 12):
    sents, fams, papers, split, cited = [], [], [], [], []
    for i in range(n):
        for fam, pool in (("w-palm-lm", LM), ("w-palm-opt", OPT)):
            for other in ("w-palm-lm", "w-palm-opt"):     # one row per work the name may be
                sents.append(pool[i % 3])
                fams.append(other)
                papers.append(f"p{i}-{fam}")
                split.append("held_out" if i >= n - 2 else "train")
                cited.append(other == fam)
    return (np.array(sents, dtype=object), np.array(fams, dtype=object), np.array(papers, dtype=object),
            np.array(split, dtype=object), np.array(cited))


def test_a_sentence_is_closer_to_the_work_the_field_cites_in_such_sentences():
    sents, fams, papers, split, cited = _table()
    sim = out_of_fold_similarity(sents, fams, papers, split, cited, fold_of)
    right = sim[cited]
    wrong = sim[~cited]
    assert right.min() > wrong.max()
    # a draft's sentence, served with the profiles of every paper
    prof = SenseProfiles.fit(list(sents[cited]), list(fams[cited]))
    s = prof.similarity(["Instruction-tuned PaLM answers reasoning questions better than smaller language models."] * 2,
                        ["w-palm-lm", "w-palm-opt"])
    assert s[0] > 0.1 > s[1]
    assert prof.similarity(["anything"], ["w-unknown"]).tolist() == [0.0]


def test_a_train_papers_own_sentences_never_shape_its_profile():
    sents, fams, papers, split, cited = _table()
    first = out_of_fold_similarity(sents, fams, papers, split, cited, fold_of)
    # one train paper's sentences rewritten: no figure of its fold changes but its own
    p0 = papers[0]
    changed = sents.copy()
    changed[papers == p0] = "zyxwv qwertz uiopa asdfg"
    again = out_of_fold_similarity(changed, fams, papers, split, cited, fold_of)
    same_fold = np.array([split[i] == "train" and fold_of(p) == fold_of(p0) for i, p in enumerate(papers)])
    assert np.all(again[papers == p0] == 0.0)                  # shares no word with any other's profile
    rest = same_fold & (papers != p0)
    assert rest.any() and np.allclose(again[rest], first[rest])
    # every other paper's profile held its sentences
    assert not np.allclose(again[~same_fold], first[~same_fold])
