"""How long the language server takes to re-check a ``.bib`` file after an edit, on real entries.

The ``.bib`` files are the real bibliographies of the development projects of
``shared/data/drafts`` (the ``dev`` half of ``splits/drafts_split.json``; the test half is never
read), concatenated, copied as many times as needed with each copy's keys made unique ("key-c2"),
and cut at an entry's end once the file reaches 1 MB and 60 KB. Each is opened in a warm server
(``mustcite --work W lsp --no-audit``, the look-up index loaded by a first document), then edited
``--edits`` times, each time one entry's year (an entry at the start, the middle and the end in
turn; each edit brings a year the entry has not had before, so its check is a real one). The time
of an edit is from sending ``didChange`` (the whole text, as editors send it) to receiving the
``publishDiagnostics`` of that text, measured by a raw client that only reads JSON
(:class:`bad_input_fixtures.Client`); beside it, the server's CPU time per edit (user + system,
all threads, from ``/proc``), which other jobs on the machine do not inflate. Also timed: opening
the file (every entry read and checked) and a one-line ``.bib`` of 4,000 real entries (each year
one later than written) with 13 MB of text outside them (its first diagnostics).

``--compare LABEL=SRC ...`` runs each source tree's server in turn (``PYTHONPATH=SRC``), the same
files and client; ``--repeat N`` sessions per tree, the trees alternating (the one-line file in
the first only). Writes ``benchmarks/results/lsp_edit_latency.json``.

    MUSTCITE_WORK=/path/to/work .venv/bin/python benchmarks/lsp_edit_latency.py \\
        --compare before=/tmp/lsp-before/src after=src
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bad_input_fixtures as B  # noqa: E402  (the raw language client)

ROOT = Path(__file__).resolve().parents[1]
DRAFTS = B.DATA / "drafts" / "projects"
SPLIT = ROOT / "benchmarks" / "splits" / "drafts_split.json"
_HEAD = re.compile(r"(@[ \t]*(\w+)[ \t]*\{[ \t]*)([^,\s{}()]+)([ \t]*,)")
#: how long the one-line file's first diagnostics are waited for
ONE_LINE_S = 120.0
_YEAR = re.compile(r"(\byear\s*=\s*[{\"]?)(\d{4})")


def dev_bibs() -> list[str]:
    """The texts of the real ``.bib`` files of the development projects (each distinct text once)."""
    dev = json.loads(SPLIT.read_text(encoding="utf-8"))["dev"]
    seen: dict[str, None] = {}
    for project in sorted(dev):
        for f in sorted((DRAFTS / project).rglob("*.bib")):
            seen.setdefault(f.read_text(encoding="utf-8", errors="replace"))
    return list(seen)


def real_bib(size: int, texts: list[str]) -> str:
    """``texts`` concatenated, copied with unique keys as often as needed, cut after the entry
    that brings the text to ``size`` characters."""
    out, n, copy = [], 0, 0
    while n < size:
        copy += 1
        for t in texts:
            def unique(m, c=copy):
                if m.group(2).lower() in ("string", "comment", "preamble"):
                    return m.group(0)
                return f"{m.group(1)}{m.group(3)}-c{c}{m.group(4)}"
            for part in re.split(r"(?m)^(?=@)", _HEAD.sub(unique, t)):
                out.append(part)
                n += len(part)
                if n >= size:
                    break
            if n >= size:
                break
            out.append("\n")
    return "".join(out)


def one_line_bib(texts: list[str], entries: int = 4000, junk_mb: float = 13.0) -> str:
    """A one-line ``.bib``: ``entries`` real entries (``texts``' entries, copied with unique keys as
    needed, each on one line and its year one later than written, so that every entry the corpus
    finds is a year mismatch), with ``junk_mb`` MB of prose between them."""
    parts = [p for p in re.split(r"(?m)^(?=@)", real_bib(2**30 // 256, texts))
             if p.startswith("@") and not p[1:].lower().startswith(("string", "comment", "preamble"))]
    gap = int(junk_mb * 2**20 / entries)
    filler = ("Notes that are no entry, with commas, braces {like these} and (parentheses). " * (gap // 70 + 1))[:gap]
    out = []
    for i in range(entries):
        p = re.sub(r"\s+", " ", parts[i % len(parts)].strip())
        copy = i // len(parts)
        if copy:
            p = _HEAD.sub(lambda m, c=copy: f"{m.group(1)}{m.group(3)}-l{c}{m.group(4)}", p, count=1)
        out.append(_YEAR.sub(lambda m: m.group(1) + str(int(m.group(2)) + 1), p, count=1) + " " + filler)
    return "".join(out)


def edits(text: str, n: int) -> list[str]:
    """``n`` texts, each ``text`` with the year of one entry changed (start, middle, end in turn)."""
    years = list(_YEAR.finditer(text))
    out, cur = [], text
    for i in range(n):
        m = years[[0, len(years) // 2, len(years) - 1][i % 3]]
        year = 1900 + i                               # a year no entry had before
        cur = cur[:m.start(2)] + str(year) + cur[m.end(2):]
        out.append(cur)
    return out


def cpu_ms(pid: int) -> float:
    """The CPU time (user + system, all threads) process ``pid`` has used so far, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def session(work: Path, src: Path | None, tmp: Path, files: dict[str, str], n_edits: int) -> dict:
    env_before = os.environ.get("PYTHONPATH")
    if src is not None:
        os.environ["PYTHONPATH"] = str(src)
    try:
        c = B.Client(tmp, command=[sys.executable, "-m", "mustcite", "--work", str(work), "lsp", "--no-audit"])
    finally:
        if env_before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = env_before
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    out: dict = {}
    try:
        c.initialize(ws)
        warm = (ws / "warm.bib").as_uri()
        start = len(c.seen)
        c.open(warm, "@article{warm, title={A}, year={2020}}\n")
        c.diagnostics(warm, 900, start)
        for label, text in files.items():
            uri = (ws / f"{label}.bib").as_uri()
            start = len(c.seen)
            t0, cpu0 = time.perf_counter(), cpu_ms(c.proc.pid)
            c.open(uri, text)
            try:
                diags = c.diagnostics(uri, ONE_LINE_S if label.startswith("one-line") else 900, start)
            except AssertionError:
                out[label] = {"chars": len(text), "open_s": None, "diagnostics": f"none in {ONE_LINE_S:.0f} s"}
                break                                  # the server is still busy with it: the session ends
            row = {"chars": len(text), "open_s": round(time.perf_counter() - t0, 3),
                   "open_server_cpu_s": round((cpu_ms(c.proc.pid) - cpu0) / 1000, 2), "diagnostics": len(diags)}
            if not label.startswith("one-line"):
                times, cpu0 = [], cpu_ms(c.proc.pid)
                for version, new in enumerate(edits(text, n_edits), start=2):
                    start = len(c.seen)
                    t0 = time.perf_counter()
                    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                        "contentChanges": [{"text": new}]})
                    c.diagnostics(uri, 900, start)
                    times.append(round((time.perf_counter() - t0) * 1000, 1))
                # the server's CPU time per edit (all its threads; what the edit costs it whatever
                # else the machine runs), from the total over the edits: the clock ticks are 10 ms
                row.update(edit_ms=times, edit_ms_median=statistics.median(times),
                           edit_server_cpu_ms_mean=round((cpu_ms(c.proc.pid) - cpu0) / n_edits, 1))
            out[label] = row
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        out["peak_rss_mb"] = round(c.peak_rss_mb(), 1)
    finally:
        c.finish(timeout=30)
    return out


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", nargs="+", default=None, metavar="LABEL=SRC")
    ap.add_argument("--edits", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=1, help="sessions per tree, the trees alternating")
    ap.add_argument("--no-one-line", action="store_true", help="skip the one-line 13 MB file")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "lsp_edit_latency.json")
    args = ap.parse_args(argv)
    corpus = Workspace.resolve().root / "corpus"
    if not (corpus / "papers.parquet").is_file():
        print(f"no corpus at {corpus}: set MUSTCITE_WORK", file=sys.stderr)
        return 1
    texts = dev_bibs()
    files = {"1mb": real_bib(2**20, texts), "60kb": real_bib(60 * 2**10, texts)}
    if not args.no_one_line:
        files["one-line-4000-entries-13mb"] = one_line_bib(texts)
    trees = [(label, Path(src).resolve()) for label, _, src in (t.partition("=") for t in args.compare or [])] \
        or [("current", None)]
    tmp = Path(tempfile.mkdtemp(prefix="mustcite-lsp-edit-"))
    try:
        work = tmp / "work"
        work.mkdir()
        (work / "corpus").symlink_to(corpus)          # the index is built in this folder, never in W
        runs: dict[str, list[dict]] = {label: [] for label, _ in trees}
        for i in range(max(1, args.repeat)):
            for label, src in trees:
                t = tmp / f"{label}-{i}"
                t.mkdir()
                # the one-line file in the first session of each tree only (the tree before it
                # is still reading it when the session ends)
                got = session(work, src, t, files if i == 0 else
                              {k: v for k, v in files.items() if not k.startswith("one-line")}, args.edits)
                runs[label].append(got)
                print(label, json.dumps(got), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {}
    for label, rs in runs.items():
        row = {}
        for name in files:
            got = [r[name] for r in rs if name in r]
            if not got:
                continue
            row[name] = {"open_s": got[0]["open_s"], "open_server_cpu_s": got[0].get("open_server_cpu_s"),
                         "diagnostics": got[0]["diagnostics"]}
            if "edit_ms" in got[0]:
                row[name].update(edit_ms_median=statistics.median(x for g in got for x in g["edit_ms"]),
                                 edit_server_cpu_ms_mean=round(statistics.mean(g["edit_server_cpu_ms_mean"]
                                                                               for g in got), 1))
        summary[label] = row
    result = {"what": "a .bib edited in a warm language server: ms from didChange to its publishDiagnostics",
              "files": {k: len(v) for k, v in files.items()}, "edits": args.edits, "sessions": args.repeat,
              "corpus": str(corpus), "trees": {label: str(src) if src else "installed" for label, src in trees},
              "machine": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
              "summary": summary, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
