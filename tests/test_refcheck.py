"""``mustcite check-refs``: statuses, perturbations, formats, --fail-on and bad input.

The corpus here is cut from the real paper lists (NeurIPS 2019, ICML 2019, ICLR 2020, ACL 2022 main
track, read with the corpus importer); the BibTeX entries are written from its real records, intact
or perturbed. Only the bad-input files are made up.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mustcite.cli.main import main
from mustcite.refcheck import check_refs, load_index
from mustcite.refcheck.index import complete_venue_years, index_cache_path
from mustcite.refcheck.venue import classify_venue

pytestmark = pytest.mark.data("proceedings/paperlists/nips2019.jsonl.gz", "anthology/records/neurips-2019.jsonl.gz")

FILES = ["nips2019", "icml2019", "iclr2020", "acl2022"]
#: the second list of three of them (ML Anthology): a venue-year is measured complete only when two
#: lists agree on it (ACL 2022 stays read from one list)
SECOND_LISTS = ["neurips-2019", "icml-2019", "iclr-2020"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    import gzip
    import json

    from helpers import DATA

    from mustcite.corpus.dedup import dedup
    from mustcite.corpus.importers import import_file
    from mustcite.corpus.records import Paper, make_paper_id, normalize_title, surname_key
    from mustcite.corpus.store import (
        DISAGREEMENTS_FILE,
        SIDE_TRACKS_FILE,
        disagreements_table,
        write_papers,
        write_table,
    )

    second = {}
    for f in SECOND_LISTS:
        with gzip.open(DATA / "anthology" / "records" / f"{f}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for r in map(json.loads, fh):
                second[normalize_title(r["title"])] = r
    root = tmp_path_factory.mktemp("refcheck-work")
    papers, side, disputes = [], [], []
    for f in FILES:
        for r in import_file(DATA / "proceedings" / "paperlists" / f"{f}.jsonl.gz", DATA):
            if not r.skip and not r.main_track:
                side.append(r)
            if r.skip or not r.main_track:
                continue
            other = second.get(normalize_title(r.title))
            ids = [f"paperlists:{r.source_id}"] + ([f"mlanthology:{other['id']}"] if other else [])
            pid = make_paper_id(r.title, r.venue, r.year, r.source_id)
            papers.append(Paper(pid, r.title, r.venue, r.year, authors=list(r.authors), source="paperlists",
                                source_id=r.source_id, url=r.url, pdf=r.pdf, track=r.track, source_ids=ids))
            if other and sorted(surname_key(a) for a in r.authors) != sorted(surname_key(a) for a in other["authors"]):
                # where the two lists name other people, as the corpus build reports it
                disputes.append({"paper_id": pid, "venue": r.venue, "year": r.year, "field": "authors",
                                 "kind": "names", "kept": "; ".join(r.authors), "kept_source": "paperlists",
                                 "values": {"paperlists": "; ".join(r.authors),
                                            "mlanthology": "; ".join(other["authors"])}})
    write_papers(papers, root / "corpus" / "papers.parquet")
    write_table(disagreements_table(disputes), root / "corpus" / DISAGREEMENTS_FILE)
    # the ancillary tracks (ACL 2022 Findings), kept apart as the corpus build keeps them
    write_papers(dedup(side).side_track, root / "corpus" / SIDE_TRACKS_FILE)
    os.environ.pop("MUSTCITE_CACHE", None)
    return root


@pytest.fixture(scope="module")
def records(work):
    import pyarrow.parquet as pq

    rows = pq.read_table(work / "corpus" / "papers.parquet").to_pylist()
    return {r["title"]: r for r in rows}


def rec(records, start: str) -> dict:
    return next(r for t, r in records.items() if t.startswith(start))


def bib(key, title, authors, year, venue_field, extra="") -> str:
    return (f"@inproceedings{{{key},\n  title = {{{title}}},\n  author = {{{' and '.join(authors)}}},\n"
            f"  {venue_field},\n  year = {{{year}}}{extra}\n}}\n")


def run(work: Path, *args: str) -> int:
    return main(["--work", str(work), "check-refs", *args])


# ---- venue texts and completeness (no corpus needed) -------------------------------------------

@pytest.mark.parametrize("text,kind,code", [
    ("Advances in Neural Information Processing Systems 36: Annual Conference on Neural Information "
     "Processing Systems 2023, NeurIPS 2023", "held", "NeurIPS"),
    ("{NeurIPS}", "held", "NeurIPS"),
    ("Proc. ICML", "held", "ICML"),
    ("International Conference on Learning Representations", "held", "ICLR"),
    ("Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)", "held", "CVPR"),
    ("Proceedings of the 2019 Conference of the North American Chapter of the Association for Computational "
     "Linguistics: Human Language Technologies, Volume 1 (Long and Short Papers)", "held", "NAACL"),
    ("Findings of the Association for Computational Linguistics: EMNLP 2020", "ancillary", "EMNLP"),
    ("Transactions of the Association for Computational Linguistics", "ancillary", None),
    ("ICML 2021 Workshop on Uncertainty and Robustness", "ancillary", "ICML"),
    ("Thirty-sixth Conference on Neural Information Processing Systems Datasets and Benchmarks Track",
     "ancillary", "NeurIPS"),
    ("arXiv preprint arXiv:1412.6980", "arxiv", None),
    ("CoRR", "arxiv", None),
    ("IEEE Transactions on Pattern Analysis and Machine Intelligence", "other", None),
    ("J. Mach. Learn. Res.", "held", "JMLR"),
    ("International Conference on Algorithmic Learning Theory", "other", None),
    ("", "none", None),
])
def test_venue_texts(text, kind, code):
    claim = classify_venue(text)
    assert (claim.kind, claim.code) == (kind, code)


def test_complete_venue_years_rule():
    counts = {("ICLR", 2013): 23, ("ICLR", 2014): 69, ("ICLR", 2017): 198, ("ICLR", 2018): 337,
              ("NeurIPS", 2025): 77, ("NeurIPS", 2024): 4530, ("COLT", 2011): 43}
    held = complete_venue_years(counts)
    assert ("ICLR", 2018) in held and ("COLT", 2011) in held
    assert ("ICLR", 2013) not in held          # under half of a nearby year: a partial list
    assert ("NeurIPS", 2025) not in held       # 77 orals beside 4,530 papers


# ---- statuses and perturbations ----------------------------------------------------------------

@pytest.fixture(scope="module")
def checked(work, records, tmp_path_factory):
    """One file with every case; returns {key: RefCheck as JSON}."""
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")   # NeurIPS 2019, 3 authors
    m = rec(records, "A Baseline for Any Order Gradient Estimation")          # ICML 2019, Rocktäschel
    b = rec(records, "A Framework for Bayesian Optimization in Embedded Subspaces")   # ICML 2019
    a = rec(records, "(Un)solving Morphological Inflection")                   # ACL 2022 short
    other_acl = next(r for r in records.values() if r["venue"] == "ACL" and r["paper_id"] != a["paper_id"]
                     and "aclanthology.org" in r["url"])
    nips_bt = "booktitle = {Advances in Neural Information Processing Systems 32: Annual Conference on Neural " \
              "Information Processing Systems 2019, NeurIPS 2019}"
    ga = g["authors"]               # in alphabetical order of family names (a theory paper)
    u = next(r for r in records.values() if r["venue"] == "NeurIPS" and len(r["authors"]) >= 3
             and [a.split()[-1] for a in r["authors"]] != sorted(a.split()[-1] for a in r["authors"])
             and r["authors"][0].split()[-1] != r["authors"][1].split()[-1])
    ua = u["authors"]
    last_first = [f"{n.split()[-1]}, {' '.join(n.split()[:-1])}" for n in ga]
    half = " ".join(g["title"].split()[:6])
    joiner = rec(records, "Structured Object-Aware Physics Prediction")["title"]   # not NeurIPS: another venue's
    other_nips = next(r for r in records.values() if r["venue"] == "NeurIPS" and len(r["title"].split()) >= 8
                      and r["paper_id"] != g["paper_id"])
    joined = half + " " + " ".join(other_nips["title"].split()[-5:])
    aid = a["url"].rstrip("/").rsplit("/", 1)[1]
    bad_doi = other_acl["url"].rstrip("/").rsplit("/", 1)[1]
    text = "".join([
        bib("intact_dblp", g["title"], ga, 2019, nips_bt, f",\n  url = {{{g['url']}}}"),
        bib("intact_scholar", g["title"].lower().capitalize(), last_first, 2019,
            "booktitle = {Advances in neural information processing systems}"),
        bib("intact_accents", m["title"], [n.replace("ä", '{\\"a}') for n in m["authors"]], 2019,
            "booktitle = {Proc. ICML}"),
        bib("intact_others", g["title"], ga[:1] + ["others"], 2019, "booktitle = {{NeurIPS}}"),
        bib("volume_year_late", g["title"], ga, 2020, "booktitle = {Advances in Neural Information Processing "
            "Systems}", ",\n  volume = {32}"),
        bib("intact_acl_doi", a["title"], a["authors"], 2022,
            "booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics "
            "(Volume 2: Short Papers)}", f",\n  doi = {{10.18653/v1/{aid}}}"),
        bib("wrong_year", g["title"], ga, 2018, "booktitle = {NeurIPS}"),
        bib("wrong_venue", g["title"], ga, 2019, "booktitle = {International Conference on Machine Learning}"),
        bib("authors_dropped", g["title"], ga[:-1], 2019, nips_bt),
        bib("authors_added", g["title"], ga[:1] + ["Yoshua Bengio"] + ga[1:], 2019, nips_bt),
        bib("authors_swapped", u["title"], [ua[1], ua[0], *ua[2:]], 2019, nips_bt),
        bib("alphabetised_reordered", g["title"], [ga[1], ga[0], *ga[2:]], 2019, nips_bt),
        bib("title_joined", joined, ga, 2019, nips_bt),
        "@article{arxiv_version,\n  title = {" + g["title"] + "},\n  author = {" + " and ".join(ga)
        + "},\n  journal = {arXiv preprint arXiv:1805.11111},\n  year = {2018}\n}\n",
        "@misc{arxiv_fewer_authors,\n  title = {" + g["title"] + "},\n  author = {" + " and ".join(ga[:2])
        + "},\n  eprint = {1805.11111},\n  archivePrefix = {arXiv},\n  year = {2018}\n}\n",
        "@article{arxiv_wrong_authors,\n  title = {" + g["title"] + "},\n  author = {John Smith and Jane Doe},\n"
        "  journal = {arXiv preprint arXiv:1805.11111},\n  year = {2018}\n}\n",
        "@article{arxiv_year_before_id,\n  title = {" + g["title"] + "},\n  author = {" + " and ".join(ga)
        + "},\n  journal = {arXiv preprint arXiv:1805.11111},\n  year = {2016}\n}\n",
        bib("workshop_version", g["title"], ga, 2018, "booktitle = {NeurIPS 2018 Workshop on Relational Learning}"),
        bib("wrong_doi", a["title"], a["authors"], 2022, "booktitle = {ACL}", f",\n  doi = {{10.18653/v1/{bad_doi}}}"),
        bib("near_miss_title", m["title"].replace("Estimation", "Inference"), m["authors"], 2019, "booktitle = {ICML}"),
        bib("near_miss_plural", g["title"][:-1], ga, 2019, nips_bt),
        bib("british_spelling", b["title"].replace("Optimization", "Optimisation"), b["authors"], 2019,
            "booktitle = {Int. Conf. Mach. Learn.}"),
        bib("unknown_venue", m["title"], m["authors"], 2019, "booktitle = {Conference on Imaginary Learning Systems}"),
        bib("future_year", "A Study of Something Nobody Wrote Down in Any Corpus", ["Jane Doe"], 2099,
            "booktitle = {Some Venue}"),
        bib("anonymous", "A Study of Something Else Nobody Wrote Down", ["Anonymous Authors"], 2019, nips_bt),
        bib("et_al_name", g["title"], [ga[0] + " et al."], 2019, "booktitle = {Adv. Neural Inform. Process. Syst.}"),
        bib("invented", "Hierarchical Diffusion Transformers for Zero-Shot Graph Reasoning Over Sparse Hypergraphs",
            ["Smith, John", "Doe, Jane"], 2019, nips_bt),
        bib("invented_real_authors", "Hierarchical Diffusion Transformers for Zero-Shot Graph Reasoning",
            ga, 2019, nips_bt),
        "@article{preprint,\n  title = {A Study of Something Nobody Wrote Down in Any Corpus},\n"
        "  author = {Doe, Jane},\n"
        "  journal = {arXiv preprint arXiv:2101.00001},\n  year = {2021}\n}\n",
        "@article{journal,\n  title = {Another Journal Paper on Visual Things},\n  author = {Doe, Jane},\n"
        "  journal = {IEEE Transactions on Pattern Analysis and Machine Intelligence},\n  year = {2020}\n}\n",
        bib("not_held_year", "Some Paper Title of a Year the Corpus Lacks Entirely", ["Jane Doe"], 2018,
            "booktitle = {Advances in Neural Information Processing Systems}"),
        bib("workshop", joiner, ["Jane Doe"], 2019, "booktitle = {NeurIPS 2019 Workshop on Robot Learning}"),
    ])
    path = tmp_path_factory.mktemp("bib") / "refs.bib"
    path.write_text(text, encoding="utf-8")
    checks = check_refs(path, work=work)
    assert [c.key for c in checks] == [line.split("{", 1)[1].rstrip(",") for line in text.splitlines()
                                       if line.startswith("@")]          # input order
    return {c.key: c.to_json() for c in checks}, path


@pytest.mark.parametrize("key", ["intact_dblp", "intact_scholar", "intact_accents", "intact_others", "intact_acl_doi",
                                 "british_spelling", "et_al_name"])
def test_intact_entries_are_verified(checked, key):
    got = checked[0][key]
    assert got["status"] == "verified", got
    assert got["record"]["paper_id"] and got["issues"] == []


@pytest.mark.parametrize("key,field", [("wrong_year", "year"), ("volume_year_late", "year"), ("wrong_venue", "venue"),
                                       ("authors_dropped", "authors"), ("authors_added", "authors"),
                                       ("authors_swapped", "authors"), ("title_joined", "title"),
                                       ("wrong_doi", "identifier"), ("arxiv_wrong_authors", "authors"),
                                       ("arxiv_year_before_id", "year"), ("near_miss_title", "title"),
                                       ("unknown_venue", "venue")])
def test_perturbations_are_mismatches(checked, key, field):
    got = checked[0][key]
    assert got["status"] == "mismatch", got
    assert field in {i["field"] for i in got["issues"]}, got["issues"]
    assert got["record"]["title"]


@pytest.mark.parametrize("key", ["arxiv_version", "arxiv_fewer_authors", "workshop_version"])
def test_an_earlier_version_of_a_published_paper_is_outdated(checked, records, key):
    """Cited as an arXiv preprint (with fewer authors than the published list: the preprint's list
    is not the published one) or as a workshop paper: outdated, with the published version's record
    and BibTeX under the entry's own key."""
    got = checked[0][key]
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    assert got["status"] == "outdated" and got["issues"] == [], got
    assert got["record"]["paper_id"] == g["paper_id"] and "NeurIPS 2019" in got["why"]
    assert got["bibtex"].startswith(f"@inproceedings{{{key},") and g["title"] in got["bibtex"]
    assert "Advances in Neural Information Processing Systems" in got["bibtex"]


