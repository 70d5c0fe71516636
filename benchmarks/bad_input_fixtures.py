"""The inputs and harness of ``bad_inputs.py``: the (command, input) matrix over a folder of bad inputs
(:func:`build`, :func:`cells`; the same matrix ``tests/test_bad_inputs.py`` runs in-process), a raw
stdio client of ``mustcite lsp`` (:class:`Client`), and the small recommender that the commands
which must succeed run with (:func:`build_slice`: the recommender slice of the tests).

:func:`build` writes deterministic bytes, nothing large is kept in git or in memory: the gzip bomb
is written a block at a time, the 70 MB file is sparse. Every bad input must get exit 1 or 2 (HTTP
4xx from the API) with one message that names the file; only ``unicode_name`` (a real draft with a
non-ASCII name) must succeed.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from mustcite.config import find_data_dir
from mustcite.errors import DataMissingError
from mustcite.lsp import FrameReader

ROOT = Path(__file__).resolve().parents[1]


def _data() -> Path:
    """The shared data folder; when there is none, a folder that does not exist (have_data() is then False)."""
    try:
        return find_data_dir()
    except DataMissingError:
        return ROOT / "no-shared-data"


DATA = _data()
FULLTEXT_2024 = DATA / "neurips" / "fulltext_2024"
PDF_DIR = DATA / "pdfs"

#: decompressed size of the gzip bomb, and the file size of ``huge`` (the caps: 8,000,000
#: characters of draft text, 64 MB on disk)
BOMB_BYTES = 200 * 2**20
HUGE_BYTES = 70 * 2**20

#: inputs read as a draft (audit, recommend --draft, extract, POST /api/audit)
DRAFT_INPUTS = ("empty", "binary", "truncated_gz", "gzip_bomb", "huge", "non_utf8", "wrong_extension",
                "pdf_named_md", "unsupported", "folder", "missing", "sibling", "unicode_name")
#: helper files (valid) the data commands need besides their bad input
HELPERS = ("qrels", "scidoca_gold", "scidoca_task")


def have_data() -> bool:
    return FULLTEXT_2024.is_dir() and any(FULLTEXT_2024.glob("*.md.gz")) and real_pdf() is not None


def real_pdf() -> Path | None:
    pdfs = sorted(PDF_DIR.rglob("*.pdf")) if PDF_DIR.is_dir() else []
    return pdfs[0] if pdfs else None


def real_markdown() -> str:
    """The first NeurIPS 2024 full text (by file name), as text."""
    first = sorted(FULLTEXT_2024.glob("*.md.gz"))[0]
    with gzip.open(first, "rt", encoding="utf-8") as fh:
        return fh.read()


def _gzip_bomb(path: Path, size: int) -> None:
    """``size`` bytes of text, gzipped a block at a time (never the whole text in memory)."""
    block = b"ha! " * (2**20 // 4)      # a 4-byte period: deflate's best ratio, ~1000:1
    written = 0
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fh:
        while written < size:
            chunk = block[: size - written]
            fh.write(chunk)
            written += len(chunk)


def build(folder: Path) -> dict[str, Path]:
    """Write the bad inputs (and the valid helper files in :data:`HELPERS`) into ``folder``;
    returns name -> path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    p: dict[str, Path] = {}
    text = real_markdown()

    p["empty"] = folder / "empty.md"
    p["empty"].write_bytes(b"")

    data = bytearray(rng.randbytes(4096))
    data[::97] = b"\x00" * len(data[::97])
    p["binary"] = folder / "binary.md"
    p["binary"].write_bytes(bytes(data))

    whole = gzip.compress(text.encode("utf-8"), mtime=0)
    p["truncated_gz"] = folder / "truncated.md.gz"
    p["truncated_gz"].write_bytes(whole[: len(whole) // 2])

    p["gzip_bomb"] = folder / "bomb.md.gz"
    _gzip_bomb(p["gzip_bomb"], BOMB_BYTES)

    p["huge"] = folder / "huge.md"
    with open(p["huge"], "wb") as fh:     # sparse: no disk blocks written
        fh.truncate(HUGE_BYTES)

    p["non_utf8"] = folder / "latin1.md"
    p["non_utf8"].write_bytes(("# Über die Schätzung von Zitaten\n\n## Abstract\n\nWir schätzen, "
                               "welche Arbeiten zitiert werden müssen.\n").encode("latin-1"))

    p["wrong_extension"] = folder / "plain.pdf"
    p["wrong_extension"].write_text("# A title\n\nThis is plain text, not a PDF.\n", encoding="utf-8")

    p["pdf_named_md"] = folder / "actually-pdf.md"
    p["pdf_named_md"].write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")

    p["unsupported"] = folder / "draft.docx"
    p["unsupported"].write_bytes(b"PK\x03\x04" + rng.randbytes(512))

    p["folder"] = folder / "drafts"
    p["folder"].mkdir(exist_ok=True)

    p["missing"] = folder / "no-such-draft.md"

    sib = folder / "sibling"
    sib.mkdir(exist_ok=True)
    garbage = " ".join(rng.choice(["zork", "qux", "blorp", "fnord", "1234", "%%", "--"]) for _ in range(400))
    p["sibling"] = sib / "draft.md.gz"
    p["sibling"].write_bytes(gzip.compress(garbage.encode(), mtime=0))
    pdf = real_pdf()
    if pdf is not None:
        shutil.copyfile(pdf, sib / "draft.pdf")

    p["unicode_name"] = folder / "entwürfe ä.md"
    p["unicode_name"].write_text(text, encoding="utf-8")

    # ---- data files
    qs = [{"id": f"q{i}", "title": f"Query {i} on graph neural networks", "abstract": "message passing"}
          for i in (1, 2)]
    p["bad_jsonl"] = folder / "queries.jsonl"
    p["bad_jsonl"].write_text("".join(json.dumps(q) + "\n" for q in qs) + '{"id": "q3", "title": \n',
                              encoding="utf-8")

    p["truncated_jsonl_gz"] = folder / "queries.jsonl.gz"
    whole = gzip.compress("".join(json.dumps(q | {"id": f"q{i}"}) + "\n" for i in range(200) for q in qs[:1])
                          .encode(), mtime=0)
    p["truncated_jsonl_gz"].write_bytes(whole[: len(whole) // 2])

    p["qrels"] = folder / "test.qrels"
    p["qrels"].write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n", encoding="utf-8")

    p["bad_trec_run"] = folder / "bad.trec"
    p["bad_trec_run"].write_text("q1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 1.5\n", encoding="utf-8")

    p["empty_run"] = folder / "empty.trec"
    p["empty_run"].write_bytes(b"")

    p["foreign_run"] = folder / "foreign.trec"
    p["foreign_run"].write_text("x1 Q0 d1 1 2.5 run\nx1 Q0 d2 2 1.5 run\nx2 Q0 d3 1 0.5 run\n",
                                encoding="utf-8")

    task = {"id": "p1", "paragraph": "Transformers [1] changed NLP.", "candidate_references": ["[1]", "[2]"],
            "predicted_citations": ["[1]"]}
    p["scidoca_task"] = folder / "task1.jsonl"
    p["scidoca_task"].write_text(json.dumps(task) + "\n", encoding="utf-8")
    p["scidoca_gold"] = folder / "gold1.jsonl"
    p["scidoca_gold"].write_text(json.dumps({"id": "p1", "predicted_citations": ["[1]"]}) + "\n",
                                 encoding="utf-8")
    p["bad_scidoca"] = folder / "scidoca-task1.jsonl"
    p["bad_scidoca"].write_text(json.dumps(task) + "\n" + '{"id": "p2", "paragraph": "x", \n',
                                encoding="utf-8")

    p["corrupt_model"] = folder / "corrupt-model"
    p["corrupt_model"].mkdir(exist_ok=True)
    (p["corrupt_model"] / "config.json").write_text("{not json", encoding="utf-8")
    return p


# --------------------------------------------------------------------------- the matrix

@dataclass(frozen=True)
class Cell:
    """One (command, input) pair. ``argv`` is a template: ``{file}`` is the input's path, ``{out}``
    a fresh output path, ``{qrels}``/``{gold}``/``{task}`` the helpers, ``{draft}`` the valid draft;
    ``argv`` None is the REST API (``POST /api/audit`` with the input uploaded)."""

    input: str
    command: str
    argv: tuple[str, ...] | None
    ok: bool = False                  # only the valid draft succeeds
    says: str | None = None           # a regex the message must match
    code: int | None = None           # the exit code, where only one is right

    @property
    def id(self) -> str:
        return f"{self.command}-{self.input}"

    def args(self, paths: dict[str, Path], out: Path) -> list[str]:
        subs = {"file": str(paths[self.input]), "out": str(out), "qrels": str(paths["qrels"]),
                "gold": str(paths["scidoca_gold"]), "task": str(paths["scidoca_task"]),
                "draft": str(paths["unicode_name"])}
        return [a.format(**subs) for a in self.argv or ()]

    def name(self, paths: dict[str, Path]) -> str:
        """The file name the message must mention."""
        return paths[self.input].name


DRAFT_COMMANDS = {
    "audit": ("audit", "{file}"),
    "recommend --draft": ("recommend", "--draft", "{file}"),
    "extract": ("extract", "{file}", "-o", "{out}", "-w", "1"),
    "POST /api/audit": None,
}

#: what the message must say, for inputs where it matters
_SAYS = {
    "sibling": r"neither a title nor an abstract|could not extract",
    "gzip_bomb": r"8,000,000 characters",
    "huge": r"too large|larger than",
    "empty": r"empty",
    "missing": r"not found|no such",
}

#: (command, input) pairs left out, with the reason
SKIPPED = {
    ("extract", "sibling"): "a corpus run falls back from abc.md.gz to a readable abc.pdf by design",
    ("POST /api/audit", "folder"): "a folder cannot be uploaded",
    ("POST /api/audit", "missing"): "a missing file cannot be uploaded",
}


def cells() -> list[Cell]:
    out: list[Cell] = []
    for name in DRAFT_INPUTS:
        for command, argv in DRAFT_COMMANDS.items():
            if (command, name) in SKIPPED:
                continue
            says = _SAYS.get(name)
            if command == "POST /api/audit" and name == "huge":
                says = r"larger than"
            out.append(Cell(name, command, argv, ok=name == "unicode_name", says=says))
    out += [
        Cell("bad_jsonl", "recommend --queries", ("recommend", "--queries", "{file}"), says=r":3: malformed JSON"),
        Cell("missing", "recommend --queries", ("recommend", "--queries", "{file}")),
        Cell("non_utf8", "recommend --queries", ("recommend", "--queries", "{file}"), says="UTF-8"),
        Cell("truncated_jsonl_gz", "recommend --queries", ("recommend", "--queries", "{file}"),
             says="ended before"),
        Cell("bad_trec_run", "evaluate", ("evaluate", "--run", "{file}", "--qrels", "{qrels}"), says=r":2: .*6 fields"),
        Cell("empty_run", "evaluate", ("evaluate", "--run", "{file}", "--qrels", "{qrels}"), says="no results"),
        Cell("foreign_run", "evaluate", ("evaluate", "--run", "{file}", "--qrels", "{qrels}"),
             says="no query of the run is in the qrels"),
        Cell("missing", "evaluate", ("evaluate", "--run", "{file}", "--qrels", "{qrels}")),
        Cell("binary", "evaluate", ("evaluate", "--run", "{file}", "--qrels", "{qrels}")),
        Cell("bad_scidoca", "scidoca predict", ("scidoca", "predict", "--task", "1", "--in", "{file}",
                                                "--out", "{out}.jsonl", "--method", "all"), says=r":2: malformed JSON"),
        Cell("bad_scidoca", "scidoca evaluate --pred", ("scidoca", "evaluate", "--task", "1", "--pred", "{file}",
                                                         "--gold", "{gold}"), says=r":2: malformed JSON"),
        Cell("bad_scidoca", "scidoca evaluate --gold", ("scidoca", "evaluate", "--task", "1", "--pred", "{gold}",
                                                         "--gold", "{file}"), says=r":2: malformed JSON"),
        Cell("missing", "scidoca predict", ("scidoca", "predict", "--task", "1", "--in", "{file}",
                                            "--out", "{out}.jsonl", "--method", "all")),
        Cell("corrupt_model", "recommend --model", ("recommend", "--title", "x", "--model", "{file}"),
             says="malformed JSON"),
        Cell("corrupt_model", "audit --model", ("audit", "{draft}", "--model", "{file}"), says="malformed JSON"),
        Cell("folder", "recommend --out", ("recommend", "--title", "x", "--out", "{file}"), says="is a folder", code=2),
    ]
    return out


# --------------------------------------------------------------------------- a raw language client

#: a request every language server answers at once
PING = {"command": "mustcite.timings"}

class Client:
    """A language client speaking raw bytes to a language server over stdio (``command``: the
    server's command line, e.g. ``mustcite --work W lsp --no-audit``), started in ``tmp``; it wakes
    at each message and each stderr line the server sends. ``tests/test_lsp_hardening.py`` drives
    a stubbed server with it."""

    def __init__(self, tmp: Path, *, command: list[str]):
        env = dict(os.environ, MUSTCITE_WORK=str(tmp / "work"), HF_HUB_OFFLINE="1")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, cwd=tmp)
        self.seen: list[dict] = []
        self.stderr: list[str] = []
        self.next_id = 0
        self._news = threading.Condition()         # notified at each message and each stderr line
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for t in self._readers:
            t.start()

    def _read(self) -> None:
        for body, _ in FrameReader(self.proc.stdout.read1).frames():
            if body is not None:
                with self._news:
                    self.seen.append(json.loads(body))
                    self._news.notify_all()

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            with self._news:
                self.stderr.append(line.decode("utf-8", "replace"))
                self._news.notify_all()

    def until(self, ok, timeout: float = 10.0, what: str = ""):
        """The first true value of ``ok()``, tried again at each message and stderr line the server
        sends; AssertionError naming ``what`` after ``timeout`` seconds."""
        with self._news:
            got = self._news.wait_for(ok, timeout)
        if not got:
            raise AssertionError(f"still waiting after {timeout:g} s for {what or ok!r}")
        return got

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: dict) -> None:
        body = json.dumps(obj).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params=None) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params=None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, ok, timeout: float = 10.0, start: int = 0) -> dict:
        """The first message from the ``start``-th on for which ``ok(message)`` holds, as soon as it comes."""
        def found():
            return next((m for m in self.seen[start:] if ok(m)), None)
        with self._news:
            m = self._news.wait_for(found, timeout)
            if m is None:
                raise AssertionError(f"no such message in {timeout} s; seen: {[str(m)[:200] for m in self.seen[-5:]]}")
        return m

    def response(self, msg_id, timeout: float = 10.0) -> dict:
        return self.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def ping(self, timeout: float = 30.0) -> float:
        """Seconds until a ping (``mustcite.timings``) is answered; fails after ``timeout`` (a wedged
        server never answers)."""
        t0 = time.monotonic()
        self.response(self.request("workspace/executeCommand", PING), timeout)
        return time.monotonic() - t0

    def diagnostics(self, uri: str, timeout: float = 10.0, start: int = 0) -> list[dict]:
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri, timeout, start)
        return m["params"]["diagnostics"]

    def initialize(self, root: Path | None, audit: bool = False) -> None:
        from pygls.uris import from_fs_path  # the lsp extra: only a language-server run needs it

        folders = [{"uri": from_fs_path(str(root)), "name": "paper"}] if root else None
        self.response(self.request("initialize", {
            "processId": None, "rootUri": from_fs_path(str(root)) if root else None, "capabilities": {},
            "workspaceFolders": folders, "initializationOptions": {"audit": audit}}), timeout=60)
        self.notify("initialized", {})

    def open(self, uri: str, text: str) -> None:
        lang = "bibtex" if uri.endswith(".bib") else "latex"
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": lang, "version": 1,
                                                              "text": text}})

    def finish(self, shutdown: bool = True, timeout: float = 10.0) -> int:
        if shutdown:
            self.response(self.request("shutdown"))
        self.notify("exit")
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        for t in self._readers:          # to the end of the output: seen and stderr hold all the server said
            t.join(timeout)
        return code

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1]) / 1024


