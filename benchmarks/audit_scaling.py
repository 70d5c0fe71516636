"""Does the audit's reading of a LaTeX draft take time and memory linear in its size? A doubling
benchmark: drafts of 0.25, 0.5, 1, 2, 4 and 8 MB (10^6 bytes, the 8 MB one just under the reader's
8,000,000-character cap), in two shapes, each read in a fresh process.

* ``paragraph``: one paragraph of real sentences (cut from the introduction of the dev draft
  ``kfac-pinns``, its citations and ``references.bib`` kept), with one sentence in ten naming works
  the names index knows ("We train with PyTorch and compare against BYOL, DDPM and InstructGPT"), so
  the findings have names to weigh (works of the slice's pool);
* ``short``: the same sentences cut to their first five words, in one paragraph.

What is timed is ``mustcite audit`` itself, in a fresh process per draft, with the small recommender
of the tests' real slice (:func:`bad_input_fixtures.build_slice`: the NeurIPS 2019-2022 pool, BM25
only, trained on 55 NeurIPS 2023 full texts; built once, in a temporary folder): the LaTeX reading
(main file, includes, macros, citations, LaTeX to text, sentences), the linking, the scoring of the
draft's title and abstract (the same for every size) and every finding (names in the text, the
draft's own names and acronyms, placeholders, cross-references). The model's loading is not timed.

Per size and shape: seconds, peak resident memory of the process (MiB, ``ru_maxrss``, the model's
loading included: a peak that does not grow with the draft is the loading's) and the resident memory
before and after the audit, the findings, and the ratio of each time to the time at half the size (linear: about 2);
per shape, the exponent of a least-squares fit of log(time) on log(size) (linear: 1, quadratic: 2),
which one noisy size moves less than a ratio does. Run on a quiet machine (nothing else busy on
its cores): the ratios are only as steady as the machine. ::

    .venv/bin/python benchmarks/audit_scaling.py        # writes benchmarks/results/audit_scaling.json
    .venv/bin/python benchmarks/audit_scaling.py --sizes 0.25 0.5 1 --shapes short
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "audit_scaling.json"
SIZES = (0.25, 0.5, 1, 2, 4, 8)
SHAPES = ("paragraph", "short")
SOURCE = "kfac-pinns"
#: sentences naming works of the slice's names index, one after every nine real sentences
NAMING = ("We train with PyTorch and compare against BYOL, DDPM and InstructGPT.",
          "Our offline baselines are CQL and GraphCL on MuJoCo.",
          "We use FlashAttention and VideoMAE for the encoder.",
          "GLIP and DetCLIP are evaluated on ODinW.")
HEAD = ("\\documentclass{article}\n\\title{Kronecker-Factored Approximate Curvature for Physics-Informed Neural "
        "Networks}\n\\begin{document}\n\\maketitle\n\\begin{abstract}We study optimisers for PINNs.\\end{abstract}\n"
        "\\section{Introduction}\n")
TAIL = "\n\\bibliographystyle{plain}\n\\bibliography{references}\n\\end{document}\n"
CAP = 8_000_000


def real_sentences(project: Path) -> list[str]:
    """The introduction's prose sentences (lines of environments, items and comments left out)."""
    out = []
    for line in (project / "sections" / "introduction.tex").read_text(encoding="utf-8").split("\n"):
        line = line.strip()
        if not line or line.startswith(("%", "\\begin", "\\end", "\\paragraph", "\\item")):
            continue
        out += [s for s in re.split(r"(?<=\.)\s+", line) if len(s) > 40]
    return out