def test_order_is_not_compared_against_an_alphabetised_list(checked):
    """The record lists its authors in alphabetical order: the source may have sorted them, so
    another order in the entry is no error."""
    got = checked[0]["alphabetised_reordered"]
    assert got["status"] == "verified" and got["issues"] == [], got


def test_only_outdated_entries_carry_bibtex(checked):
    assert all(("bibtex" in c) == (c["status"] == "outdated") for c in checked[0].values())


def test_a_year_after_the_data_is_wrong_without_a_record(checked):
    got = checked[0]["future_year"]
    assert got["status"] == "mismatch" and got["record"] is None
    assert [(i["field"], i["entry"], i["record"]) for i in got["issues"]] == [("year", "2099", None)]


def test_a_near_miss_title_shows_both_titles(checked, records):
    m = rec(records, "A Baseline for Any Order Gradient Estimation")
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    got = checked[0]["near_miss_title"]
    issue = next(i for i in got["issues"] if i["field"] == "title")
    assert "Inference" in issue["entry"] and issue["record"] == m["title"] and "renamed" in issue["why"]
    assert "'inference' where the record has 'estimation'" in issue["why"]
    got = checked[0]["near_miss_plural"]              # found by its title (fuzzy), one word differs
    issue = next(i for i in got["issues"] if i["field"] == "title")
    assert issue["record"] == g["title"] and "'graph' where the record has 'graphs'" in issue["why"]