# --------------------------------------------------------------------------- the slice recommender

#: the pool: NeurIPS 2019-2022 papers with abstracts
SLICE_POOL_FILES = ("umgupta-paperquest/nips2019.jsonl.gz",
                    *(f"rajatmodi62-ai-conf-abstract-generator/nips{y}.jsonl.gz" for y in (2020, 2021, 2022)))
#: the labelled papers: the first NeurIPS 2023 full texts by file name, the first SLICE_TRAIN train
SLICE_FULLTEXT = DATA / "neurips" / "fulltext_2023"
SLICE_LABELLED = 90
SLICE_TRAIN = 55


def slice_pool() -> list[dict]:
    """The pool papers, one row each (sorted as the files are)."""
    from mustcite.corpus import import_file, make_paper_id

    rows, seen = [], set()
    for name in SLICE_POOL_FILES:
        for r in import_file(DATA / "proceedings" / name, DATA):
            if r.skip or not r.title:
                continue
            pid = make_paper_id(r.title, "NeurIPS", r.year, r.source_id)
            if pid in seen:
                continue
            seen.add(pid)
            rows.append({"paper_id": pid, "title": r.title, "abstract": r.abstract, "authors": r.authors,
                         "venue": "NeurIPS", "year": r.year, "url": r.url, "pdf": r.pdf})
    return rows


