"""The benchmark builder's small real slice (the ``built`` fixture of conftest.py builds it once).

Corpus: the real NeurIPS 2017-2024, ICML 2019-2023, ICLR 2020-2023, CVPR 2019 and ACL 2022 paper
lists. Citing papers: 24 real NeurIPS 2024 full texts and 4 NeurIPS 2023 ones; their reference
files hold the real reference lines that name a corpus title, linked to that paper, with labels
assigned by a fixed hand rule (position in the list), since the labelled extraction output of the
other stages is not part of these tests. Reads the shared data: tests using it are marked ``data``.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from helpers import DATA

LISTS = DATA / "proceedings" / "paperlists"
FT24 = DATA / "neurips" / "fulltext_2024"
FT23 = DATA / "neurips" / "fulltext_2023"
VENUE = {"nips": "NeurIPS", "icml": "ICML", "iclr": "ICLR", "cvpr": "CVPR", "acl": "ACL"}
FILES = ([f"nips{y}" for y in range(2017, 2025)] + [f"icml{y}" for y in range(2019, 2024)]
         + [f"iclr{y}" for y in range(2020, 2024)] + ["cvpr2019", "acl2022"])


def _corpus_rows() -> list[dict]:
    from mustcite.corpus.records import make_paper_id

    rows = []
    for f in FILES:
        venue, year = VENUE[re.match(r"[a-z]+", f).group()], int(f[-4:])
        with gzip.open(LISTS / f"{f}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                rows.append({"paper_id": make_paper_id(r["title"], venue, year, r.get("id") or ""),
                             "title": r["title"],
                             "abstract": r.get("abstract") or "", "authors": [], "venue": venue, "year": year,
                             "source": "paperlists", "source_id": r.get("id") or "", "url": "", "pdf": "",
                             "track": "main",
                             "source_ids": [f"paperlists:{r.get('id') or ''}"]})
    return rows


def _abstract(text: str) -> str:
    m = re.search(r"#+\s*Abstract\s*\n(.*?)\n#", text, re.S)
    return " ".join(m.group(1).split()) if m else ""


def _reference_file(text: str, index: dict[str, list[dict]]) -> list[dict]:
    """The real reference lines of a full text; those naming a corpus title are linked to it."""
    from mustcite.corpus.records import normalize_title

    refs = []
    lines = [ln for ln in text[text.rfind("## References"):].split("\n") if ln.startswith("*")]
    for line in lines:
        words = normalize_title(line).split()
        hit = None
        for j in range(len(words) - 2):
            for cand in index.get(" ".join(words[j:j + 3]), []):
                n = cand["norm"].split()
                if words[j:j + len(n)] == n and (hit is None or len(n) > len(hit["norm"].split())):
                    hit = cand
        years = [int(y) for y in re.findall(r"\b(19\d\d|20[0-2]\d)\b", line)]
        ref = {"target": len(refs) + 1, "title": hit["title"] if hit else line[:80], "year": max(years or [2000]),
               "cite": str(len(refs) + 1), "contexts": [], "raw": line, "mentions": 1}
        if hit:
            i = sum(1 for r in refs if r.get("paper_id"))
            ref.update(paper_id=hit["paper_id"], link_score=1.0)
            rule = i % 5            # the hand rule: 0 baseline, 1 core (4), 2 three mentions, else none
            ref.update(type1=int(rule == 0), type2={0: 5, 1: 4, 2: 2}.get(rule, 2),
                       mentions=3 if rule == 2 else 1, type3=int(rule == 2), judge="hand-rule-v1")
            ref["must_cite"] = bool(ref["type1"] or ref["type2"] >= 4 or ref["type3"])
        refs.append(ref)
    return refs


def build_slice(root: Path) -> dict:
    """Write the corpus and reference files into ``root`` and build the v1 benchmark in ``root/out``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mustcite.benchmark.build import build_benchmark
    from mustcite.benchmark.recipes import get_recipe
    from mustcite.corpus.records import normalize_title

    rows = _corpus_rows()
    pq.write_table(pa.Table.from_pylist(rows), root / "papers.parquet")
    index: dict[str, list[dict]] = {}
    for r in rows:
        norm = normalize_title(r["title"])
        if len(norm.split()) >= 4 and r["year"] <= 2023:
            index.setdefault(" ".join(norm.split()[:3]), []).append({**r, "norm": norm})
    manifest24 = {}
    for line in (FT24 / "manifest.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            m = json.loads(line)
            manifest24[m["id"]] = m
    refs_dir = root / "refs"
    refs_dir.mkdir()
    stems = sorted(manifest24)[:24]
    for ft, stem, year in [(FT24, s, 2024) for s in stems] + [(FT23, s, 2023) for s in
                                                                sorted(p.name[:-6] for p in FT23.glob("*.md.gz"))[:4]]:
        text = gzip.open(ft / f"{stem}.md.gz", "rt", encoding="utf-8").read()
        refs = _reference_file(text, index)
        if stem == stems[5]:                    # one query whose linked references are all background
            for r in refs:
                r.update(type1=0, type2=1, type3=0, mentions=1, must_cite=False) if r.get("paper_id") else None
        (refs_dir / f"{stem}.json").write_text(json.dumps(refs))
        title = manifest24[stem]["title"] if year == 2024 else text.split("\n", 1)[0].lstrip("# ").strip()
        (refs_dir / f"{stem}.meta.json").write_text(json.dumps(
            {"paper": stem, "title": title, "abstract": _abstract(text), "year": year, "venue": f"NeurIPS {year}"}))
    out = root / "out"
    manifest = build_benchmark(get_recipe("neurips-2024-v1"), corpus_path=root / "papers.parquet",
                               ref_dirs=[refs_dir], out_dir=out)
    return {"root": root, "out": out, "manifest": manifest, "rows": rows, "stems": stems, "refs": refs_dir}
