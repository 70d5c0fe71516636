"""Hostile files for ``mustcite rate`` (the sample and the ratings files, through the CLI and the
rater server) and for ``mustcite collect --offline`` (``urls.json`` and the other JSON it reads):
a clean error naming the file and line, never a traceback or an unexplained HTTP 500."""

from __future__ import annotations

import csv
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mustcite.api.rate import create_rate_app
from mustcite.errors import MustciteError
from mustcite.io import first_non_utf8, iter_csv, read_json
from mustcite.labels.rating import RatingsFileError, RatingStore, load_sample

MUSTCITE = str(Path(sys.executable).parent / "mustcite")
LIMIT = csv.field_size_limit()
HEADER = "item,contexts,cite,ref_title\n"
DEEP = "[" * 100_000 + "]" * 100_000


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([MUSTCITE, "--work", str(cwd / "work"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    first = proc.stderr.splitlines()[0]
    assert first.startswith("error: "), proc.stderr
    return first


@pytest.fixture
def sample(tmp_path) -> Path:
    p = tmp_path / "sample.csv"
    p.write_text(HEADER + "a1,[Intro] as in [1] we do,1,Paper One\n"
                          "a2,[Method] unlike [2],2,Paper Two\n", encoding="utf-8")
    return p


# ---------------------------------------------------------------- mustcite rate: the sample CSV


def test_rate_refuses_a_latin1_sample_naming_file_and_line(tmp_path):
    bad = tmp_path / "latin1.csv"
    content = HEADER.encode() + b"a1,[Intro] see [1],1,T\na2,[Intro] caf\xe9 [2],2,U\n"
    bad.write_bytes(content)
    line = _one_error_line(_cli("rate", str(bad), "--out", str(tmp_path / "out"), cwd=tmp_path))
    assert line == f"error: {bad}:3: not UTF-8 text (byte 0xe9 at offset {content.index(0xe9)})"


def test_rate_refuses_a_sample_field_over_the_csv_limit(tmp_path):
    bad = tmp_path / "huge.csv"
    bad.write_text(HEADER + "a1,[Intro] see [1],1,T\n" + "a2,[Intro] " + "x" * (LIMIT + 10) + ",2,U\n")
    line = _one_error_line(_cli("rate", str(bad), "--out", str(tmp_path / "out"), cwd=tmp_path))
    assert line == f"error: {bad}:3: field longer than {LIMIT:,} characters (the CSV field size limit)"


@pytest.mark.parametrize("content, needle, lineno", [
    (b"item,contexts,cite,ref_title\r\na1,\"[Intro]\r\nsee [1]\",1,T\r\n\xff\r\n", "not UTF-8 text (byte 0xff", 4),
    (b"item,contexts,cite,ref_title\ra1,[Intro] x,1,\xc3(\r", "not UTF-8 text (byte 0xc3", 2),
    (b"item,contexts,\xe9cite,ref_title\n", "not UTF-8 text (byte 0xe9", 1),
    (("item,contexts,cite,ref_title\na1,\"" + "y" * (LIMIT + 1) + "\",1,T\n").encode(), "field longer than", 2),
])
def test_load_sample_names_line_of_bad_bytes_and_fields(tmp_path, content, needle, lineno):
    bad = tmp_path / "s.csv"
    bad.write_bytes(content)
    with pytest.raises(MustciteError) as e:
        load_sample(bad)
    assert needle in e.value.message and e.value.path == str(bad) and e.value.line == lineno


def test_first_non_utf8_across_blocks_and_line_ends(tmp_path):
    p = tmp_path / "t.txt"
    # a multi-byte character split by the 1 MiB block boundary is valid; a \r\n across it is one line end
    body = b"a" * ((1 << 20) - 1) + "\u00e9".encode() + b"\r" + b"\n" * 1 + b"ok\n\x80"
    p.write_bytes(body)
    assert first_non_utf8(p) == (3, len(body) - 1, 0x80)
    p.write_bytes(b"a" * ((1 << 20) - 1) + b"\r" + b"\nb\n")
    assert first_non_utf8(p) is None
    p.write_bytes(b"a" * ((1 << 20) - 1) + b"\r" + b"\n\x80")
    assert first_non_utf8(p) == (2, (1 << 20) + 1, 0x80)


def test_iter_csv_caps_line_length_and_names_unreadable_files(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("a,b\n1,2\n" + "3" * 200 + "\n")
    with pytest.raises(MustciteError, match="line longer than 100 characters") as e:
        list(iter_csv(p, max_line_chars=100))
    assert e.value.line == 3
    with pytest.raises(MustciteError, match="cannot read CSV") as e:
        list(iter_csv(tmp_path))
    assert e.value.path == str(tmp_path)
    assert [(n, r["b"]) for n, r in iter_csv(p)][:1] == [(2, "2")]


# ---------------------------------------------------------------- mustcite rate: a ratings file in OUT


@pytest.mark.parametrize("kind", ["latin1", "huge"])
def test_rate_refuses_a_broken_ratings_file_at_start(sample, tmp_path, kind):
    out = tmp_path / "out"
    out.mkdir()
    bad = out / "alice.csv"
    if kind == "latin1":
        content = b"item,rater,type1,type2\na1,alice,1,3\na2,al\xe9ce,0,2\n"
        bad.write_bytes(content)
        want = f"error: {bad}:3: not UTF-8 text (byte 0xe9 at offset {content.index(0xe9)})"
    else:
        bad.write_text("item,rater,type1,type2\na1,alice,1,\"" + "3" * (LIMIT + 1) + "\"\n")
        want = f"error: {bad}:2: field longer than {LIMIT:,} characters (the CSV field size limit)"
    assert _one_error_line(_cli("rate", str(sample), "--out", str(out), cwd=tmp_path)) == want
    with pytest.raises(RatingsFileError):
        RatingStore.open(sample, out)


# ---------------------------------------------------------------- the rater server


RATINGS_BAD = {
    "latin1": (b"item,rater,type1,type2\na1,alice,1,3\n\xe9,alice,0,2\n", 3, "not UTF-8 text (byte 0xe9"),
    "huge": (("item,rater,type1,type2\na1,alice,1,3\na2,alice,0,\"" + "2" * (LIMIT + 1) + "\"\n").encode(),
             3, f"field longer than {LIMIT:,} characters"),
    "bad label": (b"item,rater,type1,type2\na1,alice,1,9\n", 2, "type2 must be one of"),
}

REQUESTS = [
    ("get", "/api/rate/next", {"params": {"rater": "alice"}}),
    ("post", "/api/rate", {"json": {"rater": "alice", "item": "a2", "type1": 1, "type2": 4}}),
    ("post", "/api/rate/undo", {"json": {"rater": "alice"}}),
    ("get", "/api/rate/progress", {}),
    ("get", "/api/rate/progress", {"params": {"rater": "alice"}}),
]


def _apps(store: RatingStore):
    from mustcite.api.app import create_app

    yield "rate app", create_rate_app(store)
    yield "recommender app", create_app(loader=lambda: None, rating=store)


@pytest.mark.parametrize("kind", sorted(RATINGS_BAD))
def test_rater_server_names_a_broken_ratings_file(sample, tmp_path, kind, caplog):
    out = tmp_path / "out"
    store = RatingStore.open(sample, out)            # the file breaks while the server runs
    content, lineno, cause = RATINGS_BAD[kind]
    bad = out / "alice.csv"
    bad.write_bytes(content)
    caplog.set_level(logging.DEBUG)
    for name, app in _apps(store):
        with TestClient(app) as c:                    # an unhandled exception would be raised here
            for method, url, kw in REQUESTS:
                r = getattr(c, method)(url, **kw)
                assert r.status_code == 500, (name, url, r.status_code, r.text)
                body = r.json()
                assert body["error"].startswith(f"{bad}:{lineno}: {cause}"), (name, url, body)
                assert body["file"] == str(bad) and body["line"] == lineno
                assert "request is not valid UTF-8" not in r.text and "Traceback" not in r.text
    assert bad.read_bytes() == content                # nothing was overwritten
    assert "Traceback" not in caplog.text and not [x for x in caplog.records if x.levelno >= logging.ERROR]


def test_rater_server_real_http_log_has_no_traceback(sample, tmp_path, capfd):
    import httpx

    from mustcite.api.serve import running

    out = tmp_path / "out"
    store = RatingStore.open(sample, out)
    (out / "alice.csv").write_bytes(RATINGS_BAD["huge"][0])
    with running(create_rate_app(store, allowed_hosts=["127.0.0.1"])) as base:
        r = httpx.get(base + "/api/rate/next", params={"rater": "alice"}, timeout=30)
        ok = httpx.get(base + "/api/rate/next", params={"rater": "bob"}, timeout=30)
    assert r.status_code == 500 and f"alice.csv:3: field longer than {LIMIT:,}" in r.json()["error"]
    assert ok.status_code == 200 and ok.json()["instance"]["item"] == "a1"   # other raters go on
    logs = capfd.readouterr()
    assert "Traceback" not in logs.out + logs.err


def test_a_request_that_is_not_utf8_is_still_the_requests_fault(sample, tmp_path):
    c = TestClient(create_rate_app(RatingStore.open(sample, tmp_path / "out")))
    r = c.post("/api/rate", content=b'{"rater": "al\xe9ce"}', headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500 and "error" in r.json()


# ---------------------------------------------------------------- mustcite collect --offline: JSON files


def test_collect_offline_refuses_deeply_nested_urls_json(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "urls.json").write_text(DEEP)
    proc = _cli("collect", "NeurIPS", "2023", "--offline", str(pages), "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert _one_error_line(proc) == f"error: {pages / 'urls.json'}: malformed JSON: nested too deeply"


def test_collect_offline_names_a_latin1_or_malformed_urls_json(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    urls = pages / "urls.json"
    urls.write_bytes(b'{"https://x.org/": "caf\xe9.html"}')
    proc = _cli("collect", "NeurIPS", "2023", "--offline", str(pages), "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert _one_error_line(proc).startswith(f"error: {urls}: not UTF-8 text")
    urls.write_text('{"https://x.org/":\n  [1, 2')
    proc = _cli("collect", "NeurIPS", "2023", "--offline", str(pages), "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert _one_error_line(proc).startswith(f"error: {urls}:2: malformed JSON")


def test_collect_refuses_a_deeply_nested_tracks_override(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    over = tmp_path / "over.json"
    over.write_text(DEEP)
    proc = _cli("collect", "NeurIPS", "2023", "--offline", str(pages), "--out", str(tmp_path / "c"),
                "--tracks-override", str(over), cwd=tmp_path)
    assert _one_error_line(proc) == f"error: {over}: malformed JSON: nested too deeply"


def test_deep_json_in_recorded_pages_is_a_parse_error(tmp_path):
    from mustcite.collect.base import ParseError
    from mustcite.collect.jmlr import parse_archive
    from mustcite.collect.openreview import _notes
    from mustcite.collect.tracks import TrackJudge

    with pytest.raises(ParseError, match="nested too deeply"):
        _notes(DEEP.encode())
    idx = parse_archive({"v1/p1/info.json": DEEP.encode()}, 1, 2000)
    assert not idx.items and "nested too deeply" in idx.errors[0].message
    cache = tmp_path / "answers.json"
    cache.write_text(DEEP)
    assert TrackJudge(lambda s, u: "MAIN", "fake", cache)._cache == {}     # a broken cache starts over


def test_read_json_names_the_file_for_deep_nesting(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text(json.dumps({"a": 1})[:-1] + ', "b": ' + DEEP + "}")
    with pytest.raises(MustciteError, match="nested too deeply") as e:
        read_json(p)
    assert e.value.path == str(p)
