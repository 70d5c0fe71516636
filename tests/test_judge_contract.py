"""The judge contract ``mustcite judge --backend NAME --in FILE.jsonl``: real MultiCite test contexts
through the offline judge end to end, input validation naming the line, and an LLM backend (the
OpenAI-compatible judge against a local stub server) including an item it gives no label for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.judges import Stub

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.labels.contract import (
    ContextItem,
    JudgeFailed,
    cite_found,
    judge_contexts,
    normalise_cite,
    read_contexts,
    to_instance,
)
from mustcite.labels.multicite import iter_instances
from mustcite.labels.offline import MARK, OfflineJudge, mark_context


@pytest.fixture(scope="module")
def multicite(data_dir):
    """30 real MultiCite test items with a citation marker (3-sentence contexts, fixed seed):
    (item, instance) pairs."""
    return [p for p in iter_instances("test", "3", n=40, seed=7) if p[0].cite][:30]


@pytest.fixture(scope="module")
def judge():
    return OfflineJudge()


def _rows(pairs):
    # ids in an order unlike file order of MultiCite, so "input order" is tested, not sorting
    return [{"id": f"mc-{len(pairs) - i:03d}-{it.id}", "context": it.plain_text, "section": "", "cite": it.cite}
            for i, (it, _) in enumerate(pairs)]


def _write(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _out(capsys):
    cap = capsys.readouterr()
    return [json.loads(line) for line in cap.out.splitlines()], cap.err


@pytest.mark.data
def test_offline_end_to_end_on_multicite(multicite, judge, tmp_path, capsys):
    rows = _rows(multicite)
    src = _write(tmp_path / "ctx.jsonl", rows)
    assert main(["judge", "--backend", "offline", "--in", str(src)]) == 0
    got, _ = _out(capsys)
    assert [g["id"] for g in got] == [r["id"] for r in rows]                       # input order
    for g in got:
        assert set(g) == {"id", "type1", "type2"}
        assert type(g["type1"]) is int and g["type1"] in (0, 1)
        assert type(g["type2"]) is int and 1 <= g["type2"] <= 5
    # the same labels the offline judge gives MultiCite's own instances (same instance, same path)
    for g, (_, inst) in zip(got, multicite):
        assert (g["type1"], g["type2"]) == (judge.judge(inst, "type1").value, judge.judge(inst, "type2").value)
    assert len({g["type1"] for g in got}) == 2                                   # not a constant answer
    # --out writes the same lines, atomically, and says so on stderr
    out = tmp_path / "labels.jsonl"
    assert main(["judge", "--in", str(src), "--out", str(out)]) == 0
    _, err = _out(capsys)
    assert [json.loads(x) for x in out.read_text().splitlines()] == got
    assert "30 contexts judged by offline-lr-v1" in err


@pytest.mark.data
def test_library_functions(multicite, judge, tmp_path):
    src = _write(tmp_path / "ctx.jsonl", _rows(multicite[:5]))
    items = read_contexts(src)
    assert [it.line for it in items] == [1, 2, 3, 4, 5] and all(cite_found(it) for it in items)
    stats: dict = {}
    out = judge_contexts(items, judge, stats=stats)
    assert [o["id"] for o in out] == [it.id for it in items] and stats["calls"] == 10
    inst = to_instance(items[0])
    assert inst.contexts == (("", items[0].context),) and inst.mentions == 1 and inst.cite == items[0].cite


def test_cite_styles_and_empty_section(judge, tmp_path, capsys):
    ctx = ("Table 2 compares our tagger with the CRF baseline of [3, 12] on CoNLL-2003; "
           "we outperform it by 1.1 F1.")
    rows = [
        {"id": "num-bracket", "context": ctx, "section": "", "cite": "[12]"},
        {"id": "num-bare", "context": ctx, "section": "4 Experiments", "cite": "12"},
        {"id": "ay", "context": "We follow Smith et al. (2020) and fine-tune on their dataset.", "section": "",
         "cite": "Smith et al., 2020"},
        {"id": "ay-paren", "context": "Attention has been widely studied (Smith et al., 2020; Lee, 2019).",
         "section": None, "cite": "(Smith et al., 2020)"},
        {"id": 7, "context": "As shown by [DKS17], the bound is tight.", "section": "2 Background", "cite": "[DKS17]"},
    ]
    src = _write(tmp_path / "styles.jsonl", rows)
    assert main(["judge", "--in", str(src)]) == 0
    got, err = _out(capsys)
    assert [g["id"] for g in got] == ["num-bracket", "num-bare", "ay", "ay-paren", 7]
    assert "warning" not in err                                  # every marker was found in its context
    # "[12]" is judged as the extraction's bare key "12": the marker inside "[3, 12]" is found
    assert normalise_cite("[12]") == "12" and normalise_cite("(Smith et al., 2020)") == "Smith et al., 2020"
    assert normalise_cite("Athar (2011)") == "Athar (2011)" and normalise_cite("[3, 12]") == "[3, 12]"
    assert MARK in mark_context(ctx, to_instance(read_contexts(src)[0]).cite)
    assert got[0]["type1"] == got[1]["type1"] == 1 and got[0]["type2"] == got[1]["type2"]


def test_other_field_smoke(tmp_path, capsys):
    """Hand-written contexts outside MultiCite's NLP papers: clinical, social science, ecology."""
    rows = [
        {"id": "med-1", "section": "Methods",
         "context": "Glycated haemoglobin was measured with the enzymatic assay described by Nguyen and Patel (2018), "
                    "and insulin resistance was estimated with HOMA-IR.", "cite": "Nguyen and Patel, 2018"},
        {"id": "soc-1", "section": "Introduction",
         "context": "Residential segregation has long been linked to unequal school outcomes (Massey, 1993).",
         "cite": "Massey, 1993"},
        {"id": "eco-1", "section": "Results",
         "context": "Our occupancy estimates are 20% higher than those reported for the same transects in [4].",
         "cite": "[4]"},
        {"id": "no-marker", "section": "", "context": "This survey covers graph neural networks.", "cite": "[9]"},
    ]
    src = _write(tmp_path / "other.jsonl", rows)
    assert main(["judge", "--backend", "offline", "--in", str(src)]) == 0
    got, err = _out(capsys)
    assert [g["id"] for g in got] == [r["id"] for r in rows]
    assert all(g["type1"] in (0, 1) and g["type2"] in range(1, 6) for g in got)
    assert got[1]["type1"] == 0                                  # an Introduction-only citation is never Type I
    # a marker the context does not contain is judged but flagged on stderr, naming id and line
    assert "warning" in err and "no-marker (line 4)" in err and "1 of 4" in err


