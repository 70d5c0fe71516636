"""The rater page (``mustcite rate``): the ratings library, the /api/rate routes (FastAPI TestClient)
over a sample drawn from a real NeurIPS 2024 extraction, the files read by ``mustcite agreement``,
and the page driven by the keyboard in Debian's chromium (Playwright) against uvicorn."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from helpers import DATA

from mustcite.api.rate import create_rate_app
from mustcite.errors import MustciteError
from mustcite.labels.agreement import agreement_from_files
from mustcite.labels.rating import RatingStore, cite_spans, load_sample, segments

CHROMIUM = Path("/usr/bin/chromium")
N = 8


def _data_files() -> list[Path]:
    return sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[1:2]


needs_data = pytest.mark.data("neurips/fulltext_2024")      # the tests on the real sample


@pytest.fixture(scope="module")
def sample(data_dir, tmp_path_factory) -> Path:
    """A stratified sample of N real citation instances (`agreement sample` on one real paper)."""
    from mustcite.extract.runner import extract_paths
    from mustcite.labels.sample import write_sample

    d = tmp_path_factory.mktemp("rate")
    extract_paths(_data_files(), d / "ext", workers=1, progress=False)
    write_sample(d / "ext", d / "sample.csv", n=N, seed=1)
    return d / "sample.csv"


def _client(sample: Path, out: Path) -> TestClient:
    return TestClient(create_rate_app(RatingStore.open(sample, out)))


def _items(sample: Path) -> list[str]:
    return [r["item"] for r in csv.DictReader(open(sample, encoding="utf-8"))]


def test_cite_spans_and_segments():
    t = "as in [3, 12] and [1] or [10-14]; not [120] nor [2]"
    assert [t[a:b] for a, b in cite_spans(t, "12")] == ["[3, 12]", "[10-14]"]
    assert [t[a:b] for a, b in cite_spans(t, "1")] == ["[1]"]
    assert cite_spans(t, "7") == [] and cite_spans(t, "") == []
    ay = "Smith et al., 2020 showed (Smith et al., 2020)"
    assert [ay[a:b] for a, b in cite_spans(ay, "Smith et al., 2020")] == ["Smith et al., 2020"] * 2
    segs = segments("a <b>[5]</b> c", "5")
    assert segs == [{"text": "a <b>", "cite": False}, {"text": "[5]", "cite": True}, {"text": "</b> c", "cite": False}]
    assert "".join(s["text"] for s in segs) == "a <b>[5]</b> c"


@needs_data
def test_sample_instances_show_text_and_the_citation(sample, tmp_path):
    inst = load_sample(sample)
    rows = list(csv.DictReader(open(sample, encoding="utf-8")))
    assert [x["item"] for x in inst] == [r["item"] for r in rows] and len(inst) == N
    for x, r in zip(inst, rows):
        assert x["ref_title"] == r["ref_title"] and x["contexts"]
        assert all(c["section"] for c in x["contexts"])
        # the paragraph text round-trips, and the cite marker is marked where it is a bracket group
        assert " || ".join(f"[{c['section']}] " + "".join(s["text"] for s in c["segments"]) for c in x["contexts"]) \
            == r["contexts"]
    assert sum(any(s["cite"] for c in x["contexts"] for s in c["segments"]) for x in inst) >= N - 1
    # abstracts: a sample column, or looked up by normalised title in a JSONL file
    absf = tmp_path / "abs.jsonl"
    absf.write_text(json.dumps({"title": inst[0]["ref_title"].upper() + "!", "abstract": "We study X."}) + "\n")
    assert load_sample(sample, {"": ""})[0]["ref_abstract"] == ""
    from mustcite.labels.rating import load_abstracts
    assert load_sample(sample, load_abstracts(absf))[0]["ref_abstract"] == "We study X."
    # or from a corpus store (what `mustcite rate` uses by default)
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = tmp_path / "papers.parquet"
    pq.write_table(pa.table({"paper_id": ["p1", "p2"], "title": [inst[1]["ref_title"], "Other"],
                             "abstract": ["From the corpus.", "x"]}), store)
    assert load_sample(sample, load_abstracts(store))[1]["ref_abstract"] == "From the corpus."
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(MustciteError, match="bad.parquet"):
        load_abstracts(bad)


@needs_data
def test_next_save_progress_undo_and_resume_after_restart(sample, tmp_path):
    items = _items(sample)
    c = _client(sample, tmp_path / "out")
    r = c.get("/api/rate/next", params={"rater": "alice"}).json()
    assert (r["rated"], r["total"], r["instance"]["item"]) == (0, N, items[0])
    for i, (t1, t2) in enumerate([(1, 5), (0, 2), (0, 3)]):
        got = c.post("/api/rate", json={"rater": "alice", "item": items[i], "type1": t1, "type2": t2})
        assert got.status_code == 200 and got.json()["rated"] == i + 1
    # the answers are on disk at once, in the agreement format
    path = tmp_path / "out" / "alice.csv"
    assert path.read_text() == (f"item,rater,type1,type2\n{items[0]},alice,1,5\n{items[1]},alice,0,2\n"
                                f"{items[2]},alice,0,3\n")
    # a restarted server (new store, new app) resumes at the fourth instance
    c2 = _client(sample, tmp_path / "out")
    r = c2.get("/api/rate/next", params={"rater": "alice"}).json()
    assert r["instance"]["item"] == items[3] and r["rated"] == 3
    assert c2.get("/api/rate/progress").json()["raters"] == {"alice": 3}
    assert c2.get("/api/rate/progress", params={"rater": "bob"}).json()["rated"] == 0
    # re-answering replaces (no duplicate row); undo takes back the last answer
    c2.post("/api/rate", json={"rater": "alice", "item": items[1], "type1": 1, "type2": 4})
    assert c2.get("/api/rate/progress", params={"rater": "alice"}).json()["rated"] == 3
    u = c2.post("/api/rate/undo", json={"rater": "alice"}).json()
    assert u["undone"] == {"item": items[1], "type1": 1, "type2": 4} and u["rated"] == 2
    assert c2.get("/api/rate/next", params={"rater": "alice"}).json()["instance"]["item"] == items[1]
    assert c2.post("/api/rate/undo", json={"rater": "nobody"}).json()["undone"] is None
    # all answered -> instance null
    for it in items:
        c2.post("/api/rate", json={"rater": "carol", "item": it, "type1": 0, "type2": 1})
    done = c2.get("/api/rate/next", params={"rater": "carol"}).json()
    assert done["instance"] is None and done["rated"] == N


@needs_data
@pytest.mark.parametrize("body,status,needle", [
    ({"rater": "alice", "item": "ITEM", "type1": 2, "type2": 3}, 422, "type1"),
    ({"rater": "alice", "item": "ITEM", "type1": 1, "type2": 0}, 422, "type2"),
    ({"rater": "alice", "item": "ITEM", "type1": 1, "type2": 6}, 422, "type2"),
    ({"rater": "alice", "item": "ITEM", "type1": "1", "type2": 3}, 422, "type1"),
    ({"rater": "alice", "item": "ITEM", "type1": True, "type2": 3}, 422, "type1"),
    ({"rater": "alice", "item": "ITEM", "type1": 1}, 422, "type2"),
    ({"rater": "alice", "item": "ITEM", "type1": 1, "type2": 3, "x": 1}, 422, "unknown field"),
    ({"rater": "../etc/passwd", "item": "ITEM", "type1": 1, "type2": 3}, 422, "rater"),
    ({"rater": "alice", "item": "nope#1", "type1": 1, "type2": 3}, 422, "not in the sample"),
])
def test_malformed_answers_are_refused_and_nothing_is_written(sample, tmp_path, body, status, needle):
    c = _client(sample, tmp_path / "out")
    body = {k: (_items(sample)[0] if v == "ITEM" else v) for k, v in body.items()}
    r = c.post("/api/rate", json=body)
    assert r.status_code == status and needle in r.json()["error"]
    assert not list((tmp_path / "out").iterdir())


@needs_data
def test_guards_on_the_rate_app(sample, tmp_path):
    c = _client(sample, tmp_path / "out")
    item = _items(sample)[0]
    assert c.post("/api/rate", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422
    assert c.post("/api/rate", json={"rater": "a", "item": item, "type1": 1, "type2": 3},
                  headers={"origin": "http://evil.example"}).status_code == 403
    assert c.post("/api/rate", content=b"x" * 20_000, headers={"content-type": "application/json"}).status_code == 413
    assert c.get("/api/rate/next", params={"rater": "a/b"}).status_code == 422
    page = c.get("/rate")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script>" not in page.text and '<script src="/static/rate.js">' in page.text
    assert c.get("/static/rate.js").status_code == 200
    assert c.get("/", follow_redirects=False).headers["location"] == "/rate"
    assert not list((tmp_path / "out").iterdir())


@needs_data
def test_recommender_app_mounts_rate_only_with_a_sample(sample, tmp_path):
    from mustcite.api.app import create_app

    assert TestClient(create_app(loader=lambda: None)).get("/rate").status_code == 404
    c = TestClient(create_app(loader=lambda: None, rating=RatingStore.open(sample, tmp_path / "out")))
    assert c.get("/rate").status_code == 200
    assert c.get("/api/rate/next", params={"rater": "zoe"}).json()["total"] == N


@needs_data
def test_written_files_are_read_by_agreement(sample, tmp_path, capsys):
    items = _items(sample)
    c = _client(sample, tmp_path / "out")
    a1 = [i % 2 for i in range(N)]
    b1 = [i % 2 if i else 1 for i in range(N)]          # disagree on Type I once
    a2 = [1 + i % 5 for i in range(N)]
    b2 = [min(5, x + (i % 3 == 0)) for i, x in enumerate(a2)]
    for i, it in enumerate(items):
        c.post("/api/rate", json={"rater": "alice", "item": it, "type1": a1[i], "type2": a2[i]})
        c.post("/api/rate", json={"rater": "bob", "item": it, "type1": b1[i], "type2": b2[i]})
    files = [tmp_path / "out" / "alice.csv", tmp_path / "out" / "bob.csv"]
    g1 = agreement_from_files(files, label="type1")
    assert (g1["n_items"], g1["n_raters"], g1["n_ratings"]) == (N, 2, 2 * N)
    assert g1["exact_agreement"] == round(sum(x == y for x, y in zip(a1, b1)) / N, 4)
    g2 = agreement_from_files(files, label="type2")
    assert g2["exact_agreement"] == round(sum(x == y for x, y in zip(a2, b2)) / N, 4)
    assert g2["within_one"] == 1.0 and g2["labels"] == sorted(set(a2) | set(b2))
    from mustcite.cli.main import main
    assert main(["agreement", *map(str, files), "--label", "type2"]) == 0
    assert json.loads(capsys.readouterr().out)["n_ratings"] == 2 * N
    # a single rater's file alone is not enough for agreement, and says so with the file
    with pytest.raises(MustciteError, match="1 rater"):
        agreement_from_files(files[0], label="type1")


@needs_data
def test_a_broken_ratings_file_names_file_line_and_field(sample, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    item = _items(sample)[0]
    (out / "alice.csv").write_text(f"item,rater,type1,type2\n{item},alice,1,9\n")
    with pytest.raises(MustciteError) as e:
        RatingStore.open(sample, out)
    assert e.value.path == str(out / "alice.csv") and e.value.line == 2 and e.value.field == "type2"
    (out / "alice.csv").write_text(f"item,rater,type1,type2\n{item},alice,1,3\n{item},alice,0,3\n")
    with pytest.raises(MustciteError, match="twice") as e:
        RatingStore.open(sample, out)
    assert e.value.line == 3
    bad = tmp_path / "bad.csv"
    bad.write_text("item,ref_title\na,b\n")
    with pytest.raises(MustciteError, match="contexts") as e:
        load_sample(bad)
    assert e.value.line == 1


def _wait_item(page, item: str) -> None:
    """Wait until the page shows ``item`` and no request is in flight (a function, not a string
    expression: the page's CSP forbids eval)."""
    page.wait_for_function("(item) => document.body.dataset.item === item && !document.body.dataset.busy",
                           arg=item, timeout=20_000)


@pytest.mark.browser
@needs_data
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (make browser-deps)")
def test_rate_three_by_keyboard_then_reload_resumes(sample, tmp_path):
    from playwright.sync_api import sync_playwright

    from mustcite.api.serve import running

    items = _items(sample)
    out = tmp_path / "out"
    app = create_rate_app(RatingStore.open(sample, out), allowed_hosts=["127.0.0.1"])
    errors: list[str] = []
    with running(app) as base:
        url = base + "/rate"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                        args=["--no-sandbox", "--headless", "--disable-gpu"])
            try:
                ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
                page = ctx.new_page()
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(url)
                page.fill("#rater-name", "alice")
                page.press("#rater-name", "Enter")
                _wait_item(page, items[0])
                assert page.locator("#progress-text").inner_text() == f"0 / {N} rated"
                assert page.locator("#ref-title").inner_text().startswith(
                    next(r["ref_title"] for r in csv.DictReader(open(sample)) if r["item"] == items[0]))
                assert page.locator("#contexts mark.cite").count() >= 1
                assert page.locator("#contexts .section").first.inner_text().startswith("Section: ")
                assert "press 0 or 1" in page.locator("#hint").inner_text()
                answers = [("1", "5"), ("0", "2"), ("0", "3")]
                for i, (t1, t2) in enumerate(answers):
                    page.keyboard.press(t1)
                    assert "Type II" in page.locator("#hint").inner_text()
                    page.keyboard.press(t2)
                    _wait_item(page, items[i + 1])
                assert page.locator("#progress-text").inner_text() == f"3 / {N} rated"
                assert page.locator("#progress-bar").get_attribute("value") == "3"
                # undo (u) goes back to the third instance; answering it again restores three answers
                page.keyboard.press("u")
                _wait_item(page, items[2])
                assert "undid" in page.locator("#status").inner_text()
                page.keyboard.press("0")
                page.keyboard.press("3")
                _wait_item(page, items[3])
                # the tab is closed; a new tab (same browser profile: the name is remembered) resumes
                page.close()
                page = ctx.new_page()
                page.goto(url)
                _wait_item(page, items[3])
                assert page.locator("#rater-label").inner_text() == "alice"
                assert page.locator("#rater-form").is_hidden() and page.locator("#who").is_visible()
                assert page.locator("#progress-text").inner_text() == f"3 / {N} rated"
            finally:
                browser.close()
    rows = list(csv.DictReader(open(out / "alice.csv")))
    assert [(r["item"], r["type1"], r["type2"]) for r in rows] == \
        [(items[i], t1, t2) for i, (t1, t2) in enumerate(answers)]
    assert not errors, errors
