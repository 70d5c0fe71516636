"""Collectors on the REAL recorded pages of ``shared/data/venue_pages`` (values from its README).

Every test reads the recorded files through ``--offline`` / :class:`OfflineSource`, the same path
a live run takes (parsers see page content only).
"""

from __future__ import annotations

import json

import pytest
from helpers import DATA

from mustcite.cli.main import main
from mustcite.collect import AclCollector, CvfCollector, JmlrCollector, PmlrCollector
from mustcite.collect.acl import parse_paper_page
from mustcite.collect.http import Fetcher
from mustcite.collect.venue_year import collect_venue_year

VP = DATA / "venue_pages"
pytestmark = pytest.mark.data("venue_pages/README.md")    # every test reads the recorded pages


@pytest.fixture(scope="module")
def fetch(data_dir):
    return Fetcher(offline=VP)


def _index(collector, venue, year, fetch):
    idx = collector.index(venue, year, fetch)
    assert idx.errors == []
    return [it.record for it in idx.items]


# ---------------------------------------------------------------- PMLR


def test_pmlr_colt2024_volume(fetch):
    recs = _index(PmlrCollector(), "COLT", 2024, fetch)
    assert len(recs) == 170 and all(r.pdf for r in recs)
    first, last = recs[0], recs[-1]
    assert first.title == "Limits of Approximating the Median Treatment Effect"
    assert first.authors == ["Raghavendra Addanki", "Siddharth Bhandari"]
    assert first.pdf == "https://proceedings.mlr.press/v247/addanki24a/addanki24a.pdf"
    assert first.url == "https://proceedings.mlr.press/v247/addanki24a.html"
    assert first.abstract.startswith("Average Treatment Effect (ATE) estimation is a well-studied problem in "
                                     "causal inference.")
    assert first.abstract.endswith("values $\\{0,1,\\ldots,k-1\\}$.")
    assert first.pages == "1-21" and first.source_id == "pmlr-v247-addanki24a"
    assert last.title == "Gap-Free Clustering: Sensitivity and Robustness of SDP"
    assert last.authors == ["Matthew Zurek", "Yudong Chen"]
    assert last.pdf == "https://proceedings.mlr.press/v247/zurek24a/zurek24a.pdf"
    assert sorted((t, sum(r.track == t for r in recs)) for t in {r.track for r in recs}) == [
        ("Open Problems", 9), ("Original Papers", 160), ("Preface", 1)]


def test_pmlr_uai2025_volume(fetch):
    recs = _index(PmlrCollector(), "UAI", 2025, fetch)
    assert len(recs) == 229 and all(r.pdf and r.has_abstract for r in recs)
    a = recs[0]
    assert a.title == "Aggregating Data for Optimal Learning"
    assert a.authors == ["Sushant Agarwal", "Yukti Makhija", "Rishi Saket", "Aravindan Raghuveer"]
    assert a.pdf == "https://raw.githubusercontent.com/mlresearch/v286/main/assets/agarwal25a/agarwal25a.pdf"
    assert a.openreview_id == "85HF0u4lSB"
    z = recs[-1]
    assert z.title == "A Quantum Information Theoretic Approach to Tractable Probabilistic Models"
    assert z.authors == ["Pedro Zuidberg Dos Martires"]
    assert z.pdf == ("https://raw.githubusercontent.com/mlresearch/v286/main/assets/zuidberg-dos-martires25a/"
                     "zuidberg-dos-martires25a.pdf")