def _write_reference_dir(folder: Path, pool: list[dict]) -> None:
    """Extract + link the first SLICE_LABELLED NeurIPS 2023 full texts into ``folder``."""
    from mustcite.extract import TitleIndex, extract_markdown, link_references

    folder.mkdir(parents=True, exist_ok=True)
    index = TitleIndex.build([r["paper_id"] for r in pool], [r["title"] for r in pool], [r["year"] for r in pool])
    manifest = {}
    for line in (SLICE_FULLTEXT / "manifest.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            obj = json.loads(line)
            manifest[obj["id"]] = obj
    for stem in sorted(f.name[:-6] for f in SLICE_FULLTEXT.glob("*.md.gz"))[:SLICE_LABELLED]:
        with gzip.open(SLICE_FULLTEXT / f"{stem}.md.gz", "rt", encoding="utf-8") as fh:
            ex = extract_markdown(fh.read(), source_path=stem)
        refs = link_references(ex.to_reference_list(), index, citing_year=2023)
        m = manifest.get(stem, {})
        (folder / f"{stem}.json").write_text(json.dumps(refs), encoding="utf-8")
        (folder / f"{stem}.meta.json").write_text(json.dumps(
            {"title": m.get("title") or ex.title, "abstract": ex.abstract, "year": 2023}), encoding="utf-8")


def build_slice(model_dir: Path, scratch: Path) -> dict:
    """Train the slice's recommender (BM25 only, seed 0, on the first SLICE_TRAIN labelled papers)
    into ``model_dir`` (reference files under ``scratch``); returns the first held-out paper as
    ``query`` (title, abstract) and the first two pool papers as ``cited``."""
    from mustcite.labels import load_reference_dir
    from mustcite.recommend import Recommender, RecommenderConfig

    pool = slice_pool()
    _write_reference_dir(scratch / "refs", pool)
    labelled = load_reference_dir(scratch / "refs", {r["paper_id"] for r in pool})
    train, held_out = labelled[:SLICE_TRAIN], labelled[SLICE_TRAIN:]
    rec = Recommender.build(pool, train, RecommenderConfig(dense=False, seed=0))
    rec.fit()
    Path(model_dir).parent.mkdir(parents=True, exist_ok=True)
    rec.save(model_dir)
    return {"query": {"title": held_out[0].title, "abstract": held_out[0].abstract}, "cited": pool[:2]}


# --------------------------------------------------------------------------- what is printed: controls, LaTeX specials
# (rows ``output/...`` of bad_inputs.py: values read from the input are printed escaped, and the
# published version check-refs proposes for an arXiv-cited paper is BibTeX that reads back)

#: a terminal's controls: OSC 0 (sets the window title, ended by BEL), CSI 2J (clears the screen), an
#: OSC 8 hyperlink whose text hides its target, and a right-to-left override
CONTROLS = {"title": "\x1b]0;pwned\x07", "clear": "\x1b[2J",
            "link": "\x1b]8;;http://evil.example/\x07Attention\x1b]8;;\x07", "rlo": "\u202e"}
#: what no output may hold raw: C0 controls but tab and line feed, DEL, C1, bidirectional controls
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: the development draft (benchmarks/splits/drafts_split.json "dev") the hostile values are added to
OUTPUT_DRAFT = "ai-detector-fooling"
#: the paper list whose papers the outputs' corpus holds, and whose special-character titles are cited
OUTPUT_LIST = "nips2019"
SPECIALS = "%&#^_$~{}"


def build_output_inputs(folder: Path, work: Path) -> dict[str, Path]:
    """Write into ``folder``: ``hostile_bib`` (the dev draft's real .bib with a title, a note and a
    key holding :data:`CONTROLS`, and a key given twice), ``hostile_draft`` (the real project with
    them in its title, a sentence and an undefined ``\\cite`` key) and ``special_bib`` (every
    :data:`OUTPUT_LIST` paper whose title holds one of :data:`SPECIALS`, cited as an arXiv preprint
    with a DOI, a note and pages); and ``work``'s corpus: the main-track papers of :data:`OUTPUT_LIST`."""
    from mustcite.corpus import Paper, import_file, make_paper_id, write_papers

    c = CONTROLS
    folder.mkdir(parents=True, exist_ok=True)
    project = DATA / "drafts" / "projects" / OUTPUT_DRAFT
    hostile = f"Hostile {c['title']} title {c['link']} with {c['clear']} and {c['rlo']}txet desrever"
    p = {"hostile_bib": folder / "refs.bib", "hostile_draft": folder / "draft", "special_bib": folder / "specials.bib"}
    p["hostile_bib"].write_text(
        (project / "bibliography.bib").read_text(encoding="utf-8")
        + f"\n@article{{evil{c['clear']}key,\n  title = {{{hostile}}},\n  author = {{Jane {c['rlo']}Doe}},\n"
        f"  journal = {{arXiv preprint arXiv:2101.00001}},\n  note = {{{c['title']}{c['rlo']} note}},\n"
        "  year = {2021}\n}\n"
        f"@misc{{evil{c['clear']}key,\n  title = {{A repeated key}}\n}}\n"
        f"@inproceedings{{venue{c['rlo']},\n  title = {{Some Paper}},\n  author = {{Jane Doe}},\n"
        f"  booktitle = {{Conference on Imaginary {c['title']}Learning {c['rlo']}Systems}},\n  year = {{2019}}\n}}\n",
        encoding="utf-8")
    shutil.copytree(project, p["hostile_draft"], dirs_exist_ok=True)
    tex = p["hostile_draft"] / "paper.tex"
    text = tex.read_text(encoding="utf-8")
    text = text.replace(r"\title{Evaluating the effectiveness of fooling techniques on AI detectors}",
                        rf"\title{{Evaluating {c['title']}fooling {c['rlo']}techniques {c['clear']}on AI detectors}}")
    text = text.replace(r"\section{Introduction}", f"\\section{{Introduction}}\nWe follow BERT {c['link']} closely "
                        f"{c['rlo']}here \\cite{{evil{c['clear']}key}}.\n", 1)
    tex.write_text(text, encoding="utf-8")
    papers, entries = [], []
    for r in import_file(DATA / "proceedings" / "paperlists" / f"{OUTPUT_LIST}.jsonl.gz", DATA):
        if r.skip or not r.main_track:
            continue
        papers.append(Paper(make_paper_id(r.title, r.venue, r.year, r.source_id), r.title, r.venue, r.year,
                            authors=list(r.authors), source="paperlists", source_id=r.source_id, url=r.url,
                            pdf=r.pdf, track=r.track))
        if any(ch in r.title for ch in SPECIALS) and r.authors:
            title = "".join("\\" + ch if ch in "%&#_" else ch for ch in r.title)     # as a user's .bib writes it
            entries.append(f"@article{{special{len(entries)},\n  title = {{{title}}},\n"
                           f"  author = {{{' and '.join(r.authors)}}},\n  journal = {{arXiv preprint}},\n"
                           f"  eprint = {{1905.{len(entries):05d}}},\n  archivePrefix = {{arXiv}},\n"
                           "  pages = {1--12},\n  doi = {10.5555/example_doi},\n"
                           "  note = {Code at \\url{https://github.com/x/y_z}},\n  year = {2019}\n}\n")
    write_papers(papers, work / "corpus" / "papers.parquet")
    p["special_bib"].write_text("".join(entries), encoding="utf-8")
    return p
