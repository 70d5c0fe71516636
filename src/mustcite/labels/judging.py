"""The annotation engine: judge many (instance, task) jobs concurrently, cached and resumable.

asyncio with at most ``concurrency`` calls in flight (a fixed pool of workers under a semaphore);
retries with exponential backoff and full jitter on
:class:`~mustcite.retry.TransientError` (429, 5xx, timeouts), honouring Retry-After; every
answer is committed to the SQLite cache (:mod:`mustcite.labels.cache`) as it arrives, so a rerun
after a crash repeats no call.  ``dry_run`` counts the cache misses and estimates their cost.
Synchronous judges (the offline one) run in worker threads.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from ..retry import TransientError
from .cache import JudgeCache
from .costs import CostLedger, cost_usd
from .judge import CitationInstance, Judgement

Job = tuple[CitationInstance, str]   # (instance, "type1" | "type2")


@dataclass
class RetryPolicy:
    max_retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff; a server's Retry-After is a lower bound."""
        d = random.uniform(0, min(self.max_delay, self.base_delay * (2 ** attempt)))
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay))
        return d


@dataclass
class EngineResult:
    judgements: dict[tuple[str, str], Judgement] = field(default_factory=dict)  # (instance key, task)
    calls: int = 0
    cached: int = 0
    retries: int = 0
    failed: int = 0            # transport failures after all retries (not cached; rerun retries them)
    parse_failures: int = 0
    errors: int = 0            # other answers without a label (e.g. a malformed local response); cached
    seconds: float = 0.0
    ledger: CostLedger = field(default_factory=CostLedger)


@dataclass
class DryRun:
    jobs: int
    calls: int                 # cache misses = calls a real run would make
    cached: int
    est_input_tokens: int
    est_cost_usd: float


async def call_with_retries(acall: Callable[[CitationInstance, str], Awaitable[Judgement]],
                            inst: CitationInstance, task: str, policy: RetryPolicy | None = None,
                            on_retry: Callable[[TransientError], None] | None = None) -> Judgement:
    """One judged answer; TransientErrors are retried, the last one becomes ``Judgement(error=...)``."""
    policy = policy or RetryPolicy()
    for attempt in range(policy.max_retries + 1):
        try:
            return await acall(inst, task)
        except TransientError as exc:
            if attempt == policy.max_retries:
                return Judgement(value=None, error=f"transient: {exc} (gave up after {attempt + 1} tries)")
            if on_retry is not None:
                on_retry(exc)
            await asyncio.sleep(policy.delay(attempt, exc.retry_after))
    raise AssertionError("unreachable")


def judge_identity(judge: Any, task: str) -> tuple[str, str, str]:
    """(backend, model, prompt version) of a judge, the first three parts of a cache key.
    A name like ``"offline-lr-v1: logistic regression ..."`` is cut at the colon; a non-string
    ``model`` attribute (the offline judge's fitted model) counts as no model name."""
    pv = judge.prompt_version(task) if hasattr(judge, "prompt_version") else getattr(judge, "version", "")
    name = str(getattr(judge, "name", type(judge).__name__)).split(":", 1)[0].strip()
    model = getattr(judge, "model", "")
    return (name, model if isinstance(model, str) else "", str(pv or ""))


def judge_label(judge: Any) -> str:
    """What a labelled reference records in its ``judge`` field: backend/model/prompt versions."""
    parts = [p for p in judge_identity(judge, "type1")[:2] if p]
    v1, v2 = judge_identity(judge, "type1")[2], judge_identity(judge, "type2")[2]
    if v1:
        parts.append(v1 if v1 == v2 else f"{v1}+{v2}")
    return "/".join(parts)


def cache_key(judge: Any, inst: CitationInstance, task: str) -> tuple[str, str, str, str, str]:
    return (*judge_identity(judge, task), task, inst.key())


def _acall_of(judge: Any) -> Callable[[CitationInstance, str], Awaitable[Judgement]]:
    if hasattr(judge, "acall"):
        return judge.acall

    async def run_sync(inst: CitationInstance, task: str) -> Judgement:
        return await asyncio.to_thread(judge.judge, inst, task)
    return run_sync


def _dedupe(jobs: Iterable[Job]) -> list[Job]:
    seen, out = set(), []
    for inst, task in jobs:
        k = (inst.key(), task)
        if k not in seen:
            seen.add(k)
            out.append((inst, task))
    return out


