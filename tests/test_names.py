"""Names citing papers give their references: mining them from contexts (real context forms), the
support rules across papers, the names table of the catalogue build, and the recommender's name
index (time order, leave-one-out, case)."""

from __future__ import annotations

import json

import duckdb
import pytest

from mustcite.extract.works import (
    NAMES_FILE,
    aggregate_names,
    build_catalogue,
    name_key,
    paper_names,
    works_schema_json,
)
from mustcite.extract.works.names import marker_starts, name_before
from mustcite.labels.papers import CitedPaper, LabelledPaper
from mustcite.recommend.name_index import NameIndex
from mustcite.recommend.neighbours import year_array


@pytest.mark.parametrize("before,expected", [
    # forms taken from contexts of the NeurIPS 2023/2024 extraction
    ("We conduct experiments on CIFAR-10 ", "CIFAR-10"),
    ("models are trained with the Adam optimizer ", "Adam"),
    ("2. **IHDP Dataset ", "IHDP"),
    ("such as TRADES [71] and MART ", "MART"),
    ("Model architecture {ResNet18 [23],WRN28-10 ", "WRN28-10"),
    ("we fine-tune Stable Diffusion ", "Stable Diffusion"),
    ("and compare against Llama 2 ", "Llama 2"),
    ("we evaluate on the HDTF dataset~", "HDTF"),
    ("for 100 epochs.Following ", ""),           # a sentence run into the next one
    ("we prompt GPT-3.5 ", "GPT-3.5"),
    ("for language we use word2vec ", "word2vec"),
    ("Kennedy et al. ", ""),                     # an author, not a name
    ("is a standard technique in randomized linear algebra ", ""),
    ("Recently ", ""),                            # a capitalised word that starts a sentence
    ("as shown before. Transformers ", ""),
    ("approaches (c.f. ", ""),
    ("see Section ", ""),
    ("Following ", ""),
    ("the baselines, ", ""),                      # punctuation right before the marker
])
def test_the_name_right_before_a_marker(before, expected):
    assert name_before(before) == expected


def test_markers_of_one_reference_numeric_and_author_year():
    ctx = "IHDP Dataset [16, 11]: derived from children. We follow [11; 12; 13], GSW [4-5] and [2-6]."
    assert marker_starts(ctx, "11") == [ctx.index("[16, 11]")]            # [11; 12; 13]: too many to name one
    assert marker_starts(ctx, "5") == [ctx.index("[4-5]")]                # a range of two; [2-6] is five
    ay = ("We use ResNet-50 (He et al., 2016) as the backbone, as He et al. (2016) did, and ViT "
          "(Dosovitskiy et al., 2021; Touvron et al., 2021; Liu et al., 2021).")
    before = [ay[:i].rstrip()[-9:] for i in marker_starts(ay, "He et al., 2016")]
    assert before == ["ResNet-50"]                                       # not the narrative one
    assert marker_starts(ay, "Touvron et al., 2021") == []               # a group of three


def _ref(target, contexts, *, cite=None, paper_id=None, authors=("A. Author",)):
    return {"target": target, "cite": cite or str(target), "paper_id": paper_id, "title": f"title {target}",
            "authors": list(authors), "raw": "", "year": 2020,
            "contexts": [{"section": "4 Experiments", "context": c} for c in contexts]}


def test_paper_names_one_use_per_reference_never_the_authors_surname():
    refs = [_ref(1, ["We train on CIFAR-10 [1] and CIFAR-10 [1] again.", "On CIFAR10 [1] too."]),
            _ref(2, ["as proposed by Kingma [2]."], authors=["D. P. Kingma"]),
            _ref(3, ["We optimise with Adam [3]."])]
    uses = paper_names(refs)
    assert [(u.name, u.target) for u in uses] == [("CIFAR-10", 1), ("Adam", 3)]
    assert name_key("CIFAR 10") == name_key("cifar-10") == "cifar10"


