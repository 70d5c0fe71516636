"""The neural judge (``--backend neural``): a tiny real build on MultiCite train items (a few
training steps into a temporary workspace), its save/load round trip, ``judge_many`` answers,
the name/version every label records, the error when no model is built, and the CLI."""

from __future__ import annotations

import json
import os
import pickle

import pytest

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.labels.backends import BACKENDS, make_judge
from mustcite.labels.judge import CitationInstance, Judgement
from mustcite.labels.judging import judge_label
from mustcite.labels.multicite import iter_instances
from mustcite.labels.neural import CARD, DEFAULT_VERSION, NeuralJudge, card_id, context_input, read_card, train_judge

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def built(data_dir, tmp_path_factory):
    """A workspace with a neural judge trained on 32 real MultiCite train items (2 steps),
    threshold and cuts from 24 dev items."""
    work = tmp_path_factory.mktemp("work")
    folder = work / "models" / "judge-neural"
    card = train_judge(folder, limit=32, dev_limit=24, epochs=1, batch_size=16, max_length=64, seed=0,
                       progress=False)
    return work, folder, card


@pytest.fixture(scope="module")
def pairs(data_dir):
    return [p for p in iter_instances("test", "3", n=40, seed=3) if p[0].cite][:8]


@pytest.mark.data
def test_card_records_the_build(built):
    _, folder, card = built
    assert (folder / CARD).is_file() and read_card(folder) == card
    assert card["version"] == DEFAULT_VERSION and card["seed"] == 0 and card["epochs"] == 1
    assert card["split_sizes"] == {"train/3": 32, "dev/3": 24} and card["train_pairs"] == 32
    assert 0.2 <= card["threshold"] <= 0.8
    assert len(card["type2_cuts"]) == 4 and card["type2_cuts"] == sorted(card["type2_cuts"])
    assert {"accuracy", "cohen_kappa"} <= set(card["dev"])


@pytest.mark.data
def test_save_load_round_trip_and_judge_many(built, pairs):
    work, folder, card = built
    insts = [inst for _, inst in pairs]
    judge = NeuralJudge(folder)
    out = judge.judge_many(insts, ("type1", "type2"))
    assert set(out) == {"type1", "type2"} and all(len(v) == len(insts) for v in out.values())
    for j1, j2 in zip(out["type1"], out["type2"]):
        assert isinstance(j1, Judgement) and type(j1.value) is int and j1.value in (0, 1)
        assert type(j2.value) is int and 1 <= j2.value <= 5
        assert abs(j1.prob[0] + j1.prob[1] - 1) < 1e-9
        assert j1.value == int(j1.prob[1] >= card["threshold"])   # no Intro/RW sections in MultiCite
    # a fresh load (no memo) gives the same answers, one at a time and in reverse order
    again = NeuralJudge(folder)
    assert [again.judge(i, "type1").value for i in insts[:4]] == [j.value for j in out["type1"][:4]]
    again.clear_memo()
    rev = again.judge_many(insts[::-1], ("type2",))["type2"]
    assert [j.value for j in rev] == [j.value for j in out["type2"]][::-1]
    # pickles as its folder (annotate maps it over worker processes)
    clone = pickle.loads(pickle.dumps(judge))
    again = clone.judge_many(insts[:3], ("type1",))["type1"][0].prob[1]
    assert again == pytest.approx(out["type1"][0].prob[1], abs=1e-6)


@pytest.mark.data
def test_name_and_version_in_labels(built):
    _, folder, card = built
    judge = NeuralJudge(folder)
    assert judge.name.startswith(f"{DEFAULT_VERSION}: ")
    assert judge_label(judge) == f"{DEFAULT_VERSION}/{card_id(card)}"


