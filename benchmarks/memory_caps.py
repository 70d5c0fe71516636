"""Peak memory of a running server under oversized bodies: a 100 MB chunked JSON body, a 100 MB
chunked multipart upload and a gzip bomb upload (200 MB of text in ~200 KB).

Usage::

    python benchmarks/memory_caps.py [--model DIR] [--out benchmarks/results/memory_caps.json]

Starts ``mustcite serve`` (loopback), waits for the model, then sends each body and records the
answer and the server's resident memory (RSS) and peak (VmHWM) before and after. The caps under
test: JSON bodies 256 KB and uploads 20 MB, counted as they arrive; a draft's text 8,000,000
characters once decompressed.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

MB = 2**20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mem(pid: int) -> dict[str, float]:
    """RSS and peak RSS (VmHWM) of ``pid`` in MB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": fields["VmRSS"], "peak_rss_mb": fields["VmHWM"]}


def _chunks(total: int, block: bytes, head: bytes = b""):
    sent = len(head)
    if head:
        yield head
    while sent < total:
        yield block
        sent += len(block)


#: a well-formed start of a multipart body: one file part whose content then never ends
_PART_HEAD = (b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.md"\r\n'
              b"Content-Type: text/markdown\r\n\r\n")


def _bomb(chars: int = 200 * MB) -> bytes:
    buf = io.BytesIO()
    line = b"lorem ipsum dolor sit amet " * 40 + b"\n"
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(b"# A title\n\n## Abstract\n\nSome words.\n\n")
        for _ in range(chars // len(line)):
            gz.write(line)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    import httpx

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path)
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "memory_caps.json")
    args = ap.parse_args(argv)
    port = _free_port()
    cmd = [sys.executable, "-m", "mustcite.cli.main", "serve", "--port", str(port)]
    if args.model:
        cmd += ["--model", str(args.model)]
    log = open(args.out.with_suffix(".log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    url = f"http://127.0.0.1:{port}"
    rows = []
    try:
        t0 = time.perf_counter()
        while "mustcite: model loaded" not in Path(log.name).read_text():
            if proc.poll() is not None or time.perf_counter() - t0 > 600:
                raise SystemExit(f"the server did not start (see {log.name})")
            time.sleep(1)
        with httpx.Client(base_url=url, timeout=300) as c:
            c.post("/api/recommend", json={"title": "graph neural networks for molecules"})   # warm
            base = _mem(proc.pid)
            size = args.size_mb * MB
            bomb = _bomb()
            cases = [
                ("chunked JSON body", "/api/recommend",
                 dict(content=_chunks(size, b" " * MB), headers={"Content-Type": "application/json"})),
                ("chunked multipart upload", "/api/audit",
                 dict(content=_chunks(size, b"x" * MB, _PART_HEAD),
                      headers={"Content-Type": "multipart/form-data; boundary=b"})),
                (f"gzip bomb upload ({len(bomb) // 1024} KB -> 200 MB of text)", "/api/audit",
                 dict(files={"file": ("bomb.md.gz", bomb, "application/gzip")})),
            ]
            for name, path, kw in cases:
                before = _mem(proc.pid)
                t1 = time.perf_counter()
                try:
                    r = c.post(path, **kw)
                    status, message = r.status_code, r.json().get("error", "")
                except httpx.HTTPError as exc:      # the server may close the connection after 413
                    status, message = None, f"{exc.__class__.__name__}: {exc}"
                after = _mem(proc.pid)
                rows.append({"body": name, "path": path,
                             "sent_mb": args.size_mb if "chunked" in name else round(len(bomb) / MB, 2),
                             "status": status, "message": message[:160], "seconds": round(time.perf_counter() - t1, 2),
                             "rss_before_mb": before["rss_mb"], "rss_after_mb": after["rss_mb"],
                             "peak_rss_mb": after["peak_rss_mb"],
                             "peak_growth_mb": round(after["peak_rss_mb"] - base["peak_rss_mb"], 1)})
                print(json.dumps(rows[-1]), file=sys.stderr)
            assert c.get("/api/health").status_code == 200
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    out = {"server_after_warmup": base, "caps": {"json_body_bytes": 256 * 1024, "upload_bytes": 20 * MB,
                                                 "draft_text_chars": 8_000_000}, "cases": rows}
    from mustcite.io import atomic_write_json

    atomic_write_json(args.out, out)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