def test_support_and_share_decide_what_a_name_stands_for():
    uses = [(f"p{i}", "cifar", "CIFAR-10", 2023) for i in range(5)] + [("p9", "other", "CIFAR-10", 2023)]
    uses += [("p1", "x", "Recently", 2023), ("p2", "y", "Recently", 2023), ("p3", "z", "Recently", 2023)]
    uses += [("p1", "adam", "Adam", 2023), ("p2", "adam", "Adam", 2023)]             # a plain word needs 3
    uses += [("p1", "hdtf", "HDTF", 2023), ("p2", "hdtf", "HDTF", 2021)]
    names = {(n.key, n.target): n for n in aggregate_names(uses)}
    assert set(names) == {("cifar10", "cifar"), ("hdtf", "hdtf")}
    cifar = names[("cifar10", "cifar")]
    assert cifar.support == 5 and cifar.share == pytest.approx(5 / 6, abs=1e-4)
    assert names[("hdtf", "hdtf")].first_year == 2021


def test_catalogue_build_writes_the_names_of_papers_and_works(tmp_path):
    adam = {"title": "Adam: A method for stochastic optimization", "year": 2014, "authors": ["D. P. Kingma"],
            "raw": "D. P. Kingma and J. Ba. Adam: A method for stochastic optimization. arXiv:1412.6980, 2014."}
    papers = {}
    for i in range(3):
        refs = [{**_ref(1, [f"Paper {i}: we optimise with Adam [1] and evaluate on HDTF [2]."]), **adam},
                _ref(2, ["HDTF [2] holds talking faces."], paper_id="corpus-hdtf")]
        papers[f"p{i}"] = (2023, refs)
    folder = tmp_path / "extract"
    folder.mkdir()
    for paper, (year, refs) in papers.items():
        (folder / f"{paper}.json").write_text(json.dumps(refs))
        (folder / f"{paper}.meta.json").write_text(json.dumps({"paper": paper, "year": year}))
    s = build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    names_file = tmp_path / "corpus" / NAMES_FILE
    rows = duckdb.sql(f"select key, name, target, support from '{names_file}' order by key").fetchall()
    assert [(k, n, sup) for k, n, _, sup in rows] == [("adam", "Adam", 3), ("hdtf", "HDTF", 3)]
    assert rows[0][2].startswith("w-") and rows[1][2] == "corpus-hdtf"
    assert s.names["names"] == 2 and s.names["works"] == 1 and s.names["corpus_papers"] == 1
    schema = works_schema_json()
    assert set(schema["$defs"]["name"]["required"]) == set(duckdb.sql(
        f"select * from '{tmp_path / 'corpus' / NAMES_FILE}'").columns)


def _index():
    pool = [{"paper_id": "hdtf", "title": "Flow-Guided One-Shot Talking Face Generation", "year": 2021},
            {"paper_id": "clip", "title": "Learning Transferable Visual Models", "year": 2021},
            {"paper_id": "lora", "title": "LoRA: Low-Rank Adaptation of Large Language Models", "year": 2021},
            {"paper_id": "late", "title": "NewNet: A Network From the Future", "year": 2030},
            {"paper_id": "s1", "title": "Survey: Things", "year": 2020}]
    pool += [{"paper_id": f"amb{i}", "title": f"Mamba: Variant {i}", "year": 2020} for i in range(4)]
    lab = [LabelledPaper(f"l{i}", f"labelled {i}", year=y, cites=[CitedPaper("hdtf"), CitedPaper("clip")],
                         names={"hdtf": ["HDTF"], "clip": ["CLIP"]}) for i, y in enumerate((2022, 2022, 2023, 2025))]
    years = year_array([p.year for p in lab])
    return NameIndex(pool, lab, years), year_array([p["year"] for p in pool])


