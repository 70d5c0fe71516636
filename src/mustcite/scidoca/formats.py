"""Records and file shapes of the SCIDOCA 2025 shared task on citation prediction.

Sources: the SCIDOCA 2025 overview paper (Section 2: the JSON input/output examples of Subtasks 1-3)
and the organisers' repository as far as public (``../shared/data/scidoca/``: two README
versions, which document no file layout, and PROVENANCE.md, which infers the ``.in``/``.label``
files from a participant's loader). Two shapes are read and written:

* **seed shape**, one paragraph per JSONL line with an ``"id"``. Input, as in Section 2:
  ``{"id", "paragraph", "candidate_references"}`` -- ``paragraph`` is a string (Tasks 1, 2) or a
  list of sentences (Task 3, "Example Input" of 2.5); a candidate is a string id, as in the
  seed, or ``{"id", "title", "abstract"}`` so that the title and abstract the task provides
  travel with it. Output (also used for gold answers): Task 1 ``{"id", "predicted_citations":
  [id, ...]}``, Task 2 ``{"id", "predicted_citations": {"[MASK1]": id, ...}}``, Task 3 ``{"id",
  "sentence_citations": [{"sentence", "predicted_citation": [id, ...]}, ...]}``. A *full example*
  is the input line plus its gold answer in the output field.
* **official shape**, one paragraph per pair of JSON files ``<id>.in`` = ``{"text",
  "citation_candidates", "bib_entries": {id: {"title", "abstract"}}}`` and ``<id>.label`` =
  ``{"correct_citation": ...}`` (Task 1: a list of ids; Task 3: one list per sentence, ``text``
  then being the list of sentences; Task 2 is undocumented: a ``{"[MASKn]": id}`` object, or a
  list read as ``[MASK1], [MASK2], ...`` in order). ``citation_candidates`` may be absent (the
  real sample ``task1_example_from_trieuhoangan.json`` has only ``text`` and ``bib_entries``);
  unknown keys such as ``_note`` are ignored.

No-citation marker: Section 2.5 says a sentence without citation "should return an empty list",
while its output example writes ``["[empty]"]``; both are read as "no citation" (:data:`EMPTY`
must then stand alone). In Task 2 a mask mapped to ``null`` or ``"[empty]"`` is an abstention
(predictions only: every gold mask names a candidate).

Ids are strings; integer ids (S2ORC corpus ids) are accepted and turned into strings. Every
malformed input raises :class:`~mustcite.errors.MustciteError` naming file, line (JSONL, or the
line of a JSON syntax error) and field.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MustciteError
from ..io import (
    MAX_DECOMPRESSED_BYTES,
    MAX_DOCUMENT_BYTES,
    atomic_write_json,
    iter_jsonl,
    iter_text_lines,
    open_text,
    read_json,
    read_text,
    write_jsonl,
)

TASKS: tuple[int, ...] = (1, 2, 3)
#: The seed's no-citation marker (Section 2.5, output example).
EMPTY = "[empty]"
_MASK = re.compile(r"\[MASK(\d+)\]")
_OFFICIAL_KEYS = ("text", "bib_entries", "citation_candidates", "correct_citation")
_ANSWER_FIELDS = ("predicted_citations", "sentence_citations")

#: Task 1 and each Task 3 sentence: cited candidate ids, in the order given.
Ids = tuple[str, ...]
#: Task 2: mask -> candidate id; ``None`` = no prediction for that mask.
MaskMap = dict[str, str | None]
Citations = Ids | MaskMap | tuple[Ids, ...]
#: What a record shows about its task: (task, field, where the field was read).
Evidence = list[tuple[int, str, "Origin"]]


@dataclass(frozen=True)
class Origin:
    """Where a record was read: file and, for JSONL, line. Used to name the place in errors."""

    path: str
    line: int | None = None

    def error(self, message: str, field: str | None = None) -> MustciteError:
        return MustciteError(message, path=self.path, line=self.line, field=field)


#: The origin of a record made in memory (errors name "<memory>").
NOWHERE = Origin("<memory>")


@dataclass(frozen=True)
class Candidate:
    """One candidate reference: its id and the title and abstract the task gives for it."""

    id: str
    title: str = ""
    abstract: str = ""


@dataclass(frozen=True)
class Answer:
    """A paragraph's citations in one task's output shape: a system's prediction or the gold.

    ``citations`` is a tuple of ids (Task 1), a mask -> id mapping (Task 2) or one tuple of ids
    per sentence (Task 3, with the sentence texts in ``sentences``; ``()`` = no citation).
    """

    id: str
    task: int
    citations: Citations
    sentences: tuple[str, ...] | None = None
    origin: Origin | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Example:
    """One task example: a paragraph, its candidate references and, when known, the gold answer.

    ``paragraph`` is a string for Tasks 1-2 and a tuple of sentences for Task 3; ``gold`` has
    the shape of :attr:`Answer.citations` for the task.
    """

    id: str
    task: int
    paragraph: str | tuple[str, ...]
    candidates: tuple[Candidate, ...]
    gold: Citations | None = None
    origin: Origin | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The paragraph as one string (Task 3 sentences joined by a space)."""
        return self.paragraph if isinstance(self.paragraph, str) else " ".join(self.paragraph)

    @property
    def sentences(self) -> tuple[str, ...] | None:
        return self.paragraph if isinstance(self.paragraph, tuple) else None

    @property
    def masks(self) -> tuple[str, ...]:
        """The ``[MASKn]`` slots of the paragraph, in order of first occurrence."""
        return tuple(dict.fromkeys(m.group(0) for m in _MASK.finditer(self.text)))

    def answer(self) -> Answer:
        """The gold answer as an :class:`Answer`; an example without gold raises."""
        if self.gold is None:
            raise (self.origin or NOWHERE).error(f"example {self.id!r} has no gold answer")
        return Answer(self.id, self.task, self.gold, self.sentences, self.origin)


