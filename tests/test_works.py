"""The catalogue of cited works: the clustering rules on hand-made mentions, the build and its
command on a generated extraction folder, and a build over real extracted NeurIPS 2024 papers."""

from __future__ import annotations

import json

import duckdb
import pytest

from mustcite.extract.works import (
    CITATIONS_FILE,
    WORKS_FILE,
    Mention,
    build_catalogue,
    cluster_mentions,
    make_work,
    recover_title,
    supported_identifiers,
    surname,
    title_key,
    work_kind,
    works_schema_json,
)


def mention(title, year=2020, author="D. P. Kingma", keys=(), citing="p1", target=1, must=None, raw=""):
    return Mention(citing=citing, citing_year=2024, target=target, title=title, norm=title_key(title), year=year,
                   surname=surname(author) if author else "", authors=[author] if author else [], venue="",
                   keys=list(keys), raw=raw, contexts=1, mentions=1, must_cite=must)


def groups_of(ms):
    return sorted(sorted(g) for g in cluster_mentions(ms))


@pytest.mark.parametrize("author,expected", [
    ("D. P. Kingma", "kingma"), ("Kingma, Diederik P.", "kingma"), ("Diederik Kingma", "kingma"),
    ("Laurens Van der Maaten", "maaten"), ("J. Doe Jr.", "doe"), ("Jörg Müller", "muller"), ("et al.", ""), ("", ""),
])
def test_surname(author, expected):
    assert surname(author) == expected


def test_titles_that_identify_nothing():
    assert title_key("Adam: A method for stochastic optimization") == "adam a method for stochastic optimization"
    for t in ("Technical report", "Online", "BERT", "arXiv preprint arXiv:1412.6980", "URL http://arxiv.org/abs/1412.6980",
              "Chang, K. Lee, and K. Toutanova"):
        assert title_key(t) == "", t


def test_recover_title_from_ieee_quotes_and_author_lists():
    assert recover_title('V. Nair and G. E. Hinton, "Rectified Linear Units Improve Restricted Boltzmann Machines," ',
                         "") == "Rectified Linear Units Improve Restricted Boltzmann Machines"
    raw = ("[35] T.-Y. Lin, P. Goyal, R. Girshick, K. He, and P. Dollar. Focal loss for dense object detection. "
           "In ICCV, 2017.")
    got = recover_title("Lin, P. Goyal, R. Girshick, K. He, and P. Dollar", raw)
    assert got == "Focal loss for dense object detection"
    assert recover_title("Deep residual learning", raw) == "Deep residual learning"


def test_same_title_joins_across_years_with_the_same_first_author():
    ms = [mention("Adam: A method for stochastic optimization", 2014, citing="a"),
          mention("Adam: a method for stochastic optimization.", 2015, citing="b"),
          mention("ADAM: A Method for Stochastic Optimization", 2017, "Diederik Kingma", citing="c"),
          mention("Adam: A method for stochastic optimization", 2015, None, citing="d")]
    assert groups_of(ms) == [[0, 1, 2, 3]]


def test_same_title_other_first_author_far_apart_stays_apart():
    ms = [mention("Learning to rank with partially labelled data", 2010, "A. Smith", citing="a"),
          mention("Learning to rank with partially labelled data", 2019, "B. Jones", citing="b"),
          mention("Learning to rank with partially labelled data", 2014, "A. Smith", citing="c")]
    assert groups_of(ms) == [[0], [1], [2]]


def test_fuzzy_title_joins_ocr_slips_but_not_sequels():
    ms = [mention("Llama: Open and efficient foundation language models", 2023, "Hugo Touvron", citing="a"),
          mention("Llama: Open and efficent foundation language modles", 2023, "H. Touvron", citing="b"),
          mention("Llama 2: Open foundation and fine-tuned chat models", 2023, "Hugo Touvron", citing="c")]
    assert groups_of(ms) == [[0, 1], [2]]


