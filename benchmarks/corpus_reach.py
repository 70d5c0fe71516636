"""The corpus before and after a change of sources: papers by venue, year band and track, abstracts,
side records, version links and disagreements between sources.

Reads two built work folders (``<work>/corpus/``) and writes one JSON with both, side by side:

    python benchmarks/corpus_reach.py --before OLD_WORK --after NEW_WORK [--out PATH]

Writes ``benchmarks/results/corpus_reach.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb

OUT = Path(__file__).parent / "results" / "corpus_reach.json"
BANDS = ("CASE WHEN year < 2013 THEN 'before 2013' WHEN year <= 2018 THEN '2013-2018' WHEN year <= 2022 "
         "THEN '2019-2022' WHEN year <= 2024 THEN '2023-2024' ELSE '2025+' END")
NO_ABSTRACT = "coalesce(trim(abstract), '') = ''"


def _q(con, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def summary(work: Path) -> dict:
    corpus = work / "corpus"
    papers = f"read_parquet('{corpus / 'papers.parquet'}')"
    con = duckdb.connect()
    out: dict = {"work": str(work)}
    out["papers"], out["without_abstract"] = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {NO_ABSTRACT}) FROM {papers}").fetchall()[0]
    n, miss = con.execute(f"SELECT count(*), count(*) FILTER (WHERE {NO_ABSTRACT}) FROM {papers} "
                          "WHERE year BETWEEN 2013 AND 2025").fetchall()[0]
    out["main_2013_2025"] = {"papers": n, "without_abstract": miss, "share_without": round(miss / n, 4)}
    out["by_venue"] = _q(con, f"SELECT venue, count(*) AS papers, min(year) AS first, max(year) AS last, "
                              f"count(*) FILTER (WHERE {NO_ABSTRACT}) AS without_abstract FROM {papers} "
                              "GROUP BY venue ORDER BY papers DESC")
    out["by_year_band"] = _q(con, f"SELECT {BANDS} AS band, count(*) AS papers, "
                                  f"count(*) FILTER (WHERE {NO_ABSTRACT}) AS without_abstract FROM {papers} "
                                  "GROUP BY band ORDER BY band")
    side = corpus / "side_tracks.parquet"
    if side.is_file():
        out["side_records"] = con.execute(f"SELECT count(*) FROM read_parquet('{side}')").fetchall()[0][0]
        out["side_by_track"] = _q(con, "SELECT coalesce(nullif(track, ''), 'ancillary') AS track, "
                                       "count(*) AS records, count(DISTINCT venue) AS venues "
                                       f"FROM read_parquet('{side}') "
                                       "GROUP BY 1 ORDER BY records DESC")
        out["side_venues_outside_15"] = _q(
            con, "SELECT venue, count(*) AS records, min(year) AS first, max(year) AS last "
                 f"FROM read_parquet('{side}') "
                 "WHERE venue NOT IN ('NeurIPS','ICML','ICLR','AAAI','IJCAI','CVPR','ICCV','ECCV','ACL','EMNLP',"
                 "'NAACL','COLT','UAI','AISTATS','JMLR') GROUP BY venue ORDER BY records DESC")
    versions = corpus / "versions.parquet"
    if versions.is_file():
        out["version_links"] = _q(con, "SELECT least(a.kind, b.kind) || '+' || greatest(a.kind, b.kind) AS kinds, "
                                       "a.evidence, count(*) AS links "
                                       f"FROM read_parquet('{versions}') a JOIN read_parquet('{versions}') b "
                                       "ON a.paper_id = b.version_id AND a.version_id = b.paper_id "
                                       "WHERE a.paper_id < a.version_id GROUP BY ALL ORDER BY links DESC")
    dis = corpus / "disagreements.parquet"
    if dis.is_file():
        out["disagreements"] = _q(con, f"SELECT field, kind, count(*) AS papers FROM read_parquet('{dis}') "
                                       "GROUP BY ALL ORDER BY papers DESC")
    build = corpus / "build.json"
    if build.is_file():
        b = json.loads(build.read_text())
        out["build_seconds"] = b.get("seconds")
        out["records_read"] = b.get("records_read")
        out["workshop_refiled"] = b.get("workshop_refiled")
        out["abstract_sources"] = b.get("abstract_sources")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    res = {"before": summary(a.before), "after": summary(a.after)}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=1, default=str) + "\n")
    for k in ("before", "after"):
        r = res[k]
        print(f"{k}: {r['papers']:,} papers, {r['without_abstract']:,} without abstract; 2013-2025: "
              f"{r['main_2013_2025']['share_without']:.1%} without; side records {r.get('side_records', 0):,}")
    print(f"-> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
