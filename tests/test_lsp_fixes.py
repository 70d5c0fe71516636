"""Quick fixes and re-checks of ``mustcite lsp`` on ``.bib`` texts an editor changes under them.

A fix is computed from the document's text when it is asked for (or resolved), in the entry of its
key and the field the parser finds in that entry, and sent as a versioned ``documentChanges`` edit;
one whose field no longer holds the flagged value is not offered. Each entry's diagnostics stay on
that entry when several share a line, and an edit re-reads and re-checks only the entries it
touches. The server runs with a stub check (no data needed): an entry whose year is not 2020 is a
year mismatch against a record of 2020, any other verified; each checked entry is reported on
stderr ("CHECKED key ...").
"""

from __future__ import annotations

import sys

import pytest
from benchmarks.bad_input_fixtures import Client as RawClient
from pygls.uris import from_fs_path

from mustcite.lsp import diagnostics as diag
from mustcite.lsp.bibstate import BibState
from mustcite.lsp.documents import LineCursor, Lines, bib_blocks, entry_fields, field_of, find_entry
from mustcite.refcheck.results import Issue, RefCheck

LAUNCH = r"""
import sys
from mustcite.refcheck import check
from mustcite.refcheck.results import Issue, RefCheck
from mustcite.lsp import server


def check_entries(entries, index):
    print("CHECKED " + " ".join(sorted(e.key for e in entries)), file=sys.stderr, flush=True)
    return [RefCheck(e.key, "verified") if e.year == 2020 else
            RefCheck(e.key, "mismatch", issues=[Issue("year", e.year, 2020, f"the record is of 2020, not {e.year}")],
                     record={"title": e.title, "year": 2020}) for e in entries]


check.check_entries = check_entries
server.CitationServer.index = lambda self: None
from mustcite.cli.main import main
sys.exit(main(["lsp", "--no-audit"]))
"""

#: a client that resolves a code action's edit when the fix is chosen
RESOLVES = {"textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}},
            "workspace": {"workspaceEdit": {"documentChanges": True}}}

BIB = ("@inproceedings{ho2020denoising,\n  title = {Denoising Diffusion Probabilistic Models},\n"
       "  note = {published in 2020; year = {2019} in the preprint},\n  year = {2019},\n"
       "  booktitle = {NeurIPS}\n}\n\n@article{song2020score,\n  title = {Score-Based Models},\n  year = 2020\n}\n")


def _check(e) -> RefCheck:
    return RefCheck(e.key, "verified") if e.year == 2020 else RefCheck(
        e.key, "mismatch", issues=[Issue("year", e.year, 2020, f"the record is of 2020, not {e.year}")],
        record={"year": 2020})


def _checks(entries: list) -> list[RefCheck]:
    return [_check(e) for e in entries]


def _offset(text: str, pos: dict) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[:pos["line"]]) + pos["character"]


def _apply(text: str, edits: list[dict]) -> str:
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                    reverse=True):
        text = text[:_offset(text, e["range"]["start"])] + e["newText"] + text[_offset(text, e["range"]["end"]):]
    return text


class Client(RawClient):
    def __init__(self, tmp, capabilities: dict | None = None):
        super().__init__(tmp, command=[sys.executable, "-c", LAUNCH])
        self.root = tmp / "paper"
        self.root.mkdir(exist_ok=True)
        self.response(self.request("initialize", {
            "processId": None, "rootUri": from_fs_path(str(self.root)), "capabilities": capabilities or {},
            "workspaceFolders": [{"uri": from_fs_path(str(self.root)), "name": "paper"}],
            "initializationOptions": {"audit": False}}), timeout=60)
        self.notify("initialized", {})
        self.version = 0

    def checked(self) -> list[str]:
        return [k for line in self.stderr if line.startswith("CHECKED") for k in line.split()[1:]]

    def send_text(self, uri: str, text: str) -> list[dict]:
        """Open ``uri`` (first time) or change it to ``text``; the diagnostics of that text."""
        start = len(self.seen)
        self.version += 1
        if self.version == 1:
            self.open(uri, text)
        else:
            self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": self.version},
                                                   "contentChanges": [{"text": text}]})
        return self.diagnostics(uri, 30, start)

    def actions(self, uri: str, diagnostics: list[dict]) -> list[dict]:
        got = self.response(self.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diagnostics[0]["range"],
            "context": {"diagnostics": diagnostics}}))["result"]
        return got or []

    def resolve(self, action: dict) -> dict:
        return self.response(self.request("codeAction/resolve", action))["result"]