def test_identifier_joins_unless_titles_disagree():
    ms = [mention("Adam: A method for stochastic optimization", keys=["arxiv:1412.6980"], citing="a"),
          mention("arXiv preprint arXiv:1412.6980", None, None, keys=["arxiv:1412.6980"], citing="b"),
          mention("Adam: A method for stochastic optimization", keys=["arxiv:1412.6980"], citing="c"),
          # a neighbour's arXiv id handed to another reference by the parser: not the same work
          mention("Batch normalization: accelerating deep network training", 2015, "S. Ioffe",
                  keys=["arxiv:1412.6980"], citing="d")]
    assert groups_of(ms) == [[0, 1, 2], [3]]


def test_supported_identifiers_drop_a_single_stray_id():
    ms = [mention("Adam: A method for stochastic optimization", keys=["arxiv:1412.6980"], citing=c) for c in "abcde"]
    ms.append(mention("Adam: A method for stochastic optimization", keys=["arxiv:1502.03167"], citing="f"))
    assert supported_identifiers(ms) == ["arxiv:1412.6980"]
    w = make_work(ms)
    assert (w.n_citing, w.identifiers, w.kind) == (6, ["arxiv:1412.6980"], "paper")


@pytest.mark.parametrize("title,raw,venue,kind", [
    ("Learning multiple layers of features from tiny images", "Technical report, University of Toronto", "", "dataset"),
    ("The kinetics human action video dataset", "arXiv preprint arXiv:1705.06950", "arXiv", "dataset"),
    ("PyTorch Image Models", "URL https://github.com/rwightman/pytorch-image-models", "", "software"),
    ("Reinforcement learning: An introduction", "MIT press, 2018", "MIT press", "book"),
    ("Introducing ChatGPT", "OpenAI. Introducing ChatGPT, 2022. URL https://openai.com/blog/chatgpt. Accessed 2024",
     "", "web page"),
    ("Attention is all you need", "In Advances in Neural Information Processing Systems, 2017", "Advances in Neural "
     "Information Processing Systems", "paper"),
])
def test_work_kind(title, raw, venue, kind):
    assert work_kind(title, raw, venue) == kind


def _write_folder(root, papers):
    """An extraction folder: ``papers`` = {paper: (year, [reference dicts])}."""
    root.mkdir()
    for paper, (year, refs) in papers.items():
        (root / f"{paper}.json").write_text(json.dumps(refs))
        (root / f"{paper}.meta.json").write_text(json.dumps({"paper": paper, "year": year}))
    return root


def _ref(target, title, year, authors, *, paper_id=None, must=None, raw=""):
    r = {"target": target, "title": title, "year": year, "cite": str(target), "contexts": [], "raw": raw,
         "authors": authors, "mentions": 1, "paper_id": paper_id}
    if must is not None:
        r.update(must_cite=must, type1=int(must), type2=4 if must else 2, type3=0)
    return r


def test_two_works_of_one_title_and_author_get_two_ids(tmp_path):
    title = "Learning to rank with partially labelled data"
    folder = _write_folder(tmp_path / "extract", {
        "p1": (2023, [_ref(1, title, 2005, ["A. Smith"])]), "p2": (2023, [_ref(1, title, 2005, ["A. Smith"])]),
        "p3": (2024, [_ref(1, title, 2019, ["A. Smith"])])})
    s = build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    works_file = tmp_path / "corpus" / WORKS_FILE
    rows = duckdb.sql(f"select work_id, year, n_citing from '{works_file}' order by year").fetchall()
    assert s.works == 2 and len({r[0] for r in rows}) == 2 and [r[1:] for r in rows] == [(2005, 2), (2019, 1)]


