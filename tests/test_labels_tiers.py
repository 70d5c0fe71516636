"""The three tiers and the combined must-cite criterion on real extracted reference files;
``mustcite labels stats``."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from mustcite.config import find_data_dir
from mustcite.errors import MustciteError
from mustcite.extract.records import validate_reference_list
from mustcite.labels.judge import CitationInstance, Judgement, instances_from_reference_file
from mustcite.labels.tiers import LabelConfig, add_type3, apply_labels, label_references, must_cite

PAPER = "01lhHg8H9p"   # NeurIPS 2024 "GLBench", 65 references


@pytest.fixture(scope="module")
def ext(data_dir, tmp_path_factory):
    from mustcite.extract.runner import extract_paths
    d = tmp_path_factory.mktemp("ext")
    files = [find_data_dir() / "neurips" / "fulltext_2024" / f"{PAPER}.md.gz",
             find_data_dir() / "neurips" / "fulltext_2023" / "009LK0vLcY.md.gz"]
    extract_paths(files, d, workers=1, progress=False)
    return d


def _load(ext, stem=PAPER):
    return json.loads((ext / f"{stem}.json").read_text()), json.loads((ext / f"{stem}.meta.json").read_text())


def test_must_cite_rule():
    assert must_cite(1, 1, 0) is True and must_cite(0, 4, 0) is True and must_cite(0, 3, 1) is True
    assert must_cite(0, 3, 0) is False
    assert must_cite(None, 3, 0) is None and must_cite(None, 5, 0) is True
    assert must_cite(0, 4, 0, LabelConfig(type2_threshold=5)) is False
    with pytest.raises(MustciteError):
        LabelConfig(n_mentions=0)
    with pytest.raises(MustciteError):
        apply_labels({"mentions": 1}, 2, 3, "x")


@pytest.mark.data
def test_instances_from_real_reference_file(ext):
    refs, meta = _load(ext)
    insts = instances_from_reference_file(refs, meta)
    assert len(insts) == len(refs) == 65
    assert all(isinstance(i, CitationInstance) for i in insts)
    assert insts[0].ref_title == "Gpt-4 technical report" and insts[0].cite == "1"
    assert insts[0].citing_title.startswith("GLBench")
    assert sum(len(i.contexts) for i in insts) == sum(len(r["contexts"]) for r in refs)
    keys = {i.key() for i in insts}
    assert len(keys) == 65 and insts[0].key() == instances_from_reference_file(refs, meta)[0].key()


@pytest.mark.data
def test_type3_follows_mentions_and_threshold(ext):
    refs, _ = _load(ext)
    out3 = add_type3(refs)
    assert [r["type3"] for r in out3] == [int(r["mentions"] >= 3) for r in refs]
    n3, n2 = sum(r["type3"] for r in out3), sum(r["type3"] for r in add_type3(refs, LabelConfig(n_mentions=2)))
    assert 0 < n3 < n2 < len(refs)
    assert all(r["must_cite"] in (True, None) for r in out3)   # no judge: unknown unless Type III


class _FixedJudge:
    name = "fixed-test"

    def judge(self, inst, task):
        return Judgement(value=None if inst.cite == "1" else (1 if task == "type1" and inst.mentions > 4 else
                                                              (2 if task == "type2" else 0)))


@pytest.mark.data
def test_label_references_schema_and_combination(ext):
    refs, meta = _load(ext)
    out = label_references(refs, _FixedJudge(), meta)
    validate_reference_list(out)
    first = out[0]   # cite "1": parse failure stays None, never mapped to a label
    assert first["type1"] is None and first["type2"] is None and first["judge"] == "fixed-test"
    assert first["must_cite"] is (True if first["type3"] else None)
    for r in out[1:]:
        assert r["must_cite"] == bool(r["type1"] == 1 or r["type3"] == 1)


@pytest.mark.data
def test_offline_judge_labels_real_paper(ext):
    from mustcite.labels.offline import OfflineJudge
    refs, meta = _load(ext, "009LK0vLcY")
    out = label_references(refs, OfflineJudge(), meta)
    validate_reference_list(out)
    t1, t2 = Counter(r["type1"] for r in out), Counter(r["type2"] for r in out)
    assert set(t1) <= {0, 1} and t1[0] > 0 and t1[1] > 0
    assert set(t2) <= {1, 2, 3, 4, 5} and len(t2) >= 3
    assert out == label_references(refs, OfflineJudge(), meta)   # deterministic


@pytest.mark.data
def test_labels_stats_cli(ext, tmp_path, capsys):
    from mustcite.cli.main import main
    lab = tmp_path / "lab"
    lab.mkdir()
    refs, meta = _load(ext)
    from mustcite.labels.offline import OfflineJudge
    (lab / f"{PAPER}.json").write_text(json.dumps(label_references(refs, OfflineJudge(), meta)))
    (lab / f"{PAPER}.meta.json").write_text(json.dumps(meta))
    png = tmp_path / "fig.png"
    assert main(["labels", "stats", str(lab), "--out", str(png), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["files"] == 1 and got["references"] == 65
    assert sum(got["type1"].values()) == 65 and sum(got["mentions"].values()) == 65
    assert got["type3"].get("1", 0) == sum(r["mentions"] >= 3 for r in refs)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    (lab / "broken.json").write_text("[{")
    assert main(["labels", "stats", str(lab)]) == 1
