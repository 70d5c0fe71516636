"""``mustcite recommend`` / ``audit`` / ``train`` on the real slice: formats, inputs and errors."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import recommender as S

from mustcite.cli.main import main

# the tests on the slice recommender (helpers.recommender) are marked data


@pytest.fixture(scope="module")
def work(data_dir, tmp_path_factory):
    """A work dir whose default model folder holds the slice recommender."""
    w = tmp_path_factory.mktemp("work")
    shutil.copytree(S.model_dir(), w / "models" / "recommender")
    return w


def run(capsys, work, *args):
    code = main(["--work", str(work), *args])
    out, err = capsys.readouterr()
    return code, out, err


def _query():
    return S.held_out_queries()[0]


@pytest.mark.data
def test_json_format(capsys, work):
    q = _query()
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--abstract", q["abstract"],
                       "--format", "json", "--top", "7")
    assert code == 0
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == 1 and objs[0]["id"] == "query" and len(objs[0]["results"]) == 7
    r = objs[0]["results"][0]
    assert {"paper_id", "title", "year", "venue", "score", "tier", "evidence"} <= set(r)


@pytest.mark.data
def test_trec_format_from_queries_file(capsys, work, tmp_path):
    qs = S.held_out_queries()[:3]
    f = tmp_path / "q.jsonl"
    f.write_text("".join(json.dumps({"id": q["id"], "title": q["title"], "abstract": q["abstract"]}) + "\n"
                         for q in qs))
    code, out, _ = run(capsys, work, "recommend", "--queries", str(f), "--format", "trec", "--top", "5")
    assert code == 0
    lines = [ln.split() for ln in out.splitlines()]
    assert len(lines) == 15
    assert [ln[0] for ln in lines[:5]] == [qs[0]["id"]] * 5
    assert all(ln[1] == "Q0" and ln[5] == "mustcite" for ln in lines)
    assert [int(ln[3]) for ln in lines[:5]] == [1, 2, 3, 4, 5]
    scores = [float(ln[4]) for ln in lines[:5]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.data
def test_bibtex_and_table_formats(capsys, work):
    q = _query()
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--abstract", q["abstract"],
                       "--format", "bibtex", "--top", "3")
    assert code == 0 and out.count("@inproceedings{") == 3
    assert "booktitle = {Advances in Neural Information Processing Systems}" in out
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--format", "table", "--top", "3")
    assert code == 0 and out.startswith("# query") and len(out.strip().splitlines()) == 5


@pytest.mark.data
def test_draft_input_and_audit(capsys, work, tmp_path):
    held = S.split()[1][0]
    draft = tmp_path / f"{held.id}.md"
    draft.write_text(S.fulltext(held.id), encoding="utf-8")
    code, out, _ = run(capsys, work, "recommend", "--draft", str(draft), "--format", "json", "--top", "5")
    assert code == 0 and json.loads(out)["id"] == held.id
    code, out, _ = run(capsys, work, "audit", str(draft), "--format", "json", "--top", "10")
    assert code == 0
    res = json.loads(out)
    assert res["references"] > 10 and res["linked"] >= len(held.cites) - 1
    cited = {c.paper_id for c in held.cites}
    assert len(res["missing"]) <= 10
    assert all(r["confidence"] >= res["threshold"] and r["finding"] for r in res["missing"])   # only what is shown
    confidences = [f["confidence"] for f in res["findings"]]
    assert confidences == sorted(confidences, reverse=True)
    assert not cited & {f["paper_id"] for f in res["findings"]}     # never reports what the draft cites
    code, out, _ = run(capsys, work, "audit", str(draft), "--format", "json", "--top", "10", "--all")
    every = json.loads(out)
    assert len(every["missing"]) == min(10, len(every["findings"])) and len(every["findings"]) >= 10
    assert [r["paper_id"] for r in every["missing"]] == [f["paper_id"] for f in every["findings"][:10]]
    assert all(r["evidence"]["sources"] for r in every["missing"] if r["paper_id"])
    code, out, _ = run(capsys, work, "audit", str(draft), "--top", "3", "--all")
    assert code == 0 and "findings: 3 shown of" in out and "likely_missing" in out


@pytest.mark.data
def test_usage_and_data_errors(capsys, work, tmp_path):
    code, _, err = run(capsys, work, "recommend", "--title", "x", "--queries", "q.jsonl")
    assert code == 2 and "exactly one" in err
    code, _, err = run(capsys, work, "recommend", "--title", "x", "--format", "xml")
    assert code == 2 and "--format" in err
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"hello, not a pdf")
    code, _, err = run(capsys, work, "audit", str(fake))
    assert code == 1 and "not a PDF" in err
    code, _, err = run(capsys, tmp_path / "empty-work", "recommend", "--title", "x")
    assert code == 1 and "mustcite train" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "title": "ok"}\n{"id": "b"}\n')
    code, _, err = run(capsys, work, "recommend", "--queries", str(bad))
    assert code == 1 and "bad.jsonl:2" in err


@pytest.mark.slow
@pytest.mark.data
def test_train_writes_model_and_card(capsys, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = tmp_path / "pool.parquet"
    pq.write_table(pa.Table.from_pylist(S.pool()), pool)
    out = tmp_path / "model"
    code, stdout, err = run(capsys, tmp_path / "w", "train", "--refs", str(S.slice_dir() / "refs"), "--pool",
                            str(pool), "--no-dense", "--out", str(out), "--dev-fraction", "0.2",
                            "--fit-queries", "30")
    assert code == 0, err
    card = json.loads((out / "card.json").read_text())
    assert card["seed"] == 0 and card["data"]["labelled_papers"] == len(S.labelled())
    assert card["data"]["fit_queries"] == 30
    assert 0 < card["data"]["dev_papers"] < card["data"]["labelled_papers"]
    dev = card["metrics"]["dev"]["cited"]
    assert dev["queries"] == card["data"]["dev_papers"] and 0 < dev["R@100"] <= 1
    assert card["features"][0] == "bm25_score" and card["ranked_by"] == "cited"
    assert card["train_seconds"] > 0 and card["train_peak_rss_mb"] > 50
    assert card["metrics"]["dev_bm25_baseline"]["cited"]["queries"] == dev["queries"]
    assert json.loads(stdout)["model"] == str(out)


@pytest.mark.slow
@pytest.mark.data
def test_train_benchmark_mode_is_train_only(capsys, tmp_path):
    """A benchmark folder in the layout of ``mustcite benchmark build`` made from the slice."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mustcite.benchmark.trec import write_qrels
    from mustcite.recommend.train import qrels_of

    bench = tmp_path / "w" / "benchmarks" / "slice"
    (bench / "queries").mkdir(parents=True)
    (bench / "qrels").mkdir()
    pq.write_table(pa.Table.from_pylist(S.pool()), bench / "pool.parquet")
    lab = S.labelled()
    parts = {"train": lab[:45], "dev": lab[45:58], "test": lab[58:]}
    for split, papers in parts.items():
        (bench / "queries" / f"{split}.jsonl").write_text("".join(
            json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year}) + "\n"
            for p in papers))
        for gt, table in qrels_of(papers).items():
            write_qrels(bench / "qrels" / f"{split}.{gt}.qrels", table)
    code, out, err = run(capsys, tmp_path / "w", "train", "--benchmark", "slice", "--no-dense", "--eval-test")
    assert code == 0, err
    card = json.loads((tmp_path / "w" / "models" / "recommender-slice" / "card.json").read_text())
    assert card["data"]["train_only"] and card["data"]["train_queries"] == 45 and card["data"]["fit_queries"] == 45
    # the tier models on a fixed sample of the train queries; every train query still a labelled neighbour
    code, out, err = run(capsys, tmp_path / "w", "train", "--benchmark", "slice", "--no-dense", "--fit-queries", "20",
                         "--out", str(tmp_path / "w" / "models" / "fit20"))
    assert code == 0, err
    card20 = json.loads((tmp_path / "w" / "models" / "fit20" / "card.json").read_text())
    assert card20["data"]["fit_queries"] == 20 and card20["config"]["labelled"] == 45
    assert card["config"]["labelled"] == 45                       # dev/test papers never become labelled
    assert set(card["metrics"]) == {"dev", "test", "dev_bm25_baseline", "test_bm25_baseline"}
    assert card["metrics"]["dev"]["cited"]["queries"] == 13 and card["metrics"]["dev"]["cited"]["R@100"] > 0.3


