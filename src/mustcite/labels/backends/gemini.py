"""Google Gemini judge via ``google-genai`` (the MasterSet paper used Gemini 2.5 Flash, Section 4.2).

Key from ``GEMINI_API_KEY`` (or ``api_key=``); model from ``--model`` / ``MUSTCITE_GEMINI_MODEL``
(default ``gemini-2.5-flash``).  The prompt's system block goes in ``system_instruction``, the user
block in ``contents``; temperature 0, at most 4 output tokens, thinking off for Flash models.
``base_url`` (or ``MUSTCITE_GEMINI_BASE_URL``) replaces the API endpoint through
``HttpOptions(base_url=...)`` -- the tests point it at a local server.  google-genai's own retries
stay off (no ``retry_options``); the engine retries 429/5xx/timeouts, honouring Retry-After.
"""

from __future__ import annotations

import os

import httpx

try:  # google-genai >= 3 talks through httpx2, older versions through httpx
    import httpx2
    _NET_ERRORS: tuple[type[BaseException], ...] = (httpx.TimeoutException, httpx.TransportError,
                                                    httpx2.TimeoutException, httpx2.TransportError, TimeoutError)
except ImportError:  # pragma: no cover
    _NET_ERRORS = (httpx.TimeoutException, httpx.TransportError, TimeoutError)

from ... import lazy_libs
from ...errors import MustciteError
from ...retry import TransientError, parse_retry_after
from ..costs import cost_usd
from ..judge import CitationInstance, Judgement
from .prompted import PromptedBackend

DEFAULT_MODEL = "gemini-2.5-flash"


class GeminiJudge(PromptedBackend):
    name = "gemini"

    def __init__(self, *, model: str | None = None, api_key: str | None = None, base_url: str | None = None,
                 timeout: float = 60.0, prompts_dir: str | None = None,
                 prices: dict[str, tuple[float, float]] | None = None, max_new_tokens: int = 4):
        super().__init__(prompts_dir=prompts_dir, prices=prices)
        genai = lazy_libs.google_genai("the gemini backend")
        types = genai.types
        self.model = model or os.environ.get("MUSTCITE_GEMINI_MODEL") or DEFAULT_MODEL
        key = api_key if api_key is not None else os.environ.get("GEMINI_API_KEY")
        if not key:
            raise MustciteError("the gemini backend needs an API key", hint="set GEMINI_API_KEY")
        base_url = base_url or os.environ.get("MUSTCITE_GEMINI_BASE_URL")
        opts = types.HttpOptions(timeout=int(timeout * 1000), base_url=base_url or None)
        self._types = types
        self._client = genai.Client(api_key=key, http_options=opts)
        self.max_new_tokens = max_new_tokens

    def config(self, system: str):
        t = self._types
        kw = {}
        if "flash" in self.model:
            kw["thinking_config"] = t.ThinkingConfig(thinking_budget=0)
        return t.GenerateContentConfig(system_instruction=system, temperature=0,
                                       max_output_tokens=self.max_new_tokens, candidate_count=1, **kw)

    async def acall(self, inst: CitationInstance, task: str) -> Judgement:
        errors = lazy_libs.google_genai("the gemini backend").errors
        p = self.render(inst, task)
        try:
            resp = await self._client.aio.models.generate_content(
                model=self.model, contents=p.user, config=self.config(p.system))
        except errors.APIError as exc:
            code = int(exc.code or 0)
            if code == 429 or code >= 500:
                headers = getattr(getattr(exc, "response", None), "headers", None) or {}
                raise TransientError(f"HTTP {code}", status=code,
                                     retry_after=parse_retry_after(headers.get("retry-after"))) from None
            raise MustciteError(f"Gemini answered HTTP {code}: {exc.message}",
                                hint="check GEMINI_API_KEY and --model") from None
        except _NET_ERRORS as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        try:
            text = resp.text
        except (ValueError, AttributeError):
            text = None
        usage = resp.usage_metadata
        n_in = int(getattr(usage, "prompt_token_count", 0) or 0)
        n_out = int(getattr(usage, "candidates_token_count", 0) or 0)
        return self.finish(text, task, input_tokens=n_in, output_tokens=n_out,
                           cost_usd=cost_usd(self.model, n_in, n_out, self.prices))


__all__ = ["GeminiJudge", "DEFAULT_MODEL"]
