"""The real s2orc-doc2json fixtures (``pdfs/s2orc-doc2json/pdf`` of the shared data: 2 PDFs with their
GROBID TEI and S2ORC JSON), and a GROBID stand-in HTTP handler (the ``grobid_stub`` fixture of
conftest.py serves it on 127.0.0.1)."""

from __future__ import annotations

import http.server

from helpers import DATA

PDF_DIR = DATA / "pdfs" / "s2orc-doc2json" / "pdf"
SPECTER, LITGRAPH = "2020.acl-main.207", "N18-3011"


class GrobidStub(http.server.BaseHTTPRequestHandler):
    """Answers ``POST /api/processFulltextDocument``: the next code of ``script`` (200 when empty);
    a 200 carries the real TEI of LITGRAPH (read then: only a 200 needs the shared data)."""

    script: list[int] = []
    seen: list[tuple[str, int]] = []

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        type(self).seen.append((self.path, len(body)))
        code = type(self).script.pop(0) if type(self).script else 200
        if self.path != "/api/processFulltextDocument":
            code = 404
        payload = (PDF_DIR / f"{LITGRAPH}.tei.xml").read_bytes() if code == 200 else b"busy"
        self.send_response(code)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):  # keep test output quiet
        pass
