"""The short Python API: ``mustcite.recommend``, ``mustcite.audit``, ``mustcite.load``; their
docstring examples run here against the test slice's model (as the default model of a work folder)."""

from __future__ import annotations

import doctest

import pytest
from helpers import DATA
from helpers import recommender as S

pytestmark = pytest.mark.data


@pytest.fixture()
def work(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "recommender").symlink_to(S.model_dir())
    monkeypatch.setenv("MUSTCITE_WORK", str(tmp_path))
    return tmp_path


def test_docstring_examples_run(work):
    import mustcite
    from mustcite.recommend import shortcuts

    draft = sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[0]
    for fn in (shortcuts.load, shortcuts.must_cite, shortcuts.audit):
        finder = doctest.DocTestFinder()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        for test in finder.find(fn, globs={"mustcite": mustcite, "DRAFT": draft}):
            runner.run(test)
        assert runner.failures == 0 and runner.tries > 0, fn.__name__


def test_the_short_api_is_the_long_one(work):
    import mustcite
    from mustcite.recommend import Recommender
    from mustcite.recommend.audit import AuditResult

    q = S.held_out_queries()[0]
    model = mustcite.load()
    assert isinstance(model, Recommender) and mustcite.load() is model            # loaded once
    short = mustcite.must_cite(q["title"], q["abstract"], year=2024, top=10)
    assert [r.paper_id for r in short] == [r.paper_id for r in model.recommend(q["title"], q["abstract"], top=10,
                                                                                  year=2024)]
    draft = sorted((DATA / "neurips" / "fulltext_2024").glob("*.md.gz"))[0]
    assert isinstance(mustcite.audit(draft, top=10), AuditResult)
    assert mustcite.Recommender is Recommender
