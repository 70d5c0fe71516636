"""Bad input through every command that reads files, each cell as a real process.

The matrix is ``tests/bad_inputs`` (:func:`bad_inputs.cells`, the same one ``tests/test_bad_inputs.py``
runs in-process). Each CLI cell runs ``python -m mustcite.cli.main ...`` with ``MUSTCITE_WORK``
pointing at a temporary work folder holding the test slice's recommender; each API cell runs a
small process that loads the same model into the app and uploads the input to ``POST /api/audit``
(upload cap 2 MiB). Measured per cell: exit code or HTTP status, the message's first line, wall
time and the process's peak RSS (``os.wait4``'s ``ru_maxrss``: that process and any it waited for;
this process stays small, as a Linux child's ``ru_maxrss`` starts at its parent's RSS at the fork).

Writes ``benchmarks/results/bad_inputs.json`` and ``bad_inputs.md``.

    .venv/bin/python benchmarks/bad_inputs.py
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import bad_inputs as B  # noqa: E402
from helpers import recommender as S  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MAX_UPLOAD = 2 * 2**20

# one API cell: load the model, upload the file, print {"status", "body"}
_API = """
import json, sys
from fastapi.testclient import TestClient
from mustcite.api.app import create_app
from mustcite.recommend import Recommender
model, path, name, cap = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = TestClient(create_app(Recommender.load(model), max_upload=cap))
with open(path, "rb") as fh:
    r = client.post("/api/audit", files={"file": (name, fh)}, data={"top": "5"})
print(json.dumps({"status": r.status_code, "body": r.json()}))
"""


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str, float, float]:
    """(exit code, stdout, stderr, wall s, peak RSS MB) of one child process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                wall, usage.ru_maxrss / 1024)


def _first_message(stdout: str, stderr: str) -> str:
    lines = [ln.rsplit("\r", 1)[-1].strip() for ln in stderr.splitlines()]
    for ln in lines:
        if ln.startswith("error:"):
            return ln
    if "Traceback" in stderr:
        return "TRACEBACK: " + [ln for ln in lines if ln][-1]
    return next((ln for ln in stdout.splitlines() if ln.strip()), "") or next((ln for ln in lines if ln), "")


def _short(text: str, tmp: Path, width: int = 110) -> str:
    text = text.replace(str(tmp), "<tmp>")
    text = re.sub(r"/tmp/[\w./-]*mustcite-upload-\w+", "<tmp>", text)
    return text if len(text) <= width else text[: width - 1] + "…"


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-bad-inputs-"))
    try:
        return _main(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _main(tmp: Path) -> int:
    if not (S.have_data() and B.have_data()):
        print("shared/data proceedings, NeurIPS full texts or a PDF absent", file=sys.stderr)
        return 1
    paths = B.build(tmp / "in")
    print("training the test slice's recommender ...", file=sys.stderr)
    work = tmp / "work"
    # in a child: a Linux child's ru_maxrss starts at its parent's RSS when it forked, so this
    # process must stay small for the children's peaks to be their own
    subprocess.run([sys.executable, "-c", "import shutil, sys; from helpers import recommender as S; "
                    "shutil.copytree(S.model_dir(), sys.argv[1])", str(work / "models" / "recommender")],
                   check=True, cwd=ROOT / "tests", env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MUSTCITE_WORK=str(work),
               PYTHONPATH=str(ROOT / "src"))
    env.pop("MUSTCITE_API_KEY", None)
    rows = []
    for i, cell in enumerate(B.cells()):
        if cell.argv is None:
            p = paths[cell.input]
            argv = [sys.executable, "-c", _API, str(work / "models" / "recommender"), str(p), p.name,
                    str(MAX_UPLOAD)]
            code, out, err, wall, rss = _run(argv, env, tmp)
            try:
                answer = json.loads(out.strip().splitlines()[-1])
                status, body = answer["status"], answer["body"]
                message = body.get("error") or f"ok: {body.get('references')} references, " \
                                               f"{len(body.get('missing', []))} missing listed"
            except (ValueError, IndexError, KeyError):
                status, message = f"exit {code}", _first_message(out, err)
            result: int | str = status
            good = (status == 200) if cell.ok else (isinstance(status, int) and 400 <= status < 500)
        else:
            argv = [sys.executable, "-m", "mustcite.cli.main", *cell.args(paths, tmp / f"out{i}")]
            code, out, err, wall, rss = _run(argv, env, tmp)
            message = _first_message(out, err)
            result = code
            good = code == 0 if cell.ok else (code == cell.code if cell.code else code in (1, 2))
            if not cell.ok:
                good = good and cell.name(paths) in err
        text = out + err
        good = good and "Traceback" not in text and "mustcite-upload" not in message
        if cell.says and not cell.ok:
            good = good and re.search(cell.says, message) is not None
        rows.append({"input": cell.input, "command": cell.command, "result": result,
                     "message": _short(message, tmp, 10_000), "wall_s": round(wall, 2),
                     "peak_rss_mb": round(rss, 1), "as_expected": bool(good)})
        print(f"{cell.id:45s} {result!s:>5} {wall:6.2f}s {rss:7.1f} MB {'ok ' if good else 'BAD'} "
              f"{_short(message, tmp, 90)}", file=sys.stderr)

    def peak(inp: str, command: str) -> float:
        return next(r["peak_rss_mb"] for r in rows if r["input"] == inp and r["command"] == command)

    summary = {cmd: {"normal_draft_mb": peak("unicode_name", cmd), "empty_draft_mb": peak("empty", cmd),
                     "gzip_bomb_mb": peak("gzip_bomb", cmd),
                     "huge_mb": peak("huge", cmd)} for cmd in B.DRAFT_COMMANDS}
    doc = {"cells": len(rows), "as_expected": sum(r["as_expected"] for r in rows),
           "caps": {"draft_chars": 8_000_000, "draft_bytes": 64 * 2**20, "upload_bytes": MAX_UPLOAD},
           "inputs": {"gzip_bomb": {"compressed_bytes": paths["gzip_bomb"].stat().st_size,
                                    "decompressed_bytes": B.BOMB_BYTES},
                      "huge": {"bytes": B.HUGE_BYTES}},
           "peak_rss": summary, "parent_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           "python": sys.version.split()[0], "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bad_inputs.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (RESULTS / "bad_inputs.md").write_text(table(rows), encoding="utf-8")
    print(json.dumps({k: doc[k] for k in ("cells", "as_expected", "peak_rss")}, indent=1))
    return 0 if doc["as_expected"] == len(rows) else 1


def table(rows: list[dict]) -> str:
    def cell(text: str) -> str:
        return _short(str(text), Path("/nonexistent"), 100).replace("|", "\\|").replace("`", "'")

    out = ["| input | command | exit / HTTP | message | peak RSS MB |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['input']} | `{r['command']}` | {r['result']} | `{cell(r['message'])}` | "
                   f"{r['peak_rss_mb']:.0f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
