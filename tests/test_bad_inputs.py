"""Bad input through every command that reads files: a clear error naming the file, never a traceback.

The matrix (which command meets which input, and what its message must say) is
:func:`benchmarks.bad_input_fixtures.cells`; ``benchmarks/bad_inputs.py`` runs the same cells as
subprocesses and measures their memory. CLI cells run in-process through :func:`mustcite.cli.main.main`; the API
cells upload the input to ``POST /api/audit``.
"""

from __future__ import annotations

import re
import shutil

import pytest
from benchmarks import bad_input_fixtures as B
from helpers import recommender as S

from mustcite.cli.main import main

# every cell reads inputs built from real files (a NeurIPS 2024 full text, a PDF) and the slice recommender
pytestmark = pytest.mark.data("neurips/fulltext_2024", "neurips/fulltext_2023", "pdfs")

CELLS = B.cells()
MAX_UPLOAD = 2 * 2**20


@pytest.fixture(scope="module")
def inputs(data_dir, tmp_path_factory):
    return B.build(tmp_path_factory.mktemp("bad-inputs"))


@pytest.fixture(scope="module")
def work(data_dir, tmp_path_factory):
    w = tmp_path_factory.mktemp("work")
    shutil.copytree(S.model_dir(), w / "models" / "recommender")
    return w


@pytest.fixture(scope="module")
def client(data_dir):
    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app

    with TestClient(create_app(S.trained(), max_upload=MAX_UPLOAD)) as c:
        yield c


def _check_message(cell: B.Cell, text: str) -> None:
    assert "Traceback" not in text
    if cell.says:
        assert re.search(cell.says, text), f"{cell.id}: {text!r} does not say {cell.says!r}"
    if cell.input == "sibling":
        assert "draft.md.gz" in text or cell.argv is None
        assert "draft.pdf" not in text


@pytest.mark.parametrize("cell", [c for c in CELLS if c.argv is not None], ids=lambda c: c.id)
def test_cli(cell, inputs, work, tmp_path, capsys):
    code = main(["--work", str(work), *cell.args(inputs, tmp_path / "out")])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if cell.ok:
        assert code == 0, err
        return
    assert code in ({cell.code} if cell.code else {1, 2}), (code, err)
    assert cell.name(inputs) in err, err            # the message names the file
    assert err.count("error:") == 1, err            # one message
    _check_message(cell, err)
    if cell.input == "sibling":
        assert out == ""                            # no audit of the PDF beside it


@pytest.mark.parametrize("cell", [c for c in CELLS if c.argv is None], ids=lambda c: c.id)
def test_api_audit(cell, inputs, client):
    path = inputs[cell.input]
    with open(path, "rb") as fh:      # streamed: the 70 MB file meets the upload cap, not memory
        r = client.post("/api/audit", files={"file": (path.name, fh)}, data={"top": "5"})
    if cell.ok:
        assert r.status_code == 200, r.text
        assert r.json()["draft"] == path.name and r.json()["references"] > 10
        return
    assert 400 <= r.status_code < 500, r.text
    body = r.json()
    assert set(body) >= {"error"} and isinstance(body["error"], str), body
    text = r.text
    assert "/tmp" not in text and "mustcite-upload" not in text, text   # never the server's paths
    _check_message(cell, body["error"])
    if cell.input == "huge":
        assert r.status_code == 413
    else:
        assert r.status_code == 422, text


def test_matrix_covers_every_input(inputs):
    """Every bad input is used by some cell; every draft input meets every draft command unless skipped."""
    used = {c.input for c in CELLS}
    assert set(inputs) - set(B.HELPERS) <= used
    for name in B.DRAFT_INPUTS:
        for command in B.DRAFT_COMMANDS:
            assert (command, name) in B.SKIPPED or any(c.input == name and c.command == command for c in CELLS)
    assert sum(c.ok for c in CELLS) == len(B.DRAFT_COMMANDS)     # only unicode_name succeeds
