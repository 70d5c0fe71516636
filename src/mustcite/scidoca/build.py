"""SCIDOCA 2025 task data built from our NeurIPS full texts.

:func:`build_task_data` follows Sections 2 and 3 of the SCIDOCA 2025 overview paper with our data in
place of S2ORC:

* paragraphs and citation markers come from the extraction parser
  (:func:`mustcite.extract.paragraphs.paragraph_view`); each marker's references join the
  extraction folder's reference files (``<paper>.json``, ``paper_id`` from ``mustcite link``) by
  ``target``;
* a gold citation is a reference the paragraph cites that is linked to a corpus paper with a
  title and an abstract; markers of other references are removed from the text and are no gold;
* a paragraph qualifies with at least one gold citation; its candidates are its gold plus, as
  distractors, the same paper's other gold-quality references cited in other paragraphs;
* papers go to train/dev/test by a seeded hash of the paper id; test keeps one paragraph per
  paper; papers whose bibliography may be incomplete (a failed OCR page in or next to it) are
  train-only.

It writes ``<split>/task{1,2,3}.jsonl`` (one paragraph a line in the overview paper's Section 2
shape, the gold in the output field, checked and shaped by
:func:`mustcite.scidoca.formats.example_to_json`) and ``manifest.json`` (rules with the overview
paper's wording, inputs, seed, counts and the Section 3.6-style statistics). ``mustcite scidoca
build`` runs it.
"""

from __future__ import annotations

import hashlib
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pa_compute
import pyarrow.parquet as pq

from ..config import Workspace, find_data_dir
from ..corpus.records import normalize_title
from ..errors import MustciteError, UsageError
from ..extract.paragraphs import CitationMarker, ParagraphView, paragraph_view
from ..extract.runner import META_SUFFIX, discover, kind_of, stem_of
from ..extract.sections import ABSTRACT, CHECKLIST, REFERENCES
from ..io import JsonlWriter, atomic_write_json, read_json, read_text, sha256_file
from ..parallel import pmap
from .formats import TASKS, Candidate, Example, example_to_json

SPLITS = ("train", "dev", "test")
FULLTEXT_FOLDERS = ("fulltext_2023", "fulltext_2023_rest", "fulltext_2024", "fulltext_2024_partial")
#: Extraction failure modes under which in-text keys may resolve to the wrong entries: such a
#: paper's paragraph/reference alignment is no gold, so it is left out.
UNRELIABLE_MODES = ("alpha_numeric_mismatch", "keys_beyond_list", "low_resolution")
#: Paragraphs of these sections are never task paragraphs (the paper's own abstract is not body
#: text in S2ORC); their citations still count as "other paragraphs" for distractors.
EXCLUDED_SECTIONS = (ABSTRACT, REFERENCES, CHECKLIST)
BUILD_VERSION = 1
_CLOSE_PUNCT = ".,;:!?)]}"


# ---- per paper (a pure function of the paper's files; mapped in a process pool) -----------------

@dataclass(frozen=True)
class PaperJob:
    """The files of one paper: its full text and its extraction outputs."""
    paper: str
    fulltext: str
    references: str             # <extract_dir>/<paper>.json
    meta: str                   # <extract_dir>/<paper>.meta.json


@dataclass
class PaperCitations:
    """One paper's cited paragraphs with the corpus link of each reference target."""
    paper: str
    source_path: str
    title: str = ""
    skip: str | None = None                 # why the paper gives no data
    failure_modes: list[str] = field(default_factory=list)
    incomplete_bibliography: bool = False
    paragraphs: list[ParagraphView] = field(default_factory=list)   # with >= 1 resolved marker
    links: dict[int, str] = field(default_factory=dict)              # target -> corpus paper_id


