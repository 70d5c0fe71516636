"""The small real slice of the recommender tests (used by test_recommend*, test_api*, test_bad_inputs ...).

Pool: the NeurIPS 2019-2022 papers with abstracts (``proceedings/umgupta-paperquest/nips2019`` and
``proceedings/rajatmodi62-ai-conf-abstract-generator/nips2020..2022``). Labelled papers: the first
NeurIPS 2023 full texts (sorted by file name), extracted with ``extract_markdown`` and linked to the
pool with the corpus linker. Everything is sorted, so
the slice is the same on every run. Built on first use (never at import), once per session.

Every test that calls these reads the shared data: it is marked ``data``.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

from helpers import DATA

FULLTEXT_2023 = DATA / "neurips" / "fulltext_2023"
N_LABELLED = 90
POOL_FILES = ("umgupta-paperquest/nips2019.jsonl.gz",
              *(f"rajatmodi62-ai-conf-abstract-generator/nips{y}.jsonl.gz" for y in (2020, 2021, 2022)))


def have_data() -> bool:
    return all((DATA / "proceedings" / f).exists() for f in POOL_FILES) and FULLTEXT_2023.is_dir()


@lru_cache(maxsize=1)
def pool() -> list[dict]:
    from mustcite.corpus.importers import import_file
    from mustcite.corpus.records import make_paper_id

    rows, seen = [], set()
    for path in POOL_FILES:
        path = DATA / "proceedings" / path
        for r in import_file(path, DATA):
            if r.skip or not r.title:
                continue
            pid = make_paper_id(r.title, "NeurIPS", r.year, r.source_id)
            if pid in seen:
                continue
            seen.add(pid)
            rows.append({"paper_id": pid, "title": r.title, "abstract": r.abstract, "authors": r.authors,
                         "venue": "NeurIPS", "year": r.year, "url": r.url, "pdf": r.pdf,
                         "list": f"{path.parent.name}:{r.source_id}"})
    return rows


def write_corpus(work: Path) -> Path:
    """The pool as a work folder's corpus (``<work>/corpus/papers.parquet``), for the commands that
    read the corpus (check-refs, the language server); returns ``work``."""
    from mustcite.corpus.importers import import_file
    from mustcite.corpus.records import Paper, normalize_title
    from mustcite.corpus.store import write_papers

    # each paper's lists: its own, and the paper lists' file of its year when that holds it too (check-refs
    # calls a venue-year complete only where two lists agree on it)
    second = {}
    for year in sorted({r["year"] for r in pool()}):
        path = DATA / "proceedings" / "paperlists" / f"nips{year}.jsonl.gz"
        if path.is_file():
            second.update({(year, normalize_title(x.title)): f"paperlists:{x.source_id}"
                           for x in import_file(path, DATA) if not x.skip and x.title})
    write_papers([Paper(r["paper_id"], r["title"], "NeurIPS", r["year"], abstract=r["abstract"] or "",
                        authors=list(r["authors"] or []), source="test", url=r["url"] or "",
                        source_ids=[r["list"], *([o] if (o := second.get((r["year"], normalize_title(r["title"]))))
                                                 else [])])
                  for r in pool()],
                 work / "corpus" / "papers.parquet")
    return work


@lru_cache(maxsize=1)
def manifest() -> dict[str, dict]:
    out = {}
    for line in (FULLTEXT_2023 / "manifest.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            obj = json.loads(line)
            out[obj["id"]] = obj
    return out


def fulltext(stem: str) -> str:
    with gzip.open(FULLTEXT_2023 / f"{stem}.md.gz", "rt", encoding="utf-8") as fh:
        return fh.read()


def write_reference_dir(folder: Path, n: int = N_LABELLED) -> Path:
    """Extract + link the first ``n`` NeurIPS 2023 full texts into ``folder`` (``<stem>.json`` + meta)."""
    from mustcite.extract.link import TitleIndex, link_references
    from mustcite.extract.markdown import extract_markdown

    folder.mkdir(parents=True, exist_ok=True)
    p = pool()
    index = TitleIndex.build([r["paper_id"] for r in p], [r["title"] for r in p], [r["year"] for r in p])
    stems = sorted(f.name[:-6] for f in FULLTEXT_2023.glob("*.md.gz"))[:n]
    for stem in stems:
        ex = extract_markdown(fulltext(stem), source_path=stem)
        refs = link_references(ex.to_reference_list(), index, citing_year=2023)
        m = manifest().get(stem, {})
        (folder / f"{stem}.json").write_text(json.dumps(refs), encoding="utf-8")
        (folder / f"{stem}.meta.json").write_text(json.dumps(
            {"title": m.get("title") or ex.title, "abstract": ex.abstract, "year": 2023}), encoding="utf-8")
    return folder


N_TRAIN = 55


@lru_cache(maxsize=1)
def slice_dir() -> Path:
    """A session folder holding ``refs/`` (extracted + linked reference files) and ``model/``."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="mustcite-rec-slice-"))
    write_reference_dir(root / "refs")
    return root


@lru_cache(maxsize=1)
def labelled():
    from mustcite.labels.papers import load_reference_dir

    return load_reference_dir(slice_dir() / "refs", {r["paper_id"] for r in pool()})


def split():
    """(train, held-out) labelled papers: the first N_TRAIN by id train, the rest are held out."""
    lab = labelled()
    return lab[:N_TRAIN], lab[N_TRAIN:]


@lru_cache(maxsize=1)
def trained():
    """The recommender trained on the train part of the slice (BM25 only, seed 0), saved to ``model/``."""
    import copy

    from mustcite.recommend import Recommender, RecommenderConfig

    train, _ = split()
    rec = Recommender.build(pool(), copy.deepcopy(train), RecommenderConfig(dense=False, seed=0))
    rec.fit()
    rec.save(slice_dir() / "model")
    return rec


def model_dir() -> Path:
    trained()
    return slice_dir() / "model"


def held_out_queries() -> list[dict]:
    return [{"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year} for p in split()[1]]


def recall_at(results: dict, papers, k: int) -> float:
    vals = [len({c.paper_id for c in p.cites} & {r.paper_id for r in results[p.id][:k]}) / len(p.cites)
            for p in papers]
    return sum(vals) / len(vals)


def dense_recommender(cache_dir: Path):
    """A BM25 + MiniLM recommender over 400 pool papers (every paper the first 40 labelled papers
    cite, then others), built on 40 labelled papers (not fitted)."""
    import copy

    from mustcite.recommend import Recommender, RecommenderConfig

    lab = copy.deepcopy(labelled())
    cited = {c.paper_id for p in lab for c in p.cites}
    pool_ = [p for p in pool() if p["paper_id"] in cited]
    pool_ += [p for p in pool() if p["paper_id"] not in cited][: 400 - len(pool_)]
    return Recommender.build(pool_, lab[:40], RecommenderConfig(dense=True, first_k=30, vote_k=30),
                             cache_dir=cache_dir)
