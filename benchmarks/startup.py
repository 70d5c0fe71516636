"""Start-up of the command line: `mustcite recommend` and `mustcite audit` from a new process.

Times, from process start to exit, one recommendation for a title and abstract and one audit of a
real draft, each with the default model (targets: recommend <= 3 s, audit <= 5 s). ``--compare``
runs the same commands with two source trees, alternating run by run so that both see the same
machine, and reports each tree's median and mean with a Mann-Whitney test of the difference.
Run it with nothing else running. Writes ``benchmarks/results/startup.json``.

    python benchmarks/startup.py [--model DIR] [--repeat 5] [--compare before=OLD/src after=src]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRAFT = ROOT.parent / "shared" / "data" / "drafts" / "projects" / "ai-detector-fooling"
TITLE = "VASA-1: Lifelike Audio-Driven Talking Faces Generated in Real Time"
ABSTRACT = ("We introduce VASA, a framework for generating lifelike talking faces with appealing visual "
            "affective skills given a single static image and a speech audio clip.")


def commands(model: Path | None) -> dict[str, list[str]]:
    extra = ["--model", str(model)] if model else []
    return {"recommend": ["recommend", "--title", TITLE, "--abstract", ABSTRACT, "--year", "2024", "--top", "10",
                          *extra],
            "audit": ["audit", str(DRAFT), "--year", "2024", "--top", "10", *extra]}


def run_once(src: Path, args: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1")
    code = "import sys; from mustcite.cli.main import console_main; sys.argv = ['mustcite'] + sys.argv[1:]; " \
           "console_main()"
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"mustcite {args[0]} failed with {src}:\n{done.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="model folder (default: <work>/models/recommender)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--compare", nargs="+", metavar="NAME=SRC[@MODEL]", default=[f"this={ROOT / 'src'}"],
                    help="source trees to time, each as NAME=PATH/TO/src (default: this checkout), optionally with "
                         "a model folder of its own (@MODEL: trees whose saved indexes differ must not share one)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "startup.json")
    args = ap.parse_args(argv)
    trees, cmds_of = {}, {}
    for item in args.compare:
        name, _, spec = item.partition("=")
        src, _, model = spec.partition("@")
        trees[name] = src
        cmds_of[name] = commands(Path(model) if model else args.model)
    cmds = next(iter(cmds_of.values()))
    times: dict[str, dict[str, list[float]]] = {t: {c: [] for c in cmds} for t in trees}
    for name, src in trees.items():      # one warm-up run each: the file cache, compiled bytecode, saved indexes
        for argv_ in cmds_of[name].values():
            run_once(Path(src), argv_)
    for _ in range(args.repeat):
        for cmd in cmds:
            for name, src in trees.items():
                times[name][cmd].append(round(run_once(Path(src), cmds_of[name][cmd]), 3))
    out: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
                 "repeat": args.repeat, "model": str(args.model) if args.model else "default",
                 "targets_s": {"recommend": 3.0, "audit": 5.0}, "trees": {}}
    for name in trees:
        out["trees"][name] = {cmd: {"median_s": round(statistics.median(v), 3), "mean_s": round(statistics.mean(v), 3),
                                    "runs_s": v} for cmd, v in times[name].items()}
    if len(trees) == 2:
        from scipy.stats import mannwhitneyu

        a, b = list(trees)
        out["mann_whitney_p"] = {cmd: round(float(mannwhitneyu(times[a][cmd], times[b][cmd]).pvalue), 4)
                                 for cmd in cmds}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({n: {c: v["median_s"] for c, v in t.items()} for n, t in out["trees"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