def collect_paper(job: PaperJob) -> PaperCitations:
    """Parse one full text into its cited paragraphs and join the reference file's links.

    The view and the reference file must describe the same list (same number of entries, same
    title and year per target); otherwise the extraction is stale and the paper is skipped.
    """
    out = PaperCitations(paper=job.paper, source_path=job.fulltext)
    # a missing or damaged file means the paper has no usable extraction: it is skipped (and
    # counted in the manifest) rather than failing the build of every other paper
    try:
        meta = read_json(job.meta, missing_ok=True)
    except MustciteError:
        meta = None
    if not isinstance(meta, dict):
        out.skip = "no_extraction"
        return out
    out.title = meta.get("title") or ""
    out.failure_modes = list(meta.get("failure_modes") or [])
    out.incomplete_bibliography = bool((meta.get("stats") or {}).get("bibliography_may_be_incomplete"))
    try:
        refs = read_json(job.references, missing_ok=True)
    except MustciteError:       # damaged like a missing file: skipped below, as above
        refs = None
    if meta.get("status") == "failed" or not isinstance(refs, list):
        out.skip = "extraction_failed"
        return out
    try:
        text = read_text(job.fulltext)
    except MustciteError:
        out.skip = "unreadable"
        return out
    view = paragraph_view(text, source_path=job.fulltext)
    if view.problem:
        out.skip = f"parse_{view.problem}"
        return out
    out.incomplete_bibliography = out.incomplete_bibliography or view.bibliography_may_be_incomplete
    if len(view.references) != len(refs) or any(
            h.target != r.get("target") or h.title != r.get("title") or h.year != r.get("year")
            for h, r in zip(view.references, refs)):
        out.skip = "stale_extraction"
        return out
    out.links = {int(r["target"]): str(r["paper_id"]) for r in refs if r.get("paper_id")}
    out.paragraphs = [p for p in view.paragraphs if p.targets]
    return out


# ---- corpus -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CorpusPaper:
    paper_id: str
    title: str
    abstract: str
    title_norm: str


def load_corpus_papers(corpus_path: str | Path, ids: Iterable[str]) -> dict[str, CorpusPaper]:
    """The corpus papers among ``ids`` that have a non-empty title and abstract."""
    wanted = sorted(set(ids))
    try:
        table = pq.read_table(corpus_path, columns=["paper_id", "title", "abstract"])
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise MustciteError(f"cannot read the corpus: {exc}", path=corpus_path) from None
    table = table.filter(pa_compute.is_in(table["paper_id"], value_set=pa.array(wanted, pa.string())))
    out = {}
    for row in table.to_pylist():
        title, abstract = (row["title"] or "").strip(), (row["abstract"] or "").strip()
        if title and abstract:
            out[row["paper_id"]] = CorpusPaper(row["paper_id"], title, abstract, normalize_title(title))
    return out


# ---- paragraphs, candidates and splits ---------------------------------------------------------

def unit_hash(seed: int, *parts: str) -> float:
    """A number in [0, 1) from sha256 of the seed and ``parts``: stable across runs and machines."""
    h = hashlib.sha256("\x1f".join([str(seed), *parts]).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(int(unit_hash(seed, *parts) * 2**53))


def assign_split(paper: str, seed: int, fractions: Sequence[float]) -> str:
    """train/dev/test for a paper id, by a seeded hash (the same paper always lands alike)."""
    u = unit_hash(seed, "split", paper)
    acc = 0.0
    for name, f in zip(SPLITS, fractions):
        acc += f
        if u < acc:
            return name
    return SPLITS[-1]


@dataclass
class Item:
    """One qualifying paragraph: per marker, the gold candidate ids it cites (distinct, key order)."""
    paper: str
    paragraph: ParagraphView
    marker_ids: list[tuple[str, ...]]
    distractors: list[str]

    @property
    def id(self) -> str:
        return f"{self.paper}-p{self.paragraph.index}"

    @property
    def gold(self) -> list[str]:
        """Gold candidate ids in order of first mention."""
        return list(dict.fromkeys(i for ids in self.marker_ids for i in ids))

    def unlinked_only_sentences(self) -> int:
        """Sentences that cite only references without gold quality: Task 3 lists them with no
        citation (the seed's rule removes such references), though the author cited something."""
        cited, gold = set(), set()
        for m, ids in zip(self.paragraph.citations, self.marker_ids):
            cited.add(m.sentence)
            if ids:
                gold.add(m.sentence)
        return len(cited - gold)


@dataclass
class PaperItems:
    """A paper's qualifying paragraphs and the marker counts behind them."""
    paper: str
    items: list[Item] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)


