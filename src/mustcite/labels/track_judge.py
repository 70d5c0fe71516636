"""An LLM that answers "is this track the main conference?" for the venue collectors, built on the
judge backends' clients and configuration (``mustcite collect --track-judge openai|gemini|local``)."""

from __future__ import annotations

from pathlib import Path

import httpx

from ..collect.tracks import TRACK_JUDGES, TrackJudge
from ..errors import UsageError
from .backends.gemini import GeminiJudge
from .backends.local_llama import LocalLlamaJudge
from .backends.openai_compat import OpenAICompatJudge


def make_track_judge(backend: str, cache_path: str | Path | None = None, model: str | None = None) -> TrackJudge | None:
    """``rules`` -> None; ``openai`` / ``gemini`` / ``local`` -> a :class:`TrackJudge` calling the
    judge backends' configuration (same environment variables as ``mustcite judge``)."""
    if backend == "rules":
        return None
    if backend not in TRACK_JUDGES:
        raise UsageError(f"unknown --track-judge {backend!r}: use {', '.join(TRACK_JUDGES)}")
    if backend == "openai":
        j = OpenAICompatJudge(model=model)

        def chat(system: str, user: str) -> str:
            headers = {"Authorization": f"Bearer {j.api_key}"} if j.api_key else {}
            body = {"model": j.model, "temperature": 0, "max_tokens": 3,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
            r = httpx.post(f"{j.base_url}/chat/completions", json=body, headers=headers, timeout=60)
            r.raise_for_status()
            return r.json()["choices"][0]["message"]["content"]
        return TrackJudge(chat, f"openai:{j.model}", cache_path)
    if backend == "gemini":
        j = GeminiJudge(model=model)

        def chat(system: str, user: str) -> str:
            resp = j._client.models.generate_content(model=j.model, contents=user, config=j.config(system))
            return resp.text or ""
        return TrackJudge(chat, f"gemini:{j.model}", cache_path)
    j = LocalLlamaJudge()

    def chat(system: str, user: str) -> str:
        out = j.complete(system, user)
        return out["choices"][0]["message"]["content"]
    return TrackJudge(chat, "local", cache_path)
