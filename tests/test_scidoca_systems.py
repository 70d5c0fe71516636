"""The learned Task 1 and Task 3 systems (``scidoca.discovery``, ``scidoca.sentences``), the
training recipes (``scidoca.training``) and the seeded sampler; on hand-made paragraphs (the real
task data is exercised in ``test_scidoca_build.py``)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers.scidoca import CANDS, SENTENCES, t1, t2, t3

from mustcite.errors import MustciteError
from mustcite.scidoca import Candidate, Example, evaluate, write_examples
from mustcite.scidoca.cross import gold_ids, paragraph_text
from mustcite.scidoca.discovery import FEATURES, CandidateFeaturizer, DiscoveryModel, SetRule, tune_rule, weighted_f1
from mustcite.scidoca.floors import BM25TopK
from mustcite.scidoca.formats import sample_examples
from mustcite.scidoca.sentences import SentenceCitationModel, SentenceRule, tune

SMALL = {"max_iter": 30, "learning_rate": 0.1, "max_leaf_nodes": 15, "random_state": 0}
FILLER = ("We report results on three benchmarks.", "Section 4 gives the details of the setup.",
          "Our code is released under an open license.")


def _paragraph(i: int, rng: random.Random, task: int) -> Example:
    cited = rng.sample(sorted(SENTENCES), rng.randint(1, 3))
    sents = [SENTENCES[c].format(m="").replace(" .", ".") for c in cited] + rng.sample(FILLER, 2)
    order = list(range(len(sents)))
    rng.shuffle(order)
    sents = [sents[j] for j in order]
    gold_per = [(cited[j],) if j < len(cited) else () for j in order]
    cands = list(CANDS)
    rng.shuffle(cands)
    if task == 1:
        return Example(f"t1-{i}", 1, " ".join(sents), tuple(cands), tuple(cited))
    return Example(f"t3-{i}", 3, tuple(sents), tuple(cands), tuple(gold_per))


def paragraphs(n: int, task: int, seed: int = 0) -> list[Example]:
    rng = random.Random(seed)
    return [_paragraph(i, rng, task) for i in range(n)]


@pytest.fixture(scope="module")
def discovery():
    return DiscoveryModel(params=SMALL).fit(paragraphs(80, 1), progress=False)


def test_candidate_features_put_the_cited_paper_first():
    feat = CandidateFeaturizer()
    X = feat.features(t1())
    assert X.shape == (len(CANDS), len(FEATURES))
    ids = [c.id for c in CANDS]
    rank = X[:, FEATURES.index("p_rank")]
    assert {ids[int(i)] for i in np.argsort(rank)[:2]} == {"vaswani", "kingma"}
    assert feat.last_sentence_scores.shape == (2, len(CANDS))      # two sentences
    assert X[ids.index("kingma"), FEATURES.index("title_cover")] > 0   # "Adam" ... "Stochastic Optimization"
    empty = Example("e", 1, "Nothing here.", ())
    assert feat.features(empty).shape == (0, len(FEATURES))


def test_title_names_match_the_paragraph():
    from mustcite.scidoca.discovery import short_name

    assert short_name("SqueezeLLM: Dense-and-Sparse Quantization") == "squeezellm"
    assert short_name("Attention Is All You Need") == ""
    assert short_name("A title with far too many words before: the colon") == ""
    ex = Example("n", 1, "SqueezeLLM derives signposts; unlike squeezellm-2 we use QLoRA.",
                 (Candidate("a", "SqueezeLLM: Dense-and-Sparse Quantization"),
                  Candidate("b", "QLoRA: Efficient Finetuning"),
                  Candidate("c", "LoRA: Low-Rank Adaptation")))
    X = CandidateFeaturizer().features(ex)
    assert list(X[:, FEATURES.index("name_match")]) == [1.0, 1.0, 0.0]    # "LoRA" only inside "QLoRA"


def test_set_rule_threshold_and_minimum():
    s = np.array([0.5, -1.0, 2.0, -3.0])
    assert SetRule(0.0, 1).choose(s) == [2, 0]
    assert SetRule(3.0, 1).choose(s) == [2]              # nothing above: the best one
    assert SetRule(3.0, 2).choose(s) == [2, 0]
    # expected-count mode: sigmoid(2)*2 + 2*sigmoid(-5) = 1.77 -> the top 2
    assert SetRule(0.0, 1, 1.0).choose(np.array([2.0, -5.0, 2.0, -5.0])) == [0, 2]
    assert SetRule(0.0, 1, 0.5).choose(np.array([2.0, -5.0, 2.0, -5.0])) == [0]
    assert weighted_f1([{"a", "b"}, {"c"}], [{"a"}, {"c"}]) == pytest.approx((2 * 2 / 3 + 1) / 3)


def test_discovery_learns_and_tuning_reads_only_dev(discovery):
    test = paragraphs(20, 1, seed=5)
    before = evaluate(1, [e.answer() for e in test], discovery.predict(test))["f1"]
    report = tune_rule(discovery, paragraphs(30, 1, seed=3), progress=False)
    after = evaluate(1, [e.answer() for e in test], discovery.predict(test))["f1"]
    assert report["best"]["f1"] >= max(g["f1"] for g in report["grid"]) - 1e-9
    assert discovery.rule.threshold == report["best"]["threshold"]
    assert after >= 0.9 and after >= before - 0.05


def test_discovery_save_load_and_errors(discovery, tmp_path):
    discovery.save(tmp_path / "m")
    again = DiscoveryModel.load(tmp_path / "m")
    assert again.predict([t1()]) == discovery.predict([t1()]) and again.rule == discovery.rule
    with pytest.raises(MustciteError, match="Task 2"):
        discovery.predict([t2()])
    with pytest.raises(MustciteError, match="not trained"):
        DiscoveryModel().predict([t1()])
    (tmp_path / "m" / "config.json").write_text('{"format": 1, "task": 2}')
    with pytest.raises(MustciteError, match="not a Task 1 model"):
        DiscoveryModel.load(tmp_path / "m")


def test_cross_encoder_rescoring_moves_only_the_top(discovery):
    class Fake:
        info = {"base": "fake"}

        def score(self, pairs):         # prefers Ho et al. whatever the paragraph says
            return np.array([5.0 if p[1].startswith("Denoising") else -5.0 for p in pairs])

    ex = t1()
    (prob,) = discovery.probabilities([ex])
    discovery.set_cross_encoder(Fake(), 2)
    try:
        ((p, top, cross),) = discovery.parts([ex])
        assert np.allclose(p, prob) and len(top) == 2 and set(top) == set(np.argsort(-prob)[:2])
        base = discovery.scores((p, top, cross), weight=0.0)
        moved = discovery.scores((p, top, cross), weight=1.0)
        rest = [i for i in range(len(CANDS)) if i not in set(top)]
        assert np.allclose(base[rest], moved[rest])
        assert np.allclose(moved[top], base[top] + cross)
    finally:
        discovery.set_cross_encoder(None, 0)


def test_sentence_system_gates_uncited_sentences(discovery, tmp_path):
    model = SentenceCitationModel(discovery=discovery, params=SMALL).fit(paragraphs(80, 3, seed=7), progress=False)
    dev, test = paragraphs(30, 3, seed=8), paragraphs(30, 3, seed=9)
    report = tune(model, dev, progress=False)
    assert {"need", "threshold", "min_k"} <= set(report["best"])
    r = evaluate(3, [e.answer() for e in test], model.predict(test))
    assert r["f1"] >= 0.8 and r["no_citation_accuracy"] >= 0.8
    # the rule alone: below the need threshold nothing, else at least min_k
    assert SentenceRule(0.5, 10.0, 1).choose(0.4, np.array([1.0, 2.0])) == []
    assert SentenceRule(0.5, 10.0, 1).choose(0.6, np.array([1.0, 2.0])) == [1]
    model.save(tmp_path / "t3")
    again = SentenceCitationModel.load(tmp_path / "t3")
    assert again.predict([t3()]) == model.predict([t3()])
    with pytest.raises(MustciteError, match="Task 1"):
        model.predict([t1()])


def test_sample_examples_is_seeded_uniform_and_excludes(tmp_path):
    path = tmp_path / "t1.jsonl"
    write_examples(path, paragraphs(50, 1))
    a = sample_examples(path, 10, seed=1, task=1)
    assert [e.id for e in a] == [e.id for e in sample_examples(path, 10, seed=1, task=1)]
    assert [e.id for e in a] != [e.id for e in sample_examples(path, 10, seed=2, task=1)]
    lines = [int(e.id.split("-")[1]) for e in a]
    assert lines == sorted(lines)                        # file order
    b = sample_examples(path, 50, seed=1, task=1, exclude=[e.id for e in a])
    assert len(b) == 40 and not {e.id for e in a} & {e.id for e in b}
    assert len(sample_examples(path, 100, task=1)) == 50
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "paragraph": "p", "candidate_references": [], "predicted_citations": []}\n{oops\n')
    with pytest.raises(MustciteError, match="bad.jsonl"):
        sample_examples(bad, 5, task=1)


def test_cli_trains_tasks_1_3_and_2_from_a_data_folder(tmp_path):
    import json

    from helpers.scidoca import masked_paragraphs as masked

    from mustcite.cli.main import main

    data = tmp_path / "data"
    for split, seed in (("train", 0), ("dev", 1), ("test", 2)):
        (data / split).mkdir(parents=True)
        write_examples(data / split / "task1.jsonl", paragraphs(60, 1, seed))
        write_examples(data / split / "task3.jsonl", paragraphs(60, 3, seed + 10))
        write_examples(data / split / "task2.jsonl", masked(40, seed))
    w = ["--work", str(tmp_path / "w")]
    for task in ("1", "3", "2"):
        assert main(w + ["scidoca", "train", "--task", task, "--data", str(data), "--limit", "40",
                         "--dev-limit", "20"]) == 0
        pred = tmp_path / f"p{task}.jsonl"
        assert main(w + ["scidoca", "predict", "--task", task, "--method", "learned",
                         "--in", str(data / "test" / f"task{task}.jsonl"), "--out", str(pred)]) == 0
        assert main(["scidoca", "evaluate", "--task", task, "--pred", str(pred),
                     "--gold", str(data / "test" / f"task{task}.jsonl")]) == 0
    t1_ids = set((tmp_path / "w" / "models" / "scidoca-task1" / "train_ids.txt").read_text().split())
    t3_ids = set((tmp_path / "w" / "models" / "scidoca-task3" / "train_ids.txt").read_text().split())
    assert len(t1_ids) == 40 and len(t3_ids) == 40
    cfg = json.loads((tmp_path / "w" / "models" / "scidoca-task1" / "config.json").read_text())
    assert cfg["tuned_on"]["paragraphs"] == 20 and cfg["cross_top"] == 0
    # Task 3 needs its Task 1 system
    assert main(w + ["scidoca", "train", "--task", "3", "--data", str(data),
                     "--discovery", str(tmp_path / "none")]) == 1
    # a learned model of another task is refused with a clear message
    assert main(w + ["scidoca", "predict", "--task", "1", "--method", "learned", "--model",
                     str(tmp_path / "w" / "models" / "scidoca-task2"),
                     "--in", str(data / "test" / "task1.jsonl"), "--out", str(tmp_path / "x.jsonl")]) == 1


def test_cli_fine_tuned_encoder_feeds_stage_one_and_its_paragraphs_are_not_reused(tmp_path):
    import dataclasses
    import json

    from mustcite.cli.main import main

    data = tmp_path / "data"
    for split, seed in (("train", 0), ("dev", 1), ("test", 2)):
        (data / split).mkdir(parents=True)
        for task in (1, 3):     # one paragraph id in every task's file, as `scidoca build` writes them
            exs = [dataclasses.replace(e, id=f"{split}-{i}") for i, e in enumerate(paragraphs(40, task, seed))]
            write_examples(data / split / f"task{task}.jsonl", exs)
    w = ["--work", str(tmp_path / "w")]
    enc = tmp_path / "w" / "models" / "scidoca-encoder"
    assert main(w + ["scidoca", "train-encoder", "--data", str(data), "--limit", "12"]) == 0
    card = json.loads((enc / "training_card.json").read_text())
    enc_ids = set((enc / "train_ids.txt").read_text().split())
    assert card["hard_negatives"] is True and card["pairs"] == 24 and len(enc_ids) == 12
    assert main(w + ["scidoca", "train", "--task", "1", "--data", str(data), "--limit", "40", "--dev-limit", "10",
                     "--encoder", str(enc)]) == 0
    model = tmp_path / "w" / "models" / "scidoca-task1"
    cfg = json.loads((model / "config.json").read_text())
    assert cfg["encoder"]["spec"] == f"onnx-int8:{enc.resolve()}" and "p_cos" in cfg["features"]
    # stage 1 trained on the 28 train paragraphs the encoder did not see; both are the system's
    assert cfg["train_paragraphs"] == 40 - 12
    assert set((model / "train_ids.txt").read_text().split()) == {f"train-{i}" for i in range(40)}
    pred = tmp_path / "p.jsonl"
    assert main(w + ["scidoca", "predict", "--task", "1", "--method", "learned",
                     "--in", str(data / "test" / "task1.jsonl"), "--out", str(pred)]) == 0
    assert main(w + ["scidoca", "train", "--task", "1", "--data", str(data), "--encoder", str(tmp_path)]) == 1


def test_masked_system_over_a_task1_system(discovery, tmp_path):
    """Task 2 with the Task 1 system's paragraph-level P as three more features, saved with it."""
    from helpers.scidoca import masked_paragraphs as masked

    from mustcite.scidoca.masked import DISCOVERY_FEATURES, MaskedCitationModel
    from mustcite.scidoca.masked import FEATURES as MASK_FEATURES

    model = MaskedCitationModel(params=SMALL, discovery=discovery).fit(masked(40), progress=False)
    assert model._feat.pairs(t2()).X.shape == (3 * len(CANDS), len(MASK_FEATURES) + len(DISCOVERY_FEATURES))
    test = masked(10, seed=4)
    assert evaluate(2, [e.answer() for e in test], model.predict(test))["f1"] >= 0.9
    model.save(tmp_path / "m2")
    again = MaskedCitationModel.load(tmp_path / "m2")
    assert again.discovery is not None and again.predict(test) == model.predict(test)


