"""How much memory the language server takes as it works on a real LaTeX project.

One session of ``mustcite lsp`` (audit on, the given model) on a development project of
``shared/data/drafts`` (copied to a temporary folder; never a project of the test half of
``splits/drafts_split.json``), driven by the raw client of :mod:`bad_input_fixtures`. The server's
resident memory (``VmRSS``, MB) is read after each step: started; the LaTeX source opened (its
keys checked: the ``.bib`` files read and checked, the look-up index loaded); the first save (the
first audit: the recommender loaded); the second and third saves (warm audits). ``peak_mb`` is
``VmHWM`` at the end.

    MUSTCITE_WORK=/path/to/work .venv/bin/python benchmarks/lsp_memory.py [--project NAME] [--model DIR]

Writes ``benchmarks/results/lsp_memory.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bad_input_fixtures as B  # noqa: E402  (the raw language client)

ROOT = Path(__file__).resolve().parents[1]
SPLIT = ROOT / "benchmarks" / "splits" / "drafts_split.json"


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return round(int(next(x for x in status.splitlines() if x.startswith(field)).split()[1]) / 1024, 1)


def main(argv: list[str] | None = None) -> int:
    from pygls.uris import from_fs_path

    from mustcite.config import Workspace

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", default="attanchor", help="a development project of shared/data/drafts")
    ap.add_argument("--model", type=Path, default=None, help="default: <work>/models/recommender")
    ap.add_argument("--year", type=int, default=2025)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "lsp_memory.json")
    args = ap.parse_args(argv)
    if args.project not in json.loads(SPLIT.read_text(encoding="utf-8"))["dev"]:
        print(f"{args.project} is not a development project", file=sys.stderr)
        return 2
    work = Workspace.resolve().root
    model = (args.model or work / "models" / "recommender").resolve()
    manifest = json.loads((B.DATA / "drafts" / "manifest.json").read_text(encoding="utf-8"))
    info = next(p for p in manifest if p["name"] == args.project)
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-lsp-memory-"))
    steps: dict[str, float] = {}
    try:
        ws = tmp / "ws"
        shutil.copytree(B.DATA / "drafts" / "projects" / args.project, ws)
        (tmp / "work").mkdir()
        (tmp / "work" / "corpus").symlink_to(work / "corpus")     # caches go to the temporary folder
        tex = ws / (info.get("dir") or "") / info["main"]
        c = B.Client(tmp, command=[sys.executable, "-m", "mustcite", "--work", str(tmp / "work"), "lsp"])
        pid = c.proc.pid
        c.response(c.request("initialize", {
            "processId": None, "rootUri": from_fs_path(str(ws)), "capabilities": {},
            "workspaceFolders": [{"uri": from_fs_path(str(ws)), "name": "paper"}],
            "initializationOptions": {"audit": True, "model": str(model), "year": args.year}}), timeout=60)
        c.notify("initialized", {})
        steps["started"] = rss_mb(pid)
        uri = from_fs_path(str(tex))
        start = len(c.seen)
        c.open(uri, tex.read_text(encoding="utf-8", errors="replace"))
        c.diagnostics(uri, 600, start)
        steps["LaTeX source opened (bibliography checked, index loaded)"] = rss_mb(pid)

        def audited() -> float:
            before = c.response(c.request("workspace/executeCommand", B.PING))["result"].get("audit")
            c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            t0 = time.monotonic()
            while time.monotonic() - t0 < 900:
                got = c.response(c.request("workspace/executeCommand", B.PING))["result"].get("audit")
                if got != before:
                    return got
                time.sleep(0.2)
            raise AssertionError("no audit in 900 s")

        seconds = [audited()]
        steps["first save (first audit, model loaded)"] = rss_mb(pid)
        seconds.append(audited())
        steps["second save (audit)"] = rss_mb(pid)
        seconds.append(audited())
        steps["third save (audit)"] = rss_mb(pid)
        peak = rss_mb(pid, "VmHWM")
        c.finish(timeout=30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    names = list(steps)
    growth = {f"{names[i]} - {names[i - 1]}": round(steps[names[i]] - steps[names[i - 1]], 1)
              for i in range(1, len(names))}
    result = {"what": "resident memory (MB) of one language-server session on a real LaTeX project",
              "project": args.project, "model": str(model), "rss_mb": steps, "growth_mb": growth,
              "peak_mb": peak, "audit_s": [round(s, 2) for s in seconds], "machine": platform.platform()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
