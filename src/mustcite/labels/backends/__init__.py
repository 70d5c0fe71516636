"""LLM judge backends behind the :class:`mustcite.labels.judge.Judge` protocol.

``offline`` (the default, rule/ML judge of :mod:`mustcite.labels.offline`), ``neural`` (the
MiniLM cross-encoder of :mod:`mustcite.labels.neural`, built by ``mustcite labels train-judge``), ``openai``
(OpenAI-compatible chat completions: OpenAI, vLLM, llama.cpp server, Ollama), ``gemini``
(Google Gemini via google-genai) and ``local`` (in-process llama.cpp via xllamacpp).

An LLM backend implements ``async acall(inst, task) -> Judgement`` (one attempt; raises
:class:`TransientError` on 429/5xx/timeouts) and carries ``name``, ``model`` and
``prompt_version(task)``; :mod:`mustcite.labels.judging` adds concurrency, retries and caching.
Its synchronous ``judge`` (the protocol method) runs one call with the engine's retry policy.
"""

from __future__ import annotations

from typing import Any

from ...errors import MustciteError
from ...retry import TransientError, parse_retry_after
from .gemini import GeminiJudge
from .local_llama import LocalLlamaJudge
from .openai_compat import OpenAICompatJudge
from .prompted import PromptedBackend

BACKENDS = ("offline", "neural", "cascade", "openai", "gemini", "local")


def make_judge(backend: str = "offline", *, model: str | None = None, prompts_dir: str | None = None,
               prices: dict[str, tuple[float, float]] | None = None, **kw: Any):
    """The judge for a backend name (``offline``, ``neural``, ``cascade``, ``openai``, ``gemini``, ``local``).
    For ``neural`` and ``cascade``, ``model`` is the neural model folder (default ``<work>/models/judge-neural``)."""
    if backend == "offline":
        from .. import offline  # on demand: the offline, neural and cascade judges load scikit-learn
        factory = getattr(offline, "default_judge", None) or offline.OfflineJudge
        return factory()
    if backend == "neural":
        from ..neural import NeuralJudge  # on demand (scikit-learn)
        return NeuralJudge(model) if model else NeuralJudge()
    if backend == "cascade":
        from ..cascade import CascadeJudge  # on demand (scikit-learn)
        return CascadeJudge(model)
    if backend == "openai":
        return OpenAICompatJudge(model=model, prompts_dir=prompts_dir, prices=prices, **kw)
    if backend == "gemini":
        return GeminiJudge(model=model, prompts_dir=prompts_dir, prices=prices, **kw)
    if backend == "local":
        return LocalLlamaJudge(prompts_dir=prompts_dir, **kw)
    raise MustciteError(f"unknown judge backend {backend!r}", hint=f"use one of {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "TransientError", "PromptedBackend", "make_judge", "parse_retry_after"]
