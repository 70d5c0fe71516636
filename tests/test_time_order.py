"""Time order at serving (and training) time: a query of year Y only sees papers of Y or earlier.

The slice's pool is NeurIPS 2019-2022 and its labelled papers are NeurIPS 2023 papers; here the
labelled papers are given the years 2020, 2021, 2022 and 2023 in turn, so a 2021 query has
eligible labelled neighbours, ineligible ones (2022, 2023), and neighbours that cite 2022 pool
papers (they really are 2023 papers): every source of a later paper is exercised. Each test first
checks that the later papers would be there without the rule, so it can fail.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
import shutil

import numpy as np
import pytest
from helpers import recommender as S

from mustcite.cli.main import main
from mustcite.errors import MustciteError
from mustcite.recommend import Recommender, RecommenderConfig
from mustcite.recommend.features import FEATURES
from mustcite.recommend.neighbours import UNKNOWN_YEAR, NeighbourIndex, year_array
from mustcite.retrieval.base import Doc

pytestmark = pytest.mark.data          # every test asks the slice (helpers.recommender)

YEAR = 2021
TODAY = datetime.date.today().year
GAP = FEATURES.index("year_gap")


@pytest.fixture(scope="module")
def rec(data_dir):
    """An untrained BM25 recommender over the slice (fused rank + votes rank it): enough to see
    which papers are compared, recommended and used, and quick to build."""
    lab = copy.deepcopy(S.split()[0])
    for i, p in enumerate(lab):
        p.year = 2020 + i % 4
    return Recommender.build(S.pool(), lab, RecommenderConfig(dense=False, seed=0))


@pytest.fixture(scope="module")
def work(rec, tmp_path_factory):
    w = tmp_path_factory.mktemp("work-time")
    rec.save(w / "models" / "recommender")
    return w


def _q(i=0):
    q = dict(S.held_out_queries()[i])
    q.pop("year")
    return q


def _lab_year(rec, lid):
    return rec.nindex.by_id[lid].year


def _used(results):
    """Years of every paper recommended and every labelled neighbour shown as evidence."""
    papers = [r.year for rs in results.values() for r in rs]
    labelled = [n["id"] for rs in results.values() for r in rs for n in r.evidence["neighbours"]]
    return papers, labelled


# ---------------------------------------------------------------------------------------- library
def test_year_2021_never_recommends_or_uses_later_papers(rec):
    qs = [_q(i) for i in range(4)]
    free = rec.recommend_many([q | {"year": None} for q in qs], top=60)
    papers, labelled = _used(free)
    # without the rule (today's year) later papers and later neighbours are there to be found
    assert max(papers) == 2022
    assert any(_lab_year(rec, lid) > YEAR for lid in labelled)

    got = rec.recommend_many([q | {"year": YEAR} for q in qs], top=60)
    papers, labelled = _used(got)
    assert all(len(rs) == 60 and rs.year == YEAR for rs in got.values())
    assert papers and max(papers) <= YEAR
    assert labelled, "some results still come with (eligible) labelled neighbours"
    assert all(_lab_year(rec, lid) <= YEAR for lid in labelled)
    assert all(r.evidence["labelled_citing"] <= sum(1 for p in rec.labelled if p.year <= YEAR)
               for rs in got.values() for r in rs)
    one = rec.recommend(qs[0]["title"], qs[0]["abstract"], top=30, year=YEAR)
    assert one.year == YEAR and max(r.year for r in one) <= YEAR


def test_every_candidate_source_respects_the_year(rec):
    """BM25 hits, votes, co-cited papers: no candidate (ranked or not) is newer than the query."""
    docs = [Doc(q["id"], q["title"], q["abstract"]) for q in (_q(i) for i in range(3))]
    free, neigh_free, _ = rec.candidates.generate(docs)
    assert any(rec.pool[c.row]["year"] > YEAR for cs in free for c in cs if "neighbours" in c.sources)
    assert any(rec.pool[c.row]["year"] > YEAR for cs in free for c in cs if "cocitation" in c.sources)
    assert any(_lab_year(rec, lid) > YEAR for ns in neigh_free for lid, _ in ns)
    cands, neigh, _ = rec.candidates.generate(docs, years=[YEAR] * 3)
    assert all(rec.pool[c.row]["year"] <= YEAR for cs in cands for c in cs)
    assert {s for cs in cands for c in cs for s in c.sources} >= {"bm25", "neighbours", "contexts"}
    # without the context matches (which already hold every co-cited paper of 2021 or earlier on
    # this slice), co-citation adds candidates of its own, all of them old enough
    gen = copy.copy(rec.candidates)
    gen.config = dataclasses.replace(rec.config, context_k=0)
    cocited = [c for cs in gen.generate(docs, years=[YEAR] * 3)[0] for c in cs if "cocitation" in c.sources]
    assert cocited and all(rec.pool[c.row]["year"] <= YEAR for c in cocited)
    assert all(ns and all(_lab_year(rec, lid) <= YEAR for lid, _ in ns) for ns in neigh)
    assert all(v.by and all(_lab_year(rec, lid) <= YEAR for lid, _, _ in v.by)
               for cs in cands for c in cs if "neighbours" in c.sources for v in [c.vote])


def test_first_stage_masks_scores_not_a_truncated_top_k(rec):
    """A 2019 query on a pool mostly of 2020-2022 still gets its full first_k eligible BM25 hits."""
    q = _q(0)
    doc = Doc("q", q["title"], q["abstract"])
    k = rec.config.first_k
    naive = rec.bm25.search([doc], k=k)["q"]
    assert sum(rec.pool[rec.row[pid]]["year"] <= 2019 for pid, _ in naive) < k / 2   # truncate-then-filter loses most
    hits = rec.candidates.bm25_search([doc], [2019], k)["q"]
    assert len(hits) == k and all(rec.pool[rec.row[pid]]["year"] <= 2019 for pid, _ in hits)
    # the scores of eligible papers are untouched, and the same ones rank first
    full = dict(rec.bm25.search([doc], k=len(rec.pool))["q"])
    best = sorted((pid for pid in full if rec.pool[rec.row[pid]]["year"] <= 2019), key=lambda p: -full[p])[:k]
    assert {pid for pid, _ in hits} == set(best)
    assert all(s == pytest.approx(full[pid]) for pid, s in hits)
    cands, _, _ = rec.candidates.generate([doc], years=[2019])
    assert sum(c.bm25 is not None for c in cands[0]) == k


def test_dense_first_stage_masks_cosines(rec):
    """With (stand-in) vectors, dense hits come from eligible pool papers only, first_k of them."""
    rng = np.random.default_rng(0)

    class Encoder:
        def embed(self, texts, desc=""):
            return self.encode(texts)

        def encode(self, texts):
            return np.stack([np.random.default_rng(len(t)).normal(size=16) for t in texts]).astype(np.float32)

    d = copy.copy(rec.candidates)
    d.encoder = Encoder()
    d.pool_vecs = rng.normal(size=(len(rec.pool), 16)).astype(np.float32)
    d.nindex = NeighbourIndex(rec.labelled, rng.normal(size=(len(rec.labelled), 16)).astype(np.float32))
    q = _q(1)
    doc = Doc("q", q["title"], q["abstract"])
    free, _, _ = d.generate([doc])
    assert any(rec.pool[c.row]["year"] > 2019 for c in free[0] if c.dense)
    cands, neigh, _ = d.generate([doc], years=[2019])
    dense = [c for c in cands[0] if c.dense]
    assert len(dense) == rec.config.first_k and all(rec.pool[c.row]["year"] <= 2019 for c in dense)
    assert all(_lab_year(rec, lid) <= 2019 for lid, _ in neigh[0])


def test_bm25_baseline_searches_as_of_the_query_year(rec):
    """The model card's BM25 baseline (train.evaluate_bm25) applies the same rule: a 2019 query
    never gets a later pool paper, and still gets its full top-k of eligible ones."""
    from mustcite.recommend.train import evaluate_bm25

    q = _q(0)
    doc = Doc(q["id"], q["title"], q["abstract"])
    naive = [pid for pid, _ in rec.bm25.search([doc], k=100)[q["id"]]]
    later = {pid: 1 for pid in naive if rec.pool[rec.row[pid]]["year"] > 2019}
    assert later                                                   # without the rule they are found
    assert evaluate_bm25(rec, [q], {"cited": {q["id"]: later}})["cited"]["R@100"] == 1.0   # today's year
    assert evaluate_bm25(rec, [q | {"year": 2019}], {"cited": {q["id"]: later}})["cited"]["R@100"] == 0.0
    eligible = {pid: 1 for pid, _ in rec.candidates.bm25_search([doc], [2019], 100)[q["id"]]}
    assert len(eligible) == 100
    assert evaluate_bm25(rec, [q | {"year": 2019}], {"cited": {q["id"]: eligible}})["cited"]["R@100"] == 1.0


def test_unknown_years_are_left_out(rec):
    """A pool or labelled paper of unknown year is never used for a query (every query has a year)."""
    assert list(year_array([2020, None, "2021", "n/a", True])) == [2020, UNKNOWN_YEAR, 2021, UNKNOWN_YEAR,
                                                                   UNKNOWN_YEAR]
    q = _q(0)
    doc = Doc("q", q["title"], q["abstract"])
    top = rec.bm25.search([doc], k=1)["q"][0][0]
    neigh = rec.nindex.neighbours([doc], None, 3, years=[TODAY])[0]
    u = copy.copy(rec.candidates)      # a copy has its own per-year caches
    u.pool_years = rec.pool_years.copy()
    u.pool_years[rec.row[top]] = UNKNOWN_YEAR
    u.nindex = copy.copy(rec.nindex)
    u.nindex.years = rec.nindex.years.copy()
    u.nindex.years[rec.nindex._row[neigh[0][0]]] = UNKNOWN_YEAR
    u.nindex._counts_cache = {}
    cands, got, _ = u.generate([doc])
    assert top not in {c.paper_id for c in cands[0]}
    assert neigh[0][0] not in {lid for lid, _ in got[0]} and neigh[1][0] in {lid for lid, _ in got[0]}


def test_default_year_is_today(rec):
    assert "query_year" not in RecommenderConfig.__dataclass_fields__
    q = _q(0)
    res = rec.recommend(q["title"], q["abstract"], top=5)
    assert res.year == TODAY
    assert rec.recommend_many([q], top=5)[q["id"]].year == TODAY
    # the year_gap feature uses the query's effective year (today's), not the newest data year
    parsed, cands, feats, _ = rec.score([q], exclude_self=False)
    assert parsed[0][1] == TODAY
    gaps = [TODAY - rec.pool[c.row]["year"] for c in cands[0]]
    assert np.array_equal(feats[0][:, GAP], np.asarray(gaps, dtype=float))
    _, _, feats_2021, _ = rec.score([q | {"year": YEAR}], exclude_self=False)
    assert np.nanmax(feats_2021[0][:, GAP]) <= YEAR - 2019 and np.nanmin(feats_2021[0][:, GAP]) >= 0


@pytest.mark.parametrize("year,needle", [("abc", "whole number"), (1800, "between"), (TODAY + 2, "between"),
                                         (True, "whole number"), (2020.5, "whole number")])
def test_bad_years_raise_clear_errors(rec, year, needle):
    q = _q(0)
    with pytest.raises(MustciteError, match=needle) as e:
        rec.recommend(q["title"], q["abstract"], year=year)
    assert e.value.field == "year"
    with pytest.raises(MustciteError) as e:
        rec.recommend_many([q | {"year": year}])
    assert e.value.field == "year"


def test_year_strings_and_next_year_are_accepted(rec):
    q = _q(0)
    assert rec.recommend_many([q | {"year": "2021"}], top=3)[q["id"]].year == 2021
    assert rec.recommend(q["title"], q["abstract"], top=3, year=TODAY + 1).year == TODAY + 1


# ---------------------------------------------------------------------------------------- training
def test_training_rows_equal_serving_rows(rec):
    """A labelled paper used as a training query gets exactly the feature rows it gets when served
    with exclude_self and its own year; and its year matters (later papers are not in them)."""
    chosen = [p for p in rec.labelled if p.year == YEAR][:2] + [p for p in rec.labelled if p.year == 2023][:1]
    X, _, groups = rec.training_matrix(chosen, batch=64)
    parsed, cands, feats, _ = rec.score(
        [{"id": p.id, "title": p.title, "abstract": p.abstract, "year": p.year} for p in chosen], exclude_self=True)
    for k, p in enumerate(chosen):
        assert parsed[k][1] == p.year
        np.testing.assert_array_equal(X[groups == k], feats[k])
    rows_2021 = X[np.isin(groups, [0, 1])]
    assert np.nanmin(rows_2021[:, GAP]) >= 0                       # no candidate after 2021
    p = chosen[0]
    served_today, _, _ = rec.candidates.generate([Doc(p.id, p.title, p.abstract)], exclude=[p.id])
    assert any(rec.pool[c.row]["year"] > YEAR for c in served_today[0])   # the rule removed some


def test_training_query_without_year_is_served_as_today(rec):
    p = copy.deepcopy([q for q in rec.labelled if q.year == 2022][0])
    p.year = None
    X, _, _ = rec.training_matrix([p])
    _, _, feats, _ = rec.score([{"id": p.id, "title": p.title, "abstract": p.abstract}], exclude_self=True)
    np.testing.assert_array_equal(X, feats[0])


def test_old_saved_config_with_query_year_still_loads(rec, work, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(work / "models" / "recommender", folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["config"]["query_year"] = 2025
    (folder / "config.json").write_text(json.dumps(cfg))
    loaded = Recommender.load(folder)
    q = _q(0)
    a = loaded.recommend(q["title"], q["abstract"], top=5, year=YEAR)
    assert [r.paper_id for r in a] == [r.paper_id for r in rec.recommend(q["title"], q["abstract"], top=5, year=YEAR)]


# ---------------------------------------------------------------------------------------- CLI
def run(capsys, work, *args):
    code = main(["--work", str(work), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_recommend_year(capsys, rec, work):
    q = _q(0)
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--abstract", q["abstract"],
                       "--format", "json", "--top", "40")
    obj = json.loads(out)
    assert code == 0 and obj["year"] == TODAY and max(r["year"] for r in obj["results"]) > YEAR
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--abstract", q["abstract"],
                       "--format", "json", "--top", "40", "--year", str(YEAR))
    assert code == 0
    obj = json.loads(out)
    assert obj["year"] == YEAR and len(obj["results"]) == 40
    assert max(r["year"] for r in obj["results"]) <= YEAR
    ns = [n["id"] for r in obj["results"] for n in r["evidence"]["neighbours"]]
    assert ns and all(_lab_year(rec, lid) <= YEAR for lid in ns)
    code, out, _ = run(capsys, work, "recommend", "--title", q["title"], "--top", "3", "--year", str(YEAR))
    assert code == 0 and out.startswith(f"# query (as of {YEAR}")


def test_cli_queries_file_years(capsys, work, tmp_path):
    qs = [_q(0), _q(1)]
    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps(qs[0] | {"year": 2020}) + "\n" + json.dumps(qs[1]) + "\n")
    code, out, _ = run(capsys, work, "recommend", "--queries", str(f), "--format", "json", "--top", "20",
                       "--year", str(YEAR))
    assert code == 0
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["year"] for o in objs] == [2020, YEAR]      # a line's own year wins over --year
    assert max(r["year"] for r in objs[0]["results"]) <= 2020
    assert max(r["year"] for r in objs[1]["results"]) <= YEAR
    f.write_text(json.dumps(qs[0]) + "\n" + json.dumps(qs[1] | {"year": "abc"}) + "\n")
    code, _, err = run(capsys, work, "recommend", "--queries", str(f))
    assert code == 1 and "q.jsonl:2" in err and "year" in err


@pytest.mark.parametrize("value,needle", [("abc", "--year"), ("1800", "between"), (str(TODAY + 2), "between"),
                                          ("20.5", "--year")])
def test_cli_rejects_bad_years(capsys, work, tmp_path, value, needle):
    code, _, err = run(capsys, work, "recommend", "--title", "x", "--year", value)
    assert code == 2 and needle in err
    draft = tmp_path / "d.md"
    draft.write_text("# A title\n\nAbstract\n\nText.\n")
    code, _, err = run(capsys, work, "audit", str(draft), "--year", value)
    assert code == 2 and needle in err


def test_cli_audit_year(capsys, rec, work, tmp_path):
    held = S.split()[1][0]
    draft = tmp_path / f"{held.id}.md"
    draft.write_text(S.fulltext(held.id), encoding="utf-8")
    code, out, _ = run(capsys, work, "audit", str(draft), "--format", "json", "--top", "30", "--year", str(YEAR),
                       "--all")
    assert code == 0
    res = json.loads(out)
    assert res["year"] == YEAR and res["missing"]
    assert max(r["year"] for r in res["missing"] + res["cited"] if r["paper_id"]) <= YEAR
    assert all(_lab_year(rec, n["id"]) <= YEAR
               for r in res["missing"] for n in (r["evidence"] or {}).get("neighbours", ()))
    code, out, _ = run(capsys, work, "audit", str(draft), "--top", "3", "--year", str(YEAR))
    assert code == 0 and f"as of {YEAR}" in out
    code, out, _ = run(capsys, work, "audit", str(draft), "--top", "3")
    assert code == 0 and f"as of {TODAY}" in out


# ---------------------------------------------------------------------------------------- REST
@pytest.fixture(scope="module")
def client(rec):
    from fastapi.testclient import TestClient

    from mustcite.api.app import create_app

    with TestClient(create_app(rec, max_upload=2 * 2**20)) as c:
        yield c


def test_rest_recommend_year(client):
    q = _q(0)
    r = client.post("/api/recommend", json={"title": q["title"], "abstract": q["abstract"], "top": 40})
    assert r.status_code == 200 and r.json()["year"] == TODAY
    assert max(x["year"] for x in r.json()["results"]) > YEAR
    r = client.post("/api/recommend", json={"title": q["title"], "abstract": q["abstract"], "top": 40, "year": YEAR})
    assert r.status_code == 200, r.text
    assert r.json()["year"] == YEAR and max(x["year"] for x in r.json()["results"]) <= YEAR


@pytest.mark.parametrize("year", ["abc", 1800, TODAY + 2, True, 2020.5, [2020]])
def test_rest_rejects_bad_years(client, year):
    r = client.post("/api/recommend", json={"title": "a title", "year": year})
    assert r.status_code == 422 and "year" in r.json()["error"], r.text
    assert client.get("/api/health").status_code == 200


def test_rest_audit_year(client):
    held = S.split()[1][0]
    data = S.fulltext(held.id).encode("utf-8")
    r = client.post("/api/audit", files={"file": ("draft.md", data, "text/markdown")},
                    data={"top": "10", "year": str(YEAR), "all": "true"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["year"] == YEAR and body["missing"] and max(x["year"] for x in body["missing"] if x["paper_id"]) <= YEAR
    for bad in ("abc", "1800", str(TODAY + 2)):
        r = client.post("/api/audit", files={"file": ("draft.md", data, "text/markdown")}, data={"year": bad})
        assert r.status_code == 422 and "year" in r.json()["error"], r.text
    r = client.post("/api/audit", files={"file": ("draft.md", data, "text/markdown")}, data={"top": "3", "year": ""})
    assert r.status_code == 200 and r.json()["year"] == TODAY
