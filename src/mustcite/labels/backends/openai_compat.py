"""OpenAI-compatible chat-completions judge over httpx (OpenAI, vLLM, llama.cpp server, Ollama).

Configuration: arguments, else the environment variables ``MUSTCITE_OPENAI_BASE_URL``
(default ``https://api.openai.com/v1``), ``MUSTCITE_OPENAI_MODEL`` (default ``gpt-4o-mini``) and
``OPENAI_API_KEY`` (may be empty for local servers).  Temperature 0, at most 4 new tokens.
HTTP 429/5xx, timeouts and connection errors raise :class:`TransientError` (with Retry-After) for the
engine to retry; other HTTP errors raise :class:`MustciteError` (a bad key or model name is not
worth retrying).
"""

from __future__ import annotations

import os

import httpx

from ...errors import MustciteError
from ...retry import TransientError, parse_retry_after
from ..costs import cost_usd
from ..judge import CitationInstance, Judgement
from .prompted import PromptedBackend

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"


class OpenAICompatJudge(PromptedBackend):
    name = "openai"

    def __init__(self, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, prompts_dir: str | None = None,
                 prices: dict[str, tuple[float, float]] | None = None, max_new_tokens: int = 4):
        super().__init__(prompts_dir=prompts_dir, prices=prices)
        self.model = model or os.environ.get("MUSTCITE_OPENAI_MODEL") or DEFAULT_MODEL
        self.base_url = (base_url or os.environ.get("MUSTCITE_OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.timeout = timeout
        self.max_new_tokens = max_new_tokens
        self._ssl = httpx.create_ssl_context()   # built once: creating it per call costs ~0.1 s

    def request_body(self, inst: CitationInstance, task: str) -> dict:
        p = self.render(inst, task)
        return {"model": self.model, "temperature": 0, "max_tokens": self.max_new_tokens,
                "messages": [{"role": "system", "content": p.system}, {"role": "user", "content": p.user}]}

    async def acall(self, inst: CitationInstance, task: str) -> Judgement:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            # a client per call: the engine may run each call in its own event loop (sync judge())
            async with httpx.AsyncClient(timeout=self.timeout, verify=self._ssl) as client:
                resp = await client.post(f"{self.base_url}/chat/completions",
                                         json=self.request_body(inst, task), headers=headers)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        if resp.status_code == 429 or resp.status_code >= 500:
            raise TransientError(f"HTTP {resp.status_code}", status=resp.status_code,
                                 retry_after=parse_retry_after(resp.headers.get("retry-after")))
        if resp.status_code >= 400:
            raise MustciteError(f"{self.base_url} answered HTTP {resp.status_code}: {resp.text[:200]}",
                                hint="check MUSTCITE_OPENAI_BASE_URL, MUSTCITE_OPENAI_MODEL and OPENAI_API_KEY")
        try:
            data = resp.json()
            text = data["choices"][0]["message"].get("content")
        except (ValueError, KeyError, IndexError, TypeError):
            return Judgement(value=None, raw=resp.text[:200], error="parse: response is not a chat completion")
        usage = data.get("usage") or {}
        n_in, n_out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        return self.finish(text, task, input_tokens=n_in, output_tokens=n_out,
                           cost_usd=cost_usd(self.model, n_in, n_out, self.prices))


__all__ = ["OpenAICompatJudge", "DEFAULT_BASE_URL", "DEFAULT_MODEL"]
