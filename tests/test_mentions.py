"""The mention table: finding names in real sentences, labels read from real full texts, the seeded
split, link probability and commonness, and that the held-out papers never feed what is learned."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mustcite.extract.works import build_catalogue
from mustcite.extract.works.linkprob import (
    arrow_table,
    fold_of,
    form_stats,
    out_of_fold_stats,
    target_stats,
)
from mustcite.extract.works.mention_table import (
    MENTIONS_SCHEMA,
    TABLE_FILE,
    build_lexicon,
    build_mention_table,
    mention_split,
    mentions_schema_json,
    read_ref_list,
    split_file_content,
)
from mustcite.extract.works.occurrences import Candidate, NameLexicon, find_names

SPLIT_FILE = Path(__file__).resolve().parents[1] / "benchmarks" / "splits" / "mentions_split.json"
#: five NeurIPS 2024 papers that write and cite CIFAR-10, Adam, ResNet
PAPERS = ["2NKumsITFw", "3NaqGg92KZ", "444LAH3MhG", "DONsOc7rY1", "G5lMFOtFHa"]
HELD_OUT = "G5lMFOtFHa"


def _lexicon(*names: str) -> NameLexicon:
    from mustcite.extract.works import name_key

    return NameLexicon({name_key(n): [Candidate(f"w-{name_key(n)}", f"w-{name_key(n)}", n, "mined", 3, "dataset")]
                        for n in names})


@pytest.mark.parametrize("sentence,expected", [
    # sentences of the NeurIPS 2023/2024 full texts
    ("the performance of the proposed AdaptCDRP on two datasets, CIFAR-10 and CIFAR-100 [21], by generating",
     [("CIFAR-10", "", False), ("CIFAR-100", "", False)]),
    ("implicit bias of optimizers such as SGD or Adam [48]. Lastly", [("SGD", "", False), ("Adam", "", False)]),
    ("classification datasets: CIFAR10, CIFAR100 [22], and ImageNet-1k [32].",
     [("CIFAR10", "", False), ("CIFAR100", "", False), ("ImageNet", "-1k", False)]),
    ("We use the ResNet-18 architecture [26] for CIFAR-10 andCIFAR-10N",
     [("ResNet", "-18", False), ("CIFAR-10", "", False)]),
    ("we fine-tune Llama-2-7B and LLaMA's weights", [("Llama-2", "-7B", False), ("LLaMA", "", True)]),
    ("as in Stable Diffusion [40] and StableDiffusion-XL",
     [("Stable Diffusion", "", False), ("StableDiffusion", "-XL", False)]),
    ("we clip the gradients and use adam", []),                       # cased names need capitals
    ("training times on an NVIDIA V100 GPU", [("V100", "", False)]),
])
def test_find_names_in_real_sentences(sentence, expected):
    lex = _lexicon("CIFAR-10", "CIFAR-100", "SGD", "Adam", "ImageNet", "ResNet", "Llama 2", "LLaMA",
                   "Stable Diffusion", "V100")
    assert [(h.surface, h.hyphen_rest, h.possessive) for h in find_names(sentence, lex)] == expected


def test_longest_name_wins_and_words_join_across_spaces():
    lex = _lexicon("CIFAR", "CIFAR-10", "GPT", "GPT-4")
    # GPT-4o: a version of GPT that the names do not hold, while they hold GPT-4 as another work
    assert [h.surface for h in find_names("on CIFAR 10 and CIFAR-10 with GPT-4 and GPT-4o", lex)] == \
        ["CIFAR 10", "CIFAR-10", "GPT-4"]
    assert find_names("with GPT-4o", _lexicon("GPT"))[0].hyphen_rest == "-4o"


def test_split_is_seeded_by_year_and_matches_the_committed_file():
    years = {f"p{i:03d}": (2023 if i < 40 else 2024) for i in range(100)} | {"nodate": None}
    a, b = mention_split(years), mention_split(dict(reversed(list(years.items()))))
    assert a == b and "nodate" not in a
    assert all(a[p] == "train" for p, y in years.items() if y == 2023)
    assert sum(s == "held_out" for s in a.values()) == 30              # half of the 60 papers of 2024
    assert mention_split(years, seed=1) != a
    committed = json.loads(SPLIT_FILE.read_text())
    assert committed["held_out_count"] == len(committed["held_out"]) and committed["share"] == 0.5


@pytest.mark.data("neurips/fulltext_2023", "neurips/fulltext_2024", "neurips/fulltext_2023_rest",
                  "neurips/fulltext_2024_partial")
def test_committed_split_is_the_seeded_split_of_the_full_texts(data_dir):
    years = {}
    for folder in ("fulltext_2023", "fulltext_2023_rest", "fulltext_2024", "fulltext_2024_partial"):
        with open(data_dir / "neurips" / folder / "manifest.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    r = json.loads(line)
                    years[r["id"]] = r["year"]
    assert len(years) == 5520
    assert split_file_content(mention_split(years))["held_out"] == json.loads(SPLIT_FILE.read_text())["held_out"]


def _rows(spec: list[tuple[str, str, str, str, bool, bool, int]]) -> pa.Table:
    """Rows of a mention table: (paper, split, key, target, cited_sentence, cited_paper, markers_adjacent)."""
    base = {f.name: (False if pa.types.is_boolean(f.type) else 0 if pa.types.is_integer(f.type) else "")
            for f in MENTIONS_SCHEMA}
    rows = [{**base, "paper": p, "split": s, "key": k, "target": t, "family": t, "cited_sentence": cs,
             "cited_paper": cp, "markers_adjacent": ma, "cited_adjacent": cs and ma > 0, "year": 2023}
            for p, s, k, t, cs, cp, ma in spec]
    return pa.Table.from_pylist(rows, schema=MENTIONS_SCHEMA)


def test_link_probability_and_commonness_count_papers():
    t = _rows([
        ("a", "train", "titan", "w-titan", False, False, 0), ("a", "train", "titan", "w-titan", False, False, 0),
        ("b", "train", "titan", "w-titan", False, False, 0), ("c", "train", "titan", "w-titan", False, False, 0),
        ("a", "train", "imagenet", "w-in", True, True, 1), ("b", "train", "imagenet", "w-in", True, True, 1),
        ("a", "train", "gemma", "w-g1", False, False, 1),                # "Gemma 2 [Gemma 2 report]"
        ("b", "train", "gemma", "w-g1", True, True, 1), ("c", "train", "gemma", "w-g1", False, True, 0),
        ("d", "train", "gemma", "w-g1", False, False, 0),
        ("e", "held_out", "titan", "w-titan", True, True, 1),            # never counted
    ])
    con = duckdb.connect()
    con.register("t", t)
    uses = arrow_table(con, "select paper, key, target, bool_or(cited_paper) as cited_paper, "
                       "bool_or(cited_sentence) as cited_sentence, bool_or(cited_adjacent) as cited_adjacent, "
                       "bool_or(markers_adjacent > 0) as linked from t where split = 'train' group by all")
    con.register("u", uses)
    forms = {r["key"]: r for r in form_stats(con, "u").to_pylist()}
    assert forms["titan"]["papers"] == 3 and forms["titan"]["link_probability"] == 0
    assert forms["imagenet"]["link_probability"] == 1
    assert forms["gemma"]["papers"] == 4 and forms["gemma"]["link_probability"] == 0.5
    assert forms["gemma"]["link_probability_sentence"] == 0.25
    targets = {r["key"]: r for r in target_stats(con, "u").to_pylist()}
    assert targets["gemma"]["linked_papers"] == 2 and targets["gemma"]["commonness"] == 0.5
    assert targets["titan"]["commonness"] is None                       # no linked use at all


def test_out_of_fold_statistics_never_count_the_paper_itself_or_held_out_papers(tmp_path):
    rng = random.Random(3)
    papers = [f"p{i}" for i in range(40)]
    spec = [(p, "held_out" if i >= 30 else "train", k, f"w-{k}", c, c, int(c))
            for i, p in enumerate(papers) for k in ("titan", "imagenet") if rng.random() < 0.8
            for c in [rng.random() < (0.9 if k == "imagenet" else 0.1)]]
    path = tmp_path / "m.parquet"
    pq.write_table(_rows(spec), path)
    con = duckdb.connect()
    first = {(r["paper"], r["key"]): r for r in out_of_fold_stats(con, path).to_pylist()}
    # the held-out papers' labels flipped: no figure of any paper changes
    flipped = [(p, s, k, t, (not cs) if s == "held_out" else cs, (not cp) if s == "held_out" else cp, m)
               for p, s, k, t, cs, cp, m in spec]
    pq.write_table(_rows(flipped), path)
    assert {(r["paper"], r["key"]): r for r in out_of_fold_stats(duckdb.connect(), path).to_pylist()} == first
    # a train paper's own labels flipped: its own figures do not change, those of its fold neither
    p0 = "p0"
    own = [(p, s, k, t, (not cs) if p == p0 else cs, (not cp) if p == p0 else cp, m) for p, s, k, t, cs, cp, m in spec]
    pq.write_table(_rows(own), path)
    again = {(r["paper"], r["key"]): r for r in out_of_fold_stats(duckdb.connect(), path).to_pylist()}
    same_fold = {p for p in papers[:30] if fold_of(p) == fold_of(p0)}
    for (p, k), r in again.items():
        if p in same_fold:
            assert r == first[(p, k)]
    assert any(again[key] != first[key] for key in again if key[0] not in same_fold)
    # held-out papers get the figures of all train papers
    held = [r for (p, k), r in first.items() if p == "p35" and k == "imagenet"]
    train_in = [(p, cp) for p, s, k, _, _, cp, _ in spec if s == "train" and k == "imagenet"]
    if held:
        assert held[0]["form_papers"] == len({p for p, _ in train_in})


@pytest.fixture(scope="module")
def fixture_table(tmp_path_factory, data_dir):
    """Five real NeurIPS 2024 papers extracted, their catalogue of cited works, and the mention table
    with one of them held out."""
    from mustcite.cli.main import main

    tmp = tmp_path_factory.mktemp("mentions")
    paths = [str(data_dir / "neurips" / "fulltext_2024" / f"{p}.md.gz") for p in PAPERS]
    out = tmp / "extract"
    assert main(["extract", *paths, "--out", str(out), "-w", "1"]) == 0
    build_catalogue([out], tmp / "corpus", workers=1, progress=False)
    split = tmp / "split.json"
    split.write_text(json.dumps({"held_out": [HELD_OUT]}))
    s = build_mention_table(out, tmp / "corpus", tmp / "mentions", split_file=split, workers=1, progress=False)
    return tmp, s


@pytest.mark.data("neurips/fulltext_2024")
def test_real_papers_give_labelled_mentions(fixture_table):
    tmp, s = fixture_table
    assert s.papers_ok == 5 and s.rows > 0 and not s.cached
    t = duckdb.sql(f"select * from '{tmp / 'mentions' / TABLE_FILE}'")
    assert set(t.columns) == set(MENTIONS_SCHEMA.names)
    rows = t.fetchall()
    cols = t.columns
    rows = [dict(zip(cols, r)) for r in rows]
    cifar = [r for r in rows if r["key"] == "cifar10"]
    assert {r["paper"] for r in cifar} == set(PAPERS)                  # all five write CIFAR-10
    # "CIFAR-10 [53]" in 3NaqGg92KZ: cited right at the name, in the sentence and in the paper
    at = [r for r in cifar if r["paper"] == "3NaqGg92KZ" and "CIFAR-10 [53]" in r["sentence"]]
    assert at and all(r["cited_adjacent"] and r["cited_sentence"] and r["cited_paper"] for r in at)
    # a sentence that writes the name without citing it
    plain = [r for r in cifar if r["paper"] == "G5lMFOtFHa" and r["sentence"].startswith("Test accuracy")]
    assert all(not r["cited_sentence"] for r in plain)
    assert all(r["cited_paper"] for r in cifar if r["paper"] == "G5lMFOtFHa")
    # tables and captions are searched too, and say so
    assert {"table", "caption"} <= {r["unit"] for r in rows}
    assert {r["split"] for r in rows if r["paper"] == HELD_OUT} == {"held_out"}
    # the same inputs read the table back
    again = build_mention_table(tmp / "extract", tmp / "corpus", tmp / "mentions", split_file=tmp / "split.json",
                                workers=1, progress=False)
    assert again.cached and again.rows == s.rows


@pytest.mark.data("neurips/fulltext_2024")
def test_held_out_papers_never_give_names(fixture_table):
    from mustcite.extract.works import WorkIndex

    tmp, _ = fixture_table
    lists = [read_ref_list(str(tmp / "extract" / f"{p}.json")) for p in PAPERS]
    works = WorkIndex.load(tmp / "corpus")
    years = dict.fromkeys(PAPERS, 2024)
    train = set(PAPERS) - {HELD_OUT}
    with_held = build_lexicon(lists, train, years, works, tmp / "corpus")
    without = build_lexicon([pl for pl in lists if pl.paper != HELD_OUT], train, years, works, tmp / "corpus")
    assert with_held.entries == without.entries
    assert "cifar10" in with_held.entries


def test_published_schema_matches_the_table_columns():
    schema = mentions_schema_json()
    assert set(schema["required"]) == set(MENTIONS_SCHEMA.names)
    assert set(schema["properties"]) == set(MENTIONS_SCHEMA.names)


def test_fit_scores_held_out_papers_only(tmp_path):
    from mustcite.recommend.mention_model import FEATURES, fit_mention_model

    rng = np.random.default_rng(0)
    n = 4000
    X = rng.random((n, len(FEATURES))).astype(np.float32)
    papers = np.array([f"p{i // 20}" for i in range(n)])
    split = np.where(np.arange(n) < 3000, "train", "held_out")
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5)
    meta = {"paper": papers, "split": split, "cited_sentence": y, "cited_paper": y}
    model, p = fit_mention_model(X, meta)
    assert len(p) == 1000 and model.card["held_out_papers"] == 50 and model.card["train_papers"] == 150
    assert model.card["held_out"]["brier"] < model.card["held_out"]["brier_base_rate"]
    # held-out labels do not change the fit
    y2 = y.copy()
    y2[3000:] = ~y2[3000:]
    model2, p2 = fit_mention_model(X, {**meta, "cited_sentence": y2, "cited_paper": y2})
    assert np.allclose(p, p2)
    model.save(tmp_path / "m")
    from mustcite.recommend.mention_model import MentionModel

    back = MentionModel.load(tmp_path / "m")
    assert np.allclose(back.predict(X[3000:]), p)



@pytest.mark.data("neurips/fulltext_2024")
def test_scorer_gives_a_new_text_the_features_the_held_out_papers_were_scored_with(fixture_table, tmp_path):
    from mustcite.recommend.mention_model import MentionScorer, feature_rows, train_mention_models

    tmp, _ = fixture_table
    table = tmp / "mentions" / TABLE_FILE
    train_mention_models(table, tmp_path / "models", labels=("cited_sentence",))
    con = duckdb.connect()
    con.register("oof", out_of_fold_stats(con, table))
    X, meta = feature_rows(con, table, "oof")
    held = meta["split"] == "held_out"
    rows = [r for r in pq.read_table(table).to_pylist() if r["split"] == "held_out"]
    scorer = MentionScorer(tmp_path / "models", label="cited_sentence")
    mine = scorer.features(rows)
    assert sorted(map(tuple, np.round(mine, 5))) == sorted(map(tuple, np.round(X[held], 5)))
    p = scorer.score(rows)
    assert p.shape == (len(rows),) and ((p >= 0) & (p <= 1)).all()


def test_command_exit_codes(tmp_path):
    from mustcite.cli.main import main

    assert main(["--work", str(tmp_path / "w"), "works", "mentions", str(tmp_path / "nope")]) == 2
    (tmp_path / "extract").mkdir()
    # an extraction folder without a catalogue of cited works beside it: bad data, named
    assert main(["--work", str(tmp_path / "w"), "works", "mentions", str(tmp_path / "extract"),
                 "--corpus", str(tmp_path / "corpus")]) == 1
    assert main(["--work", str(tmp_path / "w"), "works", "fit-mentions", str(tmp_path / "none.parquet")]) == 1
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")                                       # a generated bad input
    assert main(["--work", str(tmp_path / "w"), "works", "fit-mentions", str(bad)]) == 1


@pytest.mark.data("neurips/fulltext_2024", "drafts")
def test_a_drafts_sentences_give_rows_with_the_tables_features(fixture_table, data_dir):
    """A real LaTeX draft read as the audit reads it gives rows with exactly the columns of the
    table's rows (one builder for both), and "CIFAR-10 \\cite{cifar10}" with the reference linked to
    the work CIFAR-10 stands for is cited right at the name; with the reference unlinked, the marker
    cites another work."""
    import pickle

    from mustcite.extract.works.occurrences import TextOf, text_rows
    from mustcite.recommend import read_draft
    from mustcite.recommend.audit import _passages
    from mustcite.recommend.draft_mentions import draft_units
    from mustcite.recommend.findings import sentences

    tmp, _ = fixture_table
    with open(tmp / "mentions" / "lexicon.pkl", "rb") as fh:
        lex = pickle.load(fh)
    draft = read_draft(data_dir / "drafts" / "projects" / "moments-embedding-ssl")
    refs = draft.paper.to_reference_list()
    sents = sentences(_passages(draft.paper, refs))
    target = lex.entries["cifar10"][0].target
    key_refs = {r["bibkey"]: dict(r) for r in refs if r.get("bibkey")}
    key_refs["cifar10"]["paper_id"] = target
    rows = text_rows(TextOf("draft", 2024, "draft"), draft_units(sents, draft.title, key_refs), lex,
                     {lex.family_of(target)})
    table_cols = set(pq.read_schema(tmp / "mentions" / TABLE_FILE).names)
    assert rows and all(set(r) == table_cols for r in rows)
    at = [r for r in rows if r["key"] == "cifar10" and "CIFAR-10 [" in r["sentence"]
          and r["target"] == target]
    assert at and all(r["cited_adjacent"] and r["cited_sentence"] and r["cited_paper"] for r in at)
    key_refs["cifar10"]["paper_id"] = None
    rows = text_rows(TextOf("draft", 2024, "draft"), draft_units(sents, draft.title, key_refs), lex, set())
    at = [r for r in rows if r["key"] == "cifar10" and "CIFAR-10 [" in r["sentence"] and r["target"] == target]
    assert at and all(r["other_adjacent"] and not r["cited_adjacent"] for r in at)


def test_a_names_case_is_counted_apart_out_of_fold(tmp_path):
    """"PaLM" and "PALM" share a key; the papers writing "PaLM" cite the model, those writing "PALM"
    (an algorithm of the same letters) do not: the share of each case is its own, never counting the
    paper itself, and a held-out paper gets that of every train paper."""
    from mustcite.extract.works.linkprob import case_key, out_of_fold_case_stats
    from mustcite.recommend.mention_model import FEATURES, feature_rows

    papers = [f"p{i}" for i in range(30)]
    spec, surfaces = [], []
    for i, p in enumerate(papers):
        upper = i % 3 == 0
        spec.append((p, "held_out" if i >= 24 else "train", "palm", "w-palm", False, not upper, 0))
        surfaces.append("PALM" if upper else "PaLM")
    t = _rows(spec).to_pylist()
    for r, s in zip(t, surfaces):
        r["surface"] = s
    path = tmp_path / "m.parquet"
    pq.write_table(pa.Table.from_pylist(t, schema=MENTIONS_SCHEMA), path)
    assert case_key("PaLM-2") == "PaLM2" and case_key("PALM") == "PALM"
    con = duckdb.connect()
    stats = {(r["paper"], r["case_key"]): r for r in out_of_fold_case_stats(con, path).to_pylist()}
    train = [(p, s, cp) for (p, sp, _, _, _, cp, _), s in zip(spec, surfaces) if sp == "train"]
    for p, s, _ in train:
        others = [cp for q, s2, cp in train if s2 == s and fold_of(q) != fold_of(p)]
        assert stats[(p, s)]["case_papers"] == len(others) and stats[(p, s)]["case_cited_papers"] == sum(others)
    held = stats[("p24", "PALM")]
    assert held["case_papers"] == sum(s == "PALM" for _, s, _ in train) and held["case_cited_papers"] == 0
    con.register("oof", out_of_fold_stats(con, path))
    X, meta = feature_rows(con, path, "oof")
    share = X[:, FEATURES.index("case_cite_share")]
    held_out = meta["split"] == "held_out"
    upper = meta["surface"] == "PALM"
    assert share[held_out & upper].max() < 0.3 < 0.7 < share[held_out & ~upper].min()


def test_a_version_the_lexicon_keeps_apart_is_not_read_as_another():
    """Where the names hold LLaMA and Llama 2 as two works, "Llama 3" and "Llama-3-8B" name neither;
    where the versions are one work's sizes (ResNet, ResNet-50), "ResNet-18" is ResNet; a size
    ("Gemma 7B") is no version. Sentences of the NeurIPS 2024 full texts."""
    def cand(name: str, fam: str) -> Candidate:
        from mustcite.extract.works import name_key

        return Candidate(f"w-{name_key(name)}", fam, name, "mined", 5, "paper")

    names = {"LLaMA": "w-llama", "Llama 2": "w-llama2", "GPT": "w-gpt", "GPT-4": "w-gpt4", "ResNet": "w-resnet",
             "ResNet-50": "w-resnet", "Gemma": "w-gemma", "Gemma 2": "w-gemma2"}
    from mustcite.extract.works import name_key

    lex = NameLexicon({name_key(n): [cand(n, f)] for n, f in names.items()})
    assert lex.versions() == {"llama": {"2"}, "gpt": {"4"}, "gemma": {"2"}}

    def found(text: str) -> list[str]:
        return [h.surface for h in find_names(text, lex)]
    assert found("We evaluate Llama 3 and Llama-3-8B-Instruct against Llama-2-7B and LLaMA-13B.") == \
        ["Llama-2", "LLaMA"]
    assert found("responses of GPT-4o and GPT-4V are compared with GPT-4 and GPT-2") == ["GPT-4"]
    assert found("we train ResNet-18 on CIFAR-10 and ResNet-50 on ImageNet") == ["ResNet", "ResNet-50"]
    assert found("Gemma 7B and Gemma-2B and Gemma 2") == ["Gemma", "Gemma", "Gemma 2"]