@pytest.fixture()
def client(tmp_path):
    made: list[Client] = []

    def start(capabilities: dict | None = None) -> Client:
        made.append(Client(tmp_path, capabilities))
        return made[-1]

    yield start
    for c in made:
        if c.proc.poll() is None:
            c.proc.kill()


def test_a_stale_fix_after_lines_moved_edits_the_year_never_the_key_or_title(client):
    c = client()
    uri = from_fs_path(str(c.root / "refs.bib"))
    (year,) = c.send_text(uri, BIB)
    assert year["code"] == "mismatch-year" and year["range"]["start"]["line"] == 3
    # two lines inserted above: the editor still holds the diagnostic of version 1
    moved = "% references\n% of the paper\n" + BIB
    assert [d["range"]["start"]["line"] for d in c.send_text(uri, moved)] == [5]
    (action,) = c.actions(uri, [year])
    (change,) = action["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": 2}
    fixed = _apply(moved, change["edits"])
    assert fixed == moved.replace("  year = {2019},", "  year = {2020},")
    assert "@inproceedings{ho2020denoising,\n" in fixed and "year = {2019} in the preprint" in fixed
    # once the year holds another value, the fix of the old diagnostic is not offered
    c.send_text(uri, moved.replace("  year = {2019},", "  year = {2018},"))
    assert c.actions(uri, [year]) == []
    assert c.finish() == 0


def test_a_resolved_fix_is_computed_from_the_text_when_it_is_chosen(client):
    c = client(RESOLVES)
    uri = from_fs_path(str(c.root / "refs.bib"))
    (year,) = c.send_text(uri, BIB)
    (action,) = c.actions(uri, [year])
    assert "edit" not in action or action["edit"] is None
    moved = "@misc{first, title = {Inserted above}, year = 2020}\n\n" + BIB
    c.send_text(uri, moved)
    (change,) = c.resolve(action)["edit"]["documentChanges"]
    assert change["textDocument"]["version"] == 2
    assert _apply(moved, change["edits"]) == moved.replace("  year = {2019},", "  year = {2020},")
    # resolved again once the user set the year by hand: nothing to edit
    c.send_text(uri, moved.replace("  year = {2019},", "  year = {2021},"))
    assert c.resolve(action).get("edit") is None
    assert c.finish() == 0


def test_two_entries_on_a_line_and_a_one_line_file(client):
    c = client()
    uri = from_fs_path(str(c.root / "refs.bib"))
    line = ("@article{a, title = {A}, year = {2020}} @article{b, note = {year = {2020}}, title = {B}, year = {2019}} "
            "@article{c, year = 2018}")
    diags = c.send_text(uri, line)
    assert [(d["code"], d["message"].split(":")[0]) for d in diags] == [("mismatch-year", "b"), ("mismatch-year", "c")]
    # each on its own entry: b's on b's year (not a's, not the one in b's note), c's on c's
    starts = [d["range"]["start"]["character"] for d in diags]
    assert starts == [line.index("2019"), line.index("2018")]
    fixed = line
    for d in reversed(diags):
        (action,) = c.actions(uri, [d])
        fixed = _apply(fixed, action["edit"]["documentChanges"][0]["edits"])
    assert fixed == line.replace("2019", "2020").replace("2018", "2020")
    assert c.send_text(uri, fixed) == []
    assert c.finish() == 0


