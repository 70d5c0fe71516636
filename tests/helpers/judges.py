"""A real local HTTP server speaking the OpenAI chat-completions and the Gemini generateContent
formats (:class:`Stub`; the ``stub`` fixture of conftest.py starts one per test), judges pointed at
it, and a fast retry policy. No shared data needed."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mustcite.labels.backends import make_judge
from mustcite.labels.backends.openai_compat import OpenAICompatJudge
from mustcite.labels.judging import RetryPolicy

FAST = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=2.0)


class Stub:
    """A threaded HTTP server on 127.0.0.1.  ``script`` holds actions for the next requests:
    ("status", code, headers), ("sleep", seconds) or ("text", answer); afterwards it answers "1"
    for Type I prompts and "4" for Type II prompts, in the format the path asks for."""

    def __init__(self):
        self.script: list[tuple] = []
        self.requests: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep pytest output clean
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                if not raw:     # a client closed before sending its body (a crashed run): not a call
                    return
                body = json.loads(raw)
                with stub.lock:
                    stub.requests.append((self.path, body))
                    action = stub.script.pop(0) if stub.script else None
                if action and action[0] == "status":
                    self.send_response(action[1])
                    for k, v in (action[2] if len(action) > 2 else {}).items():
                        self.send_header(k, v)
                    payload = json.dumps({"error": {"code": action[1], "message": "stub", "status": "X"}}).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if action and action[0] == "sleep":
                    time.sleep(action[1])
                text = action[1] if action and action[0] == "text" else stub.default(body)
                if self.path.endswith("/chat/completions"):
                    out = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": text}}],
                           "usage": {"prompt_tokens": 700, "completion_tokens": 1, "total_tokens": 701}}
                else:
                    out = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                           "finishReason": "STOP", "index": 0}],
                           "usageMetadata": {"promptTokenCount": 650, "candidatesTokenCount": 1,
                                             "totalTokenCount": 651}, "modelVersion": "gemini-2.5-flash"}
                payload = json.dumps(out).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def default(body: dict) -> str:
        blob = json.dumps(body)
        return "1" if "0 or 1" in blob else "4"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def openai_judge(stub: Stub, **kw) -> OpenAICompatJudge:
    return OpenAICompatJudge(model="gpt-4o-mini", base_url=stub.url + "/v1", api_key="test-key", timeout=0.5, **kw)


def gemini_judge(stub: Stub, **kw):
    return make_judge("gemini", model="gemini-2.5-flash", api_key="test-key", base_url=stub.url, timeout=0.5, **kw)