def test_build_writes_both_tables_and_counts_coverage_leave_one_out(tmp_path):
    adam = "Adam: A method for stochastic optimization"
    folder = _write_folder(tmp_path / "extract", {
        "p1": (2023, [_ref(1, adam, 2014, ["D. P. Kingma"], must=True),
                      _ref(2, "A corpus paper", 2020, ["X. Y"], paper_id="c1", must=True),
                      _ref(3, "Only cited here: a lonely report", 2019, ["Z. Q"], must=True)]),
        "p2": (2024, [_ref(1, adam, 2015, ["Diederik P. Kingma"], must=False,
                           raw="Kingma and Ba. Adam: A method for stochastic optimization. arXiv:1412.6980, 2015.")]),
    })
    s = build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    assert (s.papers, s.unlinked_references, s.works, s.cited_by_two_or_more) == (2, 3, 2, 1)
    # p1: 3 must-cite; linked 1; Adam is cited by p2 too (covered), the lonely report is not
    assert s.coverage["must_cite"] == 3 and s.coverage["must_cite_linked"] == 1 and s.coverage["must_cite_work"] == 1
    works = duckdb.sql(f"select title, year, n_citing, n_must_cite, first_cited, identifiers "
                       f"from '{tmp_path / 'corpus' / WORKS_FILE}' order by n_citing desc").fetchall()
    assert works[0] == (adam, 2014, 2, 1, 2023, ["arxiv:1412.6980"])
    cites = duckdb.sql(f"select citing, target, must_cite from '{tmp_path / 'corpus' / CITATIONS_FILE}' "
                       f"order by citing, target").fetchall()
    assert cites == [("p1", 1, True), ("p1", 3, True), ("p2", 1, False)]
    schema = works_schema_json()
    assert set(schema["$defs"]["work"]["required"]) == {c for c in duckdb.sql(
        f"select * from '{tmp_path / 'corpus' / WORKS_FILE}'").columns}


