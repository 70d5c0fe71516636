"""The short Python API checks its arguments as the command line and the REST API do: a wrong
``top``, ``year``, draft path or text raises :class:`~mustcite.errors.UsageError` naming it, before
any model is loaded (no model is needed here), never a raw TypeError or an empty answer."""

from __future__ import annotations

import pytest

import mustcite
from mustcite.errors import MustciteError, UsageError


@pytest.fixture(autouse=True)
def no_model(tmp_path, monkeypatch):
    """An empty work folder: a call that got past its checks would fail on the missing model."""
    monkeypatch.setenv("MUSTCITE_WORK", str(tmp_path))


def _raises(field: str, fn, *args, **kw) -> UsageError:
    with pytest.raises(UsageError) as info:
        fn(*args, **kw)
    assert info.value.field == field and field in str(info.value)
    return info.value


@pytest.mark.parametrize("top", [0, -1, 501, "5", None, 2.5, True])
def test_audit_top_must_be_a_whole_number_in_range(tmp_path, top):
    draft = tmp_path / "draft.md"
    draft.write_text("# A title\n\nAbstract: words.\n")
    _raises("top", mustcite.audit, draft, top=top)


@pytest.mark.parametrize("top", [0, -3, 1001, "5", None, 2.5, False])
def test_recommend_top_must_be_a_whole_number_in_range(top):
    _raises("top", mustcite.must_cite, "A title", "An abstract", top=top)


@pytest.mark.parametrize("year", [1500, 3000, "twenty", 2024.5, [2024], True])
def test_year_is_checked_as_the_command_line_checks_it(tmp_path, year):
    draft = tmp_path / "draft.md"
    draft.write_text("# A title\n\nAbstract: words.\n")
    _raises("year", mustcite.audit, draft, year=year)
    _raises("year", mustcite.must_cite, "A title", year=year)


@pytest.mark.parametrize("path", [None, 5, b"draft.md", "", "  ", ["draft.md"], "a\x00b"])
def test_the_draft_must_be_a_path(path):
    _raises("path", mustcite.audit, path)


@pytest.mark.parametrize("title,abstract,field", [(None, "", "title"), (b"T", "", "title"), ("T", None, "abstract"),
                                                  ("T", 5, "abstract")])
def test_texts_must_be_strings(title, abstract, field):
    _raises(field, mustcite.must_cite, title, abstract)


def test_the_model_argument_must_be_a_path():
    _raises("model", mustcite.load, 5)
    _raises("model", mustcite.must_cite, "A title", model=b"models")


def test_valid_arguments_pass_the_checks(tmp_path):
    """Right arguments get as far as loading the model (missing here: a MustciteError saying so)."""
    draft = tmp_path / "draft.md"
    draft.write_text("# A title\n\nAbstract: words.\n")
    for call in (lambda: mustcite.audit(draft, top=1, year="2024"), lambda: mustcite.audit(str(draft), top=500),
                 lambda: mustcite.must_cite("A title", top=1000, year=2024.0)):
        with pytest.raises(MustciteError) as info:
            call()
        assert not isinstance(info.value, UsageError) and info.value.field is None


# ---- every public entry point, every argument ------------------------------------------------------

def _bare():
    """A Recommender with no model: every check runs before the model is used, so a call that got
    past its checks fails on the missing parts (AttributeError), never silently."""
    from mustcite.recommend import Recommender

    return Recommender.__new__(Recommender)


def _entry(name: str):
    from mustcite.recommend import Recommender
    from mustcite.recommend.audit import audit_draft

    rec = _bare()
    return {
        "must_cite": lambda **kw: mustcite.must_cite(**{"title": "A title"} | kw),
        "audit": lambda **kw: mustcite.audit(**{"path": "draft.md"} | kw),
        "load": lambda **kw: mustcite.load(**kw),
        "Recommender.load": lambda **kw: Recommender.load(**{"folder": "model"} | kw),
        "Recommender.build": lambda **kw: Recommender.build(**{"pool": [], "labelled": []} | kw),
        "Recommender.fit": lambda **kw: rec.fit(**kw),
        "Recommender.recommend": lambda **kw: rec.recommend(**{"title": "A title"} | kw),
        "Recommender.recommend_many": lambda **kw: rec.recommend_many(**{"queries": [{"title": "A"}]} | kw),
        "Recommender.rank_ids": lambda **kw: rec.rank_ids(**{"queries": [{"title": "A"}]} | kw),
        "Recommender.save": lambda **kw: rec.save(**kw),
        "Recommender.save_learned": lambda **kw: rec.save_learned(**kw),
        "Recommender.effective_year": lambda **kw: Recommender.effective_year(**kw),
        "audit_draft": lambda **kw: audit_draft(**{"rec": rec, "path": "draft.md"} | kw),
    }[name]


