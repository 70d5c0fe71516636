"""Shared fixtures, and the ``data`` marker.

The shared data (``../shared/data``, found by :func:`mustcite.config.find_data_dir`;
``MUSTCITE_DATA`` overrides) is needed only by the tests marked ``data``:

* ``@pytest.mark.data`` on a test, a class or a module (``pytestmark``) says it reads the data (or
  a work folder built from it). Without the data folder every such test is reported as skipped,
  with :data:`NO_DATA`, never as an error. ``@pytest.mark.data("pdfs", "venue_pages/README.md")``
  also names the paths below the data folder it reads: a missing one skips the test too.
* :func:`data_dir` (session) is the data folder; a fixture that builds from the data requests it,
  so it skips rather than errors. A test that uses it, directly or through a fixture, is marked
  ``data`` here automatically.
* ``-m "not data"`` runs the unit tests alone; ``-m data`` the data tests alone.

Plain helpers (the real slices, stub servers, hand-made examples) live in ``tests/helpers/``.
"""

from __future__ import annotations

import http.server
import sys
import threading
from pathlib import Path

import pytest

if str(Path(__file__).parent) not in sys.path:      # pyproject's pythonpath does this too
    sys.path.insert(0, str(Path(__file__).parent))

import helpers  # noqa: E402

NO_DATA = "../shared/data not found: data tests skipped; set MUSTCITE_DATA"


@pytest.hookimpl(tryfirst=True)        # before -m selects, so that -m data sees the added marks
def pytest_collection_modifyitems(config, items):
    data = helpers.DATA_DIR
    for item in items:
        if "data_dir" in item.fixturenames and item.get_closest_marker("data") is None:
            item.add_marker(pytest.mark.data)
        marks = list(item.iter_markers("data"))
        if not marks:
            continue
        if data is None:
            item.add_marker(pytest.mark.skip(reason=NO_DATA))
            continue
        missing = sorted({p for m in marks for p in m.args if not (data / p).exists()})
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"{data} lacks {', '.join(missing)}: test skipped"))


def pytest_report_header(config):
    return f"shared data: {helpers.DATA_DIR or 'not found (data tests are skipped; set MUSTCITE_DATA)'}"


# ---------------------------------------------------------------- the shared data


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data folder; skips the test (and any fixture asking for it) when it is missing."""
    if helpers.DATA_DIR is None:
        pytest.skip(NO_DATA)
    return helpers.DATA_DIR


@pytest.fixture(scope="session")
def built(data_dir, tmp_path_factory):
    """A benchmark built from real papers (:mod:`helpers.benchmark`), once per session."""
    from helpers.benchmark import build_slice

    return build_slice(tmp_path_factory.mktemp("bench"))


# ---------------------------------------------------------------- stub servers (no data)


@pytest.fixture()
def grobid_stub():
    """A GROBID stand-in on 127.0.0.1 (:class:`helpers.pdfs.GrobidStub`); yields its URL."""
    from helpers.pdfs import GrobidStub

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GrobidStub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    GrobidStub.script, GrobidStub.seen = [], []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture()
def stub():
    """An OpenAI/Gemini-compatible judge server on 127.0.0.1 (:class:`helpers.judges.Stub`)."""
    from helpers.judges import Stub

    s = Stub()
    yield s
    s.close()
