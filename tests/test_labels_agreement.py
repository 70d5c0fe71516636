"""Agreement statistics vs krippendorff / scikit-learn on rater tables built from MultiCite's real
labels, hand-computable tiny cases, bad CSVs, the CLI, and the stratified sample."""

from __future__ import annotations

import csv
import itertools
import json
import random
import statistics
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from mustcite.errors import MustciteError
from mustcite.labels.agreement import agreement_from_files, majority_label, read_ratings
from mustcite.labels.multicite import load_split, type1_proxy, type2_proxy
from mustcite.labels.sample import allocate, write_sample


def _write(path: Path, rows: list[tuple], header=("item", "rater", "label")) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def multicite_raters(data_dir, tmp_path_factory):
    """300 real MultiCite test items; 6 simulated raters who each give the real label (Type I proxy
    and Type II proxy) with prob. 0.75, else a perturbed one; each item rated by 2-6 raters."""
    items = load_split("test", "3")[:300]
    rng = random.Random(13)
    raters = [f"r{i}" for i in range(6)]
    rows1, rows2 = [], []
    for it in items:
        for r in rng.sample(raters, rng.randint(2, 6)):
            g1, g2 = type1_proxy(it.labels), type2_proxy(it.labels)
            l1 = g1 if rng.random() < 0.75 else 1 - g1
            l2 = g2 if rng.random() < 0.75 else min(5, max(1, g2 + rng.choice([-2, -1, 1, 2])))
            rows1.append((it.id, r, l1))
            rows2.append((it.id, r, l2))
    d = tmp_path_factory.mktemp("agree")
    return _write(d / "type1.csv", rows1), _write(d / "type2.csv", rows2), rows1, rows2


def _reference_stats(rows):
    items = list(dict.fromkeys(r[0] for r in rows))
    raters = sorted({r[1] for r in rows})
    m = np.full((len(raters), len(items)), np.nan)
    for it, r, lab in rows:
        m[raters.index(r), items.index(it)] = lab
    by_item = {it: {} for it in items}
    for it, r, lab in rows:
        by_item[it][r] = lab
    return m, raters, by_item


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.data
def test_alpha_and_kappa_match_libraries_on_multicite(multicite_raters, which):
    path, rows = multicite_raters[which], multicite_raters[2 + which]
    got = agreement_from_files(path)
    m, raters, by_item = _reference_stats(rows)
    assert got["n_items"] == 300 and got["n_raters"] == 6 and got["n_ratings"] == len(rows)
    for level in ("nominal", "ordinal", "interval"):
        want = krippendorff.alpha(reliability_data=m, level_of_measurement=level)
        assert got[f"alpha_{level}"] == pytest.approx(want, abs=1e-4)
    kappas, wkappas = [], []
    for a, b in itertools.combinations(raters, 2):
        pairs = [(v[a], v[b]) for v in by_item.values() if a in v and b in v]
        x, y = zip(*pairs)
        kappas.append(cohen_kappa_score(x, y))
        wkappas.append(cohen_kappa_score(x, y, weights="quadratic"))
    assert got["pairwise_kappa"]["n_pairs"] == 15
    assert got["pairwise_kappa"]["mean"] == pytest.approx(np.mean(kappas), abs=1e-4)
    assert got["pairwise_kappa"]["min"] == pytest.approx(min(kappas), abs=1e-4)
    assert got["pairwise_weighted_kappa"]["max"] == pytest.approx(max(wkappas), abs=1e-4)
    exact = np.mean([len(set(v.values())) == 1 for v in by_item.values()])
    assert got["exact_agreement"] == pytest.approx(exact, abs=1e-4)
    within = np.mean([max(v.values()) - min(v.values()) <= 1 for v in by_item.values()])
    assert got["within_one"] == pytest.approx(within, abs=1e-4)
    # 75%-faithful raters on real labels: moderate-to-substantial agreement, well below 1
    assert 0.2 < got["alpha_nominal"] < 0.9


