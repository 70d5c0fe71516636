"""A command prints its answer and its own lines, nothing from the libraries under it.

``recommend`` and ``audit`` run as new processes (as a user runs them) on the test slice's model
and a real NeurIPS 2024 full text; every stderr line must be one of the tool's own (``note:``,
``warning:``), never a library's log line, warning or traceback. With ``-v`` the libraries may
speak.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA
from helpers import recommender as S

pytestmark = pytest.mark.data

#: the tool's own stderr lines
OWN = re.compile(r"^(note|warning): ")


def _run(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS", "MUSTCITE_VERBOSE")}
    env |= {"HF_HUB_OFFLINE": "1", "MUSTCITE_WORK": str(tmp / "work")}
    return subprocess.run([sys.executable, "-m", "mustcite.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def _foreign(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and not OWN.match(ln)]


@pytest.fixture(scope="module")
def draft() -> Path:
    """A real NeurIPS 2024 full text (Markdown, gzipped), as a researcher's draft."""
    return sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[0]


def test_recommend_and_audit_print_only_their_own_lines(tmp_path, draft):
    q = S.held_out_queries()[0]
    model = str(S.model_dir())
    rec = _run("recommend", "--title", q["title"], "--abstract", q["abstract"], "--year", "2024", "--model", model,
               tmp=tmp_path)
    assert rec.returncode == 0, rec.stderr
    assert rec.stdout.strip() and not _foreign(rec.stderr), rec.stderr
    aud = _run("audit", str(draft), "--model", model, tmp=tmp_path)
    assert aud.returncode == 0, aud.stderr
    assert "findings: " in aud.stdout and not _foreign(aud.stderr), aud.stderr
    # a model loaded for the first time builds its indexes: still nothing but the answer; and the
    # check sees library lines when there are some (with -v, bm25s logs as it builds an index)
    for verbose in ((), ("-v",)):
        fresh = tmp_path / f"fresh{len(verbose)}"
        shutil.copytree(model, fresh, ignore=shutil.ignore_patterns("indexes"))
        first = _run(*verbose, "audit", str(draft), "--model", str(fresh), tmp=tmp_path)
        assert first.returncode == 0 and first.stdout == aud.stdout, first.stderr
        assert bool(_foreign(first.stderr)) == bool(verbose), first.stderr
        assert not verbose or any("bm25s" in ln for ln in _foreign(first.stderr)), first.stderr


def test_library_warnings_are_hidden_unless_verbose(tmp_path):
    """A library's warning (here one raised on purpose through the warnings module by a fake
    library module) is hidden by default and shown with ``-v``."""
    lib = tmp_path / "noisylib.py"
    lib.write_text("import logging, warnings\n"
                   "def speak():\n"
                   "    warnings.warn('a library warning', UserWarning)\n"
                   "    logging.getLogger('bm25s').warning('a library log line')\n"
                   "    logging.warning('a root log line')\n", encoding="utf-8")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from mustcite.quiet import quiet_libraries; "
            "quiet_libraries(sys.argv[2] == '1'); import noisylib; noisylib.speak()")
    quiet = subprocess.run([sys.executable, "-c", code, str(tmp_path), "0"], capture_output=True, text=True)
    loud = subprocess.run([sys.executable, "-c", code, str(tmp_path), "1"], capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "a library warning" in loud.stderr and "a library log line" in loud.stderr


def test_a_library_that_sets_its_own_level_on_import_stays_quiet():
    """bm25s sets its logger to DEBUG when imported, and some libraries (onnxruntime's quantizer,
    used while training) configure the root logger: its DEBUG lines must still not reach stderr."""
    code = ("import logging\n"
            "from mustcite.quiet import quiet_libraries\n"
            "quiet_libraries()\n"
            "import bm25s\n"
            "logging.basicConfig(level=logging.DEBUG)\n"
            "logging.getLogger('bm25s').debug('library debug line')\n"
            "logging.getLogger('bm25s').error('library error line')\n")
    env = {k: v for k, v in os.environ.items() if k != "MUSTCITE_VERBOSE"}
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0, got.stderr
    assert "library debug line" not in got.stderr and "library error line" in got.stderr