# --------------------------------------------------------------------------- value parsing

def _str(value: Any, where: Origin, name: str) -> str:
    if not isinstance(value, str):
        raise where.error(f"expected a string, got {_kind(value)}", name)
    return value


def _opt_str(value: Any, where: Origin, name: str) -> str:
    """A title/abstract: a string, or null/absent (S2ORC has papers without abstract) -> ''."""
    return "" if value is None else _str(value, where, name)


def _id(value: Any, where: Origin, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise where.error(f"expected an id (string or integer), got {_kind(value)}", name)
    text = str(value)
    if not text.strip():
        raise where.error("empty id", name)
    return text


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _require(obj: dict, key: str, where: Origin) -> Any:
    if key not in obj:
        raise where.error("missing field", key)
    return obj[key]


def _id_list(value: Any, where: Origin, name: str) -> Ids:
    """A list of ids; ``["[empty]"]`` means none (Section 2.5)."""
    if not isinstance(value, list):
        raise where.error(f"expected a list of ids, got {_kind(value)}", name)
    ids = tuple(_id(v, where, f"{name}[{i}]") for i, v in enumerate(value))
    if EMPTY in ids:
        if len(ids) > 1:
            raise where.error(f"{EMPTY!r} means 'no citation' and must stand alone", name)
        return ()
    return ids


def _mask_map(value: Any, where: Origin, name: str) -> MaskMap:
    if not isinstance(value, dict):
        raise where.error(f"expected an object {{'[MASK1]': id, ...}}, got {_kind(value)}", name)
    out: MaskMap = {}
    for mask, cid in value.items():
        if not _MASK.fullmatch(mask):
            raise where.error(f"{mask!r} is not a mask slot like '[MASK1]'", name)
        out[mask] = None if cid is None or cid == EMPTY else _id(cid, where, f'{name}["{mask}"]')
    return out


def _sentence_citations(value: Any, where: Origin, name: str) -> tuple[tuple[str, ...], tuple[Ids, ...]]:
    if not isinstance(value, list):
        raise where.error(f"expected a list of {{'sentence', 'predicted_citation'}}, got {_kind(value)}", name)
    sentences, cites = [], []
    for i, item in enumerate(value):
        at = f"{name}[{i}]"
        if not isinstance(item, dict):
            raise where.error(f"expected an object, got {_kind(item)}", at)
        for key in ("sentence", "predicted_citation"):
            if key not in item:
                raise where.error("missing field", f"{at}.{key}")
        sentences.append(_str(item["sentence"], where, f"{at}.sentence"))
        cites.append(_id_list(item["predicted_citation"], where, f"{at}.predicted_citation"))
    return tuple(sentences), tuple(cites)


def _paragraph(value: Any, where: Origin, name: str) -> str | tuple[str, ...]:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return tuple(_str(s, where, f"{name}[{i}]") for i, s in enumerate(value))
    raise where.error(f"expected a string or a list of sentences, got {_kind(value)}", name)


def _answer_field(obj: dict, where: Origin) -> tuple[str | None, Any]:
    present = [k for k in _ANSWER_FIELDS if k in obj]
    if len(present) > 1:
        raise where.error("give either 'predicted_citations' or 'sentence_citations', not both", present[1])
    return (present[0], obj[present[0]]) if present else (None, None)


def _choose_task(task: int | None, evidence: Evidence, paragraph: Any) -> int:
    """The task of a record: ``task`` if given (checked against the record), else what the record
    shows -- strong evidence ``(task, field, origin)`` (a sentence list -> 3, an answer's shape)
    first, then ``[MASKn]`` slots in the text (-> 2, else 1)."""
    if task is not None and task not in TASKS:
        raise MustciteError(f"task must be 1, 2 or 3, got {task!r}")
    for t, name, where in evidence:
        if task is not None and t != task:
            raise where.error(f"this field has the shape of Task {t}, but Task {task} was asked for", name)
        if t != evidence[0][0]:
            raise where.error(f"shape of Task {t} here but of Task {evidence[0][0]} in "
                              f"'{evidence[0][1]}'", name)
    if task is not None:
        return task
    if evidence:
        return evidence[0][0]
    return 2 if isinstance(paragraph, str) and _MASK.search(paragraph) else 1


def _answer_evidence(name: str | None, value: Any, where: Origin) -> Evidence:
    if name == "sentence_citations":
        return [(3, name, where)]
    if name == "predicted_citations":
        if isinstance(value, dict):
            return [(2, name, where)]
        if isinstance(value, list):
            return [(1, name, where)]
    return []


def _parse_answer(task: int, name: str, value: Any, where: Origin) -> tuple[Citations, tuple[str, ...] | None]:
    expected = "sentence_citations" if task == 3 else "predicted_citations"
    if name != expected:
        raise where.error(f"Task {task} answers go in '{expected}'", name)
    if task == 1:
        return _id_list(value, where, name), None
    if task == 2:
        return _mask_map(value, where, name), None
    sentences, cites = _sentence_citations(value, where, name)
    return cites, sentences


def _norm(sentence: str) -> str:
    return " ".join(sentence.split())


# --------------------------------------------------------------------------- validation

def _validate(ex: Example, where: Origin, gold_field: str, para_field: str = "paragraph") -> Example:
    """Checks that need the whole example: unique candidates, gold ids among them, Task 2 gold
    covering exactly the paragraph's masks, Task 3 gold with one entry per sentence."""
    ids: set[str] = set()
    for c in ex.candidates:
        if c.id in ids:
            raise where.error(f"candidate {c.id!r} appears twice", "candidate_references"
                              if para_field == "paragraph" else "citation_candidates")
        ids.add(c.id)
    if ex.task == 3 and ex.sentences is None:
        raise where.error("Task 3 needs the paragraph as a list of sentences", para_field)
    if ex.task in (1, 2) and ex.sentences is not None:
        raise where.error(f"Task {ex.task} needs the paragraph as one string", para_field)
    if ex.task == 2 and not ex.masks:
        raise where.error("a Task 2 paragraph needs [MASKn] slots", para_field)
    gold = ex.gold
    if gold is None:
        return ex

    def known(cid: str | None, name: str) -> None:
        if cid is None:
            raise where.error("every gold mask needs a citation", name)
        if cid not in ids:
            raise where.error(f"unknown candidate id {cid!r} in gold", name)

    if ex.task == 1:
        for i, cid in enumerate(gold):
            known(cid, f"{gold_field}[{i}]")
    elif ex.task == 2:
        masks = set(ex.masks)
        for mask, cid in gold.items():
            if mask not in masks:
                raise where.error(f"gold names {mask}, which is not in the paragraph", gold_field)
            known(cid, f'{gold_field}["{mask}"]')
        missing = [m for m in ex.masks if m not in gold]
        if missing:
            raise where.error(f"no gold citation for {', '.join(missing)}", gold_field)
    else:
        if len(gold) != len(ex.sentences):
            raise where.error(f"{len(gold)} gold entries for {len(ex.sentences)} sentences", gold_field)
        for i, cites in enumerate(gold):
            for j, cid in enumerate(cites):
                known(cid, f"{gold_field}[{i}][{j}]")
    return ex


# --------------------------------------------------------------------------- seed shape (JSONL)

def _seed_candidates(value: Any, where: Origin) -> tuple[Candidate, ...]:
    name = "candidate_references"
    if not isinstance(value, list):
        raise where.error(f"expected a list, got {_kind(value)}", name)
    out = []
    for i, item in enumerate(value):
        at = f"{name}[{i}]"
        if isinstance(item, dict):
            if "id" not in item:
                raise where.error("missing field", f"{at}.id")
            cid = _id(item["id"], where, f"{at}.id")
            out.append(Candidate(cid, _opt_str(item.get("title"), where, f"{at}.title"),
                                 _opt_str(item.get("abstract"), where, f"{at}.abstract")))
        else:
            out.append(Candidate(_id(item, where, at)))
    return tuple(out)


def example_from_json(obj: dict, where: Origin, *, task: int | None = None,
                      default_id: str | None = None) -> Example:
    """A seed-shape example from a parsed JSON object (gold, if any, in the output field)."""
    if "id" in obj:
        ex_id = _id(obj["id"], where, "id")
    elif default_id is not None:
        ex_id = default_id
    else:
        raise where.error("missing field", "id")
    paragraph = _paragraph(_require(obj, "paragraph", where), where, "paragraph")
    candidates = _seed_candidates(_require(obj, "candidate_references", where), where)
    name, value = _answer_field(obj, where)
    evidence = ([(3, "paragraph", where)] if isinstance(paragraph, tuple) else [])
    t = _choose_task(task, evidence + _answer_evidence(name, value, where), paragraph)
    gold = None
    if name is not None:
        gold, sentences = _parse_answer(t, name, value, where)
        if sentences is not None and isinstance(paragraph, tuple) and \
                [_norm(s) for s in sentences] != [_norm(s) for s in paragraph]:
            raise where.error("the sentences differ from the paragraph's", name)
    return _validate(Example(ex_id, t, paragraph, candidates, gold, where), where,
                     name or ("sentence_citations" if t == 3 else "predicted_citations"))


def answer_from_json(obj: dict, where: Origin, *, task: int | None = None) -> Answer:
    """An answer from a parsed JSON object in the seed's output shape, or from a full example."""
    if "paragraph" in obj:
        ex = example_from_json(obj, where, task=task)
        if ex.gold is None:
            raise where.error("a full example used as an answer needs its gold",
                              "sentence_citations" if ex.task == 3 else "predicted_citations")
        return ex.answer()
    ex_id = _id(_require(obj, "id", where), where, "id")
    name, value = _answer_field(obj, where)
    if name is None:
        raise where.error("missing field", {None: "predicted_citations or sentence_citations",
                                            3: "sentence_citations"}.get(task, "predicted_citations"))
    t = _choose_task(task, _answer_evidence(name, value, where), None)
    citations, sentences = _parse_answer(t, name, value, where)
    return Answer(ex_id, t, citations, sentences, where)


def _ids_out(ids: Ids, empty_marker: bool) -> list[str]:
    return list(ids) if ids or not empty_marker else [EMPTY]


def answer_to_json(answer: Answer, *, empty_marker: bool = False) -> dict[str, Any]:
    """The seed's output shape plus ``id``. ``empty_marker`` writes "no citation" as
    ``["[empty]"]`` (the seed's example) instead of ``[]`` (the seed's text)."""
    row: dict[str, Any] = {"id": answer.id}
    if answer.task == 1:
        row["predicted_citations"] = _ids_out(answer.citations, empty_marker)
    elif answer.task == 2:
        row["predicted_citations"] = {m: (EMPTY if c is None and empty_marker else c)
                                      for m, c in answer.citations.items()}
    else:
        sentences = answer.sentences or ()
        if len(sentences) != len(answer.citations):
            raise MustciteError(f"answer {answer.id!r}: {len(answer.citations)} citation lists for "
                                f"{len(sentences)} sentences", field="sentence_citations")
        row["sentence_citations"] = [{"sentence": s, "predicted_citation": _ids_out(c, empty_marker)}
                                     for s, c in zip(sentences, answer.citations)]
    return row


def example_to_json(example: Example, *, empty_marker: bool = False) -> dict[str, Any]:
    """A seed-shape input line, with the gold (if any) in the output field."""
    _validate(example, example.origin or NOWHERE, "gold")
    para = example.paragraph if isinstance(example.paragraph, str) else list(example.paragraph)
    row: dict[str, Any] = {"id": example.id, "paragraph": para, "candidate_references": [
        {"id": c.id, "title": c.title, "abstract": c.abstract} if c.title or c.abstract else c.id
        for c in example.candidates]}
    if example.gold is not None:
        ans = answer_to_json(example.answer(), empty_marker=empty_marker)
        row.update((k, v) for k, v in ans.items() if k != "id")
    return row


def _iter_seed_jsonl(path: Path, task: int | None, parse, *,
                     max_bytes: int | None = MAX_DECOMPRESSED_BYTES) -> Iterator[Any]:
    """Parse every line with ``parse(obj, where, task=...)``; one task and unique ids per file.
    A ``.gz`` file expanding beyond ``max_bytes`` raises (None: no cap, for the streamed training files)."""
    first: tuple[int, int] | None = None
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path, max_bytes=max_bytes):
        where = Origin(str(path), lineno)
        record = parse(obj, where, task=task)
        if first is None:
            first = (record.task, lineno)
        elif record.task != first[0]:
            raise where.error(f"a Task {record.task} record, but line {first[1]} is Task {first[0]}; "
                              "one file holds one task")
        if record.id in seen:
            raise where.error(f"id {record.id!r} already on line {seen[record.id]}", "id")
        seen[record.id] = lineno
        yield record