def test_command_exit_codes(tmp_path, capsys):
    from mustcite.cli.main import main

    folder = _write_folder(tmp_path / "extract",
                           {"p1": (2023, [_ref(1, "A method nobody else cites", 2020, ["A. B"])])})
    assert main(["--work", str(tmp_path / "w"), "works", "build", str(folder), "--json", "-w", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["works"] == 1
    assert main(["--work", str(tmp_path / "w"), "works", "build", str(tmp_path / "nope")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--work", str(tmp_path / "w"), "works", "build", str(empty)]) == 1
    assert "no reference files" in capsys.readouterr().err


@pytest.mark.data("neurips/fulltext_2024")
def test_real_papers_resolve_adam_and_cifar_to_one_work_each(tmp_path, data_dir):
    """Real NeurIPS 2024 full texts, extracted and not linked: papers that cite Adam and CIFAR
    give one work each, with the arXiv id, across their different reference styles."""
    from mustcite.cli.main import main

    papers = ["2NKumsITFw", "3NaqGg92KZ", "444LAH3MhG", "DONsOc7rY1", "G5lMFOtFHa"]
    paths = [str(data_dir / "neurips" / "fulltext_2024" / f"{p}.md.gz") for p in papers]
    out = tmp_path / "extract"
    assert main(["extract", *paths, "--out", str(out), "-w", "1"]) == 0
    s = build_catalogue([out], tmp_path / "corpus", workers=1, progress=False)
    assert s.papers == 5
    rows = duckdb.sql(f"select title, n_citing, identifiers, kind from '{tmp_path / 'corpus' / WORKS_FILE}'").fetchall()
    adam = [r for r in rows if "arxiv:1412.6980" in r[2]]
    assert len(adam) == 1 and adam[0][1] >= 2 and adam[0][0].lower().startswith("adam")
    cifar = [r for r in rows if r[0].lower().startswith("learning multiple layers of features")]
    assert len(cifar) == 1 and cifar[0][1] == 5 and cifar[0][3] == "dataset"


def test_pool_works_time_rule():
    from mustcite.extract.works import WorkIndex, pool_works

    index = WorkIndex(folder=None, by_ref={}, works={
        "w-a": {"work_id": "w-a", "title": "Adam", "year": 2014, "authors": ["D. P. Kingma"], "venue": "",
                "identifiers": ["arxiv:1412.6980"], "kind": "paper"},
        "w-b": {"work_id": "w-b", "title": "A future report", "year": 2024, "authors": [], "venue": "",
                "identifiers": [], "kind": "web page"}},
        citing={"w-a": [("p20", 2020), ("p23", 2023), ("q24", 2024)], "w-b": [("p23", 2023), ("p23b", 2023)]})
    rows = {r["paper_id"]: r for r in pool_works(index)}
    # seen from its first citing paper's year; a work cannot be seen before it was published
    assert (rows["w-a"]["year"], rows["w-a"]["published"], rows["w-b"]["year"]) == (2020, 2014, 2024)
    assert rows["w-a"]["url"] == "https://arxiv.org/abs/1412.6980" and rows["w-b"]["kind"] == "web page"
    # only what the allowed papers introduce (a held-out query never does)
    rows = {r["paper_id"]: r for r in pool_works(index, allowed={"p23", "q24"})}
    assert rows["w-a"]["year"] == 2023 and "w-b" in rows
    assert [r["paper_id"] for r in pool_works(index, allowed={"q24"}, until=2023)] == []
    assert [r["paper_id"] for r in pool_works(index, min_citing=3)] == ["w-a"]


def test_bibtex_of_works():
    from mustcite.recommend.formats import bibtex, work_note
    from mustcite.recommend.results import Recommendation

    adam = Recommendation("w-1", "Adam: A method for stochastic optimization", 2014, "", 1.0, "I", {},
                          "https://arxiv.org/abs/1412.6980", None, ["Diederik P Kingma", "Jimmy Ba"], {},
                          "paper", "references")
    assert bibtex(adam).startswith("@article{kingma2014adam,")
    assert "journal = {arXiv preprint arXiv:1412.6980}" in bibtex(adam)
    book = Recommendation("w-2", "Reinforcement learning: An introduction", 2018, "MIT press", 1.0, "I", {}, None,
                          None, ["Richard S Sutton"], {}, "book", "references")
    assert bibtex(book).startswith("@book{") and "publisher = {MIT press}" in bibtex(book)
    assert work_note(book) == " (book; from reference lists)"
    corpus = Recommendation("p", "Attention is all you need", 2017, "NeurIPS", 1.0, "I", {}, None, None, [], {})
    assert bibtex(corpus).startswith("@inproceedings{") and work_note(corpus) == ""
    assert {"kind": "paper", "source": "corpus"}.items() <= corpus.to_dict().items()


@pytest.mark.data
def test_default_model_recommends_works_only_from_the_year_a_paper_introduced_them(tmp_path):
    """Real NeurIPS 2023 papers (extracted, linked to a NeurIPS 2019-2022 pool): their unlinked
    references become works; a model trained with them names works for 2023 queries and never
    for 2022 ones."""
    import shutil

    from helpers import recommender as S

    from mustcite.recommend import Recommender
    from mustcite.recommend.train import train_default

    refs = tmp_path / "refs"
    shutil.copytree(S.slice_dir() / "refs", refs)
    build_catalogue([refs], tmp_path / "corpus", workers=1, progress=False)
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(p) + "\n" for p in S.pool()))
    card = train_default([refs], pool, tmp_path / "model", dense=False, dev_fraction=0.0, works=tmp_path / "corpus",
                         log=lambda *a: None)
    assert card["data"]["pool_works"] > 20
    rec = Recommender.load(tmp_path / "model")
    queries = S.held_out_queries()[:8]
    later = rec.recommend_many([{**q, "year": 2023} for q in queries], top=100)
    works = [r for rs in later.values() for r in rs if r.source == "references"]
    assert works and all(r.paper_id.startswith("w-") and r.kind in ("paper", "dataset", "software", "book", "web page")
                         for r in works)
    assert all(r.year is None or r.year <= 2023 for r in works)
    earlier = rec.recommend_many([{**q, "year": 2022} for q in queries], top=100)
    assert not [r for rs in earlier.values() for r in rs if r.source == "references"]


@pytest.mark.data
def test_v3_pool_takes_only_works_that_earlier_papers_or_train_queries_cite(built, tmp_path):
    """The real benchmark slice with its catalogue: every pool work was introduced by a 2023 paper
    or a train query, a work only dev/test queries cite is never in the pool, and qrels count works."""
    import pyarrow.parquet as pq

    from mustcite.benchmark.build import build_benchmark
    from mustcite.benchmark.recipes import get_recipe
    from mustcite.extract.works import WorkIndex

    build_catalogue([built["refs"]], tmp_path / "corpus", workers=1, progress=False)
    out = tmp_path / "v3"
    # the slice's sidecars carry no OCR page counts: let any of its papers be held out
    m = build_benchmark(get_recipe("neurips-2024-v3", heldout_needs_whole_text=False),
                        corpus_path=built["root"] / "papers.parquet",
                        ref_dirs=[built["refs"]], out_dir=out, works_dir=tmp_path / "corpus")
    index = WorkIndex.load(tmp_path / "corpus")
    queries = {s: [json.loads(line)["source"] for line in (out / "queries" / f"{s}.jsonl").read_text().splitlines()]
               for s in ("train", "dev", "test")}
    heldout = set(queries["dev"]) | set(queries["test"])
    pool = pq.read_table(out / "pool.parquet").to_pylist()
    works = [r for r in pool if r["paper_id"].startswith("w-")]
    assert works and m["works"]["in_pool"] == len(works)
    for w in works:
        introducers = {c for c, y in index.citing[w["paper_id"]] if c not in heldout}
        assert introducers, w["title"]
        assert w["year"] >= (w["published"] or 0)
    only_heldout = [w for w, cs in index.citing.items() if {c for c, _ in cs} <= heldout]
    assert only_heldout and not set(only_heldout) & {w["paper_id"] for w in works}
    cov = m["coverage"]
    assert cov["entries_in_pool"] > cov["entries_in_corpus_papers"]
    cited_works = {line.split()[2] for s in ("train", "dev", "test")
                   for line in (out / "qrels" / f"{s}.cited.qrels").read_text().splitlines() if "w-" in line}
    assert cited_works and cited_works <= {w["paper_id"] for w in works}


def test_a_damaged_catalogue_is_an_error_naming_the_file(tmp_path):
    from mustcite.errors import MustciteError
    from mustcite.extract.works import WorkIndex

    folder = _write_folder(tmp_path / "extract",
                           {"p1": (2023, [_ref(1, "A method nobody else cites", 2020, ["A. B"])])})
    build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    assert len(WorkIndex.load(tmp_path / "corpus").works) == 1
    (tmp_path / "corpus" / WORKS_FILE).write_bytes(b"PAR1 not parquet")
    with pytest.raises(MustciteError) as err:
        WorkIndex.load(tmp_path / "corpus")
    assert WORKS_FILE in str(err.value) and "mustcite works build" in str(err.value.hint)
    (tmp_path / "corpus" / WORKS_FILE).unlink()
    with pytest.raises(MustciteError, match="no catalogue of cited works"):
        WorkIndex.load(tmp_path / "corpus")


def test_a_rebuild_with_more_citing_papers_keeps_the_ids(tmp_path):
    """A work whose commonest title changes when new papers cite it keeps the id it had in the
    catalogue already in the folder; a fresh build derives the id from the new title."""
    old, new = "Adam: A method for stochastic optimization", "Adam: a method for stochastic optimisation"
    folder = _write_folder(tmp_path / "extract", {
        "p1": (2020, [_ref(1, old, 2015, ["D. P. Kingma"])]), "p2": (2021, [_ref(1, old, 2015, ["D. P. Kingma"])])})
    build_catalogue([folder], tmp_path / "corpus", workers=1, progress=False)
    before = duckdb.sql(f"select work_id, title from '{tmp_path / 'corpus' / WORKS_FILE}'").fetchall()
    more = _write_folder(tmp_path / "bbl", {f"q{i}": (2022, [_ref(1, new, 2015, ["D. P. Kingma"])]) for i in range(3)})
    build_catalogue([folder, more], tmp_path / "corpus", workers=1, progress=False)
    after = duckdb.sql(f"select work_id, title, n_citing from '{tmp_path / 'corpus' / WORKS_FILE}'").fetchall()
    assert len(before) == 1 and len(after) == 1
    assert after[0][0] == before[0][0] and after[0][1:] == (new, 5)
    build_catalogue([folder, more], tmp_path / "fresh", workers=1, progress=False)
    fresh = duckdb.sql(f"select work_id from '{tmp_path / 'fresh' / WORKS_FILE}'").fetchall()
    assert fresh[0][0] != before[0][0]