@pytest.mark.data
def test_serve_without_a_model_fails_fast(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path, "serve", "--port", "8765")
    assert code == 1 and "mustcite train" in err


@pytest.mark.data
def test_serve_with_a_corrupt_model_names_the_file(capsys, tmp_path):
    bad = tmp_path / "model"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    code, _, err = run(capsys, tmp_path, "serve", "--port", "8765", "--model", str(bad))
    assert code == 1 and "config.json" in err and "malformed JSON" in err and "Traceback" not in err
    code, _, err = run(capsys, tmp_path, "recommend", "--title", "graph networks", "--model", str(bad))
    assert code == 1 and "config.json" in err


@pytest.mark.data
def test_out_is_checked_before_any_work(capsys, work, tmp_path):
    # a folder (or a path in an unwritable place) as --out: a usage error before the model loads
    code, _, err = run(capsys, work, "recommend", "--title", "graph networks", "--out", str(tmp_path))
    assert code == 2 and "is a folder" in err and "Traceback" not in err
    (tmp_path / "a-file").write_text("x")
    code, _, err = run(capsys, work, "recommend", "--title", "graph networks",
                       "--out", str(tmp_path / "a-file" / "r.json"))
    assert code == 2 and "cannot write" in err


@pytest.mark.data
def test_audit_names_the_draft_and_never_a_sibling(capsys, work, tmp_path):
    """A draft whose Markdown holds no title/abstract is reported as such, even with a readable
    sibling .tei.xml/.pdf of another paper beside it (a corpus run would fall back; a draft never)."""
    import gzip

    held = S.split()[1][0]
    (tmp_path / "draft.md.gz").write_bytes(gzip.compress(b"\n\n12 34\n"))
    (tmp_path / "draft.md").write_text(S.fulltext(held.id))    # a neighbour that would succeed
    for args in (("audit", str(tmp_path / "draft.md.gz")), ("recommend", "--draft", str(tmp_path / "draft.md.gz"))):
        code, out, err = run(capsys, work, *args)
        assert code == 1 and "draft.md.gz" in err and "references" not in out, (args, err)
    code, _, err = run(capsys, work, "audit", str(tmp_path))
    assert code == 2 and "is a folder" in err
    code, _, err = run(capsys, work, "audit", str(tmp_path / "draft.md"), "--min-score", "nan")
    assert code == 2 and "NaN" in err