def test_pmlr_icml2024_sample(fetch):
    recs = {r.source_id: r for r in _index(PmlrCollector(), "ICML", 2024, fetch)}
    assert len(recs) == 3
    r = recs["pmlr-v235-abad-rocamora24a"]
    assert r.title == "Revisiting Character-level Adversarial Attacks for Language Models"
    assert r.authors == ["Elias Abad Rocamora", "Yongtao Wu", "Fanghui Liu", "Grigorios Chrysos", "Volkan Cevher"]
    assert r.pdf == "https://proceedings.mlr.press/v235/abad-rocamora24a/abad-rocamora24a.pdf" and r.pages == "1-30"
    r = recs["pmlr-v235-agostinelli-iii24a"]
    assert r.title == ("LeaPformer: Enabling Linear Transformers for Autoregressive and Simultaneous Tasks via "
                       "Learned Proportions")            # YAML-folded title, not tex_title
    assert r.authors == ["Victor Agostinelli Iii", "Sanghyun Hong", "Lizhong Chen"]
    assert r.pdf == "https://proceedings.mlr.press/v235/agostinelli-iii24a/agostinelli-iii24a.pdf"
    assert r.abstract.startswith("A promising approach to preserving model performance in linearized transformers")
    r = recs["pmlr-v235-allen-zhu24a"]
    assert r.title == "Physics of Language Models: Part 3.1, Knowledge Storage and Extraction"
    assert r.authors == ["Zeyuan Allen-Zhu", "Yuanzhi Li"]
    assert r.pdf == "https://proceedings.mlr.press/v235/allen-zhu24a/allen-zhu24a.pdf"
    assert "<em>" not in r.abstract and "<b>" not in r.abstract and r.has_abstract
    assert any(q in r.abstract for q in "\u201c\u201d\u2019")     # curly quotes kept


# ---------------------------------------------------------------- ACL Anthology XML


@pytest.mark.parametrize("venue,year,volumes,main", [
    ("ACL", 2024, {"long": 771, "short": 68, "demos": 38, "srw": 50, "tutorials": 6}, 839),
    ("NAACL", 2024, {"long": 487, "short": 75, "demo": 21, "srw": 30, "tutorials": 6, "industry": 43}, 562),
    ("EMNLP", 2023, {"main": 1047, "tutorial": 6, "demo": 52, "industry": 77}, 1047),
])
def test_acl_xml_counts_and_main_track(fetch, tmp_path, venue, year, volumes, main):
    recs = _index(AclCollector(), venue, year, fetch)
    assert len(recs) == sum(volumes.values())
    by_vol: dict[str, int] = {}
    for r in recs:
        by_vol[r.track.split(" ")[0]] = by_vol.get(r.track.split(" ")[0], 0) + 1
    assert by_vol == volumes
    rep = collect_venue_year(AclCollector(), venue, year, fetch, tmp_path)
    assert rep.collected == len(recs) and rep.main_track == main
    assert rep.status == "ok" and rep.with_abstract + rep.without_abstract == main
    assert {t.split(" ")[0]: d["papers"] for t, d in rep.tracks.items() if d["main"]} == \
        {k: v for k, v in volumes.items() if k in ("long", "short", "main")}


def test_acl_xml_first_papers(fetch):
    acl = _index(AclCollector(), "ACL", 2024, fetch)[0]
    assert acl.title == "Quantized Side Tuning: Fast and Memory-Efficient Tuning of Quantized Large Language Models"
    assert acl.authors == ["Zhengxin Zhang", "Dan Zhao", "Xupeng Miao", "Gabriele Oliaro", "Zhihao Zhang",
                           "Qing Li", "Yong Jiang", "Zhihao Jia"]
    assert acl.anthology_id == "2024.acl-long.1" and acl.pdf == "https://aclanthology.org/2024.acl-long.1.pdf"
    assert acl.doi == "" and acl.pages == "1-17"
    assert acl.abstract.startswith("Finetuning large language models (LLMs) has been empirically effective")
    assert "3\\times while" in acl.abstract                          # <tex-math> text kept inline
    mage = _index(AclCollector(), "ACL", 2024, fetch)[2]
    assert mage.title == "MAGE: Machine-generated Text Detection in the Wild"      # <fixed-case> flattened
    naacl = _index(AclCollector(), "NAACL", 2024, fetch)[0]
    assert naacl.title == "Named Entity Recognition Under Domain Shift via Metric Learning for Life Sciences"
    assert naacl.authors == ["Hongyi Liu", "Qingyun Wang", "Payam Karisani", "Heng Ji"]
    assert naacl.anthology_id == "2024.naacl-long.1" and naacl.doi == "10.18653/v1/2024.naacl-long.1"
    emnlp = _index(AclCollector(), "EMNLP", 2023, fetch)[0]
    assert emnlp.title == "IAG: Induction-Augmented Generation Framework for Answering Reasoning Questions"
    assert emnlp.authors == ["Zhebin Zhang", "Xinyu Zhang", "Yuanhang Ren", "Saijiang Shi", "Meng Han",
                             "Yongkang Wu", "Ruofei Lai", "Zhao Cao"]
    assert emnlp.anthology_id == "2023.emnlp-main.1" and emnlp.doi == "10.18653/v1/2023.emnlp-main.1"