GOOD = {"id": "g1", "context": "We compare against [1].", "section": "", "cite": "[1]"}
GOOD2 = {"id": "g2", "context": "Unlike (Lee, 2019), we train end to end.", "section": "Method", "cite": "Lee, 2019"}


@pytest.mark.parametrize("bad, needle, field", [
    ('{"id": "x", "context": "a [1] b", "section": "", "cite": "[1]"', "malformed JSON", None),
    ('["x", "a [1] b", "", "[1]"]', "expected a JSON object, got list", None),
    ('"just a string"', "expected a JSON object, got str", None),
    ('{"id": "x", "context": "a [1] b", "section": ""}', "missing field 'cite'", "cite"),
    ('{"context": "a [1] b", "section": "", "cite": "[1]"}', "missing field 'id'", "id"),
    ('{"id": "x", "context": "a [1] b", "cite": "[1]"}', "missing field 'section'", "section"),
    ('{"id": "", "context": "a [1] b", "section": "", "cite": "[1]"}', "empty id", "id"),
    ('{"id": "  ", "context": "a [1] b", "section": "", "cite": "[1]"}', "empty id", "id"),
    ('{"id": null, "context": "a [1] b", "section": "", "cite": "[1]"}', "id must be a string", "id"),
    ('{"id": true, "context": "a [1] b", "section": "", "cite": "[1]"}', "id must be a string", "id"),
    ('{"id": "g1", "context": "a [1] b", "section": "", "cite": "[1]"}', "duplicate id 'g1' (first on line 1)", "id"),
    ('{"id": "x", "context": 5, "section": "", "cite": "[1]"}', "context must be a string", "context"),
    ('{"id": "x", "context": ["a [1] b"], "section": "", "cite": "[1]"}', "context must be a string", "context"),
    ('{"id": "x", "context": " ", "section": "", "cite": "[1]"}', "empty context", "context"),
    ('{"id": "x", "context": "a [1] b", "section": 3, "cite": "[1]"}', "section must be a string", "section"),
    ('{"id": "x", "context": "a [1] b", "section": "", "cite": 1}', "cite must be a string", "cite"),
    ('{"id": "x", "context": "a [1] b", "section": "", "cite": ""}', "empty cite", "cite"),
])
def test_bad_line_names_the_line(bad, needle, field, tmp_path, capsys):
    # two good lines and a blank one before the bad line: the bad one is line 4 of the file
    src = _write(tmp_path / "bad.jsonl", [json.dumps(GOOD), json.dumps(GOOD2), "", bad, json.dumps(GOOD2)])
    out = tmp_path / "o.jsonl"
    assert main(["judge", "--backend", "offline", "--in", str(src), "--out", str(out)]) == 1
    cap = capsys.readouterr()
    assert cap.out == "" and not out.exists()                      # nothing judged, nothing written
    assert f"{src}:4: " in cap.err and needle in cap.err
    if field:
        assert f"(field '{field}')" in cap.err
    with pytest.raises(MustciteError) as exc:
        read_contexts(src)
    assert exc.value.line == 4 and exc.value.field == field