def make_draft(folder: Path, project: Path, n_bytes: int, shape: str) -> Path:
    """A project folder ``folder`` whose ``main.tex`` is about ``n_bytes`` long, of ``shape``."""
    sents = real_sentences(project)
    if shape == "short":
        sents = [" ".join(re.sub(r"\\\w+\{[^}]*\}|~", "", s).split()[:5]).rstrip(".,;:") + "." for s in sents]
    mixed = []
    for i, s in enumerate(sents):
        mixed.append(s)
        if i % 9 == 8:
            mixed.append(NAMING[(i // 9) % len(NAMING)])
    folder.mkdir(parents=True, exist_ok=True)
    n = min(n_bytes, CAP - 1000) - len(HEAD) - len(TAIL)
    parts, size, i = [], 0, 0
    while size < n:
        s = mixed[i % len(mixed)] + " "
        parts.append(s)
        size += len(s)
        i += 1
    (folder / "main.tex").write_text(HEAD + "".join(parts) + TAIL, encoding="utf-8")
    shutil.copy(project / "references.bib", folder / "references.bib")
    return folder


def _rss_mib() -> float | None:
    """The process's resident memory now (Linux), in MiB."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(pages * resource.getpagesize() / 2**20, 1)


def child(folder: Path, model: Path) -> dict:
    """Audit one draft (in this process: its peak memory)."""
    from mustcite.recommend import Recommender, audit_draft

    rec = Recommender.load(model)
    before = _rss_mib()
    t0 = time.perf_counter()
    res = audit_draft(rec, folder, year=2024, show_all=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": round(seconds, 3), "peak_mib": round(peak, 1), "rss_before_mib": before,
            "rss_after_mib": _rss_mib(),
            "findings": len(res.findings), "named": sum(f.kind == "named_not_cited" for f in res.findings),
            "references": res.references}


def exponent(rows: list[dict]) -> float | None:
    """The slope of log(seconds) on log(size) (least squares): 1 for linear time, 2 for quadratic."""
    pts = [(math.log(r["mb"]), math.log(r["seconds"])) for r in rows if r["seconds"] > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / sxx, 3) if sxx else None


def summarise(rows: list[dict]) -> dict:
    """The result file's content: the rows, and per shape the ratios and the fitted exponent."""
    shapes = {}
    for shape in dict.fromkeys(r["shape"] for r in rows):
        mine = [r for r in rows if r["shape"] == shape]
        ratios = [r["ratio"] for r in mine if r["ratio"]]
        shapes[shape] = {"exponent": exponent(mine),
                         "median_ratio": sorted(ratios)[len(ratios) // 2] if ratios else None,
                         "max_ratio": max(ratios, default=None),
                         "time_ratio_first_to_last": round(mine[-1]["seconds"] / mine[0]["seconds"], 2),
                         "size_ratio_first_to_last": round(mine[-1]["mb"] / mine[0]["mb"], 2),
                         "peak_mib_max": max(r["peak_mib"] for r in mine)}
    return {"what": "mustcite audit of a LaTeX draft with the tests' slice recommender, doubling sizes",
            "source_draft": SOURCE, "shapes": shapes, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=list(SIZES), help="MB (10^6 bytes), doubling")
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=SHAPES)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--summarise", type=Path, metavar="JSON",
                    help="recompute the summary of a result file's rows (written back to --out)")
    ap.add_argument("--child", nargs=2, metavar=("FOLDER", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]))))
        return
    if args.summarise:
        out = summarise(json.loads(args.summarise.read_text())["rows"])
        args.out.write_text(json.dumps(out, indent=1) + "\n")
        print(json.dumps(out["shapes"]))
        return
    from bad_input_fixtures import build_slice

    from mustcite.config import find_data_dir

    project = find_data_dir() / "drafts" / "projects" / SOURCE
    rows = []
    with tempfile.TemporaryDirectory(prefix="mustcite-scaling-") as tmp:
        model = Path(tmp) / "model"
        print("training the tests' slice recommender ...", flush=True)
        build_slice(model, Path(tmp) / "scratch")
        for shape in args.shapes:
            prev = None
            for mb in sorted(args.sizes):
                folder = make_draft(Path(tmp) / f"{shape}-{mb}", project, int(mb * 1e6), shape)
                proc = subprocess.run([sys.executable, __file__, "--child", str(folder), str(model)],
                                      capture_output=True, text=True, check=True)
                row = {"shape": shape, "mb": mb, **json.loads(proc.stdout.strip().split("\n")[-1])}
                row["ratio"] = round(row["seconds"] / prev["seconds"], 2) if prev and prev["seconds"] else None
                rows.append(row)
                prev = row
                shutil.rmtree(folder)
                print(f"{shape:9} {mb:5} MB  {row['seconds']:7.2f} s  peak {row['peak_mib']:7.1f} MiB  "
                      f"x{row['ratio'] or '-'}  findings {row['findings']} (named {row['named']})", flush=True)
    out = summarise(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