# --------------------------------------------------------------------------- official shape

def _json_limit_error(exc: Exception, path: Path) -> MustciteError:
    """json.loads' errors other than JSONDecodeError: nesting past the recursion limit, an
    integer past Python's digit limit."""
    why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    return MustciteError(f"malformed JSON: {why}", path=path)


def _load_json_object(path: Path) -> dict[str, Any]:
    obj = read_json(path)
    if not isinstance(obj, dict):
        raise MustciteError(f"expected a JSON object, got {_kind(obj)}", path=path)
    return obj


def _official_candidates(obj: dict, where: Origin) -> tuple[Candidate, ...]:
    """``bib_entries`` (id -> title/abstract) in file order, then ids of ``citation_candidates``
    that have no bib entry (without title/abstract)."""
    if "bib_entries" not in obj and "citation_candidates" not in obj:
        raise where.error("missing field (need 'bib_entries' or 'citation_candidates')", "bib_entries")
    bib = obj.get("bib_entries", {})
    if not isinstance(bib, dict):
        raise where.error(f"expected an object {{id: {{title, abstract}}}}, got {_kind(bib)}", "bib_entries")
    out: dict[str, Candidate] = {}
    for cid, entry in bib.items():
        at = f"bib_entries.{cid}"
        if not isinstance(entry, dict):
            raise where.error(f"expected an object {{title, abstract}}, got {_kind(entry)}", at)
        out[cid] = Candidate(_id(cid, where, at), _opt_str(entry.get("title"), where, f"{at}.title"),
                             _opt_str(entry.get("abstract"), where, f"{at}.abstract"))
    listed = obj.get("citation_candidates", [])
    if not isinstance(listed, list):
        raise where.error(f"expected a list of ids, got {_kind(listed)}", "citation_candidates")
    for i, cid in enumerate(listed):
        cid = _id(cid, where, f"citation_candidates[{i}]")
        out.setdefault(cid, Candidate(cid))
    return tuple(out.values())


