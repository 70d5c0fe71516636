"""``mustcite lsp`` against a hostile or careless client, through a raw stdio JSON-RPC client.

Each case a hand-written client found wedging the server, reading without bounds or reading
outside the workspace is replayed here: malformed and oversized frames (each answered with an
error, the next request answered within a second), huge documents, a ``refs.bib`` that is a link
to a FIFO, to ``/dev/zero`` or out of the workspace, loose and ``untitled:`` documents, a quick
fix whose target is forged, and the exit codes. The corpus check is replaced by a stub that
reports each checked entry on stderr ("CHECKED key ...": what the server read) and calls every
entry not found, and each audit the server starts is reported there too ("AUDIT folder"); no
data is needed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from benchmarks.bad_input_fixtures import PING
from benchmarks.bad_input_fixtures import Client as RawClient
from pygls.uris import from_fs_path

from mustcite.lsp.documents import Lines, cites

LAUNCH = r"""
import sys, time
from mustcite.refcheck import check
from mustcite.refcheck.results import RefCheck
from mustcite.lsp import server

def check_entries(entries, index):
    print("CHECKED " + " ".join(sorted(e.key for e in entries)), file=sys.stderr, flush=True)
    if any(e.key == "slow" for e in entries):
        time.sleep(300)
    return [RefCheck(e.key, "not_found", why="stub") for e in entries]


def reported_audit(self, root, saved_at, audit=server.CitationServer.audit):
    print(f"AUDIT {root}", file=sys.stderr, flush=True)
    return audit(self, root, saved_at)