def test_an_edit_re_checks_only_the_entry_it_touches(client):
    c = client()
    uri = from_fs_path(str(c.root / "refs.bib"))
    entries = [f"@article{{k{i},\n  title = {{Paper {i}}},\n  year = {{2020}}\n}}\n" for i in range(50)]
    assert c.send_text(uri, "\n".join(entries)) == []
    c.until(lambda: len(c.checked()) >= 50, 10, "the stub's report of the first check")
    assert sorted(c.checked()) == sorted(f"k{i}" for i in range(50))
    entries[25] = entries[25].replace("2020", "2017")
    (d,) = c.send_text(uri, "% moved\n" + "\n".join(entries))
    c.until(lambda: len(c.checked()) > 50, 10, "the stub's report of the second check")
    assert c.finish() == 0                     # all the server said is read: nothing else was checked
    assert c.checked()[50:] == ["k25"] and d["message"].startswith("k25:")
    assert d["range"]["start"]["line"] == 1 + 25 * 5 + 2


# ---- the same, on the functions (no server) ----------------------------------------------------------

def test_fields_are_read_at_depth_one_from_the_entry_itself():
    text = BIB
    (block, second) = [b for b in bib_blocks(text) if b.entry]
    assert [f.name for f in entry_fields(text, block)] == ["title", "note", "year", "booktitle"]
    f = field_of(text, block, "year")
    assert text[f.start:f.end] == "2019" and text.rindex("2019") == f.start
    assert field_of(text, second, "year").composed is False and find_entry(text, "song2020score") == second
    # a year written only in a note is no field: the entry has none
    noyear = "@misc{x, note = {year = {2019}}}"
    assert field_of(noyear, bib_blocks(noyear)[0], "year") is None
    # @string names and # are not rewritten
    joined = '@misc{y, year = "20" # "19", month = jan}'
    assert [f.composed for f in entry_fields(joined, bib_blocks(joined)[0])] == [True, True]


def test_a_fix_is_offered_only_while_the_field_holds_the_flagged_value():
    state = BibState("refs.bib", 20_000)
    (d,) = state.update(BIB, _checks)
    assert d.data == {"fix": "set-field", "field": "year", "value": "2020", "key": "ho2020denoising", "old": "2019"}
    docs = {"file:///refs.bib": (BIB, 1)}
    (action,) = diag.code_actions("file:///refs.bib", docs.get, [d])
    (change,) = action.edit.document_changes
    assert change.text_document.version == 1
    edited = "\n\n\n" + BIB.replace("Denoising", "Denoising Diffusion")
    docs["file:///refs.bib"] = (edited, 2)
    (action,) = diag.code_actions("file:///refs.bib", docs.get, [d])
    ((edit,),) = [c.edits for c in action.edit.document_changes]
    assert edit.range.start.line == 6 and action.edit.document_changes[0].text_document.version == 2
    docs["file:///refs.bib"] = (BIB.replace("{2019},\n  booktitle", "{2021},\n  booktitle"), 3)
    assert diag.code_actions("file:///refs.bib", docs.get, [d]) == []
    (lazy,) = diag.code_actions("file:///refs.bib", {"file:///refs.bib": (BIB, 4)}.get, [d], lazy=True)
    assert lazy.edit is None and diag.resolve_action(lazy, docs.get).edit is None    # changed since


def test_a_one_line_file_puts_each_diagnostic_on_its_own_entry():
    entries = [f"@article{{k{i}, title = {{T {i}}}, year = {{{2019 if i % 2 else 2020}}}}}" for i in range(400)]
    text = " and some prose, {braced} or not, between entries ".join(entries)      # one line
    state = BibState("refs.bib", 20_000)
    diags = state.update(text, _checks)
    assert len(diags) == 200 and {d.range.start.line for d in diags} == {0}
    lines = Lines(text)
    for d in diags:
        key = d.message.split(":")[0]
        block = find_entry(text, key)
        assert lines.position(block.start).character < d.range.start.character < lines.position(block.end).character
    assert state.last_read == 400 and state.last_checked == 400
    # an edit of one entry reads and checks that entry only
    state.update(text.replace("{T 7}", "{T seven}"), _checks)
    assert state.last_read == 1 and state.last_checked == 1