def _label_evidence(value: Any, text: Any, where: Origin) -> Evidence:
    name = "correct_citation"
    if isinstance(value, dict):
        return [(2, name, where)]
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return [(3, name, where)]
    if isinstance(value, list) and value and not any(isinstance(v, list) for v in value):
        return [(2 if isinstance(text, str) and _MASK.search(text) else 1, name, where)]
    return []


def _parse_label(task: int, value: Any, where: Origin) -> Citations:
    name = "correct_citation"
    if task == 1:
        return _id_list(value, where, name)
    if task == 2:
        if isinstance(value, list):  # list form: [MASK1], [MASK2], ... in order
            value = {f"[MASK{i + 1}]": v for i, v in enumerate(value)}
        return _mask_map(value, where, name)
    if not isinstance(value, list):
        raise where.error(f"expected one list of ids per sentence, got {_kind(value)}", name)
    return tuple(_id_list(v, where, f"{name}[{i}]") for i, v in enumerate(value))


def read_official(in_path: str | Path, label_path: str | Path | None = None, *,
                  task: int | None = None) -> Example:
    """One official example: ``<id>.in`` (any JSON file with ``text`` and ``bib_entries`` /
    ``citation_candidates``) and its ``.label`` -- ``label_path``, else ``<stem>.label`` beside
    it if present, else a ``correct_citation`` inside the input file, else no gold. The id is the
    file's stem."""
    in_path = Path(in_path)
    where = Origin(str(in_path))
    obj = _load_json_object(in_path)
    paragraph = _paragraph(_require(obj, "text", where), where, "text")
    candidates = _official_candidates(obj, where)
    if label_path is None and in_path.with_suffix(".label").is_file() and in_path.suffix != ".label":
        label_path = in_path.with_suffix(".label")
    label_where, label = where, obj.get("correct_citation")
    if label_path is not None:
        label_where = Origin(str(label_path))
        label = _require(_load_json_object(Path(label_path)), "correct_citation", label_where)
    evidence: Evidence = [(3, "text", where)] if isinstance(paragraph, tuple) else []
    evidence += _label_evidence(label, paragraph, label_where) if label is not None else []
    t = _choose_task(task, evidence, paragraph)
    ex = _validate(Example(in_path.stem, t, paragraph, candidates, None, where), where, "", "text")
    if label is None:
        return ex
    gold = _parse_label(t, label, label_where)
    return _validate(Example(ex.id, t, paragraph, candidates, gold, where), label_where, "correct_citation", "text")


