"""Load, version and render the judge prompts; parse the judge's single-digit answer.

Prompt files live in ``mustcite/labels/prompts/`` (``type1.v1.txt``, ``type2.v1.txt`` and the
few-shot anchors ``anchors.v1.json``).  A user may pass their own folder (``--prompts DIR``): it must
hold ``type1*.txt`` and/or ``type2*.txt`` (the highest ``.vN`` wins) and may hold ``anchors*.json``.
A prompt file has a ``[SYSTEM]`` and a ``[USER]`` block; ``#`` lines are comments; placeholders are
``{examples}``, ``{title}``, ``{cited_as}``, ``{ref_title}`` and ``{contexts}``.

The *prompt version* is ``<file name>@<sha256[:12] of template + anchors>``, so editing a prompt
changes the cache key of every answer (see :mod:`mustcite.labels.cache`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import MustciteError
from .judge import CitationInstance

ALLOWED: dict[str, tuple[int, ...]] = {"type1": (0, 1), "type2": (1, 2, 3, 4, 5)}
PLACEHOLDERS = ("examples", "title", "cited_as", "ref_title", "contexts")
MAX_CONTEXTS = 12          # contexts shown per instance (first ones in paper order)
MAX_CONTEXT_CHARS = 500    # each context is cut to this many characters


@dataclass(frozen=True)
class PromptTemplate:
    task: str
    system: str
    user: str
    examples: str
    version: str           # "type1.v1.txt@0123abcd4567"
    path: str


@dataclass(frozen=True)
class RenderedPrompt:
    system: str
    user: str
    version: str

    def chars(self) -> int:
        return len(self.system) + len(self.user)


def _version_key(path: Path) -> tuple[int, str]:
    m = re.search(r"\.v(\d+)\.txt$", path.name)
    return (int(m.group(1)) if m else 0, path.name)


def _find(folder: Path, task: str) -> Path:
    if (folder / f"{task}.txt").is_file():
        return folder / f"{task}.txt"
    cands = sorted(folder.glob(f"{task}.v*.txt"), key=_version_key)
    if not cands:
        raise MustciteError(f"no prompt file for {task} (expected {task}.txt or {task}.vN.txt)",
                            path=folder, hint="see mustcite/labels/prompts/ for the format")
    return cands[-1]


def _find_anchors(folder: Path) -> Path | None:
    cands = sorted(folder.glob("anchors*.json"))
    return cands[-1] if cands else None


def _format_examples(task: str, anchors: dict) -> str:
    items = anchors.get(task) or []
    if not items:
        return ""
    lines = ["Examples:"]
    for ex in items:
        if task == "type1":
            lines.append(f'- Section: "{ex["section"]}" Context: "{ex["context"]}" -> {ex["why"]}. '
                         f'Answer: {ex["answer"]}')
        else:
            lines.append(f'- {ex["case"]}: {ex["answer"]}')
    return "\n".join(lines)


def parse_template(text: str, *, task: str, path: str | Path, anchors: dict | None = None,
                   anchors_text: str = "") -> PromptTemplate:
    """Split a prompt file into its blocks and check its placeholders."""
    body = "\n".join(line for line in text.split("\n") if not line.startswith("#"))
    if "[SYSTEM]" not in body or "[USER]" not in body:
        raise MustciteError("prompt file needs a [SYSTEM] and a [USER] block", path=path)
    system, user = body.split("[SYSTEM]", 1)[1].split("[USER]", 1)
    for name in re.findall(r"\{(\w+)\}", system + user):
        if name not in PLACEHOLDERS:
            raise MustciteError(f"unknown placeholder {{{name}}}", path=path,
                                hint=f"allowed: {', '.join(PLACEHOLDERS)}")
    if "{contexts}" not in user:
        raise MustciteError("the [USER] block must contain {contexts}", path=path)
    digest = hashlib.sha256((text + "\0" + anchors_text).encode("utf-8")).hexdigest()[:12]
    return PromptTemplate(task=task, system=system.strip(), user=user.strip(),
                          examples=_format_examples(task, anchors or {}),
                          version=f"{Path(path).name}@{digest}", path=str(path))


def load_prompt(task: str, prompts_dir: str | Path | None = None) -> PromptTemplate:
    """The prompt for ``task`` ("type1"/"type2") from ``prompts_dir`` or the packaged prompts."""
    if task not in ALLOWED:
        raise MustciteError(f"unknown task {task!r}", hint="use type1 or type2")
    if prompts_dir is None:
        folder = Path(str(resources.files("mustcite.labels").joinpath("prompts")))
    else:
        folder = Path(prompts_dir)
        if not folder.is_dir():
            raise MustciteError("prompt folder not found", path=folder)
    path = _find(folder, task)
    anchors_path = _find_anchors(folder)
    anchors, anchors_text = {}, ""
    if anchors_path is not None:
        anchors_text = anchors_path.read_text(encoding="utf-8")
        try:
            anchors = json.loads(anchors_text)
        except json.JSONDecodeError as exc:
            raise MustciteError(f"malformed JSON: {exc.msg}", path=anchors_path, line=exc.lineno) from None
    try:
        return parse_template(path.read_text(encoding="utf-8"), task=task, path=path,
                              anchors=anchors, anchors_text=anchors_text)
    except (KeyError, TypeError) as exc:
        raise MustciteError(f"bad few-shot anchor: missing {exc}", path=anchors_path) from None


def format_contexts(contexts, *, max_contexts: int = MAX_CONTEXTS,
                    max_chars: int = MAX_CONTEXT_CHARS) -> str:
    """Numbered ``Section: "..."`` / ``Context: "..."`` lines, as in MasterSet Appendix E.2."""
    out = []
    for i, (section, context) in enumerate(list(contexts)[:max_contexts], 1):
        ctx = " ".join(str(context).split())
        if len(ctx) > max_chars:
            ctx = ctx[: max_chars - 3] + "..."
        out.append(f'{i}. Section: "{" ".join(str(section).split()) or "unknown"}"\n   Context: "{ctx}"')
    extra = len(contexts) - max_contexts
    if extra > 0:
        out.append(f"({extra} more contexts not shown)")
    return "\n".join(out) if out else "(no context extracted)"


def render(template: PromptTemplate, inst: CitationInstance) -> RenderedPrompt:
    """Fill the template with one citation instance."""
    values = {
        "examples": template.examples,
        "title": inst.citing_title or "(unknown)",
        "cited_as": inst.cite,
        "ref_title": inst.ref_title or inst.ref_raw[:200],
        "contexts": format_contexts(inst.contexts),
    }
    fill = lambda s: re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], s)  # noqa: E731
    return RenderedPrompt(system=fill(template.system).strip(), user=fill(template.user).strip(),
                          version=template.version)


_DIGIT = re.compile(r"^\s*(?:answer|score)?\s*:?\s*(\d)\s*[.!]?\s*$", re.IGNORECASE)


def parse_answer(text: str | None, task: str) -> tuple[int | None, str | None]:
    """``(value, None)`` for a valid single-digit answer, else ``(None, error)``.

    Only a lone digit of the task's label set counts ("1", " 4\\n", "Score: 4"); "maybe", "",
    "10" and an out-of-range digit ("7" for Type I) are parse failures, never mapped to a label.
    """
    if text is None or not text.strip():
        return None, "parse: empty answer"
    m = _DIGIT.match(text)
    if not m:
        return None, f"parse: not a single digit: {text.strip()[:40]!r}"
    value = int(m.group(1))
    if value not in ALLOWED[task]:
        return None, f"parse: {value} is not a {task} label {ALLOWED[task]}"
    return value, None


def digit_probs(top: dict[str, float], task: str) -> dict[int, float] | None:
    """Normalised probabilities of the allowed digits from ``{token: logprob}``; None if none is there."""
    probs: dict[int, float] = {}
    for tok, lp in top.items():
        t = tok.strip()
        if len(t) == 1 and t.isdigit() and int(t) in ALLOWED[task]:
            probs[int(t)] = probs.get(int(t), 0.0) + math.exp(lp)
    total = sum(probs.values())
    if total <= 0:
        return None
    return {k: v / total for k, v in sorted(probs.items())}


__all__ = ["ALLOWED", "PromptTemplate", "RenderedPrompt", "load_prompt", "parse_template",
           "format_contexts", "render", "parse_answer", "digit_probs"]
