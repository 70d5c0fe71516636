"""Polite HTTP for the collectors: rate limit, robots.txt, retries with backoff, disk cache, offline.

:class:`Fetcher` is the only thing the collectors read pages through (``get`` for a page,
``get_archive`` for a ``.tar.gz`` volume source). It

* waits ``delay`` seconds between two requests to the same host (more where robots.txt asks for a
  ``Crawl-delay``; OpenReview's API hosts get :data:`HOST_DELAYS`),
* reads each host's ``robots.txt`` once and refuses a disallowed URL (``FetchError`` kind ``robots``),
* retries transport errors, HTTP 429 and 5xx with exponential backoff, honouring ``Retry-After``
  (OpenReview answers 429 after a few requests and wants a long wait: its 429s without a
  ``Retry-After`` wait :data:`LONG_WAIT_429` seconds),
* keeps every 200 answer in a disk cache (``<cache>/<host>/<sha1 of URL>``): a rerun reads the
  cache, never the site (``refresh=True`` bypasses it),
* with ``offline=DIR`` reads nothing from the network: :class:`OfflineSource` maps each URL to a
  file (see its docstring); a URL with no file is ``FetchError`` kind ``offline_missing``.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import time
import urllib.robotparser
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from ..errors import MustciteError
from ..io import MAX_DOCUMENT_BYTES, atomic_write_bytes, atomic_write_json, open_decompressed, read_json
from ..retry import parse_retry_after
from ..tarstream import iter_tar

USER_AGENT = "mustcite-collect/1 (+https://github.com/mustcite; polite research crawler)"
DEFAULT_DELAY = 1.0
#: seconds between two requests, per host (OpenReview rate-limits hard)
HOST_DELAYS = {"api.openreview.net": 3.0, "api2.openreview.net": 3.0}
#: wait after a 429 that gives no Retry-After, per host (else exponential backoff)
LONG_WAIT_429 = {"api.openreview.net": 60.0, "api2.openreview.net": 60.0}
#: at most this many bytes per answer
MAX_BYTES = 512 * 1024 * 1024
#: a volume source archive (``get_archive``): only its text members (what the collectors parse) are
#: kept, each of at most MAX_MEMBER_BYTES (larger ones are skipped unread), MAX_KEPT_BYTES in all;
#: the decompressed stream (PDFs and all, read past) stops at MAX_ARCHIVE_STREAM_BYTES
ARCHIVE_TEXT_SUFFIXES = (".md", ".markdown", ".yml", ".yaml", ".json", ".bib", ".html", ".htm", ".xml", ".txt",
                         ".csv", ".tsv")
MAX_MEMBER_BYTES = 32 * 2**20
MAX_KEPT_BYTES = 256 * 2**20
MAX_ARCHIVE_STREAM_BYTES = 4 * 2**30
MAX_ARCHIVE_MEMBERS = 200_000


class FetchError(Exception):
    """A URL that could not be read: ``kind`` is http, robots, offline_missing, transport, archive."""

    def __init__(self, url: str, message: str, *, kind: str = "http", status: int | None = None):
        super().__init__(f"{url}: {message}")
        self.url = url
        self.message = message
        self.kind = kind
        self.status = status


class OfflineSource:
    """Recorded pages in a folder, found by URL. A URL is looked up, in this order:

    1. ``DIR/urls.json`` (optional): ``{"URL": "relative/or/absolute/path", ...}``;
    2. the built-in map of the shared ``venue_pages/`` folder (``collect/offline_manifest.json``),
       for the files of it that exist under ``DIR`` (so ``--offline ../shared/data/venue_pages``
       works as is);
    3. the mirror layout ``DIR/<host>/<path>``: a path ending in ``/`` (or empty) reads
       ``index.html``; a query string is kept after a ``?`` with each ``/`` in it written ``%2F``
       (``api2.openreview.net/notes?content.venueid=ICLR.cc%2F2024%2FConference&limit=1000``);
       a file without extension is also looked for as ``.html``; any candidate may be gzipped
       (``.gz`` added) and is then decompressed when read.

    A mapped path may be a folder: ``get_archive`` then reads it as the unpacked archive.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise MustciteError("offline folder does not exist", path=self.root,
                                hint="--offline DIR names a folder of recorded pages")
        self.manifest: dict[str, str] = {}
        builtin = json.loads(resources.files("mustcite.collect").joinpath(
            "offline_manifest.json").read_text(encoding="utf-8"))
        for url, rel in builtin.get("urls", {}).items():
            if (self.root / rel).exists():
                self.manifest[url] = rel
        own = self.root / "urls.json"
        if own.is_file():
            data = read_json(own)        # names the file: not UTF-8, malformed, nested too deeply
            if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
                raise MustciteError("urls.json must map URL strings to path strings", path=own)
            self.manifest.update(data)

    @staticmethod
    def mirror_path(url: str) -> str:
        parts = urlsplit(url)
        path = parts.path or "/"
        if path.endswith("/"):
            path += "index.html"
        rel = parts.netloc + path
        if parts.query:
            rel += "?" + parts.query.replace("/", "%2F")
        return rel

    def resolve(self, url: str) -> Path | None:
        cands: list[Path] = []
        if url in self.manifest:
            p = Path(self.manifest[url])
            cands.append(p if p.is_absolute() else self.root / p)
        alt = url.split("#", 1)[0]
        if alt.startswith("http://"):
            alt = alt.replace("http://", "https://", 1)
        else:
            alt = alt.replace("https://", "http://", 1)
        if alt in self.manifest:
            p = Path(self.manifest[alt])
            cands.append(p if p.is_absolute() else self.root / p)
        rel = self.mirror_path(url)
        base = self.root / rel
        cands += [base, Path(str(base) + ".gz")]
        if "." not in Path(urlsplit(url).path).name and not urlsplit(url).query:
            cands += [Path(str(base) + ".html"), Path(str(base) + ".html.gz"), base / "index.html"]
        for c in cands:
            if c.exists():
                return c
        return None

    def read(self, url: str) -> bytes:
        p = self.resolve(url)
        if p is None or p.is_dir():
            raise FetchError(url, f"not in the offline folder {self.root} (looked for {self.mirror_path(url)})",
                             kind="offline_missing")
        if p.name.endswith(".gz") and not urlsplit(url).path.endswith((".gz", ".tgz")):
            try:
                with open_decompressed(p, max_bytes=MAX_DOCUMENT_BYTES) as fh:   # a page, parsed whole
                    return fh.read()
            except MustciteError as exc:
                raise FetchError(url, f"{p}: {exc.message}", kind="archive") from None
            except (OSError, EOFError) as exc:
                raise FetchError(url, f"corrupt gzip file {p}: {exc}", kind="archive") from None
        return p.read_bytes()

    def read_archive(self, url: str) -> dict[str, bytes]:
        p = self.resolve(url)
        if p is None:
            raise FetchError(url, f"not in the offline folder {self.root}", kind="offline_missing")
        if p.is_dir():
            out = {}
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    out[f"{p.name}/{f.relative_to(p).as_posix()}"] = f.read_bytes()
            return out
        return untar(url, p)


