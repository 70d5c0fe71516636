"""TEI path, GROBID client (against a local HTTP stub) and the built-in PDF path, on the real
s2orc-doc2json fixtures (shared/data/pdfs/s2orc-doc2json/pdf: 2 PDFs with GROBID TEI and S2ORC JSON)."""

from __future__ import annotations

import pymupdf
import pytest
from helpers.pdfs import LITGRAPH, PDF_DIR, SPECTER, GrobidStub

from mustcite.errors import MustciteError
from mustcite.extract import failures
from mustcite.extract.grobid import GrobidClient
from mustcite.extract.pdf import extract_pdf, join_lines
from mustcite.extract.records import validate_reference_list
from mustcite.extract.tei import parse_tei


def _tei(stem: str):
    return parse_tei((PDF_DIR / f"{stem}.tei.xml").read_bytes(), source_path=stem)


# ---- TEI -----------------------------------------------------------------------------------

@pytest.mark.data
def test_tei_reference_counts_match_listbibl():
    # PROVENANCE.md: listBibl holds 27 (N18-3011) and 57 (SPECTER) biblStructs, every one dated
    lit, spec = _tei(LITGRAPH), _tei(SPECTER)
    assert (len(lit.references), len(spec.references)) == (27, 57)
    assert lit.status == spec.status == "ok"
    assert lit.title == "Construction of the Literature Graph in Semantic Scholar"
    assert spec.title.startswith("SPECTER: Document-level Representation Learning")
    assert lit.abstract.startswith("We describe a deployed scalable system")
    validate_reference_list(lit.to_reference_list())
    validate_reference_list(spec.to_reference_list())


@pytest.mark.data
def test_tei_mentions_are_the_resolved_callouts():
    # <ref type="bibr" target="#b.."> callouts: 20 in N18-3011, 62 in SPECTER (counted with grep);
    # untargeted callouts (8 and 17) cannot be attributed and are counted separately
    lit, spec = _tei(LITGRAPH), _tei(SPECTER)
    assert lit.stats["mentions"] == 20 and lit.stats["callouts_unresolved"] == 8
    assert spec.stats["mentions"] == 62 and spec.stats["callouts_unresolved"] == 17


@pytest.mark.data
def test_tei_entry_fields_sections_and_contexts():
    lit = _tei(LITGRAPH)
    first = lit.references[0]
    assert first.title.startswith("The ai2 system at semeval-2017 task 10")
    assert first.year == 2017 and first.authors[:2] == ["Waleed Ammar", "Matthew E Peters"]
    aug = lit.references[1]
    assert aug.cite == "Augenstein et al., 2017" and aug.mentions == 1
    assert aug.contexts[0].section == "4.2 Entity Extraction Models"
    assert "SemEval-2017 Task 10" in aug.contexts[0].context
    wu = next(r for r in lit.references if r.title.startswith("CiteSeerX"))
    assert wu.contexts[0].section == "1 Introduction"
    assert "digital libraries (e.g., Wu et al., 2014)" in wu.contexts[0].context
    # a window is at most three sentences and never repeats within one reference
    for r in lit.references:
        texts = [c.context for c in r.contexts]
        assert len(texts) == len(set(texts))


@pytest.mark.data
def test_tei_drops_entries_without_year_and_reports_bad_xml():
    xml = (PDF_DIR / f"{LITGRAPH}.tei.xml").read_text(encoding="utf-8")
    undated = xml.replace('<date type="published" when="2017" />', "<date/>", 1)
    # the first dated 2017 entry loses its date but its raw string still holds "2017"
    assert len(parse_tei(undated).references) == 27
    no_year = undated.replace("Power. 2017. The ai2 system", "Power. The ai2 system", 1)
    assert len(parse_tei(no_year).references) == 26
    # a draft keeps it (a reference it has must count as cited), with a note
    kept = parse_tei(no_year, keep_undated=True)
    assert len(kept.references) == 27 and [r.year for r in kept.references].count(None) == 1
    assert any("1 reference(s) without a year" in m for m in kept.messages)
    truncated = parse_tei(xml[:5000], source_path="cut.tei.xml")
    assert truncated.status == "failed" and truncated.messages[0].startswith("malformed TEI XML")
    other = parse_tei("<html><body/></html>")
    assert other.status == "failed" and "not a TEI document" in other.messages[0]


_EMPTY_TEI = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title>'
              "</titleStmt></fileDesc></teiHeader><text><body><p>No citation here.</p></body>"
              "<back><listBibl/></back></text></TEI>")


def test_tei_status_comes_from_the_failure_report(monkeypatch):
    def outcome(xml):
        p = parse_tei(xml, source_path="x.tei.xml")
        return p.status, p.failure_modes, p.messages

    assert outcome("<TEI><teiHeader>")[:2] == ("failed", ["malformed_tei"])
    assert outcome("<html/>") == ("failed", ["malformed_tei"], ["not a TEI document (root element <html>)"])
    assert outcome(_EMPTY_TEI) == ("flagged", ["empty_reference_list"], ["TEI has no bibliography entries with a year"])
    monkeypatch.setattr(failures, "FATAL", failures.FATAL - {"malformed_tei"} | {"empty_reference_list"})
    assert outcome("<html/>")[0] == "flagged" and outcome(_EMPTY_TEI)[0] == "failed"


# ---- GROBID client against a stub server ------------------------------------------------------

# the GROBID stub: helpers.pdfs.GrobidStub, served by the `grobid_stub` fixture of conftest.py

