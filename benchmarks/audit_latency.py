"""Audit latency for LaTeX projects of 60 references: in-process (warm model), REST and the CLI.

Each project is made from one real NeurIPS 2024 paper of the extraction folder with at least 60
linked references: ``main.tex`` (its title, abstract, and per section the citation contexts the
extraction found, each ending in ``\\cite{key}``), ``sections/*.tex`` pulled in by ``\\input`` and a
``refs.bib`` with the 60 references' titles, authors and years; then zipped. Timed:

* ``python_warm``: ``audit_draft(model, project.zip)`` with the model loaded once (unpack, LaTeX and
  BibTeX parsing, linking, scoring with the bibliography evidence);
* ``rest_api``: ``POST /api/audit`` with the zip through uvicorn on 127.0.0.1 (one at a time);
* ``cli``: ``mustcite audit project.zip --format json`` as a new process (model load included);
* ``cli_real_drafts`` (``--real-drafts``): ``mustcite audit PROJECT --year Y`` as a new process, once
  for each of the 30 real LaTeX projects of ``<data>/drafts`` (the folder as it is).

    python benchmarks/audit_latency.py [--model DIR] [--refs mustcite-work/extract] [--n 10] [--repeat 2] \\
        [--real-drafts]

Writes ``benchmarks/results/audit_latency.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import latency_summary  # noqa: E402

N_REFS = 60
_SPECIAL = re.compile(r"([%&#_$])")


def _tex(s: str) -> str:
    s = s.replace("\\", " ").replace("{", "(").replace("}", ")").replace("~", " ").replace("^", " ")
    return _SPECIAL.sub(r"\\\1", s)


def _bib(s: str) -> str:
    return s.replace("{", "").replace("}", "").replace("\\", " ")


def make_project(meta: dict, refs: list[dict], folder: Path) -> Path:
    """A LaTeX project for one paper: main.tex + sections/*.tex + refs.bib, zipped."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sections").mkdir(exist_ok=True)
    by_section: dict[str, list[str]] = {}
    bib = []
    for i, r in enumerate(refs, 1):
        key = f"ref{i}"
        ctx = (r.get("contexts") or [{}])[0]
        section = (ctx.get("section") or "Introduction").strip() or "Introduction"
        text = " ".join((ctx.get("context") or f"We build on {r['title']}").split())[:600]
        by_section.setdefault(section, []).append(f"{_tex(text)} \\cite{{{key}}}.")
        authors = " and ".join(_bib(a) for a in (r.get("authors") or [])[:6]) or "Anonymous"
        bib.append(f"@inproceedings{{{key},\n  title = {{{_bib(r['title'])}}},\n  author = {{{authors}}},\n"
                   f"  year = {{{r.get('year') or 2020}}}\n}}\n")
    inputs = []
    for j, (section, paras) in enumerate(by_section.items(), 1):
        name = f"s{j}"
        (folder / "sections" / f"{name}.tex").write_text(
            f"\\section{{{_tex(re.sub(r'^[0-9.]+ *', '', section))}}}\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
        inputs.append(f"\\input{{sections/{name}}}")
    (folder / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{natbib}\n"
        f"\\title{{{_tex(meta['title'])}}}\n\\begin{{document}}\n\\maketitle\n"
        f"\\begin{{abstract}}\n{_tex(meta.get('abstract') or '')}\n\\end{{abstract}}\n"
        + "\n".join(inputs) + "\n\\bibliographystyle{plainnat}\n\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8")
    (folder / "refs.bib").write_text("\n".join(bib), encoding="utf-8")
    archive = folder.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(folder))
    return archive


def pick_papers(refs_dir: Path, n: int) -> list[tuple[dict, list[dict]]]:
    """The first ``n`` papers (by file name) of 2024 with at least N_REFS linked references."""
    out = []
    for meta_file in sorted(refs_dir.glob("*.meta.json")):
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("year") != 2024 or not meta.get("title") or not meta.get("abstract"):
            continue
        ref_file = meta_file.with_name(meta_file.name[: -len(".meta.json")] + ".json")
        if not ref_file.exists():
            continue
        refs = [r for r in json.loads(ref_file.read_text(encoding="utf-8")) if r.get("title") and r.get("paper_id")]
        if len(refs) >= N_REFS:
            out.append((meta, refs[:N_REFS]))
            if len(out) == n:
                break
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: <work>/models/recommender)")
    ap.add_argument("--refs", type=Path, default=Path("mustcite-work/extract"))
    ap.add_argument("--n", type=int, default=10, help="projects")
    ap.add_argument("--repeat", type=int, default=2, help="audits of each project per path")
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--real-drafts", action="store_true",
                    help="also time the CLI once on every real LaTeX project of <data>/drafts (as it is, a folder)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "audit_latency.json")
    args = ap.parse_args(argv)

    import httpx

    from mustcite.api import create_app, running
    from mustcite.recommend import audit_draft, load_default

    papers = pick_papers(args.refs, args.n)
    if not papers:
        print(f"no 2024 paper with {N_REFS} linked references under {args.refs}", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="audit-latency-"))
    archives = [make_project(meta, refs, tmp / f"p{i}") for i, (meta, refs) in enumerate(papers)]
    t0 = time.perf_counter()
    rec = load_default(model=args.model)
    load_s = time.perf_counter() - t0
    audit_draft(rec, archives[0], top=20, year=2024)              # warm caches (title index, bibliography index)
    py, found = [], []
    for _ in range(args.repeat):
        for a in archives:
            t = time.perf_counter()
            res = audit_draft(rec, a, top=20, year=2024)
            py.append((time.perf_counter() - t) * 1000)
            found.append((res.references, res.linked))
    rest = []
    with running(create_app(rec)) as base, httpx.Client(base_url=base, timeout=300) as client:
        for _ in range(args.repeat):
            for a in archives:
                t = time.perf_counter()
                r = client.post("/api/audit", files={"file": (a.name, a.read_bytes(), "application/zip")},
                                data={"top": "20", "year": "2024"})
                rest.append((time.perf_counter() - t) * 1000)
                if r.status_code != 200:
                    print(f"REST error {r.status_code}: {r.text[:300]}", file=sys.stderr)
                    return 1
    cli = []
    exe = Path(sys.executable).with_name("mustcite")
    for a in archives[: args.cli_runs]:
        cmd = [str(exe), "audit", str(a), "--format", "json", "--year", "2024"] + \
            (["--model", str(args.model)] if args.model else [])
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        cli.append((time.perf_counter() - t) * 1000)
    real = {}
    if args.real_drafts:
        from mustcite.config import find_data_dir

        drafts = find_data_dir() / "drafts"
        for p in json.loads((drafts / "manifest.json").read_text()):
            cmd = [str(exe), "audit", str(drafts / "projects" / p["name"]), "--year", str(p["year"])] + \
                (["--model", str(args.model)] if args.model else [])
            t = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            real[p["name"]] = round((time.perf_counter() - t) * 1000, 1)
    report = {
        "model": rec.describe(), "projects": len(archives), "references_per_project": N_REFS,
        "read_and_linked": found[: len(archives)], "load_s": round(load_s, 2),
        "python_warm": latency_summary(py), "rest_api": latency_summary(rest), "cli_process": latency_summary(cli),
        **({"cli_real_drafts": latency_summary(list(real.values())) | {"per_project_ms": real}} if real else {}),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_1min_at_end": round(os.getloadavg()[0], 2)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