def untar(url: str, data: bytes | Path) -> dict[str, bytes]:
    """Text members (files named :data:`ARCHIVE_TEXT_SUFFIXES`) of a ``.tar.gz`` / ``.tar``, held
    in memory (``data``) or a file, by name; read as one capped stream
    (:func:`mustcite.tarstream.iter_tar`): a member over :data:`MAX_MEMBER_BYTES` is skipped
    unread, and an archive keeping more than :data:`MAX_KEPT_BYTES`, expanding beyond
    :data:`MAX_ARCHIVE_STREAM_BYTES`, or with a hostile header is a ``FetchError`` (kind ``archive``)."""
    out: dict[str, bytes] = {}
    kept = members = 0
    source = data if isinstance(data, Path) else io.BytesIO(data)
    name = str(data) if isinstance(data, Path) else url
    try:
        for tf, m in iter_tar(source, name, max_stream_bytes=MAX_ARCHIVE_STREAM_BYTES):
            members += 1
            if members > MAX_ARCHIVE_MEMBERS:
                raise FetchError(url, f"the archive has more than {MAX_ARCHIVE_MEMBERS:,} members; refusing it",
                                 kind="archive")
            if not m.isfile() or m.size > MAX_MEMBER_BYTES or not m.name.lower().endswith(ARCHIVE_TEXT_SUFFIXES):
                continue
            kept += m.size
            if kept > MAX_KEPT_BYTES:
                raise FetchError(url, f"the archive's text members hold more than {MAX_KEPT_BYTES:,} bytes; "
                                 "refusing it", kind="archive")
            fh = tf.extractfile(m)
            if fh is not None:
                out[m.name] = fh.read()         # at most m.size <= MAX_MEMBER_BYTES
    except MustciteError as exc:            # a refused header, a bomb, a truncated archive
        raise FetchError(url, str(exc), kind="archive") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise FetchError(url, f"not a readable tar archive: {exc}", kind="archive") from None
    return out


