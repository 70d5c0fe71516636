"""REST API on the slice recommender (FastAPI TestClient): answers, and a 4xx for every bad input."""

from __future__ import annotations

import gzip

import pytest
from helpers import recommender as S

pytestmark = pytest.mark.data          # every test asks the slice recommender (helpers.recommender)


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app

    with TestClient(create_app(S.trained(), max_upload=2 * 2**20)) as c:
        yield c


def _q():
    return S.held_out_queries()[0]


def _still_serving(client):
    assert client.get("/api/health").status_code == 200


def test_health_and_openapi(client):
    r = client.get("/api/health")
    assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["pool"] == 8493
    spec = client.get("/openapi.json").json()
    assert {"/api/recommend", "/api/audit", "/api/health"} <= set(spec["paths"])
    assert spec["components"]["schemas"]["RecommendRequest"]["additionalProperties"] is False


def test_health_is_503_until_the_model_is_loaded():
    import threading

    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app

    gate = threading.Event()

    def loader():
        gate.wait(10)
        return S.trained()
    with TestClient(create_app(loader=loader)) as c:
        r = c.get("/api/health")
        assert r.status_code == 503 and "loading" in r.json()["error"]
        assert c.post("/api/recommend", json={"title": "x"}).status_code == 503
        gate.set()
        for _ in range(100):
            if c.get("/api/health").status_code == 200:
                break
            threading.Event().wait(0.05)
        assert c.get("/api/health").status_code == 200


def test_recommend(client):
    q = _q()
    r = client.post("/api/recommend", json={"title": q["title"], "abstract": q["abstract"], "top": 5})
    assert r.status_code == 200
    res = r.json()["results"]
    assert len(res) == 5
    expected = [x.paper_id for x in S.trained().recommend(q["title"], q["abstract"], 5)]
    assert [x["paper_id"] for x in res] == expected
    assert res[0]["bibtex"].startswith("@inproceedings{") and res[0]["evidence"]["sources"]


def test_result_shape_is_the_recommendation_dataclass(client):
    """One definition of a result: the REST results are Recommendation.to_dict() plus "bibtex",
    in the same key order, and the OpenAPI schema lists exactly those fields, all required."""
    from dataclasses import fields

    from mustcite.recommend.formats import bibtex
    from mustcite.recommend.results import Recommendation

    q = _q()
    names = [f.name for f in fields(Recommendation)]
    res = client.post("/api/recommend", json={"title": q["title"], "abstract": q["abstract"], "top": 3}).json()
    ours = S.trained().recommend(q["title"], q["abstract"], 3)
    assert res["results"] == [r.to_dict() | {"bibtex": bibtex(r)} for r in ours]
    assert all(list(x) == names + ["bibtex"] for x in res["results"])
    schema = client.get("/openapi.json").json()["components"]["schemas"]["Result"]
    assert list(schema["properties"]) == schema["required"] == names + ["bibtex"]
    assert schema["properties"]["tiers"]["additionalProperties"] == {"type": "number"}


@pytest.mark.parametrize("body,needle", [
    ({"title": "", "abstract": "a"}, "title is empty"),
    ({"title": "   \n\t", "abstract": "a"}, "title is empty"),
    ({"title": "x" * 1001}, "title"),
    ({"title": "ok", "abstract": "word " * 200_000}, "larger than"),
    ({"title": "ok", "abstract": "a" * 20001}, "abstract"),
    ({"title": "ok", "top": 0}, "top"),
    ({"title": "ok", "top": 10_000}, "top"),
    ({"title": "ok", "author": "me"}, "unknown field"),
    ({"abstract": "only"}, "title"),
    ({"title": 5}, "title"),
    ({"title": "ok\x00"}, "NUL"),
])
def test_recommend_rejects_bad_json(client, body, needle):
    r = client.post("/api/recommend", json=body)
    assert 400 <= r.status_code < 500, r.text
    assert needle in r.json()["error"]
    _still_serving(client)