def marker_ids(marker: CitationMarker, links: dict[int, str], usable: dict[str, CorpusPaper],
               own_title: str) -> tuple[str, ...]:
    """The distinct gold-quality corpus ids a marker cites: linked, with title and abstract, and
    not the citing paper itself (a preprint of the same work)."""
    out = []
    for t in marker.resolved:
        pid = links.get(t)
        if pid is None or pid not in usable or (own_title and usable[pid].title_norm == own_title):
            continue
        if pid not in out:
            out.append(pid)
    return tuple(out)


def paper_items(pc: PaperCitations, usable: dict[str, CorpusPaper],
                excluded_sections: Sequence[str] = EXCLUDED_SECTIONS) -> PaperItems:
    """Qualifying paragraphs of one paper with their distractors (the seed's Section 3.5)."""
    own = normalize_title(pc.title)
    out = PaperItems(pc.paper)
    per_par: list[tuple[ParagraphView, list[tuple[str, ...]]]] = []
    for p in pc.paragraphs:
        ids = [marker_ids(m, pc.links, usable, own) for m in p.citations]
        per_par.append((p, ids))
        for m, got in zip(p.citations, ids):
            linked = [pc.links.get(t) for t in m.resolved]
            out.counts["markers"] += 1
            out.counts["markers_gold"] += bool(got)
            out.counts["markers_removed"] += not got
            out.counts["self_links_dropped"] += sum(
                1 for pid in linked if pid in usable and own and usable[pid].title_norm == own)
    pool = list(dict.fromkeys(i for _, ids in per_par for m in ids for i in m))   # paper's cited gold-quality refs
    for p, ids in per_par:
        cited = {i for m in ids for i in m}
        if not cited:
            continue
        if p.section in excluded_sections:
            out.counts["paragraphs_excluded_section"] += 1
            continue
        if not any(c.isalnum() for c in replace_spans(p.text, [(m.start, m.end, "") for m in p.citations])):
            out.counts["paragraphs_only_markers"] += 1
            continue
        out.items.append(Item(pc.paper, p, ids, [i for i in pool if i not in cited]))
    return out


def choose_candidates(item: Item, seed: int, max_candidates: int | None) -> list[str]:
    """Gold plus distractors (all of them, or a seeded sample up to ``max_candidates`` in all),
    in a seeded random order."""
    distractors = list(item.distractors)
    gold = item.gold
    if max_candidates is not None and len(gold) + len(distractors) > max_candidates:
        k = max(0, max_candidates - len(gold))
        distractors = _rng(seed, "distractors", item.id).sample(distractors, k)
    cands = gold + distractors
    _rng(seed, "order", item.id).shuffle(cands)
    return cands


# ---- rendering (the seed's Section 2 shapes) ----------------------------------------------------