class Fetcher:
    """Reads URLs for the collectors (see the module docstring)."""

    def __init__(self, *, cache_dir: str | Path | None = None, offline: str | Path | None = None,
                 transport: httpx.BaseTransport | None = None, delay: float = DEFAULT_DELAY,
                 max_retries: int = 4, backoff: float = 2.0, max_wait: float = 900.0,
                 robots: bool = True, refresh: bool = False, timeout: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 user_agent: str = USER_AGENT):
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.offline = OfflineSource(offline) if offline else None
        self.delay = delay
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.robots = robots
        self.refresh = refresh
        self.sleep = sleep
        self.clock = clock
        self._client = None if self.offline else httpx.Client(
            transport=transport, timeout=timeout, follow_redirects=True,
            headers={"User-Agent": user_agent})
        self._user_agent = user_agent
        self._last: dict[str, float] = {}
        self._robots: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        #: URLs actually requested over the network (tests, the report)
        self.requests: list[str] = []
        self.cache_hits = 0
        self.waited = 0.0

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ public

    def get(self, url: str) -> bytes:
        if self.offline:
            return self.offline.read(url)
        cached = self._cache_read(url)
        if cached is not None:
            return cached
        self._check_robots(url)
        data = self._request(url)
        self._cache_write(url, data)
        return data

    def forget(self, url: str) -> None:
        """Drop a cached page (one that did not parse: a rerun reads it again)."""
        p = self._cache_path(url)
        if p is not None:
            p.unlink(missing_ok=True)
            p.with_suffix(".json").unlink(missing_ok=True)

    def get_archive(self, url: str) -> dict[str, bytes]:
        if self.offline:
            return self.offline.read_archive(url)
        return untar(url, self.get(url))

    # ------------------------------------------------------------ cache

    def _cache_path(self, url: str) -> Path | None:
        if self.cache_dir is None:
            return None
        host = urlsplit(url).netloc or "local"
        return self.cache_dir / host / hashlib.sha1(url.encode()).hexdigest()

    def _cache_read(self, url: str) -> bytes | None:
        p = self._cache_path(url)
        if p is None or self.refresh or not p.is_file():
            return None
        self.cache_hits += 1
        return p.read_bytes()

    def _cache_write(self, url: str, data: bytes) -> None:
        p = self._cache_path(url)
        if p is None:
            return
        atomic_write_bytes(p, data)
        atomic_write_json(p.with_suffix(".json"), {"url": url, "bytes": len(data),
                                                   "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})

    # ------------------------------------------------------------ robots.txt

    def _check_robots(self, url: str) -> None:
        if not self.robots:
            return
        parts = urlsplit(url)
        host = parts.netloc
        if host not in self._robots:
            robots_url = f"{parts.scheme}://{host}/robots.txt"
            rp: urllib.robotparser.RobotFileParser | None = urllib.robotparser.RobotFileParser(robots_url)
            try:
                body = self._cache_read(robots_url)
                if body is None:
                    body = self._request(robots_url, retries=1)
                    self._cache_write(robots_url, body)
                rp.parse(body.decode("utf-8", errors="replace").splitlines())
            except FetchError as exc:
                rp = None          # no robots.txt (404) or unreachable: allowed
                if exc.status is not None and 400 <= exc.status < 500:
                    self._cache_write(robots_url, b"")     # remembered: a rerun does not ask again
            self._robots[host] = rp
        rp = self._robots[host]
        if rp is not None and not rp.can_fetch(self._user_agent, url):
            raise FetchError(url, "disallowed by robots.txt", kind="robots")

    def _host_delay(self, host: str) -> float:
        d = HOST_DELAYS.get(host, self.delay)
        rp = self._robots.get(host)
        if rp is not None:
            try:
                cd = rp.crawl_delay(self._user_agent)
            except Exception:   # noqa: BLE001 - a malformed Crawl-delay line
                cd = None
            if cd:
                d = max(d, float(cd))
        return d

    # ------------------------------------------------------------ network

    def _pause(self, host: str) -> None:
        last = self._last.get(host)
        if last is not None:
            wait = self._host_delay(host) - (self.clock() - last)
            if wait > 0:
                self._wait(wait)

    def _wait(self, seconds: float) -> None:
        seconds = min(seconds, self.max_wait)
        self.waited += seconds
        self.sleep(seconds)

    def _request(self, url: str, retries: int | None = None) -> bytes:
        host = urlsplit(url).netloc
        retries = self.max_retries if retries is None else retries
        last_error = ""
        for attempt in range(retries + 1):
            self._pause(host)
            self._last[host] = self.clock()
            self.requests.append(url)
            try:
                resp = self._client.get(url)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                status = None
                wait = self.backoff * (2 ** attempt)
            else:
                status = resp.status_code
                if status == 200:
                    return resp.content
                if status != 429 and status < 500:
                    raise FetchError(url, f"HTTP {status}", status=status)
                last_error = f"HTTP {status}"
                wait = parse_retry_after(resp.headers.get("retry-after"))
                if wait is None:
                    wait = LONG_WAIT_429.get(host, 0.0) * (attempt + 1) if status == 429 else 0.0
                    wait = max(wait, self.backoff * (2 ** attempt))
            finally:
                self._last[host] = self.clock()
            if attempt < retries:
                self._wait(wait)
        raise FetchError(url, f"{last_error} after {retries + 1} attempts",
                         kind="http" if last_error.startswith("HTTP") else "transport",
                         status=status)
