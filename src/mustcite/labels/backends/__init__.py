"""LLM judge backends behind the :class:`mustcite.labels.judge.Judge` protocol.

``offline`` (the default, rule/ML judge of :mod:`mustcite.labels.offline`), ``neural`` (the
MiniLM cross-encoder of :mod:`mustcite.labels.neural`, built by ``mustcite labels train-judge``), ``openai``
(OpenAI-compatible chat completions: OpenAI, vLLM, llama.cpp server, Ollama), ``gemini``
(Google Gemini via google-genai) and ``local`` (in-process llama.cpp via xllamacpp).

An LLM backend implements ``async acall(inst, task) -> Judgement`` (one attempt; raises
:class:`TransientError` on 429/5xx/timeouts) and carries ``name``, ``model`` and
``prompt_version(task)``; :mod:`mustcite.labels.engine` adds concurrency, retries and caching.
Its synchronous ``judge`` (the protocol method) runs one call with the engine's retry policy.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...errors import MustciteError
from ..judge import CitationInstance, Judgement
from ..prompting import PromptTemplate, RenderedPrompt, load_prompt, parse_answer, render

BACKENDS = ("offline", "neural", "cascade", "openai", "gemini", "local")


class TransientError(Exception):
    """A failure worth retrying (HTTP 429, 5xx, timeout, connection error)."""

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None if absent/unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime
    import datetime as dt
    try:
        when = parsedate_to_datetime(value)
        return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())
    except (TypeError, ValueError):
        return None


class PromptedBackend:
    """Shared part of the LLM backends: prompt loading, rendering and answer parsing."""

    name = "llm"
    model = ""
    max_new_tokens = 4

    def __init__(self, *, prompts_dir: str | None = None,
                 prices: dict[str, tuple[float, float]] | None = None):
        self.templates: dict[str, PromptTemplate] = {t: load_prompt(t, prompts_dir) for t in ("type1", "type2")}
        self.prices = prices

    def prompt_version(self, task: str) -> str:
        return self.templates[task].version

    def render(self, inst: CitationInstance, task: str) -> RenderedPrompt:
        return render(self.templates[task], inst)

    def finish(self, text: str | None, task: str, **kw: Any) -> Judgement:
        value, error = parse_answer(text, task)
        return Judgement(value=value, raw=text or "", error=error, **kw)

    async def acall(self, inst: CitationInstance, task: str) -> Judgement:  # pragma: no cover
        raise NotImplementedError

    def judge(self, inst: CitationInstance, task: str) -> Judgement:
        from ..engine import call_with_retries
        return asyncio.run(call_with_retries(self.acall, inst, task))


def make_judge(backend: str = "offline", *, model: str | None = None, prompts_dir: str | None = None,
               prices: dict[str, tuple[float, float]] | None = None, **kw: Any):
    """The judge for a backend name (``offline``, ``neural``, ``cascade``, ``openai``, ``gemini``, ``local``).
    For ``neural`` and ``cascade``, ``model`` is the neural model folder (default ``<work>/models/judge-neural``)."""
    if backend == "offline":
        from .. import offline
        factory = getattr(offline, "default_judge", None) or getattr(offline, "OfflineJudge")
        return factory()
    if backend == "neural":
        from ..neural import NeuralJudge
        return NeuralJudge(model) if model else NeuralJudge()
    if backend == "cascade":
        from ..cascade import CascadeJudge
        return CascadeJudge(model)
    if backend == "openai":
        from .openai_compat import OpenAICompatJudge
        return OpenAICompatJudge(model=model, prompts_dir=prompts_dir, prices=prices, **kw)
    if backend == "gemini":
        from .gemini import GeminiJudge
        return GeminiJudge(model=model, prompts_dir=prompts_dir, prices=prices, **kw)
    if backend == "local":
        from .local_llama import LocalLlamaJudge
        return LocalLlamaJudge(prompts_dir=prompts_dir, **kw)
    raise MustciteError(f"unknown judge backend {backend!r}", hint=f"use one of {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "TransientError", "PromptedBackend", "make_judge", "parse_retry_after"]