def _natural(path: Path) -> tuple:
    return (0, int(path.stem), "") if path.stem.isdecimal() else (1, 0, path.stem)   # int() rejects "²"


def read_official_dir(folder: str | Path, *, task: int | None = None) -> list[Example]:
    """Every ``<id>.in`` of a folder with its ``<id>.label``, ids in natural order; a ``.label``
    without ``.in`` or a folder without ``.in`` files is an error."""
    folder = Path(folder)
    ins = sorted(folder.glob("*.in"), key=_natural)
    stems = {p.stem for p in ins}
    for label in sorted(folder.glob("*.label")):
        if label.stem not in stems:
            raise MustciteError(f"no {label.stem}.in for this label", path=label)
    if not ins:
        raise MustciteError("no .in files in this folder", path=folder)
    out: list[Example] = []
    for p in ins:
        ex = read_official(p, task=task)
        if out and ex.task != out[0].task:
            raise MustciteError(f"a Task {ex.task} example, but {out[0].id}.in is Task {out[0].task}; "
                                "one folder holds one task", path=p)
        out.append(ex)
    return out


def write_official(example: Example, folder: str | Path) -> list[Path]:
    """Write ``<id>.in`` and, if the example has gold, ``<id>.label`` into ``folder``."""
    _validate(example, example.origin or NOWHERE, "correct_citation")
    if "/" in example.id or "\\" in example.id or "\x00" in example.id or example.id.startswith("."):
        raise MustciteError(f"id {example.id!r} cannot be a file name", field="id")
    folder = Path(folder)
    para = example.paragraph if isinstance(example.paragraph, str) else list(example.paragraph)
    written = [folder / f"{example.id}.in"]
    atomic_write_json(written[0], {
        "text": para, "citation_candidates": [c.id for c in example.candidates],
        "bib_entries": {c.id: {"title": c.title, "abstract": c.abstract} for c in example.candidates}})
    if example.gold is not None:
        gold: Any = example.gold
        gold = dict(gold) if example.task == 2 else [list(g) for g in gold] if example.task == 3 else list(gold)
        written.append(folder / f"{example.id}.label")
        atomic_write_json(written[1], {"correct_citation": gold})
    return written