def test_listwise_groups_pair_each_gold_with_bm25_hard_negatives():
    from mustcite.scidoca.cross import candidate_text, training_groups

    exs = paragraphs(6, 1, seed=3) + paragraphs(3, 3, seed=4)
    groups = training_groups(exs, positives=2, negatives=3, hard=2, hard_pool=2, seed=1)
    by_text = {candidate_text(c): c.id for c in CANDS}
    assert groups == training_groups(exs, positives=2, negatives=3, hard=2, hard_pool=2, seed=1)   # seeded
    n = 0
    for ex in exs:
        gold = set(gold_ids(ex))
        mine = [g for g in groups if g[0] == paragraph_text(ex)]
        assert len(mine) == min(2, len(gold))
        for _, texts, targets in mine:
            ids = [by_text[t] for t in texts]
            assert ids[0] in gold and not set(ids[1:]) & gold and len(set(ids)) == len(ids)
            assert targets == [1.0] + [0.0] * (len(ids) - 1) and len(ids) == 1 + min(3, len(CANDS) - len(gold))
        n += len(mine)
    assert n == len(groups)
    # the 2 hard negatives are BM25's top 2 non-gold candidates of the paragraph
    ex = exs[0]
    plain = Example(ex.id, 1, paragraph_text(ex), ex.candidates, gold_ids(ex))
    s = BM25TopK(1).score([plain])[0]
    ranked = [c.id for i, c in sorted(enumerate(ex.candidates), key=lambda t: -s[t[0]]) if c.id not in set(ex.gold)]
    for _, texts, _ in [g for g in groups if g[0] == plain.text]:
        assert {by_text[t] for t in texts[1:]} >= set(ranked[:2])


