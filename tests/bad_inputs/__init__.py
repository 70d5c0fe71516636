"""A corpus of bad inputs, and the one (command, input) matrix run over it.

:func:`build` writes the inputs into a folder (deterministic bytes, nothing large kept in git or in
memory: the gzip bomb is written a block at a time, the 70 MB file is sparse); :func:`cells` is
the matrix that ``tests/test_bad_inputs.py`` runs in-process and ``benchmarks/bad_inputs.py`` runs
as subprocesses. Every bad input must get exit 1 or 2 (HTTP 4xx from the API) with one message
that names the file; only ``unicode_name`` (a real draft with a non-ASCII name) must succeed.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from helpers import DATA  # the shared data folder (find_data_dir); tests using these inputs are marked data

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
