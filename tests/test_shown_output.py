"""Terminal controls from the input never reach the terminal: every value read from a draft, a .bib
file or the corpus is shown with its control characters and bidirectional controls escaped
(:mod:`mustcite.shown`), in every output format of ``check-refs`` and ``audit``.

The inputs are a real development draft (``ai-detector-fooling``) and its real ``.bib`` file, with
hostile values added: an escape sequence that sets the window title (OSC 0, ended by BEL), one that
clears the screen (CSI 2J), an OSC 8 hyperlink whose text hides its target, and a right-to-left
override (U+202E), in a title, a note and a key. The corpus is the real NeurIPS 2019 paper list.
"""

from __future__ import annotations

import io
import json
import re
import shutil

import pytest

from mustcite.cli.main import main
from mustcite.shown import json_shown, markdown_key, markdown_shown, markdown_url, rich_shown, shown, shown_line

DRAFT = "drafts/projects/ai-detector-fooling"
ESC, BEL, RLO = "\x1b", "\x07", "\u202e"
TITLE_SET = f"{ESC}]0;pwned{BEL}"                     # sets the terminal's window title
CLEAR = f"{ESC}[2J"                                   # clears the screen
LINK = f"{ESC}]8;;http://evil.example/{BEL}Attention{ESC}]8;;{BEL}"      # an OSC 8 hyperlink
HOSTILE = f"Hostile {TITLE_SET} title {LINK} with {CLEAR} and {RLO}txet desrever"
#: what must never come out raw: the C0 controls but line feed and tab, DEL, C1, bidi controls
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# ---- the functions --------------------------------------------------------------------------------

def test_each_control_is_shown_as_its_escape():
    assert shown(f"a{ESC}[2Jb") == "a\\x1b[2Jb"
    assert shown(f"x{RLO}y\u2066z\u200f") == "x\\u202ey\\u2066z\\u200f"
    assert shown("del\x7f c1\x9b nul\x00 bell\x07") == "del\\x7f c1\\x9b nul\\x00 bell\\x07"
    assert shown("two\nlines\tand a tab\r\nwindows") == "two\nlines\tand a tab\nwindows"
    assert shown("back to the start\rof the line") == "back to the start\\x0dof the line"
    assert shown_line("one\n line\u2028 only\t!") == "one line only !"
    assert shown(None) == "" and shown(12) == "12"
    text = "".join(map(chr, range(0x250))) + "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    assert not RAW.search(shown(text).replace("\n", "").replace("\t", "")) and not RAW.search(shown_line(text))
    assert shown(shown(text)) == shown(text)                      # shown twice reads the same


def test_json_keeps_the_values_and_escapes_what_json_leaves_raw():
    value = {"title": HOSTILE + "\x7f\x85", "key": f"k{RLO}"}
    text = json_shown(json.dumps(value, ensure_ascii=False))
    assert not RAW.search(text) and "\\u202e" in text and "\\u001b" in text and "\\u007f" in text
    assert json.loads(text) == value                                # the same values read back
    assert "Vulić" in json_shown(json.dumps({"n": "Vulić"}, ensure_ascii=False))   # other text as it is


def test_markdown_and_rich_escape_their_own_syntax_too():
    md = markdown_shown(f"[click](javascript:x) {CLEAR} *em* | cell")
    assert not RAW.search(md) and "\\[click\\]" in md and "\\x1b" in md and "\\|" in md
    assert markdown_key("vaswani2017") == "`vaswani2017`"
    assert markdown_key(f"k{ESC}[2J") == "k\\\\x1b\\[2J"        # not a code span: the escape is escaped text
    assert markdown_url("https://a.org/x (y)") == "https://a.org/x%20%28y%29"
    assert markdown_url("javascript:alert(1)") is None
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, force_terminal=False, width=200).print(rich_shown(f"[bold]Title[/bold] {ESC}]0;x{BEL}"))
    assert out.getvalue().strip() == "[bold]Title[/bold] \\x1b]0;x\\x07"


# ---- check-refs on a real .bib with hostile values -------------------------------------------------

@pytest.fixture(scope="module")
def work(data_dir, tmp_path_factory):
    """A work folder whose corpus is the real NeurIPS 2019 paper list."""
    from helpers.refcheck_work import paperlist_work

    return paperlist_work(tmp_path_factory.mktemp("shown-work"))