TOP = ["7", 1.5, 0, -1, None, True, [5]]
YEAR = ["twenty", 2024.5, 1500, 3000, [2024], True, {}]
PATH = [5, b"x", "", "  ", "a\x00b", ["x"]]
FLAG = ["yes", 1, None, [True]]
TEXT = [None, b"T", 5, ["T"]]

#: (entry point, argument, bad values): every argument of every public entry point
TABLE = [
    ("must_cite", "title", TEXT), ("must_cite", "abstract", TEXT), ("must_cite", "top", TOP + [1001]),
    ("must_cite", "year", YEAR), ("must_cite", "model", [5, b"m", "a\x00b", ["m"]]),
    ("audit", "path", [None] + PATH), ("audit", "top", TOP + [501]), ("audit", "year", YEAR),
    ("audit", "model", [5, b"m", ["m"]]),
    ("load", "model", [5, b"m", "a\x00b", ["m"], 2.5]),
    ("Recommender.load", "folder", [None] + PATH), ("Recommender.load", "cache_dir", [5, b"c", ["c"]]),
    ("Recommender.load", "cache_queries", FLAG),
    ("Recommender.build", "pool", [None, "papers", {"a": 1}, 5, ["not a dict"]]),
    ("Recommender.build", "labelled", [None, "papers", 5, [{"id": "x"}]]),
    ("Recommender.build", "config", ["dense", {"dense": False}, 5]),
    ("Recommender.build", "cache_dir", [5, b"c"]),
    ("Recommender.fit", "train", ["papers", 5, [{"id": "x"}]]), ("Recommender.fit", "batch", TOP),
    ("Recommender.fit", "negatives", ["0.5", 0, -0.1, 1.5, float("nan"), None, True]),
    ("Recommender.recommend", "title", TEXT), ("Recommender.recommend", "abstract", TEXT),
    ("Recommender.recommend", "top", TOP + [1001]), ("Recommender.recommend", "year", YEAR),
    ("Recommender.recommend_many", "queries", [None, "A title", {"title": "A"}, 5, ["A title"], [5]]),
    ("Recommender.recommend_many", "top", TOP), ("Recommender.recommend_many", "evidence", FLAG),
    ("Recommender.recommend_many", "exclude_self", FLAG),
    ("Recommender.recommend_many", "rank_by", ["type9", 1, "", ["type1"]]),
    ("Recommender.rank_ids", "queries", [None, "A title", {"title": "A"}, 5]),
    ("Recommender.rank_ids", "tiers", ["type1", ("type9",), 5, [None]]),
    ("Recommender.rank_ids", "top", TOP), ("Recommender.rank_ids", "exclude_self", FLAG),
    ("Recommender.save", "folder", [None] + PATH), ("Recommender.save_learned", "folder", [None] + PATH),
    ("Recommender.effective_year", "year", YEAR),
    ("audit_draft", "rec", [None, "model", 5]), ("audit_draft", "path", [None] + PATH),
    ("audit_draft", "top", TOP), ("audit_draft", "year", YEAR), ("audit_draft", "show_all", FLAG),
    ("audit_draft", "min_score", ["0.5", None, float("nan"), True]),
    ("audit_draft", "named", ["both", None, 5, "", "Rules"]),
]


@pytest.mark.parametrize("entry,arg,bad", [(e, a, b) for e, a, bs in TABLE for b in bs],
                         ids=lambda v: repr(v)[:20])
def test_every_public_entry_point_checks_every_argument(entry, arg, bad):
    call = _entry(entry)
    with pytest.raises(UsageError) as info:
        call(**{arg: bad})
    assert info.value.field == arg and arg in str(info.value), (entry, arg, bad, str(info.value))
    assert len(str(info.value)) < 300


def test_a_query_names_the_field_that_is_wrong():
    rec = _bare()
    for query, field in (({"title": "A", "abstract": 5}, "abstract"), ({"title": b"A"}, "title"),
                         ({"title": "A", "year": "soon"}, "year")):
        with pytest.raises(MustciteError) as info:
            rec.recommend_many([query])
        assert info.value.field == field, (query, str(info.value))


def test_the_table_covers_every_argument_of_every_entry_point():
    import inspect

    from mustcite.recommend import Recommender
    from mustcite.recommend.audit import audit_draft

    functions = {"must_cite": mustcite.must_cite, "audit": mustcite.audit, "load": mustcite.load,
                 "audit_draft": audit_draft}
    functions |= {f"Recommender.{m}": getattr(Recommender, m) for m in (
        "load", "build", "fit", "recommend", "recommend_many", "rank_ids", "save", "save_learned", "effective_year")}
    covered = {(e, a) for e, a, _ in TABLE}
    for name, fn in functions.items():
        params = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls", "calibration", "weights")]
        assert {(name, p) for p in params} <= covered, (name, params)