@pytest.mark.data
def test_rank_by_a_tier(capsys, work):
    q = _query()
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--abstract", q["abstract"],
                       "--format", "json", "--top", "10", "--rank-by", "type3")
    assert code == 0
    res = json.loads(out)["results"]
    assert [r["score"] for r in res] == [r["tiers"]["type3"] for r in res]
    assert [r["score"] for r in res] == sorted((r["score"] for r in res), reverse=True)
    code, _, err = run(capsys, work, "recommend", "--title", q["title"], "--rank-by", "type7")
    assert code == 2 and "rank_by" in err


@pytest.mark.data
def test_default_model_falls_back_to_the_demo_light_model(capsys, tmp_path):
    q = _query()
    args = ("recommend", "--title", q["title"], "--abstract", q["abstract"], "--format", "json", "--top", "3")
    w = tmp_path / "w"
    code, _, err = run(capsys, w, *args)
    assert code != 0 and "no trained recommender" in err and "Traceback" not in err
    shutil.copytree(S.model_dir(), w / "models" / "recommender-light")
    code, out, err = run(capsys, w, *args)
    assert code == 0 and "using the light model" in err and len(json.loads(out)["results"]) == 3
    # once the full model exists it is the default, without the note
    shutil.copytree(S.model_dir(), w / "models" / "recommender")
    shutil.rmtree(w / "models" / "recommender-light" / "bm25")   # would fail to load if still used
    code, out, err = run(capsys, w, *args)
    assert code == 0 and "light model" not in err and len(json.loads(out)["results"]) == 3