# ---------------------------------------------------------------- ACL Anthology paper pages


@pytest.mark.parametrize("stem", ["ACL_2021.naacl-main.208", "ACL_N04-1001"])
def test_acl_paper_pages_match_papis_expected_output(fetch, stem):
    expected = json.loads((VP / "acl_anthology" / "pages" / f"{stem}_Out.json").read_text())
    url = expected["url"]
    rec = parse_paper_page(fetch.get(url))
    assert rec.title == expected["title"]
    assert rec.authors == [f"{a['given']} {a['family']}" for a in expected["author_list"]]
    assert rec.pdf == expected["pdf_url"]
    assert rec.doi == expected.get("doi", "")
    assert rec.pages == f"{expected['firstpage']}-{expected['lastpage']}"
    assert rec.year == int(expected["year"]) and rec.url == url
    assert rec.anthology_id == expected["acl_anthology_id"]


def test_acl_paper_page_values():
    page = (VP / "acl_anthology" / "pages" / "ACL_2021.naacl-main.208.html").read_bytes()
    rec = parse_paper_page(page)
    assert rec.title == "How many data points is a prompt worth?"
    assert rec.authors == ["Teven Le Scao", "Alexander M. Rush"]
    assert rec.pages == "2627-2636" and rec.doi == "10.18653/v1/2021.naacl-main.208"
    assert rec.abstract.startswith("When fine-tuning pretrained models for classification, researchers either use")
    old = parse_paper_page((VP / "acl_anthology" / "pages" / "ACL_N04-1001.html").read_bytes())
    assert old.authors == ["Radu Florian", "H. Hassan", "Abe Ittycheriah", "Hongyan Jing", "Nanda Kambhatla",
                           "Xiaoqiang Luo", "Nicolas Nicolov", "Salim Roukos"]
    assert old.pdf == "https://aclanthology.org/N04-1001.pdf" and old.pages == "1-8" and old.doi == ""


# ---------------------------------------------------------------- CVF


def test_cvpr2019_index(fetch):
    idx = CvfCollector().index("CVPR", 2019, fetch)
    recs = [it.record for it in idx.items]
    assert len(recs) == 1294 and idx.errors == [] and all(r.pdf.endswith(".pdf") for r in recs)
    f = recs[0]
    assert f.title == "Finding Task-Relevant Features for Few-Shot Learning by Category Traversal"
    assert f.authors == ["Hongyang Li", "David Eigen", "Samuel Dodge", "Matthew Zeiler", "Xiaogang Wang"]
    assert f.pdf == ("http://openaccess.thecvf.com/content_CVPR_2019/papers/Li_Finding_Task-Relevant_Features_for_"
                     "Few-Shot_Learning_by_Category_Traversal_CVPR_2019_paper.pdf")
    assert idx.items[0].detail_url.endswith("_CVPR_2019_paper.html")
    z = recs[-1]
    assert z.title == "Leveraging Heterogeneous Auxiliary Tasks to Assist Crowd Counting"
    assert z.authors == ["Muming Zhao", "Jian Zhang", "Chongyang Zhang", "Wenjun Zhang"]
    assert not any(a != a.strip() for r in recs for a in r.authors)       # leading spaces stripped