@pytest.mark.data
def test_judge_vs_majority_and_median_on_multicite(multicite_raters, tmp_path):
    path2, rows2 = multicite_raters[1], multicite_raters[3]
    items = load_split("test", "3")[:300]
    judge = _write(tmp_path / "judge.csv", [(it.id, type2_proxy(it.labels)) for it in items], ("item", "label"))
    got = agreement_from_files(path2, judge)
    _, _, by_item = _reference_stats(rows2)
    med = [statistics.median_low(list(by_item[it.id].values())) for it in items]
    want = cohen_kappa_score(med, [type2_proxy(it.labels) for it in items], weights="quadratic")
    assert got["judge_items"] == 300 and got["judge_weighted_kappa"] == pytest.approx(want, abs=1e-4)
    maj = {it.id: majority_label(list(by_item[it.id].values())) for it in items}
    scored = [it for it in items if maj[it.id] is not None]
    acc = np.mean([maj[it.id] == type2_proxy(it.labels) for it in scored])
    assert got["judge_accuracy"] == pytest.approx(acc, abs=1e-4)
    assert got["judge_accuracy_ties_skipped"] == 300 - len(scored)
    assert got["judge_accuracy"] > 0.8   # the judge is the truth the raters perturbed


def test_hand_computed_tiny_case(tmp_path):
    # items A(1,1) B(1,2) C(2,2) D(2,2): Do = 2/8, De = 2*3*5/(8*7) -> alpha = 1 - 0.25/(30/56) = 8/15
    rows = [("A", "x", 1), ("A", "y", 1), ("B", "x", 1), ("B", "y", 2),
            ("C", "x", 2), ("C", "y", 2), ("D", "x", 2), ("D", "y", 2)]
    judge = _write(tmp_path / "j.csv", [("A", 1), ("B", 2), ("C", 2), ("D", 1)], ("item", "label"))
    got = agreement_from_files(_write(tmp_path / "r.csv", rows), judge)
    assert got["alpha_nominal"] == pytest.approx(8 / 15, abs=1e-4)
    assert got["pairwise_kappa"] == {"mean": 0.5, "min": 0.5, "max": 0.5, "n_pairs": 1}  # po .75, pe .5
    assert got["exact_agreement"] == 0.75 and got["within_one"] == 1.0
    assert got["judge_accuracy"] == pytest.approx(2 / 3, abs=1e-4)   # B is a tie -> skipped
    assert got["judge_accuracy_ties_skipped"] == 1
    # judge vs majority on A, C, D: judge 1,2,1 vs majority 1,2,2 -> po 2/3, pe 4/9 -> kappa 0.4
    assert got["judge_kappa"] == pytest.approx(0.4, abs=1e-4)
    # x: 1,1,2,2 vs judge 1,2,2,1 -> po .5, pe .5 -> 0; y: 1,2,2,2 -> po .75, pe .5 -> .5
    # (two labels: the quadratic-weighted kappa equals the plain one)
    assert got["judge_vs_raters"] == {"x": {"items": 4, "accuracy": 0.5, "kappa": 0.0, "weighted_kappa": 0.0},
                                      "y": {"items": 4, "accuracy": 0.75, "kappa": 0.5, "weighted_kappa": 0.5}}


def test_perfect_agreement_and_missing_ratings(tmp_path):
    rows = [("a", "x", 3), ("a", "y", 3), ("b", "x", 5), ("b", "y", 5), ("b", "z", 5),
            ("c", "x", 1), ("c", "z", 1), ("d", "x", 4), ("d", "y", "")]
    got = agreement_from_files(_write(tmp_path / "r.csv", rows))
    assert got["alpha_ordinal"] == 1.0 and got["exact_agreement"] == 1.0
    assert got["n_items"] == 3 and got["items_skipped_fewer_than_2_ratings"] == 1


