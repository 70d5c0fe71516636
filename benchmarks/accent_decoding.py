"""Decoding accented LaTeX in a bibliography field: time per field size, doubling the size each step.

Usage::

    python benchmarks/accent_decoding.py --label after [--out benchmarks/results/accent_decoding.json]

A field of ``{\\"o}`` repeated to n characters (n = 8K, 16K, ... 512K) is decoded with
:func:`mustcite.extract.decode_latex` (what reading a ``.bib``/``.bbl`` field, the LaTeX reader
and check-refs call). Each size is built outside the timing and timed as the best of
``--repeats`` wall-clock runs (after a garbage collection); ``ratio`` is the time at n over the
time at n/2 (2 when linear, 4 when quadratic). ``correct``: the decoded text is n/5 letters ``ö``
and nothing else.

The JSON keeps one entry per ``--label`` (``before``: the code before a change, ``after``: after
it), so one file holds both; a run replaces only its own label. Take timings on a quiet machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from pathlib import Path

SIZES = [8 * 1024 * 2**i for i in range(7)]          # 8K .. 512K characters
UNIT = '{\\"o}'
RESULTS = Path(__file__).resolve().parent / "results" / "accent_decoding.json"


def field(n: int) -> str:
    return (UNIT * (n // len(UNIT) + 1))[:n - n % len(UNIT)]


def measure(repeats: int, max_seconds: float) -> list[dict]:
    from mustcite.extract import decode_latex

    rows, prev = [], None
    for n in SIZES:
        text = field(n)
        best = float("inf")
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            out = decode_latex(text)
            best = min(best, time.perf_counter() - t0)
            if best > max_seconds:
                break
        rows.append({"chars": n, "seconds": round(best, 5),
                     "ratio": round(best / prev, 2) if prev else None,
                     "correct": out == "ö" * (len(text) // len(UNIT))})
        prev = best
        print(f"{n:>8,} chars  {best:9.4f} s  ratio {rows[-1]['ratio']}  correct {rows[-1]['correct']}",
              file=sys.stderr)
        if best > max_seconds:
            print(f"  stopping: over {max_seconds} s", file=sys.stderr)
            break
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", required=True, help="before | after (or any name): the entry this run writes")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-seconds", type=float, default=30.0, help="stop growing once one size takes this long")
    a = ap.parse_args()
    rows = measure(a.repeats, a.max_seconds)
    doc = json.loads(a.out.read_text(encoding="utf-8")) if a.out.is_file() else {}
    doc.setdefault("what", "decode_latex on a field of '{\\\"o}' repeated to n characters; best of repeats")
    doc.setdefault("runs", {})[a.label] = {
        "rows": rows, "repeats": a.repeats, "python": platform.python_version(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    runs = doc["runs"]
    if "before" in runs and "after" in runs:
        before = {r["chars"]: r["seconds"] for r in runs["before"]["rows"]}
        doc["speedup"] = {str(r["chars"]): round(before[r["chars"]] / r["seconds"], 1)
                          for r in runs["after"]["rows"] if r["chars"] in before and r["seconds"] > 0}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