# --------------------------------------------------------------------------- shape detection

def detect_shape(path: str | Path) -> str:
    """``"official-dir"``, ``"official"`` (one ``.in``-style JSON file), ``"seed-json"`` (one
    pretty-printed seed-shape object) or ``"seed-jsonl"``, from the name and, for other names,
    the content. An undecidable file raises."""
    path = Path(path)
    if path.is_dir():
        return "official-dir"
    if path.suffix in (".in", ".label"):
        return "official"
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        return "seed-jsonl"
    text = read_text(path, max_bytes=MAX_DOCUMENT_BYTES)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return "seed-jsonl"  # several lines of JSON; iter_jsonl names a bad one
    except (ValueError, RecursionError) as exc:
        raise _json_limit_error(exc, path) from None
    if isinstance(obj, dict):
        if "paragraph" in obj or any(k in obj for k in _ANSWER_FIELDS):
            return "seed-jsonl" if len(text.strip().splitlines()) <= 1 else "seed-json"
        if any(k in obj for k in _OFFICIAL_KEYS):
            return "official"
    raise MustciteError("cannot tell the file's shape: expected seed-shape JSONL (paragraph, "
                        "candidate_references / predicted_citations / sentence_citations) or an "
                        "official .in/.label file (text, bib_entries, correct_citation)", path=path)


