"""Annotation throughput (instances per second, Type I + Type II = 2 judge calls per instance).

- ``offline``: the offline judge on real extraction output (the first ``--papers`` NeurIPS 2024 papers);
- ``openai`` / ``gemini``: the real HTTP clients against a LOCAL STUB server on 127.0.0.1 that answers
  every request after a fixed latency (``--latency``, default 0.2 s) -- this measures the engine's
  concurrency and overhead, not any provider's speed;
- ``local``: the in-process llama.cpp judge, taken from ``benchmarks/results/local_judge_multicite.json``
  (seconds per call measured there) when that file exists -- not rerun here, it takes ~30 s a call.

Writes ``benchmarks/results/annotate_throughput.json``.

    .venv/bin/python benchmarks/annotate_throughput.py
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from mustcite.config import find_data_dir  # noqa: E402
from mustcite.extract import extract_paths  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.labels import annotate_dir  # noqa: E402


def start_stub(latency: float) -> tuple[ThreadingHTTPServer, str]:
    """OpenAI chat-completions + Gemini generateContent stub: answers "1"/"3" after ``latency`` s."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            time.sleep(latency)
            text = "1" if b"0 or 1" in body else "3"
            if self.path.endswith("/chat/completions"):
                out = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": 1}}
            else:
                out = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}],
                       "usageMetadata": {"promptTokenCount": len(body) // 4, "candidatesTokenCount": 1}}
            payload = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", default="1,8,32")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "annotate_throughput.json"))
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    papers = sorted((find_data_dir() / "neurips" / "fulltext_2024").glob("*.md.gz"))[: args.papers]
    results: dict = {"papers": [p.name for p in papers], "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        ex = Path(tmp) / "ex"
        extract_paths(papers, ex, workers=1, progress=False)
        s = annotate_dir(ex, backend="offline", concurrency=4, progress=False)
        results["instances"] = s["instances"]
        results["rows"].append({"backend": "offline", "what": "offline judge, real instances",
                                "concurrency": 4, "instances": s["instances"], "seconds": s["seconds"],
                                "instances_per_s": s["instances_per_s"]})
        srv, url = start_stub(args.latency)
        try:
            from mustcite.labels import GeminiJudge, OpenAICompatJudge
            for conc in (int(c) for c in args.concurrency.split(",")):
                for name, judge in (
                        ("openai", OpenAICompatJudge(model="gpt-4o-mini", base_url=url + "/v1", api_key="x")),
                        ("gemini", GeminiJudge(model="gemini-2.5-flash", base_url=url, api_key="x"))):
                    s = annotate_dir(ex, judge=judge, cache_path=Path(tmp) / f"{name}{conc}.sqlite",
                                     concurrency=conc, progress=False)
                    results["rows"].append({
                        "backend": name, "what": f"real client vs local stub with fixed {args.latency}s latency",
                        "concurrency": conc, "instances": s["instances"], "calls": s["calls"],
                        "seconds": s["seconds"], "instances_per_s": s["instances_per_s"],
                        "cost_per_instance_usd_at_list_price": s["cost_per_instance_usd"],
                        "tokens_note": "the stub reports request bytes/4 as input tokens"})
                    print(results["rows"][-1], flush=True)
        finally:
            srv.shutdown()
    local = ROOT / "benchmarks" / "results" / "local_judge_multicite.json"
    if local.is_file():
        m = json.loads(local.read_text())
        if m.get("seconds_per_call"):
            results["rows"].append({"backend": "local", "what": "from local_judge_multicite.json (Type I calls, "
                                    f"{m['threads']} thread(s), {m['judged']} calls)",
                                    "seconds_per_call": m["seconds_per_call"],
                                    "instances_per_s": round(1 / (2 * m["seconds_per_call"]), 4)})
    else:
        results["rows"].append({"backend": "local", "skipped": "no local_judge_multicite.json yet"})
    atomic_write_json(args.out, results)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
