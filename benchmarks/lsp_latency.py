"""How fast the language server answers, on the real model and corpus: one session of a real LSP
client (pytest-lsp's, over stdio) on the 60-reference LaTeX project of ``audit_latency.py``.

Steps timed (wall seconds, from the client's message to the diagnostics it waits for):

* ``initialize``: from starting the server process to its ``initialize`` answer;
* ``open .bib (first check, index load)``: every entry checked, the look-up index loaded first;
* ``open .tex``: the citation keys against the checked entries;
* ``save .tex -> audit (model load)``: the first audit, the recommender loaded first (the
  server's own measure, from the save to the audit's diagnostics);
* ``edit one .bib entry``: a year changed; only that entry is checked again;
* ``save .tex -> audit (warm)``: the next audit.

Writes ``benchmarks/results/lsp_latency.json``. Usage: ``python benchmarks/lsp_latency.py [--model DIR]
[--repeat N] [--compare LABEL=SRC ...]``. ``--compare`` runs the server from each source tree in turn
(``before=/path/to/old/src after=src``; the client and the project stay the same), the trees
alternating session by session, ``--repeat`` sessions each; the JSON then gives every session's
seconds, the median per step and tree, and each step's ratio of the last tree's median to the first's.
``seconds`` is always the median of the last (or only) tree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit_latency import make_project, pick_papers  # noqa: E402


async def _until(client, uri: str, ok, timeout: float = 600.0) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        got = client.diagnostics.get(uri)
        if got is not None and ok(got):
            return time.perf_counter() - t0
        await asyncio.sleep(0.002)
    raise TimeoutError(f"no diagnostics for {uri} in {timeout} s")


async def session(project: Path, model: Path, year: int, src: Path | None = None) -> dict:
    from pytest_lsp import ClientServerConfig, client_capabilities

    out: dict[str, float] = {}
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    t0 = time.perf_counter()
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "mustcite", "lsp"], server_env=env).start()
    root = from_fs_path(str(project))
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root,
        workspace_folders=[types.WorkspaceFolder(uri=root, name="paper")],
        initialization_options={"year": year, "model": str(model)}))
    out["initialize"] = time.perf_counter() - t0
    bib, tex = project / "refs.bib", project / "main.tex"
    bib_uri, tex_uri = from_fs_path(str(bib)), from_fs_path(str(tex))
    try:
        t = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=bib_uri, language_id="bibtex", version=1, text=bib.read_text(encoding="utf-8"))))
        await _until(client, bib_uri, lambda d: True)
        out["open .bib (first check, index load)"] = time.perf_counter() - t
        t = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=tex_uri, language_id="latex", version=1, text=tex.read_text(encoding="utf-8"))))
        await _until(client, tex_uri, lambda d: True)
        out["open .tex"] = time.perf_counter() - t

        async def audited() -> float:
            """Save main.tex; the seconds until the audit's diagnostics are published (the server's
            own measure, from the save to its publication, read back once it changes)."""
            before = (await timings()).get("audit")
            client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=tex_uri)))
            while (got := (await timings()).get("audit")) == before:
                await asyncio.sleep(0.02)
            return got

        async def timings() -> dict:
            return await client.workspace_execute_command_async(types.ExecuteCommandParams(command="mustcite.timings"))

        out["save .tex -> audit (model load)"] = await audited()
        missing = sum(1 for x in client.diagnostics[tex_uri] if x.code == "missing")

        text = bib.read_text(encoding="utf-8").replace("year = {", "year = {1", 1)
        client.diagnostics.pop(bib_uri, None)
        t = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=bib_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        await _until(client, bib_uri, lambda d: True)
        out["edit one .bib entry"] = time.perf_counter() - t

        out["save .tex -> audit (warm)"] = await audited()
    finally:
        await client.shutdown_session()
    return {"seconds": {k: round(v, 3) for k, v in out.items()}, "missing_shown": missing}


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "lsp_latency.json")
    ap.add_argument("--repeat", type=int, default=1, help="sessions per source tree (median reported)")
    ap.add_argument("--compare", nargs="+", default=None, metavar="LABEL=SRC[,MODEL]",
                    help="run the server from each source tree in turn (PYTHONPATH=SRC), with its own model "
                         "folder when given (a tree of another index layout would rebuild a shared one)")
    args = ap.parse_args(argv)
    work = Workspace.resolve()
    model = (args.model or work.root / "models" / "recommender").resolve()

    def tree(spec: str) -> tuple[str, Path, Path]:
        label, _, rest = spec.partition("=")
        src, _, own = rest.partition(",")
        return label, Path(src).resolve(), Path(own).resolve() if own else model

    trees = [tree(t) for t in args.compare or []] or [("current", None, model)]
    (meta, refs), = pick_papers(work.root / "extract", 1)
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-lsp-bench-"))
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in trees}
    missing = None
    try:
        make_project(meta, refs, tmp / "paper")
        for _ in range(max(1, args.repeat)):
            for label, src, tree_model in trees:
                got = asyncio.run(session(tmp / "paper", tree_model, int(meta.get("year") or 2024), src))
                runs[label].append(got["seconds"])
                missing = got["missing_shown"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    median = {label: {k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]} for label, rs in runs.items()}
    result = {"what": "one language-server session on a 60-reference LaTeX project (real model and corpus)",
              "paper": meta.get("title"), "references": len(refs), "model": str(model),
              "machine": platform.platform(), "cpus": os.cpu_count(), "seconds": median[trees[-1][0]],
              "missing_shown": missing}
    if len(trees) > 1 or args.repeat > 1:
        first, last = trees[0][0], trees[-1][0]
        result.update(sessions_per_tree=max(1, args.repeat), trees={label: str(src) for label, src, _ in trees},
                      runs=runs, median=median)
        if len(trees) > 1:
            result["ratio"] = {k: round(median[last][k] / median[first][k], 3) if median[first][k] else None
                               for k in median[last]}
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result["seconds"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
