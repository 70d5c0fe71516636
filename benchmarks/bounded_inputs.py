"""Peak memory and time of the CLI on small hostile compressed/archived inputs.

Usage::

    python benchmarks/bounded_inputs.py [--out benchmarks/results/bounded_inputs.json] [--only NAME ...]

Builds each hostile file in a temporary folder (a few MB at most: gzip members concatenate, so
N copies of one compressed 16 MiB block decompress to N * 16 MiB), runs the CLI command on it in a
subprocess under ``/usr/bin/time -v`` and records the exit code, the first ``error:`` line, the
peak RSS (MB) and the wall seconds. Targets: every case refused with exit code 1 and a clear
error, under 400 MB peak and 5 s. The caps under test (``mustcite.io``, ``mustcite.extract.archive``,
``mustcite.collect.http``): a tar long-name/PAX header body at most 64 KiB; a ``.gz`` data file at
most 256 MiB decompressed; a line at most 32 MiB characters; collector archives keep text members
of at most 32 MiB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

MB = 2**20
ROOT = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).parent / "mustcite")


def _block(byte: bytes) -> bytes:
    """16 MiB of ``byte`` as one gzip member."""
    return gzip.compress(byte * (16 * MB), compresslevel=9)


def _header(name: str, size: int, typ: bytes) -> bytes:
    ti = tarfile.TarInfo(name)
    ti.size, ti.type = size, typ
    return ti._create_header(ti.get_info(), tarfile.GNU_FORMAT, "utf-8", "surrogateescape")


def _meta_header_tar(path: Path, typ: bytes, claim: int) -> None:
    """A .tar.gz whose first header (long name / PAX) claims ``claim`` bytes, and really holds them."""
    name = "././@LongLink" if typ in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK) else "./PaxHeaders/main.tex"
    a = _block(b"a")
    with open(path, "wb") as fh:
        fh.write(gzip.compress(_header(name, claim, typ)))
        for _ in range(-(-claim // (16 * MB))):
            fh.write(a)


def _chain_tar(path: Path, n: int = 3000) -> None:
    """A .tar.gz of ``n`` small GNU long-name headers in a row (each 5 bytes, none followed by a member)."""
    chain = b"".join(_header("././@LongLink", 5, tarfile.GNUTYPE_LONGNAME) + b"x" * 512 for _ in range(n))
    path.write_bytes(gzip.compress(chain + b"\0" * 1024))


def _gzip_of(path: Path, head: bytes, block: bytes, total: int, tail: bytes = b"") -> None:
    """``head`` + ``total`` bytes of the 16 MiB ``block``'s content + ``tail``, gzipped, in members."""
    gz = _block(block)
    with open(path, "wb") as fh:
        if head:
            fh.write(gzip.compress(head))
        for _ in range(total // (16 * MB)):
            fh.write(gz)
        if tail:
            fh.write(gzip.compress(tail))


def _collect_bomb(folder: Path) -> None:
    """An offline folder whose PMLR UAI 2025 volume archive is a ~1 MB .tar.gz holding a 1 GiB post."""
    (folder / "pmlr").mkdir(parents=True)
    size = 1024 * MB
    zeros = _block(b"\0")
    with open(folder / "pmlr" / "v286_uai2025.tar.gz", "wb") as fh:
        fh.write(gzip.compress(_header("v286/_config.yml", 12, tarfile.REGTYPE) + b"volume: 286\n".ljust(512, b"\0")
                               + _header("v286/_posts/2025-07-01-bomb.md", size, tarfile.REGTYPE)))
        for _ in range(size // (16 * MB)):
            fh.write(zeros)
        fh.write(gzip.compress(b"\0" * 10240))


def build_cases(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (CLI arguments, what the file is)."""
    work = str(tmp / "work")
    cases: dict[str, tuple[list[str], str]] = {}

    _meta_header_tar(tmp / "longlink.tar.gz", tarfile.GNUTYPE_LONGNAME, 2048 * MB)
    cases["draft_longlink_2gb"] = (["--work", work, "recommend", "--draft", str(tmp / "longlink.tar.gz")],
                                   "LaTeX draft .tar.gz, GNU LongLink header claiming 2 GiB (and holding it)")
    _meta_header_tar(tmp / "pax.tar.gz", tarfile.XHDTYPE, 400 * MB)
    cases["draft_pax_400mb"] = (["--work", work, "recommend", "--draft", str(tmp / "pax.tar.gz")],
                                "LaTeX draft .tar.gz, PAX header claiming 400 MiB (and holding it)")

    _gzip_of(tmp / "q_line.jsonl.gz", b'{"id": "q1", "title": "', b"a", 1024 * MB, b'"}\n')
    cases["queries_1gb_one_line"] = (["--work", work, "recommend", "--queries", str(tmp / "q_line.jsonl.gz")],
                                     "recommend --queries: 1 GiB .jsonl.gz, one endless line")
    _gzip_of(tmp / "q_blank.jsonl.gz", b"", b"\n", 1024 * MB)
    cases["queries_1gb_blank_lines"] = (["--work", work, "recommend", "--queries", str(tmp / "q_blank.jsonl.gz")],
                                        "recommend --queries: 1 GiB .jsonl.gz of blank lines")

    (tmp / "qrels.txt").write_text("q1 0 d1 1\n")
    _gzip_of(tmp / "run_line.gz", b"q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 ", b"a", 1024 * MB, b"\n")
    cases["run_1gb_one_line"] = (["--work", work, "evaluate", "--run", str(tmp / "run_line.gz"),
                                  "--qrels", str(tmp / "qrels.txt")], "evaluate --run: 1 GiB .gz, one endless line")
    _gzip_of(tmp / "run_blank.gz", b"q1 Q0 d1 1 1.0 t\n", b"\n", 1024 * MB)
    cases["run_1gb_blank_lines"] = (["--work", work, "evaluate", "--run", str(tmp / "run_blank.gz"),
                                     "--qrels", str(tmp / "qrels.txt")], "evaluate --run: 1 GiB .gz of blank lines")

    (tmp / "gold.jsonl").write_text(json.dumps({"id": "p1", "predicted_citations": ["a"]}) + "\n")
    _gzip_of(tmp / "pred.jsonl.gz", b'{"id": "p1", "predicted_citations": ["', b"a", 512 * MB, b'"]}\n')
    cases["scidoca_pred_500mb"] = (["--work", work, "scidoca", "evaluate", "--task", "1", "--pred",
                                    str(tmp / "pred.jsonl.gz"), "--gold", str(tmp / "gold.jsonl")],
                                   "scidoca evaluate --pred: 512 MiB .jsonl.gz, one endless line")
    _gzip_of(tmp / "pred.json.gz", b'{"id": "p1", "predicted_citations": ["', b"a", 512 * MB, b'"]}')
    cases["scidoca_pred_500mb_json"] = (["--work", work, "scidoca", "evaluate", "--task", "1", "--pred",
                                         str(tmp / "pred.json.gz"), "--gold", str(tmp / "gold.jsonl")],
                                        "scidoca evaluate --pred: 512 MiB .json.gz (read whole)")

    _collect_bomb(tmp / "offline")
    cases["collect_offline_tar_bomb"] = (["--work", work, "collect", "UAI", "2025", "--offline", str(tmp / "offline"),
                                          "--out", str(tmp / "collect"), "--quiet"],
                                         "collect --offline: ~1 MB volume .tar.gz holding a 1 GiB _posts/*.md")
    return cases


def _time_v(stderr: str) -> tuple[float, float, str]:
    """(peak RSS MB, wall seconds, the command's own stderr) from ``/usr/bin/time -v`` output."""
    peak = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1)) / 1024
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", stderr).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    own = stderr[:stderr.find("\tCommand being timed")] if "\tCommand being timed" in stderr else stderr
    return round(peak, 1), round(secs, 2), own


def measure(argv: list[str], *, timeout: float = 300, env: dict | None = None, cwd: Path | None = None) -> dict:
    """Run ``argv`` under ``/usr/bin/time -v`` (in its own process group, killed whole on timeout):
    exit_code, stdout, stderr (the command's own), traceback, peak_rss_mb, seconds."""
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-v", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace", env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return {"exit_code": None, "stdout": out, "stderr": f"timed out after {timeout:.0f} s", "traceback": False,
                "peak_rss_mb": None, "seconds": round(time.perf_counter() - t0, 2)}
    peak, secs, own = _time_v(err)
    own = "\n".join(ln for ln in own.splitlines()
                    if not ln.startswith(("Command exited with non-zero", "Command terminated by signal")))
    return {"exit_code": p.returncode, "stdout": out, "stderr": own, "traceback": "Traceback" in own,
            "peak_rss_mb": peak, "seconds": secs}


def run_case(args: list[str], timeout: float = 300) -> dict:
    m = measure([CLI, *args], timeout=timeout)
    lines = [ln for ln in m["stderr"].splitlines() if ln.strip()]
    error = next((ln for ln in lines if ln.startswith("error:")), lines[0] if lines else "")
    return {"exit_code": m["exit_code"], "error_line": error, "other_stderr": [ln for ln in lines if ln != error][:3],
            "traceback": m["traceback"], "peak_rss_mb": m["peak_rss_mb"], "seconds": m["seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "bounded_inputs.json")
    ap.add_argument("--only", nargs="*", help="case names to run (default: all)")
    a = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="mustcite-bounded-") as d:
        tmp = Path(d)
        t = time.perf_counter()
        cases = build_cases(tmp)
        print(f"built {len(cases)} hostile files in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        baseline = run_case(["--help"])
        for name, (args, what) in cases.items():
            if a.only and name not in a.only:
                continue
            hostile = next((Path(x) for x in args if x.startswith(d) and Path(x).is_file()
                            and "gold" not in x and "qrels" not in x), None)
            size = (hostile.stat().st_size if hostile else
                    (tmp / "offline" / "pmlr" / "v286_uai2025.tar.gz").stat().st_size)
            r = {"what": what, "file_kb": round(size / 1024),
                 "command": "mustcite " + " ".join(args[2:]).replace(d, "$TMP")}
            r |= run_case(args)
            r["error_line"] = r["error_line"].replace(d, "$TMP")
            r["other_stderr"] = [x.replace(d, "$TMP") for x in r.get("other_stderr", [])]
            r["ok"] = (r["exit_code"] == 1 and not r.get("traceback") and r["peak_rss_mb"] is not None
                       and r["peak_rss_mb"] < 400 and r["seconds"] < 5)
            results[name] = r
            print(f"{name:26s} exit {r['exit_code']}  {r['peak_rss_mb']!s:>7} MB  {r['seconds']:>6} s  "
                  f"{r['error_line'][:110]}", file=sys.stderr)
    out = {"targets": {"peak_rss_mb_below": 400, "seconds_below": 5, "exit_code": 1},
           "cli_baseline_help": {"peak_rss_mb": baseline["peak_rss_mb"], "seconds": baseline["seconds"]},
           "all_ok": all(r["ok"] for r in results.values()), "cases": results}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