def test_a_result_says_what_it_is():
    from mustcite.recommend.reasons import describe, reasons
    from mustcite.recommend.results import Recommendation

    r = Recommendation("w-1", "Towards accurate generative models of video", 2018, "arXiv preprint arXiv:1812",
                       0.9, "I", {}, authors=["T. Unterthiner", "S. van Steenkiste"], kind="dataset",
                       source="references")
    assert describe(r) == "the dataset of Unterthiner et al., arXiv 2018"
    ev = {"named": {"name": "FVD", "support": 4, "from_title": False}}
    assert reasons(ev, r)[0] == ("Your abstract names FVD: the dataset of Unterthiner et al., arXiv 2018 "
                                 "(4 papers call it so).")
    assert r.tier_name == "baseline or dataset"


def test_name_index_time_order_leave_one_out_and_case():
    idx, pool_years = _index()
    hits = idx.named("We evaluate on HDTF and use CLIP features; we fine-tune with LoRA.", 2023, pool_years)
    assert {pid: (h.name, h.support, h.from_title) for pid, h in hits.items()} == {
        "hdtf": ("HDTF", 3, False), "clip": ("CLIP", 3, False), "lora": ("LoRA", 0, True)}
    assert set(idx.named("HDTF", 2022, pool_years)) == {"hdtf"}                       # two papers of 2022
    assert idx.named("HDTF", 2021, pool_years) == {}                                  # no paper of 2021 yet
    assert idx.named("HDTF", 2022, pool_years, exclude="l0") == {}                    # its own paper left out: 1
    assert idx.named("we clip the gradients", 2024, pool_years) == {}                 # a capitalised name, lower case
    assert idx.named("NewNet, Mamba and the Survey", 2024, pool_years) == {}          # later, ambiguous, generic
    assert set(idx.named("NewNet", 2031, pool_years)) == {"late"}
    assert idx.named("LoRAxyz and FLoRA", 2024, pool_years) == {}                     # whole words only
    assert set(idx.named("H DTF and H D T F", 2024, pool_years)) == set()             # single letters are no name
    assert set(idx.named("the HD TF split", 2024, pool_years)) == {"hdtf"}


def test_a_name_a_hyphenated_or_possessive_word_starts_with():
    idx, pool_years = _index()
    assert set(idx.named("a LoRA-like adapter on HDTF-style clips", 2023, pool_years)) == {"lora", "hdtf"}
    assert set(idx.named("CLIP's features", 2023, pool_years)) == {"clip"}
    assert set(idx.named("RADAR-CLIP-7B as the detector", 2023, pool_years)) == set()     # not where it starts
    assert idx.named("LoRA-2, LoRA-v3 and LoRA-J", 2023, pool_years) == {}                # versions of another
    assert idx.named("FLoRA-like and xLoRA's", 2023, pool_years) == {}                    # whole parts only


@pytest.mark.data("neurips/fulltext_2024")
def test_real_contexts_name_their_datasets(data_dir):
    """Names mined from one real NeurIPS 2024 full text, extracted here: its datasets and models."""
    import gzip

    from mustcite.extract.markdown import extract_markdown

    path = data_dir / "neurips" / "fulltext_2024" / "2NKumsITFw.md.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        paper = extract_markdown(fh.read())
    names = {u.name for u in paper_names(paper.to_reference_list())}
    assert names, "no names mined from a real paper"
    assert all(len(name_key(n)) >= 2 for n in names)
    assert {"Adam", "CIFAR-100", "ResNet-18", "LabelMe"} <= names
    assert not any("." in n for n in names) and not names & {"Recently", "Section", "Table", "Following"}


def test_name_index_share_of_the_citing_papers_calling_an_entry_so():
    idx, _ = _index()
    assert idx.share("hdtf", 0, 2023) == 1.0 and idx.share("hdtf", 1, 2023) == 0.0
    assert idx.share("hdtf", 0, 2021) == 0.0 and idx.share("nosuchname", 0, 2023) == 0.0