async def run_async(judge: Any, jobs: Iterable[Job], cache: JudgeCache | None = None, *,
                    concurrency: int = 8, policy: RetryPolicy | None = None, progress: bool = True,
                    on_answer: Callable[[Job, Judgement], None] | None = None) -> EngineResult:
    """Judge every job (duplicates once).  An exception from ``judge`` or ``on_answer`` stops the run;
    the answers committed before it stay in the cache."""
    jobs = _dedupe(jobs)
    res = EngineResult()
    t0 = time.perf_counter()
    model_of = lambda task: judge_identity(judge, task)[1] or judge_identity(judge, task)[0]  # noqa: E731
    todo: list[tuple[Job, tuple]] = []
    for job in jobs:
        key = cache_key(judge, job[0], job[1])
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            res.judgements[(job[0].key(), job[1])] = hit
            res.cached += 1
            res.ledger.add(model_of(job[1]), hit)
            res.parse_failures += hit.value is None and (hit.error or "").startswith("parse")
        else:
            todo.append((job, key))
    acall = _acall_of(judge)
    sem = asyncio.Semaphore(max(1, concurrency))
    bar = tqdm(total=len(todo), desc=f"judge {judge_identity(judge, 'type1')[0]}", unit="call",
               disable=not progress or not todo)

    def count_retry(_exc: TransientError) -> None:
        res.retries += 1

    async def one(job: Job, key: tuple) -> None:
        async with sem:
            s = time.perf_counter()
            j = await call_with_retries(acall, job[0], job[1], policy, count_retry)
            secs = time.perf_counter() - s
        res.calls += 1
        if j.error and j.error.startswith("transient"):
            res.failed += 1
        else:
            if cache is not None:
                cache.put(key, j, secs)
            res.parse_failures += j.value is None and (j.error or "").startswith("parse")
            res.errors += j.value is None and not (j.error or "").startswith("parse")
        res.judgements[(job[0].key(), job[1])] = j
        res.ledger.add(model_of(job[1]), j)
        bar.update(1)
        if on_answer is not None:
            on_answer(job, j)

    queue: asyncio.Queue = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)

    async def worker() -> None:   # a fixed pool of workers, not one task per job
        while not queue.empty():
            job, key = queue.get_nowait()
            await one(job, key)

    tasks = [asyncio.create_task(worker()) for _ in range(min(len(todo), max(1, concurrency)))]
    try:
        if tasks:
            await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        bar.close()
        res.seconds = time.perf_counter() - t0
    return res


def run(judge: Any, jobs: Iterable[Job], cache: JudgeCache | None = None, **kw: Any) -> EngineResult:
    """Synchronous :func:`run_async`."""
    return asyncio.run(run_async(judge, jobs, cache, **kw))


def dry_run(judge: Any, jobs: Iterable[Job], cache: JudgeCache | None = None, *,
            prices: dict[str, tuple[float, float]] | None = None) -> DryRun:
    """How many calls a run would make (cache misses) and their estimated cost.

    Input tokens are estimated as rendered prompt characters / 4 (+8 for chat framing), output as
    ``judge.max_new_tokens`` (4 for the API backends)."""
    jobs = _dedupe(jobs)
    calls = cached = toks = 0
    cost = 0.0
    for inst, task in jobs:
        if cache is not None and cache.contains(cache_key(judge, inst, task)):
            cached += 1
            continue
        calls += 1
        if hasattr(judge, "render"):
            n_in = judge.render(inst, task).chars() // 4 + 8
            toks += n_in
            model = getattr(judge, "model", "")
            cost += cost_usd(model, n_in, getattr(judge, "max_new_tokens", 4), prices or getattr(judge, "prices", None))
    return DryRun(jobs=len(jobs), calls=calls, cached=cached, est_input_tokens=toks, est_cost_usd=cost)


def jobs_for(instances: Sequence[CitationInstance], tasks: Sequence[str] = ("type1", "type2")) -> list[Job]:
    """Both passes are separate jobs (MasterSet runs Type I and Type II in separate passes)."""
    return [(inst, task) for task in tasks for inst in instances]


__all__ = ["Job", "RetryPolicy", "EngineResult", "DryRun", "call_with_retries", "cache_key",
           "judge_identity", "judge_label", "run_async", "run", "dry_run", "jobs_for"]