@pytest.mark.slow
@pytest.mark.data
def test_train_as_of_a_year_keeps_later_papers_out(capsys, tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = tmp_path / "pool.parquet"
    pq.write_table(pa.Table.from_pylist(S.pool()), pool)
    refs = tmp_path / "refs"
    shutil.copytree(S.slice_dir() / "refs", refs)
    metas = sorted(refs.glob("*.meta.json"))
    for m in metas[::2]:                                  # half the labelled papers become 2021 papers
        meta = json.loads(m.read_text())
        meta["year"] = 2021
        m.write_text(json.dumps(meta))
    out = tmp_path / "model"
    code, _, err = run(capsys, tmp_path / "w", "train", "--refs", str(refs), "--pool", str(pool), "--no-dense",
                       "--out", str(out), "--year", "2021", "--no-refit")
    assert code == 0, err
    card = json.loads((out / "card.json").read_text())
    assert card["data"]["as_of_year"] == 2021 and 0 < card["data"]["labelled_papers"] <= len(metas[::2])
    saved = [json.loads(x) for x in (out / "labelled.jsonl").read_text().splitlines()]
    assert saved and all(p["year"] == 2021 for p in saved)          # the 2023 papers are left out
    years = pq.read_table(out / "pool.parquet", columns=["year"]).column("year").to_pylist()
    assert max(years) == 2021 and max(p["year"] for p in S.pool()) > 2021
    code, _, err = run(capsys, tmp_path / "w", "train", "--refs", str(refs), "--pool", str(pool), "--no-dense",
                       "--out", str(tmp_path / "m2"), "--year", "abc")
    assert code == 2


@pytest.mark.data
def test_audit_reports_bibtex_markdown_and_ci_exit(capsys, work, tmp_path):
    held = S.split()[1][1]
    draft = tmp_path / f"{held.id}.md"
    draft.write_text(S.fulltext(held.id), encoding="utf-8")
    code, out, _ = run(capsys, work, "audit", str(draft), "--format", "json", "--top", "5", "--all")
    res = json.loads(out)
    assert code == 0 and len(res["missing"]) == 5
    assert {"references_cocited", "cocited_with_references_by", "closest_bibliographies_type1"} <= \
        set(res["missing"][0]["evidence"])
    assert res["reference_list"] and all("title" in r for r in res["reference_list"])
    code, out, _ = run(capsys, work, "audit", str(draft), "--format", "bibtex", "--top", "5", "--all")
    assert code == 0 and out.count("@inproceedings{") == 5
    keys = [line.split("{", 1)[1].rstrip(",") for line in out.splitlines() if line.startswith("@")]
    assert len(set(keys)) == 5
    report = tmp_path / "audit.md"
    code, out, _ = run(capsys, work, "audit", str(draft), "--format", "markdown", "--top", "5", "--all",
                       "--out", str(report))
    text = report.read_text(encoding="utf-8")
    assert code == 0 and out == "" and text.startswith("# Must-cite audit: ")
    assert "## Findings (5 shown of " in text and text.count("\n| ") == 6   # header and 5 rows
    # the slice's model has no Type I tier (its papers are linked, not labelled): gate on must-cite
    p1 = max(r["tiers"]["must_cite"] for r in res["missing"])
    gate = f"must_cite:{p1 - 1e-4:.6f}"
    code, out, err = run(capsys, work, "audit", str(draft), "--top", "5", "--all", "--fail-on", gate)
    assert code == 1 and "audit failed: " in err
    assert "findings: 5 shown of" in out    # the report still prints
    code, _, err = run(capsys, work, "audit", str(draft), "--top", "5", "--all", "--fail-on", "must_cite:1")
    assert code == 0 and "audit failed" not in err
    for bad in ("type1:0.5", "type9:0.5", "1.5", "x"):
        code, _, err = run(capsys, work, "audit", str(draft), "--fail-on", bad)
        assert code == 2 and "--fail-on" in err
    code, _, err = run(capsys, work, "audit", str(draft), "--format", "xml")
    assert code == 2 and "--format" in err


def test_bibtex_keys_never_collide_with_the_drafts():
    from mustcite.recommend.formats import bibtex_key, unique_keys
    from mustcite.recommend.results import Recommendation

    r = Recommendation("p1", "Attention is all you need", 2017, "NeurIPS", 0.9, "I", {}, authors=["Ashish Vaswani"])
    twin = Recommendation("p2", "Attention is all you need", 2017, "NeurIPS", 0.8, "I", {}, authors=["A. Vaswani"])
    assert bibtex_key(r) == "vaswani2017attention"
    assert unique_keys([r, twin], {"Vaswani2017Attention"}) == ["vaswani2017attentiona", "vaswani2017attentionb"]
    assert unique_keys([r], set()) == ["vaswani2017attention"]


@pytest.mark.data
def test_fail_on_also_fails_on_placeholders_and_undefined_keys(capsys, work, tmp_path):
    q = _query()
    proj = tmp_path / "proj"
    proj.mkdir()
    todo = "".join(f"Step {i} follows earlier work [?].\n" for i in range(300))
    (proj / "main.tex").write_text(
        "\\documentclass{article}\n\\title{" + q["title"] + "}\n\\begin{document}\n\\maketitle\n"
        "\\begin{abstract}\n" + q["abstract"] + "\n\\end{abstract}\n\\section{Introduction}\n"
        "We build on prior work \\cite{known2020}.\n" + todo + "As shown in \\cite{nowhere2021}.\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    (proj / "refs.bib").write_text("@article{known2020, title={A Known Paper}, author={Doe, Jane}, year={2020}}\n",
                                   encoding="utf-8")
    code, out, _ = run(capsys, work, "audit", str(proj), "--format", "json", "--top", "1")
    res = json.loads(out)
    todo_conf = [f["confidence"] for f in res["findings"] if f["finding"] in ("placeholder", "undefined_key")]
    assert code == 0 and len(todo_conf) == 301
    papers = max((r["tiers"]["must_cite"] for r in res["missing"] if r.get("paper_id")), default=0.0)
    low = min(todo_conf)
    assert low > papers           # the gate below fails on the placeholders alone, not on a missing paper
    code, out, err = run(capsys, work, "audit", str(proj), "--top", "1", "--fail-on", f"must_cite:{low - 1e-4:.6f}")
    assert code == 1 and "300 placeholder(s) with confidence >=" in err, err
    assert "(main.tex:10; main.tex:11; main.tex:12 ...)" in err and "missing paper" not in err
    assert "1 undefined key(s) with confidence >=" in err and "(nowhere2021 at main.tex:310)" in err
    assert "findings: 1 shown of" in out          # the report still prints, only the first finding shown
    code, _, err = run(capsys, work, "audit", str(proj), "--top", "1", "--fail-on", "must_cite:1")
    assert code == 0 and "audit failed" not in err


def test_all_header_says_every_finding_is_shown_and_names_the_default_threshold():
    from mustcite.recommend.audit import AuditResult
    from mustcite.recommend.findings import Finding, Location
    from mustcite.recommend.formats import audit_markdown, audit_table
    from mustcite.recommend.results import Ranked, Recommendation

    found = [Finding("placeholder", "a citation is still to be added here: '[?]'", {}, Location("main.tex", n),
                     key="[?]", confidence=c) for n, c in ((3, 0.9), (5, 0.3), (9, 0.1))]
    shown = Ranked([Recommendation("", "[?]", None, None, f.confidence, "", {}, kind=f.kind, finding=f.kind,
                                   confidence=f.confidence, message=f.message, location=f.location.to_dict())
                    for f in found], 2024)
    res = AuditResult("main.tex", "T", "", 0, 0, shown, findings=found, threshold=0.42, show_all=True)
    line = "3 shown of 3 (--all: every finding, whatever its confidence; the default threshold, confidence >= 0.42, " \
           "shows 1)"
    assert f"findings: {line}" in audit_table(res) and f"## Findings ({line})" in audit_markdown(res)
    res.show_all, res.missing = False, Ranked(shown[:1], 2024)
    assert "findings: 1 shown of 3 (confidence >= 0.42: the probability" in audit_table(res)