def read_examples(path: str | Path, *, task: int | None = None) -> list[Example]:
    """Task examples from a seed-shape JSONL file, a single seed-shape or official JSON file, or
    a folder of official ``.in``/``.label`` files (shape from :func:`detect_shape`). ``task``
    None infers it from the records (all of one file must agree)."""
    path = Path(path)
    shape = detect_shape(path)
    if shape == "official-dir":
        return read_official_dir(path, task=task)
    if shape == "official":
        in_path = path.with_suffix(".in") if path.suffix == ".label" else path
        return [read_official(in_path, task=task)]
    if shape == "seed-json":
        return [example_from_json(_load_json_object(path), Origin(str(path)), task=task, default_id=path.stem)]
    return list(_iter_seed_jsonl(path, task, example_from_json))


def iter_examples(path: str | Path, *, task: int | None = None) -> Iterator[Example]:
    """:func:`read_examples`, one example at a time: a seed-shape JSONL file (the large training
    files) is streamed a line at a time, never held whole."""
    path = Path(path)
    if detect_shape(path) == "seed-jsonl":
        return _iter_seed_jsonl(path, task, example_from_json, max_bytes=None)
    return iter(read_examples(path, task=task))


def sample_examples(path: str | Path, n: int, *, seed: int = 0, task: int | None = None,
                    exclude: Iterable[str] = ()) -> list[Example]:
    """A seeded uniform sample of ``n`` examples of a seed-shape JSONL file (reservoir sampling
    over lines; only the kept lines are parsed, so a multi-gigabyte training file is never held
    whole), in file order. Ids in ``exclude`` are skipped (e.g. the paragraphs another stage of a
    stacked system was trained on)."""
    path = Path(path)
    if detect_shape(path) != "seed-jsonl":
        raise MustciteError("sampling needs a seed-shape JSONL file", path=path)
    rng = random.Random(seed)
    skip = set(exclude)
    keep: list[tuple[int, str]] = []
    seen = 0
    try:
        with open_text(path, max_bytes=None) as fh:       # a training file: streamed, no total cap
            for lineno, line in iter_text_lines(fh, path):
                if skip and _line_id(line, path, lineno) in skip:
                    continue
                seen += 1
                if len(keep) < n:
                    keep.append((lineno, line))
                elif (j := rng.randrange(seen)) < n:
                    keep[j] = (lineno, line)
    except UnicodeDecodeError as exc:
        raise MustciteError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise MustciteError(f"cannot read: {exc}", path=path) from None
    keep.sort()
    return [example_from_json(_json_line(line, path, lineno), Origin(str(path), lineno), task=task)
            for lineno, line in keep]


