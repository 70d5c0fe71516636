"""The shared part of the LLM judge backends: prompt loading, rendering and answer parsing, and a
synchronous ``judge`` that runs one call with the annotation engine's retry policy."""

from __future__ import annotations

import asyncio
from typing import Any

from ..judge import CitationInstance, Judgement
from ..judging import call_with_retries
from ..prompting import PromptTemplate, RenderedPrompt, load_prompt, parse_answer, render


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
        return asyncio.run(call_with_retries(self.acall, inst, task))
