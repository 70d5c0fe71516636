"""``mustcite lsp`` end to end: a real JSON-RPC client (pytest-lsp) against the server over stdio.

The project is built from a real NeurIPS 2023 full text that the test model never learned from:
``main.tex`` holds its title, abstract and a paragraph citing the references the corpus linker
links to the pool (NeurIPS 2019-2022, :mod:`helpers.recommender`), ``refs.bib`` holds the real
records of half of them (the audit is to find the others), one with a wrong year, plus an invented
NeurIPS 2021 paper; the paragraph also cites a key no entry defines. The corpus the references
are checked against is the same pool.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from helpers import recommender as R
from lsprotocol import types
from pygls.uris import from_fs_path

pytestmark = pytest.mark.data("neurips/fulltext_2023")

INVENTED = ("@inproceedings{doe2021flux,\n  title = {Neural Flux Capacitors for Zero-Shot Time Travel},\n"
            "  author = {Doe, Jane and Roe, Richard},\n  booktitle = {Advances in Neural Information Processing "
            "Systems},\n  year = {2021}\n}\n")


def _bib(key: str, r: dict, year: int) -> str:
    authors = " and ".join(r["authors"])
    return (f"@inproceedings{{{key},\n  title = {{{r['title']}}},\n  author = {{{authors}}},\n"
            f"  booktitle = {{Advances in Neural Information Processing Systems}},\n  year = {{{year}}}\n}}\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from mustcite.extract.link import TitleIndex, link_references
    from mustcite.extract.markdown import extract_markdown

    if not R.have_data():
        pytest.skip("needs the NeurIPS proceedings lists and full texts")
    pool = R.pool()
    work = R.write_corpus(tmp_path_factory.mktemp("lsp-work"))
    by_id = {r["paper_id"]: r for r in pool}
    index = TitleIndex.build([r["paper_id"] for r in pool], [r["title"] for r in pool], [r["year"] for r in pool])
    stems = sorted(f.name[:-6] for f in R.FULLTEXT_2023.glob("*.md.gz"))[R.N_LABELLED + 10:]
    for stem in stems:
        ex = extract_markdown(R.fulltext(stem), source_path=stem)
        refs = link_references(ex.to_reference_list(), index, citing_year=2023)
        linked = [by_id[r["paper_id"]] for r in refs if r.get("paper_id") in by_id]
        linked = list({r["paper_id"]: r for r in linked}.values())
        if len(linked) >= 8 and ex.abstract:
            break
    else:
        pytest.skip("no held-out full text with 8 linked references")
    root = tmp_path_factory.mktemp("lsp-project")
    kept = linked[::2]
    keys = [f"ref{i}" for i in range(len(kept))]
    wrong = keys[0]
    bib = "".join(_bib(k, r, r["year"] + 1 if k == wrong else r["year"]) + "\n" for k, r in zip(keys, kept))
    (root / "refs.bib").write_text(bib + INVENTED, encoding="utf-8")
    cites = " ".join(f"\\citep{{{k}}}" for k in keys)
    tex = (f"\\documentclass{{article}}\n\\title{{{ex.title}}}\n\\begin{{document}}\n\\maketitle\n"
           f"\\begin{{abstract}}\n{ex.abstract}\n\\end{{abstract}}\n\\section{{Related work}}\n"
           f"We build on prior work {cites} and on \\citet{{doe2021flux}}. See also \\cite{{nokey2020}}.\n"
           f"\\bibliographystyle{{plainnat}}\n\\bibliography{{refs}}\n\\end{{document}}\n")
    (root / "main.tex").write_text(tex, encoding="utf-8")
    return {"root": root, "work": work, "model": R.model_dir(), "wrong": wrong, "kept": kept, "keys": keys}


def _offset(text: str, pos: types.Position) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[:pos.line]) + pos.character


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:_offset(text, e.range.start)] + e.new_text + text[_offset(text, e.range.end):]
    return text


class Published(dict):
    """``client.diagnostics`` (pytest-lsp stores each publication with ``client.diagnostics[uri] =
    ...``) that also counts the publications per document and wakes :func:`_until` at each."""

    def __init__(self):
        super().__init__()
        self.count: Counter[str] = Counter()
        self.changed = asyncio.Event()

    def __setitem__(self, uri: str, diagnostics) -> None:
        super().__setitem__(uri, diagnostics)
        self.count[uri] += 1
        self.changed.set()


async def _until(client, uri: str, ok, after: int = 0, timeout: float = 180.0):
    """The diagnostics of ``uri`` once a publication later than its first ``after`` satisfies
    ``ok(diagnostics)`` (fails after ``timeout`` seconds: a cut-off for a hang)."""
    published: Published = client.diagnostics

    async def published_ok():
        while True:
            got = published.get(uri)
            if published.count[uri] > after and got is not None and ok(got):
                return got
            published.changed.clear()
            await published.changed.wait()
    try:
        return await asyncio.wait_for(published_ok(), timeout)
    except TimeoutError:
        raise AssertionError(f"no such diagnostics for {uri} in {timeout} s: {published.get(uri)}") from None


def _open(client, path: Path, version: int = 1) -> str:
    uri = from_fs_path(str(path))
    lang = "bibtex" if path.suffix == ".bib" else "latex"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id=lang, version=version, text=path.read_text(encoding="utf-8"))))
    return uri


def _change(client, path: Path, text: str, version: int) -> None:
    path.write_text(text, encoding="utf-8")
    uri = from_fs_path(str(path))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest.mark.asyncio
async def test_language_server_session_on_a_real_latex_project(project):
    from pytest_lsp import ClientServerConfig, client_capabilities

    root, bib_path, tex_path = project["root"], project["root"] / "refs.bib", project["root"] / "main.tex"
    env = dict(os.environ, MUSTCITE_WORK=str(project["work"]), HF_HUB_OFFLINE="1")
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "mustcite", "lsp"], server_env=env).start()
    client.diagnostics = Published()
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=from_fs_path(str(root)),
            workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(root)), name="paper")],
            initialization_options={"year": 2023, "model": str(project["model"]), "minScore": 0.0, "top": 5,
                                    "all": True}))

        # the .bib: a wrong year is a warning on the year's value, an invented paper an error
        bib_uri = _open(client, bib_path)
        diags = await _until(client, bib_uri, lambda d: any(x.code == "not_found" for x in d))
        year = [d for d in diags if d.code == "mismatch-year"]
        assert len(year) == 1 and year[0].severity == types.DiagnosticSeverity.Warning
        assert year[0].message.startswith(project["wrong"] + ":")
        line = bib_path.read_text().split("\n")[year[0].range.start.line]
        assert line[year[0].range.start.character:year[0].range.end.character] == str(project["kept"][0]["year"] + 1)
        invented = next(d for d in diags if d.code == "not_found")
        assert "doe2021flux" in invented.message and invented.severity == types.DiagnosticSeverity.Error
        # every other entry is the real record: nothing to say about it
        assert {d.message.split(":")[0] for d in diags} == {project["wrong"], "doe2021flux"}

        # the .tex: an undefined key is an error at the key; a key of a bad entry a warning
        tex_uri = _open(client, tex_path)
        tdiags = await _until(client, tex_uri, lambda d: any(x.code == "undefined" for x in d))
        undefined = next(d for d in tdiags if d.code == "undefined")
        tex_lines = tex_path.read_text().split("\n")
        r = undefined.range
        assert tex_lines[r.start.line][r.start.character:r.end.character] == "nokey2020"
        assert {d.code for d in tdiags} >= {"undefined", "not_found", "mismatch"}

        # saving runs the audit in the background: the missing must-cite papers at \bibliography
        t0 = time.perf_counter()
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=tex_uri)))
        tdiags = await _until(client, tex_uri, lambda d: any(x.code == "missing" for x in d))
        save_to_audit = time.perf_counter() - t0
        missing = [d for d in tdiags if d.code == "missing"]
        assert 1 <= len(missing) <= 5
        assert all(d.severity == types.DiagnosticSeverity.Information for d in missing)
        assert all("\\bibliography" in tex_lines[d.range.start.line] for d in missing)
        assert all(d.message.startswith("Not cited: ") and "(confidence " in d.message for d in missing)

        # quick fix 1: the year becomes the record's. The client resolves a fix's edit when it is
        # chosen: the edit is computed then, from the text of that moment, and carries its version
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=bib_uri), range=year[0].range,
            context=types.CodeActionContext(diagnostics=year)))
        assert len(actions) == 1 and "Set year" in actions[0].title and actions[0].edit is None
        # lines are added above the entry before the fix is chosen: it still edits the year only
        moved = "% shared bibliography\n% keep sorted\n\n" + bib_path.read_text()
        seen = client.diagnostics.count[bib_uri]
        _change(client, bib_path, moved, 2)
        await _until(client, bib_uri, lambda d: True, after=seen)
        resolved = await client.code_action_resolve_async(actions[0])
        (change,) = resolved.edit.document_changes
        assert change.text_document.uri == bib_uri and change.text_document.version == 2
        text = _apply(moved, change.edits)
        assert text == moved.replace(f"year = {{{project['kept'][0]['year'] + 1}}}",
                                     f"year = {{{project['kept'][0]['year']}}}", 1)
        seen = client.diagnostics.count[bib_uri]
        _change(client, bib_path, text, 3)
        diags = await _until(client, bib_uri, lambda d: not any(x.code == "mismatch-year" for x in d), after=seen)
        assert f"year = {{{project['kept'][0]['year']}}}" in bib_path.read_text()
        # the same fix resolved again: the year no longer holds the flagged value, so nothing is edited
        assert (await client.code_action_resolve_async(actions[0])).edit is None

        # quick fix 2: add the first missing paper's BibTeX to refs.bib
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=tex_uri), range=missing[0].range,
            context=types.CodeActionContext(diagnostics=missing[:1])))
        assert len(actions) == 1 and actions[0].title.startswith("Add the BibTeX of")
        (change,) = (await client.code_action_resolve_async(actions[0])).edit.document_changes
        assert change.text_document.uri == bib_uri and change.text_document.version == 3
        before = bib_path.read_text()
        text = _apply(before, change.edits)
        assert text.startswith(before) and text.count("@") == before.count("@") + 1
        seen = client.diagnostics.count[bib_uri]
        _change(client, bib_path, text, 4)
        # the diagnostics of the check of this text (the first published since the change)
        diags = await _until(client, bib_uri, lambda d: not any(x.code == "mismatch-year" for x in d), after=seen)
        added_key = text[len(before):].split("{", 1)[1].split(",", 1)[0]
        # the added entry is the corpus record itself: verified, so no diagnostic names it
        assert not any(d.message.startswith(added_key + ":") for d in diags)

        timings = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="mustcite.timings"))
        assert timings["audit"] > 0 and save_to_audit > 0
    finally:
        await client.shutdown_session()
