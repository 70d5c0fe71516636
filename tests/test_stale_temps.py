"""Temporary files of interrupted index writes (a process killed between writing its temporary file
and renaming it into place) are removed by the next run, and only stale ones: a write in progress
(its process still runs) is left alone."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from test_refcheck import work  # noqa: F401  (the corpus of test_refcheck: real paper lists)

from mustcite.io import STALE_TEMP_SECONDS, remove_stale_temps

NAME = re.compile(r"\.index-[^/]+\.pickle\.(?P<pid>\d+)\.tmp")

#: a writer killed with SIGKILL while it writes its temporary file (it prints its pid, then writes on)
WRITER = """
import os, sys, time
path = sys.argv[1].replace("PID", str(os.getpid()))
with open(path, "wb") as fh:
    fh.write(b"x" * 2**20)
    fh.flush()
    print(path, flush=True)
    time.sleep(600)
"""


def _killed_writer(pattern: str) -> str:
    """The temporary file of a writer killed with ``kill -9`` mid-write (``PID`` in ``pattern``: its pid)."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, pattern], stdout=subprocess.PIPE, text=True)
    path = proc.stdout.readline().strip()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    return path


@pytest.fixture
def sleeper():
    """A running process (its pid stands for a write in progress)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc.pid
    proc.kill()
    proc.wait(10)


def test_only_the_temporary_files_of_dead_writers_or_old_ones_are_removed(tmp_path, sleeper):
    dead = _killed_writer(str(tmp_path / ".index-aaaa.pickle.PID.tmp"))
    live = tmp_path / f".index-bbbb.pickle.{sleeper}.tmp"
    live.write_bytes(b"in progress")
    old = tmp_path / f".index-cccc.pickle.{sleeper}.tmp"        # a live pid, but far older than any write
    old.write_bytes(b"left")
    os.utime(old, (time.time() - STALE_TEMP_SECONDS - 60,) * 2)
    mine = tmp_path / f".index-dddd.pickle.{os.getpid()}.tmp"   # this process: a write in progress
    mine.write_bytes(b"writing")
    other = [tmp_path / "index-aaaa.pickle", tmp_path / ".index-x.pickle.tmp", tmp_path / "notes.txt"]
    for f in other:
        f.write_bytes(b"keep")
    folder = tmp_path / ".index-eeee.pickle.999999999.tmp"      # a folder of a pid that cannot run
    folder.mkdir()
    (folder / "part").write_bytes(b"x")
    gone = remove_stale_temps(tmp_path, NAME)
    assert sorted(p.name for p in gone) == sorted([os.path.basename(dead), old.name, folder.name])
    assert live.exists() and mine.exists() and all(f.exists() for f in other)
    assert not os.path.exists(dead) and not old.exists() and not folder.exists()
    assert remove_stale_temps(tmp_path / "no-such-folder", NAME) == []


@pytest.mark.data("proceedings/paperlists/nips2019.jsonl.gz")
def test_check_refs_removes_the_temporary_index_of_a_killed_build(work, capsys):  # noqa: F811
    from mustcite.cli.main import main
    from mustcite.config import Workspace
    from mustcite.refcheck import index as I

    cache = Workspace.resolve(work).cache / "refcheck"
    cache.mkdir(parents=True, exist_ok=True)
    left = _killed_writer(str(cache / ".index-0123456789abcdef.pickle.PID.tmp"))
    assert os.path.getsize(left) == 2**20
    I._LOADED.clear()                       # a new run: nothing loaded in this process yet
    bib = work / "one.bib"
    bib.write_text("@article{k, title={Some Title}, author={Doe, Jane}, year={2019}}\n", encoding="utf-8")
    assert main(["--work", str(work), "check-refs", str(bib)]) == 0
    capsys.readouterr()
    assert not os.path.exists(left)
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_the_model_folder_index_temporaries_of_dead_loads_are_matched(tmp_path, sleeper):
    from mustcite.recommend.model_store import _TEMP_INDEXES

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f".indexes-{done.stdout.strip()}"
    (dead / "contexts").mkdir(parents=True)
    (dead / "pool.arrow").write_bytes(b"x" * 1024)
    live = tmp_path / f".indexes-{sleeper}"
    live.mkdir()
    (tmp_path / "indexes").mkdir()
    assert remove_stale_temps(tmp_path, _TEMP_INDEXES) == [dead]
    assert live.is_dir() and (tmp_path / "indexes").is_dir()


def test_a_pickle_cache_is_written_whole_or_not_at_all(tmp_path):
    import os

    from mustcite.io import load_pickle, write_pickle_cache

    assert write_pickle_cache(tmp_path / "c" / "x.pickle", {"a": [1, 2]})
    assert load_pickle(tmp_path / "c" / "x.pickle") == {"a": [1, 2]}
    blocked = tmp_path / "file"
    blocked.write_text("")                              # a file where the cache's folder should be
    assert not write_pickle_cache(blocked / "x.pickle", 1)
    assert sorted(os.listdir(tmp_path / "c")) == ["x.pickle"]   # no temporary file left behind
