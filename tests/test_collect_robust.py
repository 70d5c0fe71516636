"""Collector robustness (HTTP errors, 429/Retry-After, robots.txt, cache, resume, bad pages) and the
parsers of the sites with no recorded page (NeurIPS, OpenReview, ECVA, AAAI, IJCAI, PMLR/JMLR
rendered pages) on SYNTHETIC snippets written here from the live sites' layout; plus the import of
collected records into ``corpus build``. Network: none (``httpx.MockTransport``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest

from mustcite.collect import CvfCollector, EcvaCollector
from mustcite.collect.aaai import AaaiCollector
from mustcite.collect.acl import parse_xml
from mustcite.collect.base import ParseError
from mustcite.collect.http import Fetcher, FetchError, OfflineSource
from mustcite.collect.ijcai import IjcaiCollector
from mustcite.collect.jmlr import parse_volume_page as jmlr_page
from mustcite.collect.neurips import NeuripsCollector
from mustcite.collect.openreview import OpenReviewCollector
from mustcite.collect.pmlr import parse_volume_archive, parse_volume_page
from mustcite.collect.tracks import TrackClassifier, TrackJudge, load_overrides
from mustcite.collect.venue_year import collect_venue_year
from mustcite.corpus import build_corpus, load_papers
from mustcite.corpus.importers import import_collected
from mustcite.errors import MustciteError


class Site:
    """A fake web site: url -> (status, body, headers) or a list of them served in turn."""

    def __init__(self, pages: dict):
        self.pages = pages
        self.seen: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.seen.append(url)
        v = self.pages.get(url)
        if v is None:
            return httpx.Response(404, text="not found")
        if isinstance(v, list):
            v = v.pop(0) if len(v) > 1 else v[0]
        status, body, headers = v if isinstance(v, tuple) else (200, v, {})
        return httpx.Response(status, content=body.encode() if isinstance(body, str) else body, headers=headers)


def fetcher(site: Site, tmp_path: Path, **kw) -> tuple[Fetcher, list[float]]:
    waits: list[float] = []
    f = Fetcher(transport=httpx.MockTransport(site), cache_dir=tmp_path / "cache", sleep=waits.append,
                delay=0.0, **kw)
    return f, waits


# ---------------------------------------------------------------- HTTP layer


def test_429_retry_after_then_ok(tmp_path):
    site = Site({"https://x.org/robots.txt": (404, "", {}),
                 "https://x.org/a": [(429, "slow down", {"Retry-After": "7"}), (200, "ok", {})]})
    f, waits = fetcher(site, tmp_path)
    assert f.get("https://x.org/a") == b"ok"
    assert 7.0 in waits and site.seen.count("https://x.org/a") == 2


def test_5xx_retried_with_backoff_then_error(tmp_path):
    site = Site({"https://x.org/robots.txt": (404, "", {}), "https://x.org/a": (503, "down", {})})
    f, waits = fetcher(site, tmp_path, max_retries=3, backoff=1.0)
    with pytest.raises(FetchError) as exc:
        f.get("https://x.org/a")
    assert exc.value.status == 503 and "4 attempts" in exc.value.message
    assert waits == [1.0, 2.0, 4.0]                            # exponential backoff


def test_404_not_retried_and_openreview_long_wait(tmp_path):
    site = Site({"https://x.org/robots.txt": (404, "", {}), "https://x.org/gone": (404, "", {}),
                 "https://api2.openreview.net/robots.txt": (404, "", {}),
                 "https://api2.openreview.net/notes": [(429, "", {}), (200, "{}", {})]})
    f, waits = fetcher(site, tmp_path)
    with pytest.raises(FetchError) as exc:
        f.get("https://x.org/gone")
    assert exc.value.status == 404 and site.seen.count("https://x.org/gone") == 1
    f.get("https://api2.openreview.net/notes")
    assert max(waits) >= 60                                    # 429 without Retry-After: a long wait


def test_robots_disallow_and_cache(tmp_path):
    site = Site({"https://x.org/robots.txt": "User-agent: *\nDisallow: /private/\n",
                 "https://x.org/private/p": "secret", "https://x.org/pub": "hello"})
    f, _ = fetcher(site, tmp_path)
    with pytest.raises(FetchError) as exc:
        f.get("https://x.org/private/p")
    assert exc.value.kind == "robots" and "https://x.org/private/p" not in site.seen
    assert f.get("https://x.org/pub") == b"hello"
    f2, _ = fetcher(site, tmp_path)                             # same cache folder: no request
    n = len(site.seen)
    assert f2.get("https://x.org/pub") == b"hello" and len(site.seen) == n and f2.cache_hits == 1


def test_offline_mirror_layout_and_urls_json(tmp_path):
    (tmp_path / "www.ijcai.org" / "proceedings" / "2023").mkdir(parents=True)
    (tmp_path / "www.ijcai.org" / "proceedings" / "2023" / "index.html").write_text("<html>ij</html>")
    q = tmp_path / "api2.openreview.net" / "notes?content.venueid=ICLR.cc%2F2024%2FConference&limit=1000&offset=0.gz"
    q.parent.mkdir(parents=True)
    q.write_bytes(gzip.compress(b'{"notes": []}'))
    (tmp_path / "elsewhere.html").write_text("mapped")
    (tmp_path / "urls.json").write_text(json.dumps({"https://example.org/page?x=1": "elsewhere.html"}))
    src = OfflineSource(tmp_path)
    assert src.read("https://www.ijcai.org/proceedings/2023/") == b"<html>ij</html>"
    assert src.read("https://api2.openreview.net/notes?content.venueid=ICLR.cc/2024/Conference&limit=1000&offset=0") \
        == b'{"notes": []}'
    assert src.read("https://example.org/page?x=1") == b"mapped"
    with pytest.raises(FetchError) as exc:
        src.read("https://example.org/missing")
    assert exc.value.kind == "offline_missing"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "urls.json").write_text("[1, 2")
    with pytest.raises(MustciteError):
        OfflineSource(tmp_path / "bad")


# ---------------------------------------------------------------- a synthetic CVF site: errors and resume

CVF_INDEX = """<html><body><dl>
<dt class="ptitle"><br><a href="/content/CVPR2030/html/A_paper.html">Paper A</a></dt>
<dd><form class="authsearch"><input type="hidden" name="query" value="Ann One"></form>
<form class="authsearch"><input type="hidden" name="query" value=" Bob Two"></form></dd>
<dd>[<a href="/content/CVPR2030/papers/A_paper.pdf">pdf</a>]</dd>
<dt class="ptitle"><br><a href="/content/CVPR2030/html/B_paper.html">Paper B</a></dt>
<dd><form class="authsearch"><input type="hidden" name="query" value="Cy Three"></form></dd>
<dd>[<a href="/content/CVPR2030/papers/B_paper.pdf">pdf</a>]</dd>
<dt class="ptitle"><br><a href="/content/CVPR2030/html/C_paper.html">Paper C</a></dt>
<dd><form class="authsearch"><input type="hidden" name="query" value="Di Four"></form></dd>
<dd>[<a href="/content/CVPR2030/papers/C_paper.pdf">pdf</a>]</dd>
<dt class="ptitle"><br><a href="/content/CVPR2030/html/A_paper.html">Paper A</a></dt>
<dd><form class="authsearch"><input type="hidden" name="query" value="Ann One"></form></dd>
<dd>[<a href="/content/CVPR2030/papers/A_paper.pdf">pdf</a>]</dd>
</dl></body></html>"""
B = "https://openaccess.thecvf.com"


def _paper(abstract: str) -> str:
    return (f'<html><head><meta name="citation_title" content="T"></head><body><div id="abstract">{abstract}</div>'
            '</body></html>')


def test_cvf_errors_duplicates_truncation_and_resume(tmp_path):
    site = Site({f"{B}/robots.txt": (404, "", {}), f"{B}/CVPR2030?day=all": CVF_INDEX,
                 f"{B}/content/CVPR2030/html/A_paper.html": _paper(" We study A. "),
                 f"{B}/content/CVPR2030/html/B_paper.html": (500, "boom", {}),
                 # truncated page: cut before the abstract
                 f"{B}/content/CVPR2030/html/C_paper.html": _paper("x")[:60]})
    f, _ = fetcher(site, tmp_path, max_retries=1, backoff=0.0)
    rep = collect_venue_year(CvfCollector(), "CVPR", 2030, f, tmp_path / "out")
    assert rep.status == "partial" and rep.collected == 3 and rep.duplicates == 1
    assert rep.with_abstract == 1 and rep.without_abstract == 2
    kinds = sorted((e["key"].split(":")[-1], e["kind"]) for e in rep.errors)
    assert kinds == [("A_paper", "duplicate"), ("B_paper", "http"), ("C_paper", "parse")]
    recs = [json.loads(x) for x in (tmp_path / "out" / "records" / "CVPR_2030.jsonl").read_text().splitlines()]
    a = next(r for r in recs if r["title"] == "Paper A")
    assert a["authors"] == ["Ann One", "Bob Two"] and a["abstract"] == "We study A."
    assert a["pdf"] == f"{B}/content/CVPR2030/papers/A_paper.pdf"
    assert all(r["abstract"] == "" for r in recs if r["title"] != "Paper A")
    # the site is fixed; a rerun fetches only what is missing (index from the cache, A from the state)
    site.pages[f"{B}/content/CVPR2030/html/B_paper.html"] = _paper("B text")
    site.pages[f"{B}/content/CVPR2030/html/C_paper.html"] = _paper("C text")
    f2, _ = fetcher(site, tmp_path)
    rep2 = collect_venue_year(CvfCollector(), "CVPR", 2030, f2, tmp_path / "out")
    assert sorted(f2.requests) == [f"{B}/content/CVPR2030/html/B_paper.html", f"{B}/content/CVPR2030/html/C_paper.html"]
    assert rep2.reused_from_state == 1 and rep2.with_abstract == 3 and rep2.status == "ok"
    # a third run needs nothing from the network
    f3, _ = fetcher(site, tmp_path)
    rep3 = collect_venue_year(CvfCollector(), "CVPR", 2030, f3, tmp_path / "out")
    assert f3.requests == [] and rep3.reused_from_state == 3


def test_changed_layout_is_a_failed_report_not_a_crash(tmp_path):
    site = Site({f"{B}/robots.txt": (404, "", {}),
                 f"{B}/CVPR2031?day=all": "<html><body><div class='paper-card'>New layout</div></body></html>"})
    f, _ = fetcher(site, tmp_path)
    rep = collect_venue_year(CvfCollector(), "CVPR", 2031, f, tmp_path / "out")
    assert rep.status == "failed" and rep.errors[0]["kind"] == "parse" and "dt.ptitle" in rep.errors[0]["message"]
    assert rep.collected == 0


def test_pdf_download_and_not_a_pdf(tmp_path):
    site = Site({f"{B}/robots.txt": (404, "", {}), f"{B}/CVPR2030?day=all": CVF_INDEX,
                 **{f"{B}/content/CVPR2030/html/{k}_paper.html": _paper(k) for k in "ABC"},
                 f"{B}/content/CVPR2030/papers/A_paper.pdf": b"%PDF-1.4 ...",
                 f"{B}/content/CVPR2030/papers/B_paper.pdf": "<html>login</html>"})
    f, _ = fetcher(site, tmp_path)
    rep = collect_venue_year(CvfCollector(), "CVPR", 2030, f, tmp_path / "out", pdfs=True, pdf_dir=tmp_path / "pdfs")
    assert rep.pdfs_downloaded == 1
    assert (tmp_path / "pdfs" / "CVPR" / "2030" / "cvf_A_paper.pdf").read_bytes().startswith(b"%PDF")
    assert sorted(e["kind"] for e in rep.errors if e["kind"] == "pdf") == ["pdf", "pdf"]   # B not a PDF, C 404


# ---------------------------------------------------------------- truncated / malformed volume sources


def test_truncated_acl_xml_and_bad_pmlr_post():
    with pytest.raises(ParseError, match="truncated"):
        parse_xml(b"<collection id='2024.acl'><volume id='long'><paper id='1'><title>A", "ACL", 2024)
    members = {"v9/_config.yml": b"volume: '9'\n",
               "v9/_posts/a.md": b"---\ntitle: Good\nauthor:\n- given: A\n  family: B\nabstract: x\n---\n",
               "v9/_posts/b.md": b"---\ntitle: 'unterminated\n"}
    idx = parse_volume_archive(members, "AISTATS", 2010, 9)
    assert [it.record.title for it in idx.items] == ["Good"]
    assert idx.errors[0].kind == "parse" and "b.md" in idx.errors[0].key


# ---------------------------------------------------------------- synthetic pages of the other sites

NEURIPS_NEW = """<html><body><ul class="paper-list">
<li class="conference"><div class="paper-content"><a title="paper title"
href="/paper_files/paper/2023/hash/aaa-Abstract-Conference.html">Deep Thing</a>
<span class="paper-authors">Ann Lee, Bo Chen</span></div></li>
<li class="datasets_and_benchmarks"><div class="paper-content"><a title="paper title"
href="/paper_files/paper/2023/hash/bbb-Abstract-Datasets_and_Benchmarks.html">A Benchmark</a>
<span class="paper-authors">Cy D</span></div></li></ul></body></html>"""
NEURIPS_PAPER = """<html><head><meta name="citation_title" content="Deep Thing">
<meta name="citation_author" content="Lee, Ann">
<meta name="citation_pdf_url" content="https://papers.nips.cc/paper_files/paper/2023/file/aaa-Paper-Conference.pdf"></head>
<body><h4>Abstract</h4><p><p>We go deep.</p></p></body></html>"""
NEURIPS_OLD = """<html><body><ul><li><a href="/paper/7000-old-paper">Old Paper</a>
<a href="/author/ann-1" class="author">Ann Old</a> <a href="/author/bo-2" class="author">Bo Old</a></li></ul>
</body></html>"""


def test_synthetic_neurips_new_and_old_layouts(tmp_path):
    N = "https://papers.nips.cc"
    site = Site({f"{N}/robots.txt": (404, "", {}), f"{N}/paper_files/paper/2023": NEURIPS_NEW,
                 f"{N}/paper_files/paper/2023/hash/aaa-Abstract-Conference.html": NEURIPS_PAPER,
                 f"{N}/paper_files/paper/2010": NEURIPS_OLD})
    f, _ = fetcher(site, tmp_path)
    rep = collect_venue_year(NeuripsCollector(), "NeurIPS", 2023, f, tmp_path / "o")
    assert rep.collected == 2 and rep.main_track == 1 and rep.with_abstract == 1
    recs = [json.loads(x) for x in (tmp_path / "o" / "records" / "NeurIPS_2023.jsonl").read_text().splitlines()]
    deep = next(r for r in recs if r["title"] == "Deep Thing")
    assert deep["authors"] == ["Ann Lee", "Bo Chen"] and deep["abstract"] == "We go deep."
    assert deep["pdf"].endswith("aaa-Paper-Conference.pdf")
    assert next(r for r in recs if r["title"] == "A Benchmark")["main_track"] is False
    # the D&B page is never fetched (not main track)
    assert not any("bbb-Abstract" in u for u in site.seen)
    old = NeuripsCollector().index("NeurIPS", 2010, f)
    assert [(it.record.title, it.record.authors) for it in old.items] == [("Old Paper", ["Ann Old", "Bo Old"])]


def test_synthetic_openreview_v2_and_v1():
    def note(i, dec=None, v2=True):
        w = (lambda x: {"value": x}) if v2 else (lambda x: x)
        n = {"id": f"id{i}xxxxxx", "forum": f"id{i}xxxxxx",
             "content": {"title": w(f"Paper {i}"), "authors": w(["A B", "C D"]), "abstract": w(f"Abs {i}."),
                         "pdf": w(f"/pdf/{i}.pdf"), "venue": w("ICLR 2024 poster")}}
        if dec:
            n["details"] = {"directReplies": [{"invitation": "ICLR.cc/2020/Conference/Paper1/-/Decision",
                                               "content": {"decision": dec}}]}
        return n

    class F:
        def __init__(self, pages):
            self.pages = pages

        def get(self, url):
            return json.dumps({"notes": self.pages[url.split("/notes")[0]]}).encode()

    idx = OpenReviewCollector().index("ICLR", 2024, F({"https://api2.openreview.net": [note(1), note(2)]}))
    r = idx.items[0].record
    assert (r.title, r.authors, r.pdf, r.openreview_id, r.track) == (
        "Paper 1", ["A B", "C D"], "https://openreview.net/pdf/1.pdf", "id1xxxxxx", "ICLR 2024 poster")
    idx = OpenReviewCollector().index("ICLR", 2020, F({"https://api.openreview.net": [
        note(1, "Accept (Talk)", False), note(2, "Reject", False), note(3, "Accept (Poster)", False)]}))
    assert [it.record.title for it in idx.items] == ["Paper 1", "Paper 3"]
    with pytest.raises(ParseError):
        OpenReviewCollector().index("ICLR", 2024, type("T", (), {"get": lambda self, u: b'{"notes": [tru'})())


ECVA = """<html><body><div id="content"><dl>
<dt class="ptitle"><br><a href="papers/eccv_2022/papers_ECCV/html/1_ECCV_2022_paper.php">Seeing Things</a></dt>
<dd> Ann Lee*, Bo Chen </dd>
<dd>[<a href="papers/eccv_2022/papers_ECCV/papers/136610001.pdf">pdf</a>] [<a href="x">supp</a>]</dd>
<dt class="ptitle"><br><a href="papers/eccv_2020/papers_ECCV/html/9_ECCV_2020_paper.php">Older</a></dt>
<dd> Cy D </dd><dd>[<a href="papers/eccv_2020/papers_ECCV/papers/123460001.pdf">pdf</a>]</dd>
</dl></div></body></html>"""


def test_synthetic_ecva():
    class F:
        def get(self, url):
            return ECVA.encode()
    idx = EcvaCollector().index("ECCV", 2022, F())
    assert len(idx.items) == 1
    r = idx.items[0].record
    assert (r.title, r.authors) == ("Seeing Things", ["Ann Lee", "Bo Chen"])
    assert r.pdf == "https://www.ecva.net/papers/eccv_2022/papers_ECCV/papers/136610001.pdf"


AAAI_ARCHIVE = """<html><body>
<div class="obj_issue_summary">
<a class="title" href="https://ojs.aaai.org/index.php/AAAI/issue/view/576">AAAI-24 Technical Tracks 1</a>
<div class="series">Vol. 38 No. 1: AAAI-24 Technical Tracks 1</div></div>
<div class="obj_issue_summary">
<a class="title" href="https://ojs.aaai.org/index.php/AAAI/issue/view/590">Student Abstracts,
Undergraduate Consortium and Demonstrations</a>
<div class="series">Vol. 38 No. 21</div></div>
<div class="obj_issue_summary">
<a class="title" href="https://ojs.aaai.org/index.php/AAAI/issue/view/548">AAAI-23 Technical Tracks 1</a>
<div class="series">Vol. 37 No. 1</div></div></body></html>"""
AAAI_ISSUE = """<html><body><div class="sections"><div class="section">
<h2>AAAI Technical Track on Computer Vision I</h2>
<ul class="cmp_article_list articles"><li><div class="obj_article_summary">
<h3 class="title"><a id="article-27749" href="https://ojs.aaai.org/index.php/AAAI/article/view/27749">Seeing Better</a>
</h3>
<div class="meta"><div class="authors">Ann Lee, Bo Chen</div><div class="pages">1-9</div></div>
<ul class="galleys_links"><li><a class="obj_galley_link pdf"
href="https://ojs.aaai.org/index.php/AAAI/article/view/27749/27628">PDF</a></li></ul>
</div></li></ul></div></div></body></html>"""
AAAI_DEMO = AAAI_ISSUE.replace("AAAI Technical Track on Computer Vision I", "Demonstrations").replace("27749", "30000")
AAAI_ARTICLE = """<html><head><meta name="citation_title" content="Seeing Better"></head><body>
<section class="item abstract"><h2 class="label">Abstract</h2><p>We see better.</p></section></body></html>"""


def test_synthetic_aaai(tmp_path):
    ojs = "https://ojs.aaai.org"
    site = Site({f"{ojs}/robots.txt": (404, "", {}), f"{ojs}/index.php/AAAI/issue/archive": AAAI_ARCHIVE,
                 f"{ojs}/index.php/AAAI/issue/view/576": AAAI_ISSUE, f"{ojs}/index.php/AAAI/issue/view/590": AAAI_DEMO,
                 f"{ojs}/index.php/AAAI/article/view/27749": AAAI_ARTICLE})
    f, _ = fetcher(site, tmp_path)
    rep = collect_venue_year(AaaiCollector(), "AAAI", 2024, f, tmp_path / "o")
    assert rep.collected == 2 and rep.main_track == 1 and rep.with_abstract == 1 and rep.status == "ok"
    recs = [json.loads(x) for x in (tmp_path / "o" / "records" / "AAAI_2024.jsonl").read_text().splitlines()]
    r = recs[0]
    assert (r["title"], r["authors"], r["abstract"]) == ("Seeing Better", ["Ann Lee", "Bo Chen"], "We see better.")
    assert r["pdf"] == f"{ojs}/index.php/AAAI/article/download/27749/27628"
    assert r["track"] == "AAAI-24 Technical Tracks 1 / AAAI Technical Track on Computer Vision I"
    demos = "Student Abstracts, Undergraduate Consortium and Demonstrations / Demonstrations"
    assert rep.tracks[demos]["main"] is False


IJCAI_YEAR = """<html><body>
<div class="section_title"><h3>Main Track</h3></div>
<div class="paper_wrapper" id="paper1"><div class="title">Planning Well</div><div class="authors">Ann Lee, Bo Chen</div>
<div class="details"><a href="/proceedings/2023/0001.pdf">PDF</a> <a href="/proceedings/2023/1">Details</a></div></div>
<div class="section_title"><h3>Survey Track</h3></div>
<div class="paper_wrapper" id="paper700"><div class="title">A Survey</div><div class="authors">Cy D</div>
<div class="details"><a href="/proceedings/2023/0700.pdf">PDF</a>
<a href="/proceedings/2023/700">Details</a></div></div>
</body></html>"""
IJCAI_PAPER = """<html><head><meta name="citation_title" content="Planning Well"></head><body><div class="row">
<div class="col-md-12"><h1>Planning Well</h1></div><div class="col-md-12">Ann Lee, Bo Chen</div>
<div class="col-md-12">We plan well. This abstract is long enough to be taken as the abstract of the paper,
more than a hundred characters.</div>
</div></body></html>"""


def test_synthetic_ijcai(tmp_path):
    W = "https://www.ijcai.org"
    site = Site({f"{W}/robots.txt": (404, "", {}), f"{W}/proceedings/2023/": IJCAI_YEAR,
                 f"{W}/proceedings/2023/1": IJCAI_PAPER})
    f, _ = fetcher(site, tmp_path)
    rep = collect_venue_year(IjcaiCollector(), "IJCAI", 2023, f, tmp_path / "o")
    assert rep.main_track == 1 and rep.with_abstract == 1
    assert rep.tracks == {"Main Track": {"papers": 1, "main": True, "rule": "rules"},
                          "Survey Track": {"papers": 1, "main": False, "rule": "override"}}
    r = json.loads((tmp_path / "o" / "records" / "IJCAI_2023.jsonl").read_text().splitlines()[0])
    assert r["abstract"].startswith("We plan well.") and r["pdf"] == f"{W}/proceedings/2023/0001.pdf"


def test_synthetic_pmlr_and_jmlr_rendered_pages():
    pm = """<html><body><div class="paper"><p class="title">A Title</p><p class="details">
    <span class="authors">Ann&nbsp;Lee, Bo&nbsp;Chen</span></p>
    <p class="links">[<a href="https://proceedings.mlr.press/v9/lee10a.html">abs</a>]
    [<a href="https://proceedings.mlr.press/v9/lee10a/lee10a.pdf">Download PDF</a>]</p></div></body></html>"""
    idx = parse_volume_page(pm.encode(), "AISTATS", 2010, "https://proceedings.mlr.press/v9/")
    r = idx.items[0].record
    assert (r.title, r.authors, r.pdf) == ("A Title", ["Ann Lee", "Bo Chen"],
                                           "https://proceedings.mlr.press/v9/lee10a/lee10a.pdf")
    jm = """<html><body><dl><dt>Kernel Things</dt><dd><b><i>Ann Lee, Bo Chen</i></b>; (1):1-30, 2019.
    <br>[<a href="/papers/v20/18-001.html">abs</a>][<a href="/papers/volume20/18-001/18-001.pdf">pdf</a>]</dd></dl>
    </body></html>"""
    idx = jmlr_page(jm.encode(), 20, 2019, "https://jmlr.org/papers/v20/")
    r = idx.items[0].record
    assert (r.title, r.authors, r.pdf) == ("Kernel Things", ["Ann Lee", "Bo Chen"],
                                           "https://jmlr.org/papers/volume20/18-001/18-001.pdf")
    with pytest.raises(ParseError):
        parse_volume_page(b"<html><body><p>moved</p></body></html>", "AISTATS", 2010, "https://x/")


# ---------------------------------------------------------------- tracks


def test_track_rules_override_and_cached_judge(tmp_path):
    c = TrackClassifier()
    assert c.classify("ACL", 2024, "long (Volume 1: Long Papers)") == (True, "rules")
    assert c.classify("ACL", 2024, "srw (Volume 4: Student Research Workshop)") == (False, "rules")
    assert c.classify("COLT", 2024, "Open Problems") == (True, "override")
    assert c.classify("AAAI", 2024, "AAAI-24 Technical Tracks 1 / Student Abstracts")[0] is False
    calls = []

    def chat(system, user):
        calls.append(user)
        return "OTHER" if "Blue Sky" in user else "MAIN"
    judge = TrackJudge(chat, "fake", tmp_path / "answers.json")
    c = TrackClassifier(overrides=load_overrides(), judge=judge)
    assert c.classify("AAAI", 2024, "Blue Sky Ideas") == (False, "llm:fake")
    assert c.classify("AAAI", 2024, "Blue Sky Ideas") == (False, "llm:fake") and len(calls) == 1
    judge2 = TrackJudge(lambda s, u: 1 / 0, "fake", tmp_path / "answers.json")   # answers come from the cache
    assert TrackClassifier(judge=judge2).classify("AAAI", 2024, "Blue Sky Ideas") == (False, "llm:fake")
    assert TrackClassifier(judge=judge2).classify("AAAI", 2024, "Main Track X") == (True, "rules")  # judge failed
    bad = tmp_path / "o.json"
    bad.write_text('{"rules": [{"venue": "ACL", "match": "(", "main": true}]}')
    with pytest.raises(MustciteError, match="bad override rule"):
        load_overrides(bad)


# ---------------------------------------------------------------- import into corpus build


def _rec(**kw):
    base = {"schema": "collected_record/1", "venue": "COLT", "year": 2024, "authors": ["A B"], "abstract": "",
            "pdf": "", "url": "", "source_id": "", "site": "pmlr", "track": "", "main_track": True}
    return json.dumps({**base, **kw})


def test_collected_records_flow_into_corpus_build(tmp_path):
    data = tmp_path / "data" / "proceedings" / "paperlists"
    data.mkdir(parents=True)
    (data / "colt2024.jsonl").write_text("\n".join([
        json.dumps({"title": "Listed Without Abstract", "author": "A B"}),
        json.dumps({"title": "Listed With Abstract", "author": "A B", "abstract": "Old."})]) + "\n")
    recs = tmp_path / "w" / "collect" / "records"
    recs.mkdir(parents=True)
    (recs / "COLT_2024.jsonl").write_text("\n".join([
        _rec(title="Listed without abstract", abstract="Filled.", source_id="pmlr-v247-a", pdf="https://p/a.pdf"),
        _rec(title="Listed With Abstract", abstract="New text.", source_id="pmlr-v247-b"),
        _rec(title="Only On The Site", abstract="Site.", source_id="pmlr-v247-c"),
        _rec(title="Preface", source_id="pmlr-v247-p", track="Preface", main_track=False)]) + "\n")
    report = build_corpus(tmp_path / "data", tmp_path / "w")          # default: <work>/collect/records
    c = report.collected
    assert (c["records"], c["main_track"], c["new"], c["merged"], c["abstracts_filled"], c["dropped_track"]) == \
        (4, 3, 1, 2, 1, 1)
    assert report.total == 3 and c["in_corpus"] == 3
    papers = {p["title"].lower(): p for p in load_papers(tmp_path / "w").to_pylist()}
    assert papers["listed without abstract"]["abstract"] == "Filled."
    assert papers["listed without abstract"]["pdf"] == "https://p/a.pdf"
    assert "preface" not in papers
    r2 = build_corpus(tmp_path / "data", tmp_path / "w2", collected=False)
    assert r2.collected == {} and r2.total == 2
    # collecting never renames a listed paper: reference files, benchmarks and models hold its id
    before = {p["title"].lower(): p["paper_id"] for p in load_papers(tmp_path / "w2").to_pylist()}
    assert {t: papers[t]["paper_id"] for t in before} == before
    with pytest.raises(MustciteError):
        build_corpus(tmp_path / "data", tmp_path / "w3", collected=tmp_path / "nope")


def test_import_collected_bad_lines(tmp_path):
    p = tmp_path / "X_2024.jsonl"
    p.write_text(_rec(title="ok") + "\n" + _rec(title="t", year="2024") + "\n")
    with pytest.raises(MustciteError) as exc:
        list(import_collected(p))
    assert exc.value.line == 2 and exc.value.field == "year"
    p.write_text(_rec(title="") + "\n")
    with pytest.raises(MustciteError, match="no title"):
        list(import_collected(p))