def test_line_cursor_agrees_with_lines():
    text = "a\U0001F600b\n\u00e9c @x\r\n\n\U0001F600\U0001F600 @y{z}\nend"
    lines, cursor = Lines(text), LineCursor(text)
    offsets = list(range(len(text) + 1))
    assert [cursor.line_column(i) for i in offsets] == [lines.line_column(i) for i in offsets]
    assert LineCursor(text).line_column(len(text) - 1) == lines.line_column(len(text) - 1)


@pytest.mark.data("drafts/projects")
@pytest.mark.parametrize("project, name", [("mechanism-membership-inference", "references.bib"),
                                           ("truth-bias-reasoning", "references_full.bib"),
                                           ("kfac-pinns", "references.bib")])
def test_entries_read_one_by_one_are_the_whole_file_reading(data_dir, project, name):
    """On real bibliographies (dev projects): the entries the editor reads block by block, in
    batches and after an edit, are those the whole file reads as, key by key."""
    from mustcite.refcheck.entries import entries_from_bib

    text = (data_dir / "drafts/projects" / project / name).read_text(encoding="utf-8")

    def sig(e):
        return (e.key, e.title, tuple(e.authors), e.others, e.year, e.venue, e.doi, e.arxiv, e.url, e.kind,
                e.unreadable[:20], e.volume, e.source)

    whole, _ = entries_from_bib(text, name)
    seen = []
    state = BibState(name, 10**9)
    state.update(text, lambda es: seen.extend(es) or [RefCheck(e.key, "verified") for e in es])
    assert [sig(c) for c in whole] == [sig(e) for e in seen if e.key in state.by_key]
    assert list(state.by_key) == [e.key for e in whole]
    # an edit that moves every entry two lines down reads none again, and each says where it now is
    state.update("%\n%\n" + text, lambda es: [RefCheck(e.key, "verified") for e in es])
    assert state.last_read == 0
    assert [c.source for c in state.by_key.values()] == [
        f"{name}:{int(e.source.rpartition(':')[2]) + 2}" for e in whole]


def test_string_expansion_is_capped_for_the_whole_file_read_in_parts():
    """The cap on what ``@string`` expansion adds to a file holds when the editor reads it in
    batches: the same entries are unreadable as in the reading of the whole file."""
    from mustcite.extract.bibtex import MAX_EXPANDED_CHARS
    from mustcite.refcheck.entries import entries_from_bib

    n = MAX_EXPANDED_CHARS // 50_000 + 40
    text = f'@string{{big = "{"x" * 50_000}"}}\n' + "".join(
        f"@misc{{k{i}, title = {{Title {i}}}, note = big, year = 2020}}\n" for i in range(n))
    whole, _ = entries_from_bib(text, "refs.bib")
    refused = [e.key for e in whole if e.unreadable]
    assert refused and len(refused) < n
    seen = []
    BibState("refs.bib", 10**6).update(text, lambda es: seen.extend(es) or [RefCheck(e.key, "verified") for e in es])
    assert [e.key for e in seen if e.unreadable] == []          # unreadable entries are not checked
    state = BibState("refs.bib", 10**6)
    diags = state.update(text, _checks)
    assert sorted(d.message.split(":")[0] for d in diags if d.code == "unreadable") == sorted(refused)


def test_a_fix_writes_the_record_escaped_and_its_title_shows_no_control_characters():
    from mustcite.lsp.diagnostics import _title, record_value

    # a real NeurIPS 2019 title with a percent sign (E2-Train)
    title = "E2-Train: Training State-of-the-art CNNs with Over 80% Energy Savings"
    assert record_value("title", {"title": title}).endswith(r"Over 80\% Energy Savings")
    assert record_value("year", {"year": 2019}) == "2019"
    shown = _title({"fix": "set-field", "field": "title", "key": "k\x1b]0;pwned\x07", "value": "T\u202e"})
    assert "\x1b" not in shown and "\u202e" not in shown and "\\x1b" in shown