@pytest.mark.data
def test_grobid_client_posts_pdf_and_retries_503(grobid_stub):
    GrobidStub.script = [503, 503, 200]
    client = GrobidClient(grobid_stub, retries=3, backoff=0.0, timeout=10)
    tei = client.process_pdf(PDF_DIR / f"{LITGRAPH}.pdf")
    assert len(GrobidStub.seen) == 3 and all(p == "/api/processFulltextDocument" for p, _ in GrobidStub.seen)
    assert GrobidStub.seen[0][1] > (PDF_DIR / f"{LITGRAPH}.pdf").stat().st_size  # multipart with the PDF
    assert len(parse_tei(tei).references) == 27


def test_grobid_client_errors_are_clear(grobid_stub):
    GrobidStub.script = [503] * 5
    with pytest.raises(MustciteError, match="failed after 2 attempts: server busy"):
        GrobidClient(grobid_stub, retries=1, backoff=0.0).process_pdf(b"%PDF-1.4", name="x.pdf")
    GrobidStub.script = [500]
    with pytest.raises(MustciteError, match="answered HTTP 500"):
        GrobidClient(grobid_stub, retries=3, backoff=0.0).process_pdf(b"%PDF-1.4", name="x.pdf")
    with pytest.raises(MustciteError, match="cannot connect") as exc:
        GrobidClient("http://127.0.0.1:9", retries=0).process_pdf(b"%PDF-1.4", name="x.pdf")
    assert "--grobid-url" in str(exc.value)


# ---- built-in PDF path -----------------------------------------------------------------------

@pytest.mark.data
def test_pdf_author_year_hanging_entries():
    p = extract_pdf(PDF_DIR / f"{LITGRAPH}.pdf")
    assert p.status == "ok" and p.method == "pdf"
    assert p.title == "Construction of the Literature Graph in Semantic Scholar"
    assert len(p.references) == 27  # the paper's list (S2ORC gold: 27 bib_entries)
    titles = [r.title for r in p.references]
    assert "Learning a neural semantic parser from user feedback" in titles
    assert "Bhagavat- ula" not in p.references[0].raw and "Bhagavatula" in p.references[0].raw  # hyphenation
    wu = next(r for r in p.references if r.cite == "Wu et al., 2014")
    assert wu.title.startswith("CiteSeerX") and wu.mentions == 2
    assert p.stats["citation_source"] == "text"
    sections = {c.section for r in p.references for c in r.contexts}
    assert "1 Introduction" in sections and "4.2 Entity Extraction Models" in sections
    # running footers (page numbers) never reach the text
    assert not any(c.context.strip().endswith(" 84") for r in p.references for c in r.contexts)
    validate_reference_list(p.to_reference_list())


@pytest.mark.data
def test_pdf_uses_internal_links_to_the_bibliography():
    p = extract_pdf(PDF_DIR / f"{SPECTER}.pdf")
    assert p.status == "ok" and p.stats["citation_source"] == "links"
    assert len(p.references) == 57  # GROBID finds 57 entries too (S2ORC JSON keeps 54)
    by_cite = {r.cite: r for r in p.references}
    # SciBERT and BERT are the most cited works of SPECTER
    assert by_cite["Beltagy et al., 2019"].mentions >= 8
    assert by_cite["Devlin et al., 2019"].mentions >= 8
    assert by_cite["Kingma and Ba, 2014"].mentions == 1
    assert "Adam optimizer (Kingma and Ba, 2014)" in by_cite["Kingma and Ba, 2014"].contexts[0].context
    # the appendix after the bibliography is body text, not reference entries
    assert not any(r.raw.startswith(("1. Random", "Appendix")) for r in p.references)


def test_pdf_without_text_layer_fails(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 200, 200), False)
    pix.clear_with(180)
    page.insert_image(page.rect, pixmap=pix)
    path = tmp_path / "scan.pdf"
    doc.save(path)
    p = extract_pdf(path)
    assert p.status == "failed" and p.messages == ["no text layer (scanned PDF?)"]
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(bytes(range(256)) * 40)
    g = extract_pdf(garbage)
    assert g.status == "failed" and g.messages[0].startswith("not a readable PDF")


def _text_pdf(path, references: list[str] | None):
    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    for i in range(30):
        page.insert_text((72, y), f"This is sentence number {i} of a generated test paper body.", fontsize=10)
        y += 14
    if references is not None:
        page.insert_text((72, y + 10), "References", fontsize=12)
        for i, entry in enumerate(references):
            page.insert_text((72, y + 30 + 14 * i), entry, fontsize=10)
    doc.save(path)
    return path


def test_pdf_status_comes_from_the_failure_report(tmp_path, monkeypatch):
    def outcome(path):
        p = extract_pdf(path)
        return p.status, p.failure_modes, p.messages

    norefs = _text_pdf(tmp_path / "norefs.pdf", None)
    uncited = _text_pdf(tmp_path / "uncited.pdf", ["[1] A. Author. A title of a paper. In Venue, 2019.",
                                                   "[2] B. Author. Another title here. Journal, 2020."])
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(bytes(range(256)) * 40)
    assert outcome(norefs) == ("flagged", ["empty_reference_list"], ["no References section found"])
    assert outcome(uncited) == ("flagged", ["no_citations"], ["no in-text citation matched a reference"])
    assert outcome(garbage)[:2] == ("failed", ["unreadable_pdf"])
    monkeypatch.setattr(failures, "FATAL", failures.FATAL - {"unreadable_pdf"} | {"empty_reference_list"})
    assert [outcome(p)[0] for p in (norefs, uncited, garbage)] == ["failed", "flagged", "flagged"]


def test_join_lines_hyphenation():
    assert join_lines(["Chandra Bhagavat-", "ula, and Russell"]) == "Chandra Bhagavatula, and Russell"
    assert join_lines(["Marco Valenzuela-", "Escarcega"]) == "Marco Valenzuela-Escarcega"
    assert join_lines(["a range 1 -", "2"]) == "a range 1 - 2"