def test_file_level_errors_and_usage(tmp_path, capsys):
    assert main(["judge", "--in", str(tmp_path / "nope.jsonl")]) == 1
    assert "input file not found" in capsys.readouterr().err
    empty = _write(tmp_path / "empty.jsonl", ["", "  "])
    assert main(["judge", "--in", str(empty)]) == 1
    assert "no contexts" in capsys.readouterr().err
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(GOOD).encode() + b"\n" + '{"id": "é"}'.encode("latin-1") + b"\n")
    assert main(["judge", "--in", str(latin)]) == 1
    assert "not UTF-8" in capsys.readouterr().err
    good = _write(tmp_path / "good.jsonl", [GOOD])
    assert main(["judge", "--backend", "claude", "--in", str(good)]) == 2
    assert "unknown --backend" in capsys.readouterr().err
    assert main(["judge", "--backend", "offline"]) == 2             # --in is required
    capsys.readouterr()
    assert main(["judge", "--in", str(good), "--out", str(tmp_path)]) == 2   # a folder is no output file
    assert main(["judge", "--in", str(good), "--concurrency", "0"]) == 2


class _Flaky:
    """A call-by-call judge that has no answer for one context (an LLM call that failed for good)."""

    name = "flaky"

    def judge(self, inst, task):
        from mustcite.labels.judge import Judgement
        if "FAIL" in inst.contexts[0][1]:
            return Judgement(value=None, error="transient: HTTP 503 (gave up after 7 tries)")
        return Judgement(value=1 if task == "type1" else 9)       # 9 is no Type II label


def test_failed_items_are_named_never_labelled():
    items = [ContextItem("ok", "We use [1].", "", "[1]"), ContextItem("bad", "FAIL [2].", "", "[2]")]
    with pytest.raises(JudgeFailed) as exc:
        judge_contexts(items, _Flaky(), cache_path=None)
    msg = str(exc.value)
    assert "no label for 2 of 2 items (ids: ok, bad)" in msg and "transient: HTTP 503" in msg
    assert ("ok", "type2", "9 is not a type2 label (1, 2, 3, 4, 5)") in exc.value.failures
    assert ("bad", "type1", "transient: HTTP 503 (gave up after 7 tries)") in exc.value.failures


@pytest.fixture()
def stub():
    s = Stub()
    # "1" for Type I prompts, "4" for Type II ones; "maybe" (a parse failure) for the FAILME context
    s.default = lambda body: "maybe" if "FAILME" in json.dumps(body) else Stub.default(body)
    yield s
    s.close()


@pytest.mark.data
def test_openai_backend_through_the_contract(multicite, stub, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUSTCITE_OPENAI_BASE_URL", stub.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("MUSTCITE_WORK", str(tmp_path / "work"))
    monkeypatch.delenv("MUSTCITE_CACHE", raising=False)
    rows = _rows(multicite[:4])
    src = _write(tmp_path / "ctx.jsonl", rows)
    assert main(["judge", "--backend", "openai", "--model", "gpt-4o-mini", "--in", str(src)]) == 0
    got, _ = _out(capsys)
    assert got == [{"id": r["id"], "type1": 1, "type2": 4} for r in rows]
    assert len(stub.requests) == 8                                  # two passes, one call each
    sent = json.dumps([b for _, b in stub.requests])
    assert multicite[0][0].cite in sent and 'Section: \\"unknown\\"' in sent   # the annotate prompt, as is
    # a rerun answers from the cache (<work>/cache/judge.sqlite): no new call
    assert main(["judge", "--backend", "openai", "--model", "gpt-4o-mini", "--in", str(src)]) == 0
    assert _out(capsys)[0] == got and len(stub.requests) == 8
    # an item the model gives no label for: exit 1 naming its id, nothing printed or written
    bad = _write(tmp_path / "bad.jsonl", rows[:2] + [{"id": "x-9", "context": "FAILME see [2].", "section": "",
                                                       "cite": "[2]"}])
    out = tmp_path / "o.jsonl"
    assert main(["judge", "--backend", "openai", "--in", str(bad), "--out", str(out)]) == 1
    cap = capsys.readouterr()
    assert "no label for 1 of 3 items (ids: x-9)" in cap.err and "parse: not a single digit" in cap.err
    assert cap.out == "" and not out.exists()