def test_mismatch_issue_shape(checked):
    year = checked[0]["wrong_year"]["issues"][0]
    assert year == {"field": "year", "entry": "2018", "record": "2019", "why": year["why"]} and year["why"]
    swapped = [i for i in checked[0]["authors_swapped"]["issues"] if i["field"] == "authors"][0]
    assert "order" in swapped["why"]
    dropped = [i for i in checked[0]["authors_dropped"]["issues"] if i["field"] == "authors"][0]
    assert "missing" in dropped["why"]


def test_invented_entry_is_not_found(checked):
    got = checked[0]["invented"]
    assert got["status"] == "not_found" and got["record"] is None
    assert "NeurIPS 2019" in got["why"] and "completely" in got["why"]
    # an invented title under real authors of that venue-year: their real paper there, titled otherwise
    got = checked[0]["invented_real_authors"]
    assert got["status"] == "mismatch" and [i["field"] for i in got["issues"]] == ["title"]


@pytest.mark.parametrize("key", ["preprint", "journal", "not_held_year", "workshop", "anonymous"])
def test_what_the_corpus_cannot_say_is_unverifiable(checked, key):
    got = checked[0][key]
    assert got["status"] == "unverifiable", got
    assert "cannot verify offline" in got["why"]


# ---- other inputs ------------------------------------------------------------------------------