@pytest.mark.parametrize("rows,header,msg,line", [
    ([("a", "x", 1)], ("item", "who", "label"), "missing column(s) rater", 1),
    ([("a", "x", 1), ("a", "y", "yes")], ("item", "rater", "label"), "'yes' is not an integer", 3),
    ([("a", "x", 1), ("b", "x", 0)], ("item", "rater", "label"), "1 rater(s)", None),
    ([("a", "x", 1), ("a", "x", 0), ("a", "y", 1)], ("item", "rater", "label"), "twice", 3),
])
def test_bad_csv_names_file_and_line(tmp_path, rows, header, msg, line):
    p = _write(tmp_path / "bad.csv", rows, header)
    with pytest.raises(MustciteError) as e:
        read_ratings(p)
    assert msg in str(e.value) and e.value.path == str(p) and e.value.line == line


@pytest.mark.data
def test_cli_agreement_prints_json(multicite_raters, capsys):
    from mustcite.cli.main import main
    assert main(["agreement", str(multicite_raters[0])]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_items"] == 300 and "alpha_nominal" in out
    assert main(["agreement", "/nonexistent.csv"]) == 1


def test_allocate_proportional_with_floor():
    a = allocate({"x": 80, "y": 15, "z": 5}, 20)
    assert sum(a.values()) == 20 and a["z"] >= 1 and a["x"] > a["y"] > 0
    assert allocate({"x": 3, "y": 2}, 10) == {"x": 3, "y": 2}


@pytest.mark.data
def test_sample_from_real_extraction(tmp_path):
    from mustcite.config import find_data_dir
    from mustcite.extract.runner import extract_paths
    data = find_data_dir() / "neurips"
    files = sorted((data / "fulltext_2024").glob("*.md.gz"))[1:3] + sorted((data / "fulltext_2023").glob("*.md.gz"))[:2]
    extract_paths(files, tmp_path / "ext", workers=1, progress=False)
    man = tmp_path / "papers.jsonl"
    with open(man, "w") as fh:   # venue/year by id, as a manifest gives them
        for f in files:
            fh.write(json.dumps({"id": f.name.split(".")[0], "venue": "NeurIPS " + f.parent.name[-4:],
                                 "year": int(f.parent.name[-4:])}) + "\n")
    out = tmp_path / "sample.csv"
    s = write_sample(tmp_path / "ext", out, n=40, seed=1, manifest=man)
    assert s["drawn"] == 40 and s["strata"] == 2
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == 40 and {r["venue"] for r in rows} == {"NeurIPS"}
    assert {r["year"] for r in rows} == {"2023", "2024"} and all(r["label"] == "" for r in rows)
    again = write_sample(tmp_path / "ext", tmp_path / "again.csv", n=40, seed=1, manifest=man)
    assert again["per_stratum"] == s["per_stratum"]
    assert (tmp_path / "again.csv").read_text() == out.read_text()

    # a judge labels exactly the sample's instances; its file feeds --judge with --label type1/type2
    from mustcite.cli.main import main
    from mustcite.labels.agreement import read_judge, read_sample_instances
    from mustcite.labels.offline import OfflineJudge

    ids, insts = read_sample_instances(out)
    assert ids == [r["item"] for r in rows] and all(i.contexts and i.cite for i in insts)
    assert main(["agreement", "judge", str(out), "--backend", "offline", "--out", str(tmp_path / "j.csv")]) == 0
    j1, j2 = read_judge(tmp_path / "j.csv", "type1"), read_judge(tmp_path / "j.csv", "type2")
    want = OfflineJudge().judge_many(insts)
    assert list(j1.values()) == [j.value for j in want["type1"]]
    assert list(j2.values()) == [j.value for j in want["type2"]]
    ratings = _write(tmp_path / "r.csv", [(i, r, (v + k) % 2) for k, r in enumerate(("a", "b")) for i, v in j1.items()],
                     ("item", "rater", "type1"))
    got = agreement_from_files(ratings, tmp_path / "j.csv", label="type1")
    assert got["judge_vs_raters"]["a"]["accuracy"] == 1.0 and got["judge_vs_raters"]["b"]["accuracy"] == 0.0
    with pytest.raises(MustciteError, match="missing column type3"):
        read_judge(tmp_path / "j.csv", "type3")
