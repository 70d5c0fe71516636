"""The annotation engine and ``mustcite annotate`` on real extraction output (two NeurIPS 2024 papers),
with the offline judge and with the OpenAI-compatible judge against a local stub server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import DATA
from helpers.judges import FAST, Stub, openai_judge  # noqa: F401  (the server: the `stub` fixture of conftest.py)

from mustcite.cli.main import main
from mustcite.extract.records import validate_reference_file
from mustcite.extract.runner import extract_paths
from mustcite.labels.annotate import annotate_dir
from mustcite.labels.cache import JudgeCache
from mustcite.labels.costs import CostLedger, cost_usd, price_for
from mustcite.labels.judge import Judgement, instances_from_reference_file
from mustcite.labels.judging import jobs_for, judge_label, run

PAPERS = sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[:2]


@pytest.fixture(scope="module")
def extracted(data_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("extract") / "ex"
    extract_paths(PAPERS, out, workers=1, progress=False)
    return out


@pytest.fixture()
def ex(extracted, tmp_path) -> Path:
    d = tmp_path / "ex"
    shutil.copytree(extracted, d)
    return d


def _refs(folder: Path) -> dict[str, list[dict]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))
            if not p.name.endswith(".meta.json") and p.name not in ("summary.json", "labels_summary.json")}


@pytest.mark.data
def test_extraction_fixture_is_real(ex):
    refs = _refs(ex)
    assert sorted(refs) == ["01XV5Za56k", "01lhHg8H9p"]
    assert sum(len(v) for v in refs.values()) == 116


@pytest.mark.data
def test_annotate_offline_writes_labels_and_summary(ex):
    before = {p.name: p.read_bytes() for p in ex.glob("*.json")}
    s = annotate_dir(ex, progress=False)
    refs = _refs(ex)
    assert s["papers"] == 2 and s["instances"] == 116 and s["judge"] == "offline-lr-v1"
    for key in ("type1", "type2", "type3", "must_cite"):
        assert sum(s["counts"][key].values()) == 116
    n3 = sum(1 for items in refs.values() for it in items if it.get("mentions", len(it["contexts"])) >= 3)
    assert s["counts"]["type3"].get("1", 0) == n3
    assert s["parse_failures"] == {"type1": 0, "type2": 0} and s["cost_usd"] == 0.0
    for stem, items in refs.items():
        labelled = validate_reference_file(ex / "labels" / f"{stem}.json")
        assert [it["target"] for it in labelled] == [it["target"] for it in items]
        for it in labelled:
            assert it["type1"] in (0, 1) and 1 <= it["type2"] <= 5 and it["judge"] == "offline-lr-v1"
            assert it["must_cite"] == (it["type1"] == 1 or it["type2"] >= 4 or it["type3"] == 1)
    assert {p.name: p.read_bytes() for p in ex.glob("*.json") if p.name != "labels_summary.json"} == before
    assert json.loads((ex / "labels_summary.json").read_text())["instances"] == 116


@pytest.mark.data
def test_mention_threshold_moves_type3(ex):
    s1 = annotate_dir(ex, mention_threshold=1, progress=False)
    s5 = annotate_dir(ex, mention_threshold=5, progress=False)
    assert s1["counts"]["type3"].get("1", 0) > s5["counts"]["type3"].get("1", 0)


@pytest.mark.data
def test_annotate_openai_cached_rerun_and_cost(ex, stub, tmp_path):
    judge = openai_judge(stub)
    db = tmp_path / "cache" / "judge.sqlite"
    d = annotate_dir(ex, judge=judge, cache_path=db, dry_run=True, progress=False)
    assert d["calls"] == 232 and d["cached"] == 0 and d["est_cost_usd"] > 0 and not stub.requests
    s = annotate_dir(ex, judge=judge, cache_path=db, concurrency=8, progress=False)
    assert len(stub.requests) == 232 and s["calls"] == 232 and s["cached"] == 0
    assert s["counts"]["type1"] == {"1": 116} and s["counts"]["type2"] == {"4": 116}
    assert s["input_tokens"] == 232 * 700 and s["output_tokens"] == 232
    assert s["cost_usd"] == pytest.approx(cost_usd("gpt-4o-mini", 232 * 700, 232), rel=1e-6)
    assert s["cost_per_instance_usd"] == pytest.approx(s["cost_usd"] / 116)
    assert "116 instances" in s["cost_report"]
    again = annotate_dir(ex, judge=judge, cache_path=db, progress=False)     # every paper is up to date
    assert len(stub.requests) == 232 and again["calls"] == 0 and again["kept_answers"] == 232
    assert again["skipped"] == again["papers"] and again["counts"] == s["counts"]
    forced = annotate_dir(ex, judge=judge, cache_path=db, progress=False, force=True)   # relabel: from the cache
    assert len(stub.requests) == 232 and forced["calls"] == 0 and forced["cached"] == 232
    assert annotate_dir(ex, judge=judge, cache_path=db, dry_run=True, progress=False)["calls"] == 0
    assert json.loads((ex / "labels" / "01XV5Za56k.json").read_text())[0]["judge"] == judge_label(judge)


@pytest.mark.data
def test_annotate_parse_failures_are_null_labels(ex, stub, tmp_path):
    stub.script = [("text", "maybe")] * 5
    s = annotate_dir(ex, judge=openai_judge(stub), cache_path=tmp_path / "j.sqlite", concurrency=1, progress=False)
    assert s["parse_failures"]["type1"] == 5 and s["counts"]["type1"].get("null") == 5


@pytest.mark.data
def test_cli_annotate_dry_run_json(ex, stub, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUSTCITE_OPENAI_BASE_URL", stub.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("MUSTCITE_WORK", str(tmp_path / "work"))
    monkeypatch.delenv("MUSTCITE_CACHE", raising=False)
    rc = main(["annotate", str(ex), "--backend", "openai", "--model", "gpt-4o-mini", "--dry-run", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["calls"] == 232 and out["model"] == "gpt-4o-mini" and not stub.requests
    assert out["cache"] == str(tmp_path / "work" / "cache" / "judge.sqlite")
    rc = main(["annotate", str(ex), "--backend", "openai", "--model", "my-model", "--price", "1,2",
               "--dry-run", "--json"])
    out2 = json.loads(capsys.readouterr().out)
    assert rc == 0 and out2["est_cost_usd"] == pytest.approx((out2["est_input_tokens"] * 1 + 232 * 4 * 2) / 1e6)


@pytest.mark.data
def test_cli_annotate_errors(ex, tmp_path, capsys):
    assert main(["annotate", str(tmp_path / "nope")]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["annotate", str(ex), "--backend", "claude"]) == 2
    assert main(["annotate", str(ex), "--price", "1,2"]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["annotate", str(empty)]) == 1
    (ex / "01XV5Za56k.json").write_text('[{"target": 1, "title": "x"}]')
    assert main(["annotate", str(ex)]) == 1
    err = capsys.readouterr().err
    assert "01XV5Za56k.json" in err and "schema" in err


@pytest.mark.data
def test_engine_dedupes_and_stops_on_judge_error(extracted):
    refs = json.loads((extracted / "01lhHg8H9p.json").read_text())
    insts = instances_from_reference_file(refs, {"paper_id": "01lhHg8H9p"})
    calls = []

    class Counting:
        name = "counting"

        def judge(self, inst, task):
            calls.append((inst.key(), task))
            return Judgement(value=1 if task == "type1" else 3)

    res = run(Counting(), jobs_for(insts) + jobs_for(insts[:3]), None, concurrency=3, progress=False)
    assert len(calls) == len(set(calls)) == 2 * len(insts) and res.calls == 2 * len(insts)

    class Broken(Counting):
        def judge(self, inst, task):
            raise ValueError("bug in a judge")

    with pytest.raises(ValueError, match="bug in a judge"):
        run(Broken(), jobs_for(insts), None, progress=False)


def test_cost_table_and_ledger():
    assert price_for("gemini-2.5-flash-001") == (0.30, 2.50)
    assert price_for("models/gpt-4o-mini") == (0.15, 0.60)
    assert price_for("qwen2.5-coder") == (0.0, 0.0)
    assert price_for("gpt-4o-mini", {"gpt-4o-mini": (1.0, 1.0)}) == (1.0, 1.0)
    led = CostLedger()
    led.add("m", Judgement(1, input_tokens=100, output_tokens=1, cost_usd=0.5))
    led.add("m", Judgement(None, error="parse: x", input_tokens=100, output_tokens=1, cost_usd=0.5))
    led.add("m", Judgement(1, cost_usd=0.5, cached=True))
    s = led.summary(2)
    assert s["calls"] == 2 and s["cached"] == 1 and s["parse_failures"] == 1 and s["cost_usd"] == 1.0
    assert s["cost_per_instance_usd"] == 0.5


def test_cache_survives_reopen(tmp_path):
    key = ("openai", "gpt-4o-mini", "type1.v1.txt@abc", "type1", "k" * 64)
    with JudgeCache(tmp_path / "c.sqlite") as c:
        c.put(key, Judgement(1, raw="1", prob={0: 0.2, 1: 0.8}, input_tokens=5, output_tokens=1, cost_usd=1e-6))
    with JudgeCache(tmp_path / "c.sqlite") as c:
        j = c.get(key)
        assert j.cached and j.value == 1 and j.prob == {0: 0.2, 1: 0.8} and j.input_tokens == 5
        assert c.get(key[:4] + ("other",)) is None and c.count() == 1
