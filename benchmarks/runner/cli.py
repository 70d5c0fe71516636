"""``python -m benchmarks``: list, run and check the experiments; render the documentation's tables.

    python -m benchmarks list [--page PAGE]      # every entry: name, page, what it measures
    python -m benchmarks run NAME [NAME ...]     # run each entry's command, then check its JSON
    python -m benchmarks check [NAME ...]        # check the committed JSON against the expectations
    python -m benchmarks tables [--check]        # write (or compare) every generated table of the pages

The entries are in ``benchmarks/experiments/*.yaml`` (one file per page); the results in
``benchmarks/results/``. ``check`` and ``run`` print OK or FAIL per expected figure and exit 1 on
any FAIL; ``tables --check`` exits 1 naming every table that disagrees with its JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from benchmarks.runner.entries import EXPERIMENTS, Entry, EntryError, compare, load_entries
from benchmarks.runner.render import RESULTS, ROOT, Renderer, render_pages

#: a Python interpreter at the start of a command (after any VAR=value): run with this one instead
_PYTHON = re.compile(r"^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(?:\.venv/bin/python3?|python3?(?:\.\d+)?)(?=\s)")


def command_line(entry: Entry, python: str = sys.executable) -> str:
    """The entry's command with its ``python`` (or ``.venv/bin/python``) replaced by ``python``
    (another virtual environment a command names, such as ``.venvs/incite``, stays)."""
    return _PYTHON.sub(lambda m: m.group(1) + shlex.quote(python), entry.command, count=1)


def _select(entries: list[Entry], names: list[str]) -> list[Entry]:
    known = {e.name: e for e in entries}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown entry: {', '.join(unknown)} (python -m benchmarks list)")
    return [known[n] for n in names] if names else entries


def _check(entries: list[Entry], results: Path) -> int:
    failed: list[str] = []
    for e in entries:
        path = results / e.result
        if not path.exists():
            print(f"FAIL {e.name}: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} is missing")
            failed.append(f"{e.name}: no {e.result}")
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        for outcome in compare(e, data):
            print(outcome.line())
            if not outcome.ok:
                failed.append(f"{e.name} ({e.source}): {outcome.path} = {outcome.actual}, expected {outcome.expected}")
    n = sum(len(e.expected) for e in entries)
    if failed:
        print(f"\n{len(failed)} of {n} figures disagree with their expectations:", file=sys.stderr)
        for line in failed:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"\n{n} figures of {len(entries)} entries agree with their expectations")
    return 0


def table_functions(entries: list[Entry], results: Path = RESULTS):
    """Table name -> a function rendering it (for :func:`render_pages`)."""
    renderer = Renderer(results)
    return {name: (lambda spec=spec, e=e: renderer.render(spec, e.result))
            for e in entries for name, spec in e.tables.items()}


def tables(entries: list[Entry], check: bool, root: Path = ROOT, results: Path = RESULTS) -> list[str]:
    """Render every table of every entry into the pages under ``root`` (or compare, with ``check``);
    also flag a table whose marker is on another page than its entry's."""
    problems = render_pages(table_functions(entries, results), check, root, results)
    for e in entries:
        page = root / e.page
        text = page.read_text(encoding="utf-8") if page.exists() else ""
        for name in e.tables:
            if f"<!-- table: {name} -->" not in text:
                problems.append(f"{e.source}: entry {e.name!r}: table {name!r} has no marker on its page {e.page}")
    return sorted(set(problems), key=problems.index)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experiments", type=Path, default=EXPERIMENTS, help=argparse.SUPPRESS)
    ap.add_argument("--results", type=Path, default=RESULTS, help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list", help="list the entries")
    p.add_argument("--page", help="only the entries of this page (e.g. docs/experiments/recommender.md)")
    p.add_argument("--commands", action="store_true", help="print each entry's command too")
    p = sub.add_parser("run", help="run entries' commands, then check what they wrote")
    p.add_argument("names", nargs="+")
    p.add_argument("--dry-run", action="store_true", help="print the commands only")
    p = sub.add_parser("check", help="check the committed results against the expectations (nothing runs)")
    p.add_argument("names", nargs="*")
    p = sub.add_parser("tables", help="render the generated tables of README.md and docs/")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 when a table disagrees")
    args = ap.parse_args(argv)

    try:
        entries = load_entries(args.experiments, args.root)
    except EntryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    if args.cmd == "list":
        shown = [e for e in entries if not args.page or e.page == args.page]
        width = max((len(e.name) for e in shown), default=0)
        for e in shown:
            print(f"{e.name:<{width}}  {e.page}: {e.measures}")
            if args.commands:
                print(f"{'':<{width}}  $ {e.command}")
        print(f"\n{len(shown)} entries, {sum(len(e.tables) for e in shown)} tables")
        return 0

    if args.cmd == "check":
        return _check(_select(entries, args.names), args.results)

    if args.cmd == "run":
        chosen = _select(entries, args.names)
        status = 0
        for e in chosen:
            cmd = command_line(e)
            print(f"$ {cmd}", flush=True)
            if args.dry_run:
                continue
            out = args.results / e.result
            before = out.stat().st_mtime_ns if out.exists() else None
            rc = subprocess.run(cmd, shell=True, cwd=args.root, env=os.environ.copy()).returncode
            if rc != 0:
                print(f"FAIL {e.name}: the command exited with {rc}")
                status = 1
                continue
            if not out.exists() or out.stat().st_mtime_ns == before:
                print(f"FAIL {e.name}: the command did not write {e.result}")
                status = 1
                continue
            status |= _check([e], args.results)
        return status

    problems = tables(entries, args.check, args.root, args.results)
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        n = sum(len(e.tables) for e in entries)
        print(f"{n} tables {'agree with their JSON' if args.check else 'written'}")
    return 1 if problems else 0
