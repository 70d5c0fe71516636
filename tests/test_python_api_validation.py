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