check.check_entries = check_entries
server.CitationServer.index = lambda self: None
server.CitationServer.audit = reported_audit
from mustcite.cli.main import main
sys.exit(main(["lsp", *sys.argv[1:]]))
"""

#: a server that has not answered in this long is wedged (a bound on liveness, not on speed: the
#: response times are measured in benchmarks/bad_inputs.py)
LIVENESS_S = 30.0


class Client(RawClient):
    """The raw language client (:class:`benchmarks.bad_input_fixtures.Client`) on ``mustcite lsp``
    with the stub check by default (``args`` after ``mustcite lsp``; ``command``: another server),
    reading what the stub reports."""

    def __init__(self, tmp: Path, *args: str, command: list[str] | None = None):
        super().__init__(tmp, command=command or [sys.executable, "-c", LAUNCH, *args])

    def checked(self) -> list[str]:
        return [k for line in self.stderr if line.startswith("CHECKED") for k in line.split()[1:]]

    def audited(self) -> list[str]:
        """The folders of the audits the server started (reported by the stub)."""
        return [line.split(" ", 1)[1].rstrip("\n") for line in self.stderr if line.startswith("AUDIT ")]

    def ping(self, timeout: float = LIVENESS_S) -> float:
        """Seconds until a ping is answered; fails after ``timeout`` (a wedged server never answers).
        How fast it answers is measured in benchmarks/bad_inputs.py, not here."""
        return super().ping(timeout)


@pytest.fixture()
def client(tmp_path):
    made: list[Client] = []

    def start(*args: str) -> Client:
        made.append(Client(tmp_path, *args))
        return made[-1]

    yield start
    for c in made:
        if c.proc.poll() is None:
            c.proc.kill()


def _frame(body: bytes, length: int | None = None, name: bytes = b"Content-Length", eol: bytes = b"\r\n") -> bytes:
    return name + b": " + str(len(body) if length is None else length).encode() + eol + eol + body


REQUEST = json.dumps({"jsonrpc": "2.0", "id": 999, "method": "workspace/executeCommand", "params": PING}).encode()


def test_malformed_frames_are_answered_and_the_next_request_within_a_second(tmp_path, client):
    c = client("--no-audit")
    c.initialize(tmp_path)
    rejected = {
        "non-numeric Content-Length": b"Content-Length: abc\r\n\r\n" + REQUEST,
        "negative Content-Length": b"Content-Length: -5\r\n\r\n" + REQUEST,
        "no Content-Length": b"Content-Type: application/json\r\n\r\n" + REQUEST,
        "body shorter than its Content-Length": _frame(REQUEST[:30], 200),
        "no end of header": b"X" * 10_000,
        "malformed JSON": _frame(b'{"jsonrpc": "2.0", "id": '),
        "not JSON-RPC": _frame(b'[1, 2, 3]'),
        "a 100 MB notification": _frame(b'{"jsonrpc": "2.0", "method": "x", "params": "' + b"x" * (100 * 2**20)
                                        + b'"}'),
    }
    for case, data in rejected.items():
        start = len(c.seen)
        c.send_bytes(data)
        assert c.ping() < LIVENESS_S, case
        error = c.wait(lambda m: "error" in m and "id" in m and m["id"] is None, 1.0, start)
        assert error["error"]["code"] in (-32700, -32600) and error["error"]["message"], case
    assert c.peak_rss_mb() < 400
    # headers a lenient reader accepts: lower-case names, LF line ends
    for case, data in {"lower-case name": _frame(REQUEST, name=b"content-length"),
                       "LF-only header": _frame(REQUEST, eol=b"\n")}.items():
        start = len(c.seen)
        c.send_bytes(data)
        assert c.wait(lambda m: m.get("id") == 999, 1.0, start).get("result") is not None, case
    assert c.finish() == 0


def test_exit_codes_follow_the_protocol(tmp_path, client):
    c = client("--no-audit")
    c.initialize(tmp_path)
    assert c.finish(shutdown=False) == 1          # exit without shutdown
    c = client("--no-audit")
    c.initialize(tmp_path)
    assert c.finish() == 0
    # the end of the input without exit is no orderly end either
    c = client("--no-audit")
    c.initialize(tmp_path)
    c.proc.stdin.close()
    assert c.proc.wait(10) == 1


def test_a_check_still_running_does_not_hold_up_exit(tmp_path, client):
    c = client("--no-audit")
    c.initialize(tmp_path)
    c.open(from_fs_path(str(tmp_path / "refs.bib")), "@article{slow, title={A}, year={2020}}\n")
    c.until(lambda: "slow" in c.checked(), LIVENESS_S, "the check of the entry 'slow' to start")
    assert c.ping() < LIVENESS_S                           # requests are answered while the check runs
    assert c.finish(timeout=LIVENESS_S) == 0           # the check sleeps 300 s: exit does not wait for it


def test_files_read_are_regular_inside_the_workspace_and_capped(tmp_path, client):
    root, outside = tmp_path / "paper", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.bib").write_text("@article{secretkey, title={S}, year={2020}}\n")
    os.mkfifo(root / "fifo")
    (root / "fifo.bib").symlink_to(root / "fifo")
    (root / "zero.bib").symlink_to("/dev/zero")
    (root / "out.bib").symlink_to(outside / "secret.bib")
    (root / "big.bib").write_text("@article{bigkey, title={" + "x" * (17 * 2**20) + "}}\n")
    (root / "utf16.bib").write_text("@article{utf16key, title={Caf\u00e9}, year={2020}}\n", encoding="utf-16")
    c = client("--no-audit")
    c.initialize(root)
    for name in ("fifo", "zero", "out", "big", "../elsewhere/secret", "utf16"):
        tex = root / f"main-{name.rpartition('/')[2]}.tex"
        tex.write_text(f"\\cite{{{name.rpartition('/')[2]}key}}\n\\bibliography{{{name}}}\n")
        uri = from_fs_path(str(tex))
        start = len(c.seen)
        c.open(uri, tex.read_text())
        diags = c.diagnostics(uri, 10, start)
        assert c.ping() < LIVENESS_S, name
        if name == "utf16":           # read as text: its entry is checked (the stub: not found)
            assert [d["code"] for d in diags] == ["not_found"]
        else:                          # not read, so no key is called undefined either
            assert diags == [], name
    assert set(c.checked()) == {"utf16key"}
    logged = " ".join(m["params"]["message"] for m in c.seen if m.get("method") == "window/logMessage")
    assert "not a regular file" in logged and "larger than 16 MB" in logged
    assert c.peak_rss_mb() < 400
    assert c.finish(timeout=5) == 0


def test_loose_and_untitled_documents_get_their_own_text_checked_only(tmp_path, client):
    root, loose = tmp_path / "paper", tmp_path / "loose"
    root.mkdir()
    loose.mkdir()
    (loose / "refs.bib").write_text("@article{loosekey, title={L}, year={2020}}\n")
    (tmp_path / "parent.bib").write_text("@article{parentkey, title={P}, year={2020}}\n")
    (root / "refs.bib").write_text("@article{rootkey, title={R}, year={2020}}\n")
    c = client()                       # the audit on: a save inside the workspace would start one
    c.initialize(root, audit=True)
    tex = "\\cite{loosekey} \\cite{parentkey}\n"
    for uri, text in ((from_fs_path(str(loose / "main.tex")), tex + "\\bibliography{refs}\n"),
                      (from_fs_path(str(loose / "nobib.tex")), tex),
                      ("untitled:Untitled-1", tex + "\\bibliography{refs}\n")):
        start = len(c.seen)
        c.open(uri, text)
        assert c.diagnostics(uri, 10, start) == []
        start = len(c.seen)
        c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        # the save's own diagnostics: it is handled (an audit it started would be queued now)
        assert c.diagnostics(uri, 10, start) == []
    assert c.ping() < LIVENESS_S
    assert c.checked() == []
    # inside the workspace the same save reads the bibliography and starts the audit
    inside = from_fs_path(str(root / "main.tex"))
    start = len(c.seen)
    c.open(inside, "\\cite{rootkey} \\cite{nokey}\n\\bibliography{refs}\n")
    assert {d["code"] for d in c.diagnostics(inside, 10, start)} == {"not_found", "undefined"}
    c.notify("textDocument/didSave", {"textDocument": {"uri": inside}})
    c.wait(lambda m: m.get("method") == "window/showMessage" and "audit" in m["params"]["message"], 30)
    assert c.finish(timeout=5) == 0
    # all the server said (each save above was handled before the exit): one audit, of the workspace
    assert c.checked() == ["rootkey"]
    assert c.audited() == [str(root.resolve())]


def test_a_quick_fix_never_reads_a_file_outside_the_workspace(tmp_path, client):
    root = tmp_path / "paper"
    root.mkdir()
    (root / "refs.bib").write_text("@article{a, title={A}}\n")
    (tmp_path / "secret.bib").write_text("SECRET\n")
    c = client("--no-audit")
    c.initialize(root)
    tex_uri = from_fs_path(str(root / "main.tex"))

    def actions(target: str) -> list:
        diag = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                "message": "Not cited: X", "source": "mustcite", "code": "missing",
                "data": {"fix": "add-entry", "uri": target, "bibtex": "@misc{x,\n}\n", "title": "X"}}
        return c.response(c.request("textDocument/codeAction", {
            "textDocument": {"uri": tex_uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}))["result"]

    assert actions(from_fs_path(str(tmp_path / "secret.bib"))) in (None, [])
    assert actions("file:///etc/passwd") in (None, [])
    (got,) = actions(from_fs_path(str(root / "refs.bib")))
    (change,) = got["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": from_fs_path(str(root / "refs.bib")), "version": None}   # on disk
    assert change["edits"][0]["range"]["start"]["line"] == 1
    assert c.finish(timeout=5) == 0


def test_huge_documents_are_bounded(tmp_path, client):
    root = tmp_path / "paper"
    root.mkdir()
    c = client("--no-audit")
    c.initialize(root)
    # one line of 12 MB with 20,000 citations: its diagnostics come, and requests meanwhile
    line = " ".join(f"word \\cite{{k{i}}}" for i in range(20_000))
    text = line + " " + "x" * (12 * 2**20 - len(line))
    uri = from_fs_path(str(root / "long.tex"))
    c.open(uri, text)
    assert c.ping() < LIVENESS_S
    diags = c.diagnostics(uri, 30)                  # no bibliography in the workspace: every key undefined
    assert len(diags) == 20_000 and {d["code"] for d in diags} == {"undefined"}
    assert diags[-1]["range"]["start"]["character"] == line.rindex("k19999")
    # a .bib entry with a 1 MB accented field is not checked, and says so at once
    bib = root / "refs.bib"
    bib_text = "@article{accented, title={" + "\u00e9" * 2**20 + "}, year={2020}}\n@article{b, title={B}}\n"
    c.open(from_fs_path(str(bib)), bib_text)
    diags = c.diagnostics(from_fs_path(str(bib)), 10)
    assert {d["code"] for d in diags} == {"unverifiable", "not_found"}
    assert "characters long" in next(d for d in diags if d["code"] == "unverifiable")["message"]
    assert c.checked() == ["b"]
    assert c.finish(timeout=5) == 0


def test_positions_on_a_long_line_are_right():
    """Positions come from cached line starts (the time per position is in benchmarks/bad_inputs.py)."""
    line = " ".join(f"\\cite{{key{i}}} \u00e9\U0001F600" for i in range(40_000))     # ~1 MB, one line
    got = cites(line)
    assert len(got) == 40_000
    last = got[-1]
    start = line.rindex("key39999")
    assert last.range.start.character == len(line[:start].encode("utf-16-le")) // 2
    lines = Lines("a\U0001F600b\nc")
    assert [lines.position(i).character for i in range(6)] == [0, 1, 3, 4, 0, 1]
