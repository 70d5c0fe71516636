"""SCIDOCA task data built from real NeurIPS full texts (seed 003, Sections 2-3).

Nine real Nougat full texts from shared/data/neurips (numeric and author-year styles, two with a
failed OCR page next to the reference list) are extracted and linked against a small real corpus
cut from the paper lists (NeurIPS 2012-2018, ICML 2013-2019, ICLR 2013-2018 with abstracts, and
NeurIPS 2019 whose list has no abstracts), then built into the three tasks.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import DATA

from mustcite.corpus.records import make_paper_id
from mustcite.extract.link import link_dir
from mustcite.extract.paragraphs import paragraph_view
from mustcite.extract.runner import extract_paths
from mustcite.io import iter_jsonl, read_text
from mustcite.scidoca.build import PaperJob, build_task_data, collect_paper, replace_spans
from mustcite.scidoca.formats import read_examples

PAPERS = {  # paper id -> folder of shared/data/neurips
    "kj33zJ9Vue": "fulltext_2023", "gMjIUZBKH8": "fulltext_2023", "LDhhi8HBO3": "fulltext_2023",
    "LnySNEJAQt": "fulltext_2023_rest", "VRRvJnxgQe": "fulltext_2024",            # numeric
    "IN3hQx1BrC": "fulltext_2023_rest", "TSaieShX3j": "fulltext_2024",            # author-year
    "2dtU9ZbgSN": "fulltext_2023_rest", "NibgkUin5n": "fulltext_2023_rest",       # failed page at the references
}
INCOMPLETE = {"2dtU9ZbgSN", "NibgkUin5n"}
LISTS = [(f"nips{y}", "NeurIPS", y) for y in range(2012, 2020)] + \
        [(f"icml{y}", "ICML", y) for y in range(2013, 2020)] + \
        [(f"iclr{y}", "ICLR", y) for y in (2013, 2014, 2017, 2018)]


@pytest.fixture(scope="module")
def inputs(data_dir, tmp_path_factory):
    """(full-text folders, linked extraction folder, corpus parquet) for the nine papers."""
    root = tmp_path_factory.mktemp("scidoca_in")
    dirs = []
    for pid, folder in PAPERS.items():
        d = root / "neurips" / folder
        d.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "neurips" / folder / f"{pid}.md.gz", d)
        if d not in dirs:
            dirs.append(d)
    cols: dict[str, list] = {"paper_id": [], "title": [], "abstract": [], "venue": [], "year": []}
    for name, venue, year in LISTS:
        with gzip.open(DATA / "proceedings" / "paperlists" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    r = json.loads(line)
                    cols["paper_id"].append(make_paper_id(r["title"], venue, year, str(r.get("id", ""))))
                    cols["title"].append(r["title"])
                    cols["abstract"].append(r.get("abstract") or "")
                    cols["venue"].append(venue)
                    cols["year"].append(year)
    corpus = root / "papers.parquet"
    pq.write_table(pa.table(cols), corpus)
    extract = root / "extract"
    extract_paths(dirs, extract, workers=1, progress=False)
    link_dir(extract, corpus, workers=1, progress=False)
    return dirs, extract, corpus


def _build(inputs, out: Path, **kw) -> dict:
    dirs, extract, corpus = inputs
    kw.setdefault("workers", 1)
    return build_task_data(dirs, extract, corpus, out, progress=False, **kw)


@pytest.fixture(scope="module")
def built(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("scidoca_out")
    manifest = _build(inputs, out, seed=0, fractions=(0.5, 0.25, 0.25))
    return out, manifest


def _rows(out: Path, split: str, task: int) -> list[dict]:
    return [row for _, row in iter_jsonl(out / split / f"task{task}.jsonl")]


def _paper(example_id: str) -> str:
    return example_id.rsplit("-p", 1)[0]


@pytest.fixture(scope="module")
def views(data_dir):
    return {pid: paragraph_view(read_text(DATA / "neurips" / folder / f"{pid}.md.gz"))
            for pid, folder in PAPERS.items()}


@pytest.fixture(scope="module")
def links(inputs):
    """paper -> target -> linked corpus id, and the corpus ids that have an abstract."""
    _, extract, corpus = inputs
    out = {pid: {r["target"]: r["paper_id"] for r in json.loads((extract / f"{pid}.json").read_text())
                 if r.get("paper_id")} for pid in PAPERS}
    t = pq.read_table(corpus, columns=["paper_id", "abstract"]).to_pylist()
    return out, {r["paper_id"] for r in t if r["abstract"].strip()}


# ---- the paragraph view ------------------------------------------------------------------------

@pytest.mark.data
def test_view_spans_point_at_markers_and_match_extraction(inputs, views):
    _, extract, _ = inputs
    for pid, view in views.items():
        assert view.problem is None and view.paragraphs
        meta = json.loads((extract / f"{pid}.meta.json").read_text())
        refs = json.loads((extract / f"{pid}.json").read_text())
        assert view.style == meta["stats"]["citation_style"]
        keys = per_target = 0
        counts: dict[int, int] = defaultdict(int)
        for p in view.paragraphs:
            for s in p.sentences:
                assert p.text[s.start:s.end] == s.text
            for m in p.citations:
                assert p.text[m.start:m.end] == m.text
                s = p.sentences[m.sentence]
                assert s.start <= m.start < m.end <= s.end
                if view.style == "numeric":
                    assert m.text.startswith("[") and m.text.endswith("]") and re.search(r"\d", m.text)
                else:
                    assert re.search(r"(?:19|20)\d\d", m.text) and m.text.endswith((")", "]"))
                keys += len(m.keys)
                for t in m.targets:
                    if t is not None:
                        counts[t] += 1
                        per_target += 1
        # the same parser as extraction: every key it counted, every mention per reference
        assert keys == meta["stats"]["mentions_total"] > 20
        assert {r["target"]: r["mentions"] for r in refs if r["mentions"]} == dict(counts)


def test_replace_spans_tidies_removed_markers():
    text = "We compare with [3]. In [4, 5] the set is ([6]) nested, see [7] and [8]."
    spans = [(m.start(), m.end()) for m in re.finditer(r"\[[\d, ]+\]", text)]
    assert replace_spans(text, [(a, b, "") for a, b in spans]) == \
        "We compare with. In the set is nested, see and."
    assert replace_spans(text, [(a, b, f"[MASK{i}]") for i, (a, b) in enumerate(spans, 1)]) == \
        "We compare with [MASK1]. In [MASK2] the set is ([MASK3]) nested, see [MASK4] and [MASK5]."


# ---- the three tasks ---------------------------------------------------------------------------

@pytest.mark.data
def test_files_read_back_in_the_seed_shape(built):
    out, manifest = built
    for split in ("train", "dev", "test"):
        for task in (1, 2, 3):
            rows = _rows(out, split, task)
            assert manifest["files"][f"{split}/task{task}.jsonl"]["lines"] == len(rows)
            exs = read_examples(out / split / f"task{task}.jsonl", task=task) if rows else []
            assert [e.id for e in exs] == [r["id"] for r in rows]
        assert [r["id"] for r in _rows(out, split, 1)] == [r["id"] for r in _rows(out, split, 3)]
    assert sum(manifest["statistics"][s]["paragraphs"] for s in ("train", "dev", "test")) > 50


@pytest.mark.data
def test_masks_replace_exactly_the_markers(built, views, links):
    out, _ = built
    linked, with_abstract = links
    n = 0
    for split in ("train", "dev", "test"):
        t1 = {r["id"]: r for r in _rows(out, split, 1)}
        for r in _rows(out, split, 2):
            masks = re.findall(r"\[MASK\d+\]", r["paragraph"])
            gold = r["predicted_citations"]
            assert masks == [f"[MASK{i}]" for i in range(1, len(masks) + 1)]
            assert len(masks) == len(gold) and set(gold) == set(masks)
            # outside the masks the text is the Task 1 text: the masks stand where markers were
            bare = re.sub(r"\s+", " ", re.sub(r"\s*\[MASK\d+\]", "", r["paragraph"])).strip()
            assert re.sub(r"\W+", "", bare) == re.sub(r"\W+", "", t1[r["id"]]["paragraph"])
            # one mask per gold-quality reference of each marker, in text order
            pid, idx = _paper(r["id"]), int(r["id"].rsplit("-p", 1)[1])
            p = views[pid].paragraphs[idx]
            expect = []
            for m in p.citations:
                ids = [linked[pid].get(t) for t in m.resolved]
                expect += list(dict.fromkeys(i for i in ids if i in with_abstract))
            assert [gold[k] for k in masks] == expect
            # no marker text survives in Task 1 / Task 2
            for m in p.citations:
                if re.search(r"\d", m.text) and len(m.text) > 4:
                    assert m.text not in r["paragraph"] and m.text not in t1[r["id"]]["paragraph"]
            n += 1
    assert n > 50


@pytest.mark.data
def test_gold_and_distractors(built, views, links):
    out, _ = built
    linked, with_abstract = links
    unabstracted = 0

    def cited(p, pid):
        return {linked[pid][t] for t in p.targets if t in linked[pid]}
    for split in ("train", "dev", "test"):
        for r in _rows(out, split, 1):
            pid, idx = _paper(r["id"]), int(r["id"].rsplit("-p", 1)[1])
            view = views[pid]
            cands = [c["id"] for c in r["candidate_references"]]
            gold = r["predicted_citations"]
            assert len(set(cands)) == len(cands) and gold and set(gold) <= set(cands)
            assert all(c["title"].strip() and c["abstract"].strip() for c in r["candidate_references"])
            here = cited(view.paragraphs[idx], pid)
            assert set(gold) == here & with_abstract
            unabstracted += len(here - with_abstract)
            elsewhere = set().union(*(cited(p, pid) for p in view.paragraphs if p.index != idx))
            for d in set(cands) - set(gold):
                assert d in set(linked[pid].values())            # a reference of the same paper
                assert d not in here and d in elsewhere          # cited in another paragraph only
            assert set(cands) - set(gold) == (elsewhere - here) & with_abstract
    assert unabstracted > 0      # the rule was exercised: linked papers without abstract are no gold


@pytest.mark.data
def test_task3_sentences_carry_the_gold(built):
    out, manifest = built
    for split in ("train", "dev", "test"):
        t1 = {r["id"]: r for r in _rows(out, split, 1)}
        for r in _rows(out, split, 3):
            sc = r["sentence_citations"]
            assert [s["sentence"] for s in sc] == r["paragraph"] and r["paragraph"]
            union = {i for s in sc for i in s["predicted_citation"]}
            assert union == set(t1[r["id"]]["predicted_citations"])
            assert re.sub(r"\W+", "", " ".join(r["paragraph"])) == re.sub(r"\W+", "", t1[r["id"]]["paragraph"])
        st = manifest["statistics"][split]
        assert st["sentences_with_citation"] + st["sentences_without_citation"] == st["sentences"]


# ---- splits ------------------------------------------------------------------------------------

@pytest.mark.data
def test_split_by_paper_and_one_test_paragraph_per_paper(built):
    out, manifest = built
    papers = {s: {_paper(r["id"]) for r in _rows(out, s, 1)} for s in ("train", "dev", "test")}
    assert not papers["train"] & papers["dev"] and not papers["train"] & papers["test"] \
        and not papers["dev"] & papers["test"]
    assert not INCOMPLETE & (papers["dev"] | papers["test"])
    test_ids = [_paper(r["id"]) for r in _rows(out, "test", 1)]
    assert len(test_ids) == len(set(test_ids))
    assert manifest["statistics"]["test"]["paragraphs"] == manifest["statistics"]["test"]["papers"]


@pytest.mark.data
def test_everything_to_test_keeps_one_paragraph_each(inputs, tmp_path):
    m = _build(inputs, tmp_path, seed=0, fractions=(0.0, 0.0, 1.0))
    test = [_paper(r["id"]) for r in _rows(tmp_path, "test", 1)]
    train = {_paper(r["id"]) for r in _rows(tmp_path, "train", 1)}
    assert sorted(test) == sorted(set(PAPERS) - INCOMPLETE)        # one paragraph of each paper
    assert train == INCOMPLETE                                       # incomplete references: train only
    assert m["counts"]["papers_moved_to_train_incomplete_bibliography"] == len(INCOMPLETE)
    assert m["counts"]["test_paragraphs_dropped_one_per_paper"] > 0


@pytest.mark.data
def test_deterministic_under_the_seed(inputs, built, tmp_path):
    out, manifest = built
    again = _build(inputs, tmp_path / "again", seed=0, fractions=(0.5, 0.25, 0.25), workers=2)
    assert again["files"] == manifest["files"]
    for split in ("train", "dev", "test"):
        for task in (1, 2, 3):
            name = f"{split}/task{task}.jsonl"
            assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()
    other = _build(inputs, tmp_path / "other", seed=1, fractions=(0.5, 0.25, 0.25))
    assert other["files"] != manifest["files"]


@pytest.mark.data
def test_stale_extraction_is_skipped(inputs, tmp_path):
    dirs, extract, _ = inputs
    pid = "gMjIUZBKH8"
    refs = json.loads((extract / f"{pid}.json").read_text())
    refs[3]["title"] = "Something else entirely"
    (tmp_path / f"{pid}.json").write_text(json.dumps(refs))
    shutil.copy(extract / f"{pid}.meta.json", tmp_path)
    src = str(DATA / "neurips" / PAPERS[pid] / f"{pid}.md.gz")
    job = PaperJob(pid, src, str(tmp_path / f"{pid}.json"), str(tmp_path / f"{pid}.meta.json"))
    assert collect_paper(job).skip == "stale_extraction"
    good = PaperJob(pid, src, str(extract / f"{pid}.json"), str(extract / f"{pid}.meta.json"))
    res = collect_paper(good)
    assert res.skip is None and res.paragraphs and res.links