def test_bi_encoder_triplets_teach_paragraphs_and_citing_sentences():
    from mustcite.retrieval.base import doc_text
    from mustcite.scidoca.bi_encoder import training_triplets
    from mustcite.scidoca.discovery import sentences_of

    exs = paragraphs(8, 3, seed=5)
    by_text = {doc_text(c.title, c.abstract): c.id for c in CANDS}
    triplets = training_triplets(exs, positives=1, sentences=1, hard_pool=2, seed=1)
    assert triplets == training_triplets(exs, positives=1, sentences=1, hard_pool=2, seed=1)   # seeded
    assert len(triplets) == 2 * len(exs)            # one paragraph and one citing sentence each
    for ex, para, sent in zip(exs, triplets[::2], triplets[1::2]):     # in example order
        gold = set(gold_ids(ex))
        plain = Example(ex.id, 1, paragraph_text(ex), ex.candidates, tuple(gold))
        s = BM25TopK(1).score([plain])[0]
        hard = [c.id for i, c in sorted(enumerate(ex.candidates), key=lambda t: -s[t[0]]) if c.id not in gold][:2]
        assert para[0] == plain.text and by_text[para[1]] in gold and by_text[para[2]] in hard
        cites = {sent: set(ids) for sent, ids in zip(sentences_of(ex), ex.gold) if ids}   # markers removed
        assert sent[0] in cites and by_text[sent[1]] in cites[sent[0]] and by_text[sent[2]] in hard
    # a Task 1 paragraph has no per-sentence gold: paragraph triplets only
    assert len(training_triplets(paragraphs(4, 1, seed=6), seed=1)) == 4