def test_bbl_and_latex_project(work, records, tmp_path):
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    names = ", ".join(g["authors"][:-1]) + ", and " + g["authors"][-1]
    bbl = tmp_path / "main.bbl"
    bbl.write_text("\\begin{thebibliography}{1}\n\\bibitem{g}\n" + names + ".\n\\newblock " + g["title"]
                   + ".\n\\newblock In {\\em Advances in Neural Information Processing Systems}, 2019.\n"
                   "\\end{thebibliography}\n", encoding="utf-8")
    got = check_refs(bbl, work=work)
    assert [(c.key, c.status) for c in got] == [("g", "verified")]
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "main.tex").write_text("\\documentclass{article}\\title{T}\\begin{document}\\maketitle\n"
                                   "\\begin{abstract}A.\\end{abstract}\nSee \\cite{g}.\n"
                                   "\\bibliography{refs}\\end{document}\n", encoding="utf-8")
    (proj / "refs.bib").write_text(bib("g", g["title"], g["authors"], 2017, "booktitle = {NeurIPS}"), encoding="utf-8")
    got = check_refs(proj, work=work)
    assert [(c.key, c.status) for c in got] == [("g", "mismatch")]
    assert got[0].issues[0].field == "year"


def test_index_is_cached_on_disk(work):
    papers = work / "corpus" / "papers.parquet"
    idx = load_index(work)
    path = index_cache_path(papers, None, work / "cache")
    assert path.is_file() and len(idx.titles) > 3000
    st = papers.stat()
    os.utime(papers, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    try:
        assert index_cache_path(papers, None, work / "cache") != path     # a changed store: a new index
    finally:
        os.utime(papers, ns=(st.st_atime_ns, st.st_mtime_ns))


# ---- the command -------------------------------------------------------------------------------

def test_formats(work, checked, capsys):
    path = checked[1]
    assert run(work, str(path), "--format", "json") == 0
    lines = capsys.readouterr().out.splitlines()
    objs = [json.loads(x) for x in lines]
    assert [o["key"] for o in objs] == list(checked[0])
    assert set(objs[0]) >= {"key", "status", "issues", "record"}
    assert set(objs[0]["record"]) >= {"title", "authors", "year", "venue", "paper_id"}
    assert run(work, str(path), "--format", "markdown") == 0
    md = capsys.readouterr().out
    assert md.startswith("| key | status |") and "**not_found**" in md and "**outdated**" in md
    assert "```bibtex\n@inproceedings{arxiv_version," in md
    assert run(work, str(path)) == 0
    table = capsys.readouterr().out
    assert "wrong_year" in table and "1 not_found" in table and "3 outdated" in table


def test_fail_on(work, checked, records, tmp_path, capsys):
    path = checked[1]
    assert run(work, str(path), "--format", "json", "--fail-on", "not_found") == 1
    err = capsys.readouterr().err
    assert "invented" in err and "Traceback" not in err
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    only_mismatch = tmp_path / "m.bib"
    only_mismatch.write_text(bib("y", g["title"], g["authors"], 2017, "booktitle = {NeurIPS}"), encoding="utf-8")
    assert run(work, str(only_mismatch), "--fail-on", "not_found") == 0
    assert run(work, str(only_mismatch), "--fail-on", "mismatch") == 1
    clean = tmp_path / "ok.bib"
    clean.write_text(bib("ok", g["title"], g["authors"], 2019, "booktitle = {NeurIPS}"), encoding="utf-8")
    assert run(work, str(clean), "--fail-on", "mismatch") == 0
    assert run(work, str(clean), "--fail-on", "everything") == 2
    preprint = tmp_path / "p.bib"
    preprint.write_text(bib("p", g["title"], g["authors"], 2019, "journal = {arXiv preprint arXiv:1805.11111}"),
                        encoding="utf-8")
    assert run(work, str(preprint), "--fail-on", "mismatch") == 0        # outdated: nothing is wrong
    assert run(work, str(preprint), "--fail-on", "outdated") == 1


@pytest.mark.parametrize("name,content,needle", [
    ("empty.bib", b"", "empty"),
    ("junk.bib", b"this is not bibtex at all\n", "no BibTeX entry"),
    ("latin1.bib", b"@article{a,\n title={Caf\xe9}\n}\n", ":2: not UTF-8"),
    ("binary.bib", b"\x00\x01\x02@article", "binary"),
    ("notes.txt", b"hello", "unsupported"),
])
def test_bad_input_is_one_clear_line(work, tmp_path, capsys, name, content, needle):
    p = tmp_path / name
    p.write_bytes(content)
    assert run(work, str(p)) in (1, 2)
    err = capsys.readouterr().err
    assert needle in err and name in err and "Traceback" not in err


def test_missing_file_and_bad_format(work, tmp_path, capsys):
    assert run(work, str(tmp_path / "nope.bib")) == 1
    assert "nope.bib: file not found" in capsys.readouterr().err
    p = tmp_path / "x.bib"
    p.write_text("@misc{a, title={T}}\n", encoding="utf-8")
    assert run(work, str(p), "--format", "yaml") == 2
    assert "--format" in capsys.readouterr().err


def test_missing_corpus_is_a_clear_error(tmp_path, capsys):
    p = tmp_path / "x.bib"
    p.write_text("@misc{a, title={T}}\n", encoding="utf-8")
    assert run(tmp_path / "empty-work", str(p)) == 1
    assert "no corpus store" in capsys.readouterr().err


def test_a_side_track_paper_is_never_called_invented(work, tmp_path, capsys):
    """A Findings paper cited with its venue's main booktitle is unverifiable (the corpus holds main
    tracks only), not not_found; claimed at another held venue it is a venue mismatch."""
    import pyarrow.parquet as pq

    from mustcite.corpus.store import SIDE_TRACKS_FILE

    rows = pq.read_table(work / "corpus" / SIDE_TRACKS_FILE).to_pylist()
    r = next(x for x in rows if x["venue"] == "ACL" and x["authors"] and len(x["title"].split()) >= 5)
    assert r["track"]
    path = tmp_path / "side.bib"
    path.write_text(bib("acl", r["title"], r["authors"], r["year"],
                        "booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational "
                        "Linguistics}")
                    + bib("nips", r["title"], r["authors"], 2019,
                          "booktitle = {Advances in Neural Information Processing Systems}"), encoding="utf-8")
    got = {c.key: c for c in check_refs(path, work=work)}
    assert got["acl"].status == "unverifiable" and r["track"] in got["acl"].why
    assert got["acl"].record["title"] == r["title"]
    assert got["nips"].status == "mismatch" and [i.field for i in got["nips"].issues] == ["venue"]


def test_a_reference_string_without_a_title_is_never_called_invented(work, records):
    """A reference string whose parser read the title as the last author is still found; one with
    no title at all is unverifiable, never not_found."""
    from mustcite.refcheck import check_entries, load_index
    from mustcite.refcheck.entries import Entry

    r = next(x for x in records.values() if x["venue"] == "NeurIPS" and x["year"] == 2019
             and len(x["authors"] or []) >= 2 and len(x["title"].split()) >= 5)
    raw = (f"[7] {', '.join(r['authors'])}, {r['title']}. In Advances in Neural Information Processing Systems, "
           f"pages 1-9, 2019.")
    read_as_author = Entry("7", title="", authors=[*r["authors"], r["title"]], year=2019,
                           venue="Advances in Neural Information Processing Systems", raw=raw, structured=False)
    no_title = Entry("8", title="", authors=["Jane Doe"], year=2019,
                     venue="Advances in Neural Information Processing Systems",
                     raw="[8] Jane Doe. In Advances in Neural Information Processing Systems, 2019.", structured=False)
    got = check_entries([read_as_author, no_title], load_index(work))
    assert got[0].status == "verified" and got[0].record["title"] == r["title"]
    assert got[1].status == "unverifiable" and "no title" in got[1].why


# ---- completeness measured; a record that cannot accuse alone -------------------------------------

def test_not_found_only_where_every_possible_track_is_held(work, records, tmp_path):
    """NeurIPS 2019 is read from two lists that agree (complete); a short paper may be a workshop
    paper, which no list holds; ACL 2022 is read from one list, which measures nothing."""
    title = "Hierarchical Diffusion Transformers for Zero-Shot Graph Reasoning Over Sparse Hypergraphs"
    nips = "booktitle = {Advances in Neural Information Processing Systems}"
    path = tmp_path / "tracks.bib"
    path.write_text(bib("full", title, ["Jane Doe"], 2019, nips, ",\n  pages = {1024--1035}")
                    + bib("short", title, ["Jane Doe"], 2019, "booktitle = {NeurIPS}", ",\n  pages = {5}")
                    + bib("acl", title, ["Jane Doe"], 2022, "booktitle = {Proceedings of the 60th Annual Meeting of "
                          "the Association for Computational Linguistics}"), encoding="utf-8")
    got = {c.key: c for c in check_refs(path, work=work)}
    assert got["full"].status == "not_found" and "two independent lists agree" in got["full"].why
    assert got["short"].status == "unverifiable" and "workshop" in got["short"].why, got["short"].why
    assert got["acl"].status == "unverifiable" and "one list" in got["acl"].why, got["acl"].why


def test_a_partial_author_list_from_one_list_does_not_accuse(work, records, tmp_path):
    """An ACL 2022 record (one list) whose names are all among the entry's: the source may have cut
    the list, so an author it lacks is a note; a NeurIPS 2019 record that two lists hold accuses."""
    a = next(r for r in records.values() if r["venue"] == "ACL" and len(r["authors"]) >= 2)
    g = rec(records, "(Nearly) Efficient Algorithms for the Graph Matching")
    path = tmp_path / "partial.bib"
    path.write_text(bib("acl", a["title"], a["authors"] + ["Yoshua Bengio"], 2022, "booktitle = {ACL}")
                    + bib("nips", g["title"], g["authors"] + ["Yoshua Bengio"], 2019, "booktitle = {NeurIPS}"),
                    encoding="utf-8")
    got = {c.key: c for c in check_refs(path, work=work)}
    assert got["acl"].status == "verified" and any("partial record" in n for n in got["acl"].notes), got["acl"]
    assert got["nips"].status == "mismatch" and [i.field for i in got["nips"].issues] == ["authors"]


def test_where_the_sources_disagree_on_the_authors_no_accusation(work, records, tmp_path):
    """ICLR 2020's paper list names Johannes Gasteiger, ML Anthology Johannes Klicpera (the same
    person, renamed): an entry with either list is fine, with a note; a name neither has is flagged."""
    d = rec(records, "Directional Message Passing for Molecular Graphs")
    assert d["authors"][0] == "Johannes Gasteiger"
    old = ["Johannes Klicpera", *d["authors"][1:]]
    path = tmp_path / "disputed.bib"
    path.write_text(bib("old", d["title"], old, 2020, "booktitle = {ICLR}")
                    + bib("added", d["title"], old + ["Yoshua Bengio"], 2020, "booktitle = {ICLR}"), encoding="utf-8")
    got = {c.key: c for c in check_refs(path, work=work)}
    assert got["old"].status == "verified" and any("disagree on the authors" in n for n in got["old"].notes)
    assert got["added"].status == "mismatch" and "Yoshua Bengio" in got["added"].why


@pytest.mark.data("citations_cs768/papers.jsonl.xz")
def test_an_entry_cited_so_by_other_papers_is_verified(work, tmp_path):
    """Three real reference lists that cite Adam (cut from citations_cs768): the arXiv entry no record
    holds is verified as cited so by 3 papers; with another first author it is not."""


    from mustcite.refcheck import check_entries
    from mustcite.refcheck.entries import entries_from_bib

    lists = _three_adam_lists(tmp_path)
    index = load_index(work, cache=False, citations=lists)
    text = ("@article{adam, title={Adam: A Method for Stochastic Optimization}, author={Kingma, Diederik P. and Ba, "
            "Jimmy}, journal={arXiv preprint arXiv:1412.6980}, year={2014}}\n"
            "@article{other, title={Adam: A Method for Stochastic Optimization}, author={Smith, John}, "
            "journal={arXiv preprint arXiv:1412.6980}, year={2014}}\n")
    got = {c.key: c for c in check_entries(entries_from_bib(text, "x.bib")[0], index)}
    assert index.consensus.papers == 3
    assert got["adam"].status == "verified" and "by 3 papers' reference lists" in got["adam"].why, got["adam"].why
    assert got["other"].status == "unverifiable"


@pytest.mark.data("citations_cs768/papers.jsonl.xz")
def test_the_consensus_built_into_the_work_folder_is_used_by_default(work, tmp_path, capsys):
    """`works consensus` builds the table of three real reference lists into the corpus folder (a
    rerun skips it: same checksum); check-refs then verifies the arXiv entry by default, and
    --no-citations (or $MUSTCITE_CITATIONS=off) checks without it."""
    import json

    from mustcite.refcheck.consensus import CONSENSUS_FILE, CONSENSUS_META

    lists = _three_adam_lists(tmp_path)
    bibfile = tmp_path / "adam.bib"
    bibfile.write_text("@article{adam, title={Adam: A Method for Stochastic Optimization}, author={Kingma, Diederik "
                       "P. and Ba, Jimmy}, journal={arXiv preprint arXiv:1412.6980}, year={2014}}\n", encoding="utf-8")
    built = work / "corpus" / CONSENSUS_FILE
    try:
        assert main(["--work", str(work), "works", "consensus", str(lists), "--workers", "1"]) == 0
        meta = json.loads((work / "corpus" / CONSENSUS_META).read_text())
        assert meta["papers"] == 3 and meta["items"] > 50 and built.is_file()
        capsys.readouterr()
        assert main(["--work", str(work), "works", "consensus", str(lists)]) == 0
        assert "up to date" in capsys.readouterr().out
        assert run(work, str(bibfile), "--format", "json") == 0
        got = json.loads(capsys.readouterr().out.splitlines()[0])
        assert got["status"] == "verified" and "by 3 papers' reference lists" in got["why"], got["why"]
        assert "does not check the venue" in got["why"]
        assert run(work, str(bibfile), "--format", "json", "--no-citations") == 0
        got = json.loads(capsys.readouterr().out.splitlines()[0])
        assert got["status"] == "unverifiable", got["why"]
        assert load_index(work, citations=False).consensus is None
        assert load_index(work).consensus.papers == 3
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("MUSTCITE_CITATIONS", "off")
            assert load_index(work).consensus is None
        assert run(work, str(bibfile), "--no-citations", "--citations", str(lists)) == 2
    finally:
        built.unlink(missing_ok=True)
        (work / "corpus" / CONSENSUS_META).unlink(missing_ok=True)
    assert load_index(work).consensus is None


def _three_adam_lists(tmp_path):
    """The first three real reference lists of ``citations_cs768`` that cite Kingma and Ba's Adam,
    as a file of that format."""
    import lzma

    from helpers import DATA

    picked = []
    with lzma.open(DATA / "citations_cs768" / "papers.jsonl.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            if "adam: a method for stochastic optimization" in line.lower() and "Kingma" in line:
                picked.append(line)
                if len(picked) == 3:
                    break
    lists = tmp_path / "three.jsonl.xz"
    with lzma.open(lists, "wt", encoding="utf-8") as fh:
        fh.writelines(picked)
    return lists
