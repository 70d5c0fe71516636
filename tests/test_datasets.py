"""Dataset registry and ``mustcite data list/check`` on the real data dir and on broken copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import DATA

from mustcite.cli.main import main
from mustcite.datasets import DATASETS, check, dataset_files, get_dataset, require
from mustcite.errors import DataMissingError, UsageError


def test_registry_ids():
    assert list(DATASETS) == ["proceedings", "neurips-fulltext-2024", "neurips-fulltext-2023",
                              "s2orc-doc2json", "multicite", "scidoca", "venue-pages"]
    for ds in DATASETS.values():
        for repo, commit in ds.sources:
            assert len(commit) == 40 and "/" in repo
    with pytest.raises(UsageError):
        get_dataset("nope")


@pytest.mark.data
def test_proceedings_files_from_manifest():
    files = dataset_files("proceedings", DATA)
    data_files = [f for f in files if f.path.endswith(".jsonl.gz")]
    assert len(data_files) == 150 + 54
    assert all(len(f.sha256) == 64 for f in data_files)
    nips = next(f for f in files if f.path == "proceedings/paperlists/nips2022.jsonl.gz")
    assert nips.url.startswith("https://raw.githubusercontent.com/papercopilot/paperlists/")
    assert nips.url.endswith("/nips/nips2022.json")
    # without a data dir only the fixed files are known
    assert [f.path for f in dataset_files("proceedings")] == ["proceedings/manifest.json",
                                                              "proceedings/PROVENANCE.md"]


@pytest.mark.data
def test_neurips_fulltext_files():
    files = dataset_files("neurips-fulltext-2024", DATA)
    texts = [f for f in files if f.path.endswith(".md.gz")]
    assert len(texts) == 1520 and all(f.sha256_of == "gunzip" for f in texts)
    assert len([f for f in dataset_files("neurips-fulltext-2023", DATA) if f.path.endswith(".md.gz")]) == 1400


@pytest.mark.data
def test_check_real_data_all_ok():
    for ds_id in ("proceedings", "s2orc-doc2json", "multicite", "scidoca", "venue-pages"):
        res = check(ds_id, DATA)
        assert res.ok, res.to_dict()
    assert check("proceedings", DATA).verified == 204
    assert require("multicite", DATA) == DATA / "intents" / "multicite"


def test_require_names_missing_files(tmp_path):
    with pytest.raises(DataMissingError) as exc:
        require("scidoca", tmp_path)
    msg = str(exc.value)
    assert "scidoca/PROVENANCE.md" in msg and "github.com/daotuanan/scidoca2025-shared-task/tree/07b7bcf" in msg


def _copy_proceedings(tmp_path: Path, n_files: int = 2) -> Path:
    """A small data dir: the real manifest trimmed to ``n_files`` paperlists entries, files copied."""
    data = tmp_path / "data"
    (data / "proceedings" / "paperlists").mkdir(parents=True)
    m = json.loads((DATA / "proceedings" / "manifest.json").read_text())
    keep = dict(list(m["files"].items())[:n_files])
    m["files"], m["extra_sources"] = keep, []
    (data / "proceedings" / "manifest.json").write_text(json.dumps(m))
    shutil.copy(DATA / "proceedings" / "PROVENANCE.md", data / "proceedings" / "PROVENANCE.md")
    for e in keep.values():
        shutil.copy(DATA / "proceedings" / e["file"], data / "proceedings" / e["file"])
    return data


@pytest.mark.data
def test_check_detects_mismatch_and_missing(tmp_path):
    data = _copy_proceedings(tmp_path)
    assert check("proceedings", data).ok
    m = json.loads((data / "proceedings" / "manifest.json").read_text())
    first, second = list(m["files"].values())
    (data / "proceedings" / first["file"]).write_bytes(b"changed")
    (data / "proceedings" / second["file"]).unlink()
    res = check("proceedings", data)
    assert res.mismatched == ["proceedings/" + first["file"]]
    assert res.missing == ["proceedings/" + second["file"]]


@pytest.mark.data
def test_cli_data_exit_codes(tmp_path, capsys):
    data = _copy_proceedings(tmp_path)
    assert main(["--data", str(data), "data", "check", "proceedings"]) == 0
    assert "proceedings: ok" in capsys.readouterr().out
    assert main(["--data", str(DATA), "data", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in listed["datasets"]] == list(DATASETS)
    assert all(d["present"] for d in listed["datasets"])
    target = data / "proceedings" / next(iter(json.loads((data / "proceedings" / "manifest.json")
                                                         .read_text())["files"].values()))["file"]
    target.write_bytes(b"x")
    assert main(["--data", str(data), "data", "check", "proceedings", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out[0]["ok"] is False and out[0]["mismatched"]
    assert main(["--data", str(data), "data", "check", "no-such-dataset"]) == 2
    assert main(["--data", str(data), "data", "check", "scidoca"]) == 1       # not in this copy
    assert main(["--data", str(data), "data", "list"]) == 0
