"""A small GROBID client: send a PDF to ``/api/processFulltextDocument``, get TEI XML back.

GROBID answers 503 when its worker pool is busy; we retry those (and connection errors) with
exponential backoff. Every other failure raises :class:`MustciteError` naming the PDF and server.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from ..errors import MustciteError

DEFAULT_URL = "http://localhost:8070"
ENDPOINT = "/api/processFulltextDocument"


class GrobidClient:
    """Reusable client; ``timeout`` is seconds for the whole request (GROBID can take ~10 s/paper)."""

    def __init__(self, url: str = DEFAULT_URL, *, timeout: float = 120.0, retries: int = 3,
                 backoff: float = 1.0, consolidate: bool = False):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.consolidate = consolidate

    def process_pdf(self, pdf: str | Path | bytes, *, name: str = "paper.pdf") -> str:
        """Return the TEI XML text GROBID produces for ``pdf`` (a path or the PDF bytes)."""
        if isinstance(pdf, (str, Path)):
            name = Path(pdf).name
            try:
                data = Path(pdf).read_bytes()
            except OSError as exc:
                raise MustciteError(f"cannot read PDF: {exc.strerror}", path=pdf) from None
        else:
            data = pdf
        form = {"consolidateHeader": "0", "consolidateCitations": "1" if self.consolidate else "0",
                "includeRawCitations": "1", "segmentSentences": "0"}
        endpoint = self.url + ENDPOINT
        last = ""
        for attempt in range(self.retries + 1):
            try:
                resp = httpx.post(endpoint, files={"input": (name, data, "application/pdf")},
                                  data=form, timeout=self.timeout)
            except httpx.TimeoutException:
                last = f"timed out after {self.timeout:g} s"
            except httpx.TransportError as exc:
                last = f"cannot connect ({exc.__class__.__name__}: {exc})"
            else:
                if resp.status_code == 200:
                    return resp.text
                if resp.status_code != 503:
                    snippet = resp.text[:200].strip().replace("\n", " ")
                    raise MustciteError(f"GROBID at {self.url} answered HTTP {resp.status_code}: {snippet}",
                                        path=name)
                last = "server busy (HTTP 503)"
            if attempt < self.retries:
                time.sleep(self.backoff * (2 ** attempt))
        raise MustciteError(f"GROBID at {self.url} failed after {self.retries + 1} attempts: {last}", path=name,
                            hint="is GROBID running? start it or drop --grobid-url to use the built-in PDF path")


def process_pdf(pdf: str | Path | bytes, url: str = DEFAULT_URL, **kw) -> str:
    """One-shot helper: ``GrobidClient(url, **kw).process_pdf(pdf)``."""
    return GrobidClient(url, **kw).process_pdf(pdf)