def test_recommend_rejects_non_utf8_and_non_json(client):
    r = client.post("/api/recommend", content=b'{"title": "caf\xe9 \xff"}',
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "UTF-8" in r.json()["error"], r.text
    r = client.post("/api/recommend", content=b'{"title": ', headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "JSON" in r.json()["error"]
    r = client.post("/api/recommend", content=b"title=x", headers={"Content-Type": "text/plain"})
    assert 400 <= r.status_code < 500
    r = client.post("/api/recommend", content=b"[1, 2]", headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    for field in ("top", "year"):       # JSON true is no number, although Python reads it as 1
        r = client.post("/api/recommend", json={"title": "Graph neural networks", field: True})
        assert r.status_code == 422 and f"{field} must be a whole number" in r.json()["error"], r.text
    _still_serving(client)


def test_audit_a_real_markdown_draft(client):
    held = S.split()[1][0]
    data = S.fulltext(held.id).encode("utf-8")
    r = client.post("/api/audit", files={"file": (f"{held.id}.md", data, "text/markdown")},
                    data={"top": "8", "all": "true"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["references"] > 10 and len(body["missing"]) == 8
    assert not {c.paper_id for c in held.cites} & {m["paper_id"] for m in body["missing"]}
    assert len(body["reference_list"]) == body["references"] and "closest_bibliographies" in body
    assert "references_cocited" in body["missing"][0]["evidence"]
    gz = client.post("/api/audit", files={"file": (f"{held.id}.md.gz", gzip.compress(data), "application/gzip")})
    assert gz.status_code == 200 and gz.json()["references"] == body["references"]


@pytest.mark.parametrize("name,data,status,needle", [
    ("draft.pdf", b"this is plain text, not a PDF", 422, "not a PDF"),
    ("draft.md", "caf\u00e9".encode("latin-1") + b"\xff\xfe broken", 422, "not UTF-8"),
    ("draft.md", b"", 422, "empty"),
    ("draft.docx", b"PK\x03\x04", 422, "unsupported"),
    ("../../etc/passwd.md", b"# t", 422, "plain name"),
    ("..\\x.md", b"# t", 422, "plain name"),
    ("/abs/x.md", b"# t", 422, "plain name"),
    ("draft.md", b"x" * (2 * 2**20 + 10), 413, "larger than"),
    ("draft.md", b"\x00\x01\x02 just noise", 422, ""),
])
def test_audit_rejects_bad_uploads(client, name, data, status, needle):
    r = client.post("/api/audit", files={"file": (name, data, "application/octet-stream")})
    assert r.status_code == status, r.text
    assert needle in r.json()["error"]
    _still_serving(client)


def test_audit_rejects_oversized_body_and_missing_file(client):
    r = client.post("/api/audit", files={"file": ("d.md", b"x" * (3 * 2**20), "text/markdown")})
    assert r.status_code == 413
    r = client.post("/api/audit", data={"top": "3"})
    assert r.status_code == 422 and "file" in r.json()["error"]
    r = client.post("/api/audit", files={"file": ("d.md", b"# T\n", "text/markdown")}, data={"top": "-1"})
    assert r.status_code == 422
    _still_serving(client)


def test_unknown_routes_answer_json(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.json()["error"]
    r = client.get("/api/recommend")
    assert r.status_code == 405 and r.json()["error"]


def test_web_page_is_served(client):
    r = client.get("/")
    assert r.status_code == 200 and "<title>mustcite" in r.text
    assert client.get("/static/app.js").status_code == 200
    assert "https://" not in r.text.replace("https://mustcite", "")    # no CDN


def test_audit_a_latex_project_zip(client):
    import io
    import zipfile

    q, (a, b) = S.held_out_queries()[0], S.pool()[:2]
    bib = "".join(f"@inproceedings{{ref{i}, title = {{{p['title']}}}, year = {{{p['year']}}}}}\n"
                  for i, p in enumerate((a, b)))
    main = (f"\\documentclass{{article}}\\title{{{q['title']}}}\\begin{{document}}\\begin{{abstract}}"
            f"{q['abstract']}\\end{{abstract}}\\section{{Introduction}}We build on \\cite{{ref0,ref1}}."
            "\\bibliography{refs}\\end{document}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("project/main.tex", main)
        zf.writestr("project/refs.bib", bib)
    r = client.post("/api/audit", files={"file": ("project.zip", buf.getvalue(), "application/zip")},
                    data={"top": "5", "all": "true"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["references"] == 2 and body["linked"] == 2 and len(body["missing"]) == 5
    assert not {a["paper_id"], b["paper_id"]} & {m["paper_id"] for m in body["missing"]}
    slip = io.BytesIO()
    with zipfile.ZipFile(slip, "w") as zf:
        zf.writestr("../../evil.tex", "x")
    r = client.post("/api/audit", files={"file": ("evil.zip", slip.getvalue(), "application/zip")})
    assert r.status_code == 422 and "path traversal" in r.json()["error"] and "/tmp" not in r.json()["error"]
    _still_serving(client)