def replace_spans(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, replacement)`` applied (spans sorted, not overlapping).

    A removed marker (empty replacement) takes the white space before it along when what follows
    is white space, closing punctuation or the end ("comparing with [3]." -> "comparing with."),
    and a pair of brackets it leaves empty ("method ([3])") goes too.
    """
    out: list[str] = []
    pos = 0
    for start, end, rep in sorted(edits):
        if start < pos:
            raise ValueError(f"overlapping spans at {start}")
        out.append(text[pos:start])
        pos = end
        if rep:
            out.append(rep)
            continue
        head = "".join(out)
        nxt = text[pos:pos + 1]
        if head.endswith(("(", "[")) and nxt == {"(": ")", "[": "]"}[head[-1]]:
            head, pos = head[:-1], pos + 1           # "([3])" -> ""
            nxt = text[pos:pos + 1]
        if not nxt or nxt.isspace() or nxt in _CLOSE_PUNCT:
            head = head.rstrip()
        out = [head]
    out.append(text[pos:])
    return re.sub(r"[ \t]{2,}", " ", "".join(out)).strip()


def make_candidates(ids: list[str], corpus: dict[str, CorpusPaper]) -> tuple[Candidate, ...]:
    """Candidates with the corpus title and abstract."""
    return tuple(Candidate(i, corpus[i].title, corpus[i].abstract) for i in ids)


def task1_example(item: Item, cands: tuple[Candidate, ...]) -> Example:
    """Citation discovery: the paragraph without citation markers, candidates, gold id list."""
    p = item.paragraph
    text = replace_spans(p.text, [(m.start, m.end, "") for m in p.citations])
    return Example(item.id, 1, text, cands, tuple(item.gold))


def task2_example(item: Item, cands: tuple[Candidate, ...]) -> Example:
    """Masked citation prediction: one ``[MASKn]`` per gold citation of each marker, in text order;
    markers without gold are removed. Gold maps every mask to one candidate id."""
    p = item.paragraph
    edits, gold = [], {}
    for m, ids in zip(p.citations, item.marker_ids):
        masks = []
        for i in ids:
            slot = f"[MASK{len(gold) + 1}]"
            gold[slot] = i
            masks.append(slot)
        edits.append((m.start, m.end, " ".join(masks)))
    return Example(item.id, 2, replace_spans(p.text, edits), cands, gold)


def task3_example(item: Item, cands: tuple[Candidate, ...]) -> Example:
    """Citation sentence prediction: the sentences without markers, each with its gold ids
    (empty for a sentence without gold). A sentence that was nothing but a marker is merged
    into the one before it (or after it, when it is the first)."""
    p = item.paragraph
    sents: list[str] = []
    golds: list[list[str]] = []
    pending: list[str] = []
    for si, s in enumerate(p.sentences):
        ms = [(m, ids) for m, ids in zip(p.citations, item.marker_ids) if m.sentence == si]
        text = replace_spans(s.text, [(m.start - s.start, m.end - s.start, "") for m, _ in ms])
        ids = list(dict.fromkeys(i for _, got in ms for i in got))
        if not any(c.isalnum() for c in text):
            if golds:
                golds[-1].extend(i for i in ids if i not in golds[-1])
            else:
                pending.extend(ids)
            continue
        golds.append(list(dict.fromkeys(pending + ids)))
        pending = []
        sents.append(text)
    return Example(item.id, 3, tuple(sents), cands, tuple(tuple(g) for g in golds))


RENDERERS = {1: task1_example, 2: task2_example, 3: task3_example}


# ---- statistics ---------------------------------------------------------------------------------

def _summary(xs: list[int]) -> dict[str, float]:
    if not xs:
        return {"mean": 0.0, "median": 0.0, "min": 0, "max": 0}
    return {"mean": round(statistics.fmean(xs), 2), "median": float(statistics.median(xs)),
            "min": min(xs), "max": max(xs)}


@dataclass
class SplitStats:
    """Section 3.6-style figures of one split, gathered from the examples as they are written."""
    papers: set[str] = field(default_factory=set)
    sentences: list[int] = field(default_factory=list)
    gold: list[int] = field(default_factory=list)
    candidates: list[int] = field(default_factory=list)
    masks: list[int] = field(default_factory=list)
    sentences_with_citation: int = 0
    unlinked_only: int = 0

    def add(self, item: Item, t1: Example, t2: Example, t3: Example) -> None:
        self.papers.add(item.paper)
        self.sentences.append(len(t3.paragraph))
        self.gold.append(len(t1.gold))
        self.candidates.append(len(t1.candidates))
        self.masks.append(len(t2.gold))
        self.sentences_with_citation += sum(1 for g in t3.gold if g)
        self.unlinked_only += item.unlinked_only_sentences()

    def to_dict(self) -> dict[str, Any]:
        n_sent = sum(self.sentences)
        return {
            "papers": len(self.papers),
            "paragraphs": len(self.gold),
            "sentences_per_paragraph": _summary(self.sentences),
            "gold_per_paragraph": _summary(self.gold),
            "candidates_per_paragraph": _summary(self.candidates),
            "distractors_per_paragraph": _summary([c - g for c, g in zip(self.candidates, self.gold)]),
            "masks_per_paragraph": _summary(self.masks),
            "masks": sum(self.masks),
            "sentences": n_sent,
            "sentences_with_citation": self.sentences_with_citation,
            "sentences_without_citation": n_sent - self.sentences_with_citation,
            # of those without: sentences whose every citation was removed (reference not linked)
            "sentences_without_citation_unlinked_only": self.unlinked_only,
        }


# ---- the build ----------------------------------------------------------------------------------

RULES = [
    {"rule": "Gold citations of a paragraph are the references its in-text markers resolve to that "
             "are linked to a corpus paper with a non-empty title and abstract (the citing paper's "
             "own title excluded).",
     "seed": "Each paragraph is annotated with its corresponding ground-truth citations based on citation "
             "spans that explicitly reference cited works within the paragraph. (3.5); Candidate "
             "References ... each with title and abstract (1, 2); Reference links that must be present in "
             "the Curated Reference Set. (3.4)"},
    {"rule": "Markers of references that are not linked (or whose corpus paper lacks an abstract) are "
             "removed from the text and are no gold; the paragraph is kept when it has at least one "
             "gold citation. Task 1 and Task 3 text has every marker removed; Task 2 replaces each gold "
             "citation of a marker by its own [MASKn] and removes the rest.",
     "seed": "Preprocessing steps are applied to clean the text, filter incomplete references, and align "
             "citations with their corresponding textual contexts. (3.2); Paragraph: A text passage from "
             "a scientific document that doesn't contain citations. (2.3); A paragraph where one or more "
             "citation slots have been masked (replaced by a placeholder such as [MASK1], [MASK2], "
             "etc.). (2.4); A multi-sentence paragraph without any explicit citation markers. (2.5)"},
    {"rule": "Distractors: every other gold-quality reference of the same paper that is cited in another "
             "paragraph and not in this one (no cap unless max_candidates is set); candidates = gold + "
             "distractors in a seeded random order.",
     "seed": "distractor citations ... are drawn from other citations made by the same paper but located "
             "in different paragraphs. (3.5); Distractor citations are sourced from other references "
             "within the same paper but outside the target paragraph (3.6.2)"},
    {"rule": "Papers are split train/dev/test by a seeded sha256 hash of the paper id, so no paper is in "
             "two splits.",
     "seed": "we prevent models from leveraging additional paragraphs of the same paper (3.6.2)"},
    {"rule": "The test split keeps at most one paragraph per paper (a seeded choice).",
     "seed": "The test set consists of 1,000 paragraphs, each selected from a distinct scientific paper. "
             "This design ensures that no paper contributes more than one paragraph to the test set. (3.6.2)"},
    {"rule": "Papers with a failed OCR page in or next to the reference list are train-only (their "
             "reference list, hence distractors and gold, may be incomplete).",
     "seed": "filter incomplete references (3.2)"},
    {"rule": "Papers whose extraction is flagged with a failure mode under which keys may resolve to "
             "the wrong entries are left out; so are papers whose reference file no longer matches the "
             "full text (stale extraction).",
     "seed": "Preprocessing steps ensure that the extracted text and references are correctly aligned "
             "(3.3)"},
    {"rule": "Task paragraphs come from the body (appendix and back matter included, the paper's own "
             "abstract and checklist excluded); every cited paragraph counts as 'another paragraph' for "
             "distractors.",
     "seed": "Body Text: The main content of the paper, from which we extract citation contexts for "
             "different subtasks. (3.3)"},
]


def default_inputs(data_dir: str | Path | None = None, work_dir: str | Path | None = None
                   ) -> tuple[list[Path], Path, Path]:
    """The four NeurIPS full-text folders, ``<work>/extract`` and ``<work>/corpus/papers.parquet``."""
    data = find_data_dir(data_dir)
    work = Workspace.resolve(work_dir).root
    dirs = [data / "neurips" / f for f in FULLTEXT_FOLDERS if (data / "neurips" / f).is_dir()]
    return dirs, work / "extract", work / "corpus" / "papers.parquet"


def plan_jobs(fulltext_dirs: Sequence[str | Path], extract_dir: str | Path) -> tuple[list[PaperJob], int]:
    """One job per Markdown full text (first folder wins for a repeated paper id); also the
    number of repeats skipped."""
    jobs: dict[str, PaperJob] = {}
    repeats = 0
    ex = Path(extract_dir)
    for f in discover([Path(d) for d in fulltext_dirs]):
        if kind_of(f) != "markdown":
            continue
        stem = stem_of(f)
        if stem in jobs:
            repeats += 1
            continue
        jobs[stem] = PaperJob(stem, str(f), str(ex / f"{stem}.json"), str(ex / f"{stem}{META_SUFFIX}"))
    return [jobs[k] for k in sorted(jobs)], repeats


def build_task_data(fulltext_dirs: Sequence[str | Path], extract_dir: str | Path, corpus_path: str | Path,
                    out_dir: str | Path, *, seed: int = 0,
                    fractions: Sequence[float] = (0.8, 0.1, 0.1),
                    max_candidates: int | None = None,
                    single_paragraph_splits: Sequence[str] = ("test",),
                    unreliable_modes: Sequence[str] = UNRELIABLE_MODES,
                    excluded_sections: Sequence[str] = EXCLUDED_SECTIONS, compress: bool = False,
                    workers: int | None = 2, progress: bool = True) -> dict[str, Any]:
    """Build the three SCIDOCA tasks per split under ``out_dir``; returns the manifest (also written).

    ``fractions``: train/dev/test shares of papers (before incomplete-bibliography papers move to
    train). ``max_candidates``: cap on candidates per paragraph (gold always kept), None = all
    distractors. ``single_paragraph_splits``: splits that keep one seeded paragraph per paper.
    ``compress``: write ``task{n}.jsonl.gz`` instead of ``task{n}.jsonl``.
    ``workers``: process pool size for parsing (1 = in process).
    """
    t0 = time.perf_counter()
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise UsageError(f"fractions must be three non-negative shares summing to 1, got {tuple(fractions)}")
    if max_candidates is not None and max_candidates < 1:
        raise UsageError(f"max_candidates must be at least 1, got {max_candidates}")
    if not Path(corpus_path).is_file():
        raise UsageError(f"no corpus file {corpus_path} (run `mustcite corpus build`)")
    if not Path(extract_dir).is_dir():
        raise UsageError(f"no extraction folder {extract_dir} (run `mustcite extract` and `mustcite link`)")
    jobs, repeats = plan_jobs(fulltext_dirs, extract_dir)
    if not jobs:
        raise UsageError(f"no Markdown full texts under {', '.join(map(str, fulltext_dirs))}")

    papers = list(pmap(collect_paper, jobs, workers=workers, desc="scidoca", progress=progress,
                       chunksize=8))
    corpus = load_corpus_papers(corpus_path, (pid for pc in papers for pid in pc.links.values()))

    counts: Counter = Counter(papers_total=len(jobs), repeated_paper_ids=repeats)
    per_split_papers: dict[str, list[PaperItems]] = {s: [] for s in SPLITS}
    for pc in papers:
        if pc.skip:
            counts[f"papers_skipped_{pc.skip}"] += 1
            continue
        bad = [m for m in pc.failure_modes if m in unreliable_modes]
        if bad:
            counts["papers_skipped_unreliable_resolution"] += 1
            continue
        pi = paper_items(pc, corpus, excluded_sections)
        counts.update(pi.counts)
        if not pi.items:
            counts["papers_without_gold_paragraph"] += 1
            continue
        split = assign_split(pc.paper, seed, fractions)
        if pc.incomplete_bibliography and split != "train":
            counts["papers_moved_to_train_incomplete_bibliography"] += 1
            split = "train"
        counts["papers_train_only_incomplete_bibliography"] += pc.incomplete_bibliography
        per_split_papers[split].append(pi)

    out = Path(out_dir)
    stats: dict[str, Any] = {}
    files: dict[str, Any] = {}
    for split in SPLITS:
        items: list[Item] = []
        for pi in per_split_papers[split]:
            if split in single_paragraph_splits:
                counts[f"{split}_paragraphs_dropped_one_per_paper"] += len(pi.items) - 1
                items.append(_rng(seed, "pick", split, pi.paper).choice(pi.items))
            else:
                items.extend(pi.items)
        suffix = ".jsonl.gz" if compress else ".jsonl"
        # a line at a time: the train split is gigabytes (every line repeats its candidates)
        writers = {t: JsonlWriter(out / split / f"task{t}{suffix}") for t in TASKS}
        acc = SplitStats()
        try:
            for item in items:
                cands = make_candidates(choose_candidates(item, seed, max_candidates), corpus)
                ex = {t: RENDERERS[t](item, cands) for t in TASKS}
                for t in TASKS:
                    writers[t].write(example_to_json(ex[t]))   # checks gold against candidates
                acc.add(item, ex[1], ex[2], ex[3])
        except BaseException:
            for w in writers.values():
                w.abort()
            raise
        for t in TASKS:
            files[f"{split}/task{t}{suffix}"] = writers[t].close()
            other = ".jsonl" if compress else ".jsonl.gz"
            (out / split / f"task{t}{other}").unlink(missing_ok=True)   # a stale file of the other form
        stats[split] = acc.to_dict()

    manifest = {
        "name": "scidoca-neurips",
        "build_version": BUILD_VERSION,
        "seed": seed,
        "fractions": dict(zip(SPLITS, fractions)),
        "max_candidates": max_candidates,
        "compress": compress,
        "single_paragraph_splits": list(single_paragraph_splits),
        "unreliable_modes": list(unreliable_modes),
        "excluded_sections": list(excluded_sections),
        "inputs": {
            "fulltext_dirs": [{"path": str(d), "papers": sum(1 for j in jobs if Path(j.fulltext).parent == Path(d))}
                              for d in fulltext_dirs],
            "extract_dir": str(extract_dir),
            "corpus": {"path": str(corpus_path), "sha256": sha256_file(corpus_path)},
        },
        "format": {
            "shape": "seed shape of mustcite.scidoca.formats (read_examples / example_to_json): the "
                     "seed's Section 2 input with the gold in the output field",
            "task1": {"paragraph": "text without citation markers", "candidate_references": "[{id, title, abstract}]",
                      "predicted_citations": "[gold candidate id]"},
            "task2": {"paragraph": "text with [MASK1]..[MASKn]", "candidate_references": "[{id, title, abstract}]",
                      "predicted_citations": "{\"[MASKk]\": gold candidate id}"},
            "task3": {"paragraph": "[sentence without citation markers]",
                      "candidate_references": "[{id, title, abstract}]",
                      "sentence_citations": "[{sentence, predicted_citation: [gold candidate id], [] when none}]"},
            "id": "<paper id>-p<paragraph index>; candidate ids are corpus paper_ids",
        },
        "rules": RULES,
        "counts": dict(sorted(counts.items())),
        "statistics": stats,
        "files": files,
        "elapsed_s": round(time.perf_counter() - t0, 1),
    }
    atomic_write_json(out / "manifest.json", manifest)
    return manifest

