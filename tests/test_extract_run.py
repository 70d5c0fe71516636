"""The extraction runner and ``mustcite extract``: real NeurIPS Markdown plus generated bad files."""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path

import pymupdf
import pytest
from helpers import DATA
from helpers.pdfs import LITGRAPH, PDF_DIR, GrobidStub

from mustcite.errors import MustciteError
from mustcite.extract import failures, runner
from mustcite.extract.records import validate_reference_file
from mustcite.extract.runner import discover, extract_paths, stem_of

FULLTEXT = DATA / "neurips" / "fulltext_2024"
REAL = sorted(FULLTEXT.glob("*.md.gz"))[:20]


def _text_pdf(path: Path, with_refs: bool) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    for i in range(30):
        page.insert_text((72, y), f"This is sentence number {i} of a generated test paper body.", fontsize=10)
        y += 14
    if with_refs:
        page.insert_text((72, y + 10), "References", fontsize=12)
    doc.save(path)
    return path


@pytest.fixture()
def bad_dir(data_dir, tmp_path: Path) -> Path:
    d = tmp_path / "bad"
    d.mkdir()
    (d / "empty.md").write_bytes(b"")
    rnd = random.Random(7)
    (d / "garbage.pdf").write_bytes(bytes(rnd.randrange(256) for _ in range(5000)))
    (d / "garbage.md.gz").write_bytes(bytes(rnd.randrange(256) for _ in range(5000)))
    (d / "junk.pdf").write_bytes(b"%PDF-1.7\n" + bytes(rnd.randrange(256) for _ in range(3000)))
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 100, 100), False)
    pix.clear_with(200)
    page.insert_image(page.rect, pixmap=pix)
    doc.save(d / "scan.pdf")
    tei = (PDF_DIR / f"{LITGRAPH}.tei.xml").read_bytes()
    (d / "truncated.tei.xml").write_bytes(tei[: len(tei) // 2])
    text = gzip.open(REAL[0], "rt", encoding="utf-8").read()
    (d / "norefs.md").write_text(text[: text.find("## References")], encoding="utf-8")
    (d / "latin1.md").write_bytes(text[:3000].encode("utf-8") + "Café naïve".encode("latin-1"))
    with open(d / "huge.md", "wb") as fh:  # sparse: 200 MB on paper, nothing on disk
        fh.truncate(200 * 2**20)
    return d


def test_stems_and_discovery(tmp_path):
    assert [stem_of(Path(n)) for n in ("abc.md", "abc.md.gz", "abc.mmd.gz", "abc.pdf", "abc.tei.xml")] == ["abc"] * 5
    for n in ("p.md.gz", "p.pdf", "q.tei.xml", "notes.txt"):
        (tmp_path / n).write_bytes(b"x")
    found = discover([tmp_path])
    # p.pdf is p.md.gz's fallback, not a second paper; notes.txt is not an input type
    assert [f.name for f in found] == ["p.md.gz", "q.tei.xml"]


def test_runner_failed_records_come_from_the_failure_report(tmp_path, monkeypatch):
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "draft.docx").write_bytes(b"PK\x03\x04")
    (tmp_path / "nul.md").write_bytes(b"# T\n\nText\x00 here.\n")
    opts = runner.ExtractOptions(out_dir=str(tmp_path / "out"))

    def outcome(name):
        p = runner.extract_paper(tmp_path / name, opts)
        return p.status, p.failure_modes, p.messages

    assert outcome("empty.md") == ("failed", ["empty"], ["empty file"])
    assert outcome("draft.docx")[:2] == ("failed", ["unsupported"])
    assert outcome("nul.md") == ("failed", ["binary"], ["binary content (NUL bytes), not Markdown text"])
    lost = runner._lost((str(tmp_path / "gone.md"), opts, {}), "the worker died")
    assert (lost["status"], lost["failure_modes"], lost["messages"]) == ("failed", ["worker_lost"], ["the worker died"])
    # a reference list that fails its schema: the paper's own modes stay, "schema" fails it
    paper = tmp_path / "paper.md"
    paper.write_text("# T\n\n###### Abstract\n\nWe do things.\n\n## 1 Introduction\n\n"
                     "Smith built it [13]. Jones refined it [5]. We extend both.\n\n## References\n\n"
                     "* [13] A. Smith. The original method. In ICML, 2019.\n"
                     "* [5] B. Jones. A refinement. In NeurIPS, 2020.\n", encoding="utf-8")

    def invalid(refs, path=None):
        raise MustciteError("a reference has no title", field="title")

    monkeypatch.setattr(runner, "validate_reference_list", invalid)
    p, row = runner.extract_one(paper, opts)
    assert (row["status"], row["failure_modes"]) == ("failed", ["reordering", "schema"])
    assert row["messages"][-1] == "a reference has no title (field 'title')" and row["references"] == 0
    assert not (tmp_path / "out" / "paper.json").exists()
    # FATAL alone decides the status of these records
    monkeypatch.setattr(failures, "FATAL", failures.FATAL - {"empty", "worker_lost"})
    assert outcome("empty.md") == ("flagged", ["empty"], ["empty file"])
    assert runner._lost((str(tmp_path / "gone.md"), opts, {}), "the worker died")["status"] == "flagged"


@pytest.mark.data
def test_runner_real_markdown_and_bad_files(tmp_path, bad_dir):
    out = tmp_path / "out"
    s = extract_paths([*REAL, bad_dir], out, workers=2, progress=False)
    rows = {r["paper"]: r for r in s.rows}
    assert s.papers == 20 + 8
    expect = {"empty": "empty", "garbage": "unreadable", "junk": "unreadable_pdf", "scan": "no_text_layer",
              "truncated": "malformed_tei", "norefs": "no_references", "latin1": "unreadable",
              "huge": "too_large"}
    for stem, mode in expect.items():
        assert rows[stem]["status"] == "failed", stem
        assert mode in rows[stem]["failure_modes"], (stem, rows[stem])
        assert rows[stem]["messages"], stem
        assert not (out / f"{stem}.json").exists()
    assert rows["scan"]["messages"] == ["no text layer (scanned PDF?)"]
    assert rows["huge"]["messages"][0].startswith("too large: 200.0 MB")
    assert "not UTF-8" in rows["latin1"]["messages"][0]
    # garbage.md.gz and garbage.pdf share a stem: the Markdown is the paper, the PDF its fallback
    assert rows["garbage"]["path"] == "markdown>pdf"
    assert any(m.startswith("[pdf: failed] not a readable PDF") for m in rows["garbage"]["messages"])
    real = [rows[stem_of(p)] for p in REAL]
    assert all(r["status"] in ("ok", "flagged") for r in real)
    assert sum(r["status"] == "ok" for r in real) >= 15
    for r in real:
        refs = validate_reference_file(out / f"{r['paper']}.json")
        assert len(refs) == r["references"] > 0
        assert sum(x["mentions"] for x in refs) == r["mentions"]
        meta = json.loads((out / f"{r['paper']}.meta.json").read_text())
        assert meta["year"] == 2024 and meta["year_source"] == "manifest"  # from manifest.jsonl
        assert meta["title"] and meta["abstract"] and meta["method"] == "markdown"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["papers"] == 28 and summary["totals"]["failed"] == 8
    assert summary["totals"]["references"] == sum(r["references"] for r in real)
    papers = [json.loads(line) for line in (out / "papers.jsonl").read_text().split("\n") if line]
    assert len(papers) == 28 and {p["status"] for p in papers} <= {"ok", "flagged", "failed"}
    manifest = {json.loads(line)["id"]: json.loads(line) for line in
                (FULLTEXT / "manifest.jsonl").read_text(encoding="utf-8").split("\n") if line}
    assert papers[0]["title"] == manifest[stem_of(REAL[0])]["title"]


@pytest.mark.data
def test_runner_is_resumable(tmp_path):
    out = tmp_path / "out"
    files = REAL[:4]
    first = extract_paths(files, out, workers=1, progress=False)
    assert first.skipped == 0
    again = extract_paths(files, out, workers=1, progress=False)
    assert again.skipped == 4 and again.references == first.references and again.ok == first.ok
    local = tmp_path / "in"
    local.mkdir()
    copy = local / REAL[0].name
    copy.write_bytes(REAL[0].read_bytes())
    extract_paths([copy], out, workers=1, progress=False)
    past = copy.stat().st_mtime - 10
    os.utime(out / f"{stem_of(copy)}.meta.json", (past, past))  # the input changed after its output
    assert extract_paths([copy], out, workers=1, progress=False).skipped == 0
    assert extract_paths([copy], out, workers=1, progress=False).skipped == 1
    assert extract_paths([copy], out, workers=1, force=True, progress=False).skipped == 0
    # an output of an older extractor is read again
    meta = out / f"{stem_of(copy)}.meta.json"
    m = json.loads(meta.read_text())
    meta.write_text(json.dumps(m | {"extractor_version": m["extractor_version"] - 1}))
    assert extract_paths([copy], out, workers=1, progress=False).skipped == 0
    assert json.loads(meta.read_text())["extractor_version"] == m["extractor_version"]


@pytest.mark.data
def test_flagged_pdf_goes_to_grobid(tmp_path, grobid_stub):
    pdf = _text_pdf(tmp_path / "paper.pdf", with_refs=False)
    alone = extract_paths([pdf], tmp_path / "a", workers=1, progress=False).rows[0]
    assert alone["status"] == "flagged" and alone["path"] == "pdf" and "empty_reference_list" in alone["failure_modes"]
    routed = extract_paths([pdf], tmp_path / "b", workers=1, grobid_url=grobid_stub, progress=False).rows[0]
    assert routed["path"] == "pdf>grobid" and routed["method"] == "grobid"
    assert routed["status"] == "ok" and routed["references"] == 27  # the stub's TEI
    assert len(GrobidStub.seen) == 1
    # a scanned PDF never goes to GROBID (it needs a text layer too)
    doc = pymupdf.open()
    doc.new_page()
    doc.save(tmp_path / "blank.pdf")
    blank = extract_paths([tmp_path / "blank.pdf"], tmp_path / "c", workers=1, grobid_url=grobid_stub,
                          progress=False).rows[0]
    assert blank["path"] == "pdf" and blank["status"] == "failed" and len(GrobidStub.seen) == 1


@pytest.mark.data
def test_cli_extract_exit_codes(tmp_path, capsys):
    from mustcite.cli.main import main

    out = tmp_path / "out"
    assert main(["extract", str(REAL[0]), str(PDF_DIR / f"{LITGRAPH}.pdf"), "--out", str(out),
                 "--workers", "1", "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)
    assert totals["papers"] == 2 and totals["by_method"] == {"markdown": 1, "pdf": 1}
    assert main(["extract", str(tmp_path / "missing"), "--out", str(out)]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["extract", str(empty), "--out", str(out)]) == 1
    (empty / "x.md").write_bytes(b"")
    assert main(["extract", str(empty), "--out", str(tmp_path / "o2")]) == 1  # every paper failed
    assert main(["extract", str(REAL[0]), "--out", str(out), "--grobid-url", "localhost"]) == 2
    assert main(["extract", str(REAL[0])]) == 2  # --out is required