_LEADING_ID = re.compile(r'\A\s*\{\s*"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _line_id(line: str, path: Path, lineno: int) -> str | None:
    """The ``id`` of a JSONL line: read off the start when it is the first key (as written here),
    else by parsing the line."""
    m = _LEADING_ID.match(line)
    if m and "\\" not in m.group(1):
        return m.group(1)
    obj = _json_line(line, path, lineno)
    return obj.get("id") if isinstance(obj.get("id"), str) else None


def _json_line(line: str, path: Path, lineno: int) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MustciteError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=path, line=lineno) from None
    except (RecursionError, ValueError) as exc:
        raise _json_limit_error(exc, path) from None
    if not isinstance(obj, dict):
        raise MustciteError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno)
    return obj


def write_examples(path: str | Path, examples: Iterable[Example], *, empty_marker: bool = False) -> int:
    """Seed-shape JSONL, one example a line; returns the count."""
    return write_jsonl(path, (example_to_json(e, empty_marker=empty_marker) for e in examples))


def read_answers(path: str | Path, *, task: int | None = None) -> list[Answer]:
    """Answers (predictions or gold): seed output-shape JSONL, or full examples in any shape
    :func:`read_examples` reads (their gold). Each answer keeps its :class:`Origin`."""
    shape = detect_shape(path)
    if shape == "seed-jsonl":
        return list(_iter_seed_jsonl(Path(path), task, answer_from_json))
    if shape == "seed-json":
        return [answer_from_json(_load_json_object(Path(path)), Origin(str(path)), task=task)]
    return [e.answer() for e in read_examples(path, task=task)]


def write_answers(path: str | Path, answers: Iterable[Answer], *, empty_marker: bool = False) -> int:
    """Seed output-shape JSONL, one answer a line; returns the count."""
    return write_jsonl(path, (answer_to_json(a, empty_marker=empty_marker) for a in answers))