def hostile_bib(data_dir, tmp_path):
    """The draft's real bibliography, then hostile entries: a title, a note and a key with every
    kind of control, one key twice (the reader's note names it), and an arXiv entry of a real
    NeurIPS 2019 paper (outdated: its proposed entry is printed too) with a hostile note."""
    text = (data_dir / DRAFT / "bibliography.bib").read_text(encoding="utf-8")
    text += (f"\n@article{{evil{CLEAR}key,\n  title = {{{HOSTILE}}},\n  author = {{Jane {RLO}Doe}},\n"
             f"  journal = {{arXiv preprint arXiv:2101.00001}},\n  note = {{{TITLE_SET}{RLO} note}},\n"
             "  year = {2021}\n}\n"
             f"@misc{{evil{CLEAR}key,\n  title = {{A repeated key}}\n}}\n"
             f"@article{{e2train{RLO},\n"
             "  title = {E2-Train: Training State-of-the-art CNNs with Over 80% Less Energy},\n"
             "  author = {Ziyu Jiang and Yue Wang and Xiaohan Chen and Pengfei Xu and Yang Zhao and Yingyan Lin and "
             "Zhangyang Wang},\n  journal = {arXiv preprint arXiv:1910.13349},\n"
             f"  note = {{Code {LINK} here}},\n  year = {{2019}}\n}}\n"
             "@inproceedings{venue,\n  title = {E2-Train: Training State-of-the-art CNNs with Over 80% Less Energy},\n"
             "  author = {Ziyu Jiang and Yue Wang and Xiaohan Chen and Pengfei Xu and Yang Zhao and Yingyan Lin and "
             f"Zhangyang Wang}},\n  booktitle = {{Conference on Imaginary {TITLE_SET}Learning {RLO}Systems}},\n"
             "  year = {2019}\n}\n")
    path = tmp_path / "refs.bib"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_check_refs_shows_no_control_from_the_bib(work, data_dir, tmp_path, capsys, fmt):
    path = hostile_bib(data_dir, tmp_path)
    code = main(["--work", str(work), "check-refs", str(path), "--format", fmt, "--fail-on", "mismatch"])
    out, err = capsys.readouterr()
    assert code == 1                                      # the gate names keys: through the same escaping
    for stream in (out, err):
        assert not RAW.search(stream.replace("\n", "").replace("\t", "")), [m.group() for m in RAW.finditer(stream)]
    assert "evil\\x1b[2Jkey" in err                        # the gate's message and the reader's note
    if fmt == "json":
        rows = [json.loads(line) for line in out.splitlines()]
        evil = next(r for r in rows if r["key"] == f"evil{CLEAR}key")
        assert evil["entry"]["title"].startswith(f"Hostile {TITLE_SET} title")     # the value, JSON-escaped
        assert "\\u001b]0;pwned\\u0007" in out and "\\u202e" in out
        e2 = next(r for r in rows if r["key"] == f"e2train{RLO}")
        assert e2["status"] == "outdated" and "\\textbackslash{}x1b]8;;http://evil.example/" in e2["bibtex"]
    else:
        text = re.sub(r"\\([\\`*_\[\]<>!|#~&])", r"\1", out) if fmt == "markdown" else out   # Markdown unescaped
        assert "evil\\x1b[2Jkey" in text and "e2train\\u202e" in text
        assert "Imaginary \\x1b]0;pwned\\x07Learning \\u202eSystems" in text     # a venue in an issue
    if fmt == "markdown":
        block = out.partition("```bibtex")[2]
        assert "@inproceedings{e2train\\u202e," in block and "80\\% Less Energy" in block
        assert "Code \\textbackslash{}x1b]8;;http://evil.example/" in block      # the note kept, its controls shown


# ---- the audit of a real draft with hostile values -------------------------------------------------

@pytest.fixture(scope="module")
def audit_work(data_dir, tmp_path_factory):
    from helpers import recommender as S

    w = tmp_path_factory.mktemp("shown-audit")
    shutil.copytree(S.model_dir(), w / "models" / "recommender")
    return w


def hostile_draft(data_dir, tmp_path):
    """The real draft with a hostile title, a sentence (quoted by findings) and an undefined key."""
    project = tmp_path / "draft"
    shutil.copytree(data_dir / DRAFT, project)
    tex = project / "paper.tex"
    text = tex.read_text(encoding="utf-8")
    text = text.replace(r"\title{Evaluating the effectiveness of fooling techniques on AI detectors}",
                        rf"\title{{Evaluating {TITLE_SET}fooling {RLO}techniques {CLEAR}on AI detectors}}")
    text = text.replace(r"\section{Introduction}",
                        "\\section{Introduction}\nWe follow BERT and GPT-2 "
                        f"{LINK} closely {RLO}here \\cite{{evil{CLEAR}key}}.\n", 1)
    tex.write_text(text, encoding="utf-8")
    return project


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "bibtex"])
def test_audit_shows_no_control_from_the_draft(audit_work, data_dir, tmp_path, capsys, fmt):
    project = hostile_draft(data_dir, tmp_path)
    code = main(["--work", str(audit_work), "audit", str(project), "--format", fmt, "--all", "--top", "30"])
    out, err = capsys.readouterr()
    assert code == 0, err
    for stream in (out, err):
        assert not RAW.search(stream.replace("\n", "").replace("\t", "")), [m.group() for m in RAW.finditer(stream)]
    if fmt == "json":
        res = json.loads(out)
        assert TITLE_SET in res["title"] and "\\u001b]0;pwned\\u0007" in out       # the value, JSON-escaped
    elif fmt == "bibtex":
        assert "evil\\x1b[2Jkey" in out                    # the undefined key's note, escaped
    else:
        text = re.sub(r"\\([\\`*_\[\]<>!|#~&])", r"\1", out) if fmt == "markdown" else out   # Markdown unescaped
        assert "Evaluating \\x1b]0;pwned\\x07fooling \\u202etechniques \\x1b[2Jon AI detectors" in text
        assert "evil\\x1b[2Jkey" in text                    # the undefined key, in a note or a finding


def test_lsp_messages_are_shown_escaped():
    """The language server's diagnostics go through one function before they are published."""
    from lsprotocol import types

    from mustcite.lsp.server import _shown_message

    d = types.Diagnostic(range=types.Range(start=types.Position(line=0, character=0),
                                           end=types.Position(line=0, character=1)),
                         message=f"evil{CLEAR}key: not found. {HOSTILE}")
    got = _shown_message(d)
    assert not RAW.search(got.message) and got.message.startswith("evil\\x1b[2Jkey")
    assert d.message.startswith(f"evil{CLEAR}")           # the stored diagnostic is left as it is