@pytest.mark.data
def test_rules_and_empty_contexts(built):
    _, folder, _ = built
    judge = NeuralJudge(folder)
    base = dict(citing_id="p", citing_title="", citing_abstract="", ref_title="", ref_raw="",
                cite="Smith et al. (2019)", year=None, mentions=1)
    ctx = "We compare against the baseline of Smith et al. (2019) on the same benchmark."
    intro = CitationInstance(**base, contexts=(("1 Introduction", ctx),))
    empty = CitationInstance(**base, contexts=())
    out = judge.judge_many([intro, empty])
    assert out["type1"][0].value == 0 and out["type2"][0].value <= 5     # Intro-only: never Type I
    assert out["type1"][1].value == 0 and out["type2"][1].value == 1
    assert "<cite> Smith et al. (2019) </cite>" in context_input(ctx, base["cite"])


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(MustciteError) as exc:
        NeuralJudge(tmp_path / "none")
    assert "mustcite labels train-judge" in str(exc.value.hint)
    assert "neural" in BACKENDS


@pytest.mark.data
def test_make_judge_and_cli(built, pairs, tmp_path, capsys):
    work, folder, card = built
    assert isinstance(make_judge("neural", model=str(folder)), NeuralJudge)
    rows = [{"id": f"m{i}", "context": it.plain_text, "section": "", "cite": it.cite}
            for i, (it, _) in enumerate(pairs)]
    src = tmp_path / "ctx.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["--work", str(work), "judge", "--backend", "neural", "--in", str(src)]) == 0
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [g["id"] for g in got] == [r["id"] for r in rows]
    assert all(g["type1"] in (0, 1) and 1 <= g["type2"] <= 5 for g in got)
    # no model in another workspace: exit 1 with the command to run
    assert main(["--work", str(tmp_path / "empty"), "judge", "--backend", "neural", "--in", str(src)]) == 1
    assert "train-judge" in capsys.readouterr().err


@pytest.mark.data
def test_cascade_fit_judge_and_errors(built, pairs, tmp_path):
    """The cascade judge: calibration on real dev items, LR everywhere and the neural judge averaged in
    exactly where the LR is unsure, its label name, pickling, the CLI backend and its errors."""
    import numpy as np

    from mustcite.labels.cascade import BANDS, FILE, VERSION, CascadeJudge, combine, fit_cascade
    from mustcite.labels.offline import OfflineJudge

    work, folder, card = built
    assert not (folder / FILE).exists()
    with pytest.raises(MustciteError) as exc:
        CascadeJudge(folder)
    assert "fit-cascade" in str(exc.value.hint)
    cal = fit_cascade(folder, limit=60)
    assert (folder / FILE).is_file() and cal["band"] in BANDS and 0.2 <= cal["threshold"] <= 0.8
    assert len(cal["dev"]["grid"]) == len(BANDS) and cal["dev"]["items"] == 60
    best = max(r["accuracy"] for r in cal["dev"]["grid"])
    assert cal["dev"]["chosen"]["accuracy"] == best
    assert cal["band"] == min(r["band"] for r in cal["dev"]["grid"] if r["accuracy"] == best)
    cj = CascadeJudge(folder)
    insts = [inst for _, inst in pairs]
    p_lr = np.array([a["p"] for a in OfflineJudge()._analyse_many(insts)])
    p_nn = np.array([a["p"] for a in NeuralJudge(folder)._analyse_many(insts)])
    want, sent = combine(p_lr, p_nn, OfflineJudge().model.threshold, cj.band)
    got = cj.judge_many(insts, ("type1",))["type1"]
    assert [j.prob[1] for j in got] == pytest.approx(list(want), abs=1e-6)
    assert [j.value for j in got] == [int(p >= cj.threshold) for p in want]
    assert cj.sent == int(sent.sum()) and cj.seen == len(insts)
    assert judge_label(cj).startswith(f"{VERSION}/{card_id(card)}+")
    clone = pickle.loads(pickle.dumps(cj))
    assert [j.value for j in clone.judge_batch(insts, "type1")] == [j.value for j in got]
    assert isinstance(make_judge("cascade", model=str(folder)), CascadeJudge) and "cascade" in BACKENDS
    # a calibration fitted for another model is refused
    other = json.loads((folder / FILE).read_text())
    other["neural_model"] = "0000000000"
    bad = tmp_path / "m"
    bad.mkdir()
    for f in folder.iterdir():
        if f.is_file():
            (bad / f.name).write_bytes(f.read_bytes())
    (bad / FILE).write_text(json.dumps(other))
    with pytest.raises(MustciteError, match="another neural model"):
        CascadeJudge(bad)