def test_cvpr2020_index(fetch):
    recs = [it.record for it in CvfCollector().index("CVPR", 2020, fetch).items]
    assert len(recs) == 1467 and all(r.pdf.endswith(".pdf") for r in recs)
    f = recs[0]
    assert f.title == "Unsupervised Learning of Probably Symmetric Deformable 3D Objects From Images in the Wild"
    assert f.authors == ["Shangzhe Wu", "Christian Rupprecht", "Andrea Vedaldi"]
    assert f.pdf == ("http://openaccess.thecvf.com/content_CVPR_2020/papers/Wu_Unsupervised_Learning_of_Probably_"
                     "Symmetric_Deformable_3D_Objects_From_Images_CVPR_2020_paper.pdf")
    z = recs[-1]
    assert z.title == "FroDO: From Detections to 3D Objects"
    assert len(z.authors) == 11 and z.authors[:2] == ["Martin Runz", "Kejie Li"] and z.authors[-1] == "Richard Newcombe"


# ---------------------------------------------------------------- JMLR


def test_jmlr_v20(fetch):
    recs = {r.source_id: r for r in _index(JmlrCollector(), "JMLR", 2019, fetch)}
    assert len(recs) == 184
    r = recs["jmlr-v20-13-124"]
    assert r.title == "Sparse Kernel Regression with Coefficient-based $\\ell_q-$regularization"
    assert r.authors == ["Lei Shi", "Xiaolin Huang", "Yunlong Feng", "Johan A.K. Suykens"]
    assert r.pages == "1-44" and r.year == 2019
    assert r.pdf == "https://jmlr.org/papers/volume20/13-124/13-124.pdf"
    assert r.url == "https://jmlr.org/papers/v20/13-124.html"
    assert r.abstract.startswith("In this paper, we consider the $\\ell_q-$regularized kernel regression")
    r = recs["jmlr-v20-19-543"]
    assert r.title == "Optimal Convergence Rates for Convex Distributed Optimization in Networks" and r.pages == "1-31"
    names = [a for x in recs.values() for a in x.authors]
    assert "Sébastien Bubeck" in names                       # S{{\'e}}bastien -> Sébastien
    assert not any("{" in a or "\\" in a for a in names)


# ---------------------------------------------------------------- end to end through the CLI


def test_cli_collect_offline_end_to_end(tmp_path, capsys):
    out = tmp_path / "collect"
    rc = main(["collect", "COLT", "2024", "--offline", str(VP), "--out", str(out), "-q", "--json"])
    assert rc == 0
    rep = json.loads(capsys.readouterr().out)[0]
    assert rep["collected"] == 170 and rep["main_track"] == 169 and rep["with_abstract"] == 169
    assert rep["tracks"]["Preface"] == {"papers": 1, "main": False, "rule": "rules"}
    assert rep["tracks"]["Open Problems"]["rule"] == "override"
    lines = (out / "records" / "COLT_2024.jsonl").read_text().splitlines()
    assert len(lines) == 170 and json.loads(lines[0])["schema"] == "collected_record/1"
    assert (out / "reports" / "COLT_2024.json").is_file() and (out / "state" / "COLT_2024.json").is_file()
    # CVPR: the index is recorded, the paper pages are not: every record is kept without abstract,
    # counted as such and listed as a per-item problem (never as collected with abstract)
    rc = main(["collect", "CVPR", "2019", "--offline", str(VP), "--out", str(out), "-q", "--json"])
    rep = json.loads(capsys.readouterr().out)[0]
    assert rc == 0 and rep["collected"] == 1294 and rep["with_abstract"] == 0 and rep["without_abstract"] == 1294
    assert rep["status"] == "partial" and rep["errors_by_kind"] == {"offline_missing": 1294}


def test_cli_collect_usage_errors(tmp_path, capsys):
    assert main(["collect", "Nature", "2024", "--offline", str(VP), "--out", str(tmp_path)]) == 2
    assert main(["collect", "ACL", "20x4", "--offline", str(VP), "--out", str(tmp_path)]) == 2
    # a venue-year with no recorded page: exit 1, the report says why
    assert main(["collect", "ACL", "2019", "--offline", str(VP), "--out", str(tmp_path), "-q"]) == 1
    rep = json.loads((tmp_path / "reports" / "ACL_2019.json").read_text())
    assert rep["status"] == "failed" and rep["errors"][0]["kind"] == "offline_missing"
