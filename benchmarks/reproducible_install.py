"""Do two fresh clones, each installed from the lock files, train byte-identical models?

For each of two clones of ``--rev`` (default: HEAD) in ``--dir``: ``git clone``, ``make venv`` (the
lock files, with hashes), a copy of ``<work>/corpus`` and ``<work>/extract``, then the demo's
training recipe ``mustcite train --no-refit --fit-queries 1500`` into that clone's own work folder
(no cache shared). Then the sha256 of every file of both models and of both ``pip freeze`` outputs.
About 17 minutes a clone on 2 cores; the clones run one after the other.

    python benchmarks/reproducible_install.py [--rev REV] [--dir /tmp/mustcite-repro]
    python benchmarks/reproducible_install.py --compare DIR1 DIR2   # only hash two finished clones

Writes ``benchmarks/results/reproducible_install.json``: per file, its sha256 in each clone and
whether they agree. Files that record where and when they were made (``card.json``,
``config.json``, ``labelled.jsonl`` and ``indexes/key.json`` hold the work folder's path, times and
file stamps) are compared too, and also after the clone's path is replaced by a placeholder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "reproducible_install.json"
MODEL = Path("work") / "models" / "recommender"
#: files that record the work folder's path, times or file stamps
METADATA = ("card.json", "config.json", "labelled.jsonl", "indexes/key.json", "indexes/labelled.jsonl")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def clone_and_train(rev: str, folder: Path, work: Path) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "work").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder / "main")], check=True)
    subprocess.run(["git", "checkout", "-q", rev], cwd=folder / "main", check=True)
    os.symlink(ROOT.parent / "shared", folder / "shared")
    for part in ("corpus", "extract"):
        shutil.copytree(work / part, folder / "work" / part)
    t = time.perf_counter()
    subprocess.run(["make", "venv"], cwd=folder / "main", check=True, capture_output=True)
    venv_s = time.perf_counter() - t
    env = dict(os.environ, MUSTCITE_WORK=str(folder / "work"), HF_HUB_OFFLINE="1")
    t = time.perf_counter()
    with open(folder / "train.err", "w") as err:
        subprocess.run([".venv/bin/mustcite", "train", "--no-refit", "--fit-queries", "1500"], cwd=folder / "main",
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=err)
    return {"make_venv_s": round(venv_s), "train_s": round(time.perf_counter() - t)}


def hashes(folder: Path) -> dict:
    model = folder / MODEL
    files = {}
    for f in sorted(p for p in model.rglob("*") if p.is_file()):
        rel = f.relative_to(model).as_posix()
        data = f.read_bytes()
        files[rel] = {"sha256": sha256(data)}
        if rel in METADATA:
            files[rel]["sha256_path_replaced"] = sha256(data.replace(str(folder).encode(), b"<clone>"))
    freeze = subprocess.run([str(folder / "main" / ".venv" / "bin" / "pip"), "freeze"], capture_output=True,
                            text=True).stdout
    freeze = "".join(ln + "\n" for ln in freeze.splitlines() if not ln.startswith(("-e", "#")))
    return {"files": files, "pip_freeze_sha256": sha256(freeze.encode()), "packages": len(freeze.splitlines())}


def compare(a: dict, b: dict) -> dict:
    rows, same = {}, 0
    for rel in sorted(set(a["files"]) | set(b["files"])):
        x, y = a["files"].get(rel, {}), b["files"].get(rel, {})
        ok = x.get("sha256") == y.get("sha256")
        row = {"sha256": x.get("sha256"), "identical": ok}
        if not ok:
            row["sha256_other"] = y.get("sha256")
            if "sha256_path_replaced" in x:
                row["identical_after_path_replaced"] = x["sha256_path_replaced"] == y.get("sha256_path_replaced")
        rows[rel] = row
        same += ok
    return {"files": len(rows), "identical": same,
            "pip_freeze_identical": a["pip_freeze_sha256"] == b["pip_freeze_sha256"],
            "pip_freeze_sha256": a["pip_freeze_sha256"], "packages": a["packages"], "per_file": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/mustcite-repro"))
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("DIR1", "DIR2"))
    args = ap.parse_args(argv)
    report: dict = {"recipe": "make venv; mustcite train --no-refit --fit-queries 1500"}
    if args.compare:
        folders = list(args.compare)
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folders[0] / "main", capture_output=True,
                             text=True).stdout.strip()
    else:
        from mustcite.config import Workspace

        rev = subprocess.run(["git", "rev-parse", args.rev], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        folders = [args.dir / "clone1", args.dir / "clone2"]
        work = Workspace.resolve().root
        report["times"] = [clone_and_train(rev, f, work) for f in folders]
    report["rev"] = rev
    report.update(compare(hashes(folders[0]), hashes(folders[1])))
    OUT.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    differ = [k for k, v in report["per_file"].items() if not v["identical"]]
    print(f"{report['identical']} of {report['files']} model files identical; pip freeze identical: "
          f"{report['pip_freeze_identical']}; differing: {', '.join(differ) or 'none'} -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
