"""The server under hostile but fair use: bodies capped as they arrive (chunked too), cross-site
browser requests refused, Host allow-list, API key, security headers, a bounded queue that answers
503 with Retry-After, upload errors that never show the server's paths, a model that fails to load
named in /api/health."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import psutil
import pytest
from helpers import recommender as S
from helpers.waiting import wait_until

# the tests that serve the slice recommender (helpers.recommender) are marked data


def _client(**kw):
    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app

    return TestClient(create_app(S.trained(), max_upload=2 * 2**20, **kw))


@pytest.fixture(scope="module")
def client():
    with _client() as c:
        yield c


def _chunks(total: int, size: int = 64 * 1024):
    sent = 0
    while sent < total:
        n = min(size, total - sent)
        sent += n
        yield b" " * n


@pytest.mark.data
def test_chunked_body_is_capped_as_it_arrives(client):
    # no Content-Length: the body is counted while it arrives and refused past the cap
    r = client.post("/api/recommend", content=_chunks(5 * 2**20), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "larger than" in r.json()["error"]
    r = client.post("/api/audit", content=_chunks(8 * 2**20),
                    headers={"Content-Type": "multipart/form-data; boundary=x"})
    assert r.status_code == 413
    assert client.get("/api/health").status_code == 200


@pytest.mark.data
def test_small_chunked_body_still_works(client):
    q = S.held_out_queries()[0]
    body = json.dumps({"title": q["title"], "abstract": q["abstract"], "top": 3}).encode()
    r = client.post("/api/recommend", content=iter([body[:10], body[10:]]),
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 200 and len(r.json()["results"]) == 3


@pytest.mark.data
def test_security_headers_on_page_api_and_errors(client):
    for r in (client.get("/"), client.get("/api/health"), client.post("/api/recommend", json={"title": ""})):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert "script-src 'self'" in r.headers["content-security-policy"]


@pytest.mark.data
def test_cross_site_browser_posts_are_refused(client):
    q = {"title": "graph neural networks"}
    r = client.post("/api/recommend", json=q, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403 and "cross-site" in r.json()["error"]
    r = client.post("/api/audit", files={"file": ("d.md", b"# T\n", "text/markdown")},
                    headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    # the page's own requests (same origin) and non-browser clients (no Origin) pass
    assert client.post("/api/recommend", json=q, headers={"Origin": "http://testserver"}).status_code == 200
    assert client.post("/api/recommend", json=q).status_code == 200


@pytest.mark.data
def test_host_allow_list():
    with _client(allowed_hosts=["127.0.0.1", "localhost"]) as c:
        assert c.get("/api/health", headers={"Host": "rebind.attacker.example"}).status_code == 400
        assert c.get("/api/health", headers={"Host": "localhost:8000"}).status_code == 200


@pytest.mark.data
def test_api_key():
    with _client(api_key="s3cret") as c:
        q = {"title": "graph neural networks"}
        r = c.post("/api/recommend", json=q)
        assert r.status_code == 401 and "API key" in r.json()["error"]
        assert c.post("/api/recommend", json=q, headers={"X-API-Key": "wrong"}).status_code == 401
        assert c.post("/api/recommend", json=q, headers={"X-API-Key": "s3cret"}).status_code == 200
        assert c.post("/api/recommend", json=q, headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert c.get("/api/health").status_code == 200       # open: a load balancer's probe
        assert c.get("/").status_code == 200                 # the page asks for the key


@pytest.mark.data
def test_full_queue_answers_503_with_retry_after(monkeypatch):
    """One slot, one queue place: with both taken, the next request gets 503 + Retry-After at once
    instead of waiting (one admission try, refused; nothing computed); once they are free it is served."""
    from contextlib import ExitStack

    with _client(concurrency=1, queue=1) as c:
        adm, backend = c.app.state.admission, c.app.state.backend
        tries: list[int] = []              # requests inside at each admission try
        computed: list[str] = []           # titles the backend was asked to rank
        admit, recommend = adm.admit, backend.recommend

        def counting_admit():
            tries.append(adm.inside)
            return admit()

        async def counting_recommend(title, *args, **kwargs):
            computed.append(title)
            return await recommend(title, *args, **kwargs)
        with ExitStack() as held:
            held.enter_context(adm.admit())     # computing
            held.enter_context(adm.admit())     # waiting
            monkeypatch.setattr(adm, "admit", counting_admit)
            monkeypatch.setattr(backend, "recommend", counting_recommend)
            r = c.post("/api/recommend", json={"title": "graph neural networks"})
            assert r.status_code == 503 and "busy" in r.json()["error"]
            assert int(r.headers["retry-after"]) >= 1
            assert (tries, computed, adm.inside) == ([2], [], 2)     # refused on its one try, never queued
        assert adm.inside == 0
        assert c.post("/api/recommend", json={"title": "graph neural networks"}).status_code == 200
        assert (tries, computed) == ([2, 0], ["graph neural networks"])


@pytest.mark.data
def test_worker_pool_serves_the_same_answers():
    """Two worker processes, each loading the model once: the same results as in-process, errors
    from a worker still name the upload, and /api/health reports the workers."""
    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app
    from mustcite.api.backends import PoolBackend

    q = S.held_out_queries()[0]
    body = {"title": q["title"], "abstract": q["abstract"], "top": 5, "year": 2024}
    backend = PoolBackend(S.model_dir(), None, workers=2)
    try:
        with TestClient(create_app(backend=backend)) as c:
            wait_until(lambda: c.get("/api/health").status_code == 200, 120,
                       what="/api/health to say a worker has loaded the model")
            health = c.get("/api/health").json()
            assert health["workers"] == 2 and health["queue"]["slots"] == 2 and health["pool"] == 8493
            with _client() as local:
                expected = local.post("/api/recommend", json=body).json()
            assert c.post("/api/recommend", json=body).json() == expected
            r = c.post("/api/audit", files={"file": ("empty-ish.md", b"\n\n", "text/markdown")})
            assert r.status_code == 422 and r.json()["error"].startswith("empty-ish.md: ")
            assert "mustcite-upload" not in r.json()["error"]
            workers = [p for p in psutil.Process().children() if "spawn_main" in " ".join(p.cmdline())]
            assert len(workers) == 2
    finally:
        backend.close()
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"worker processes left running after close: {[p.pid for p in alive]}"


@pytest.mark.data
def test_workers_end_when_the_server_is_killed(tmp_path):
    """A killed server cannot stop its workers: each worker ends itself once the server is gone."""
    script = tmp_path / "server.py"
    script.write_text(
        "import os, signal, sys\n"
        "from mustcite.api.backends import PoolBackend\n"
        "if __name__ == '__main__':\n"
        "    b = PoolBackend(sys.argv[1], None, workers=1)\n"
        "    print(b._pool.submit(os.getpid).result(timeout=300), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n")
    out = subprocess.run([sys.executable, str(script), str(S.model_dir())], capture_output=True, text=True,
                         timeout=180)
    worker = psutil.Process(int(out.stdout.split()[0]))
    gone, alive = psutil.wait_procs([worker], timeout=10)
    assert not alive, "the worker outlived its killed server"


@pytest.mark.data
def test_upload_errors_name_the_upload_not_the_server_path(client):
    bomb = gzip.compress(b"a" * 9_000_000)      # 9 MB of text in ~9 KB: past the 8 M character cap
    r = client.post("/api/audit", files={"file": ("draft.md.gz", bomb, "application/gzip")})
    assert r.status_code == 422
    msg = r.json()["error"]
    assert "characters" in msg and "/tmp" not in msg and "mustcite-upload" not in msg, msg
    r = client.post("/api/audit", files={"file": ("broken.md.gz", b"\x1f\x8b\x08\x00garbage", "application/gzip")})
    assert r.status_code == 422 and "mustcite-upload" not in r.json()["error"]


@pytest.mark.data
def test_unicode_file_names_are_accepted(client):
    held = S.split()[1][0]
    data = S.fulltext(held.id).encode("utf-8")
    r = client.post("/api/audit", files={"file": ("entwürfe ä.md", data, "text/markdown")}, data={"top": "3"})
    assert r.status_code == 200, r.text
    assert r.json()["draft"] == "entwürfe ä.md"


@pytest.mark.data
def test_stopword_only_query_says_why_it_is_empty(client):
    r = client.post("/api/recommend", json={"title": "the of and", "abstract": "is it to be"})
    assert r.status_code == 200
    body = r.json()      # the slice model has no dense encoder: stopwords match nothing
    assert body["results"] == [] and "no searchable words" in body["notice"]
    q = S.held_out_queries()[0]
    assert client.post("/api/recommend", json={"title": q["title"]}).json()["notice"] is None


def test_a_model_that_fails_to_load_is_named(tmp_path):
    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app
    from mustcite.recommend import load_default

    bad = tmp_path / "model"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    with TestClient(create_app(loader=lambda: load_default(None, bad))) as c:

        def failed():
            r = c.get("/api/health")
            return r if r.json().get("state") == "failed" else None
        r = wait_until(failed, what="/api/health to say the model failed to load")
        assert r.status_code == 503 and r.json()["state"] == "failed"
        assert "config.json" in r.json()["error"] and "malformed JSON" in r.json()["error"]
        assert c.post("/api/recommend", json={"title": "x"}).json()["state"] == "failed"


@pytest.mark.data
def test_archive_nested_too_deep_is_422_naming_the_member(client):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("main.tex", b"\\documentclass{article}\\begin{document}Hi.\\end{document}")
        zf.writestr("/".join(f"d{i}" for i in range(1000)) + "/part.tex", b"x")
    r = client.post("/api/audit", files={"file": ("deep.zip", buf.getvalue(), "application/zip")})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/json"), r.text
    msg = r.json()["error"]
    assert msg.startswith("deep.zip: ") and "part.tex" in msg and "1,000 folders deep" in msg, msg
    assert "/tmp" not in msg and "mustcite-" not in msg, msg


def test_recursion_in_a_reader_is_a_json_422_not_a_plain_500():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from mustcite.api.handlers import add_error_handlers

    app = FastAPI()
    add_error_handlers(app)

    @app.get("/deep")
    def deep():
        return json.loads("[" * 100_000 + "]" * 100_000)

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/deep")
    assert r.status_code == 422 and "nested too deeply" in r.json()["error"], r.text
