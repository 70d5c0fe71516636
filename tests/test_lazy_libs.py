"""Heavy and optional libraries come through :mod:`mustcite.lazy_libs`, which names the pip extra
that installs a missing one."""

from __future__ import annotations

import sys

import pytest

from mustcite import lazy_libs
from mustcite.errors import MissingLibraryError, MustciteError


@pytest.mark.parametrize(("load", "module", "extra"), [
    (lazy_libs.torch, "torch", "dense"),
    (lazy_libs.sentence_transformers, "sentence_transformers", "dense"),
    (lazy_libs.onnxruntime, "onnxruntime", "dense"),
    (lazy_libs.faiss, "faiss", "dense"),
    (lazy_libs.ray, "ray", "ray"),
    (lazy_libs.uvicorn, "uvicorn", "serve"),
    (lazy_libs.torch_geometric, "torch_geometric", "graph"),
    (lazy_libs.google_genai, "google.genai", "judges"),
    (lazy_libs.xllamacpp, "xllamacpp", "llm"),
    (lazy_libs.pygls, "pygls", "lsp"),
])
def test_a_missing_library_names_its_extra(monkeypatch, load, module, extra):
    monkeypatch.setitem(sys.modules, module, None)         # as if it were not installed
    with pytest.raises(MissingLibraryError) as e:
        load("the thing")
    assert isinstance(e.value, MustciteError) and e.value.exit_code == 1
    assert e.value.message.startswith("the thing needs ") and "not installed" in e.value.message
    assert f"mustcite[{extra}]" in (e.value.hint or "")


def test_missing_pylate_gives_its_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "pylate", None)
    with pytest.raises(MissingLibraryError) as e:
        lazy_libs.pylate()
    assert e.value.message.startswith("ColBERT needs PyLate")
    assert "mustcite[colbert]" in e.value.hint and "--no-deps pylate==1.6.0" in e.value.hint


def test_a_missing_dependency_is_named(monkeypatch):
    """A library that is there but fails on a missing dependency of its own says which one."""
    real = lazy_libs.importlib.import_module

    def fail(name, *a, **k):
        if name == "faiss":
            raise ModuleNotFoundError("No module named 'numpy.core'", name="numpy.core")
        return real(name, *a, **k)

    monkeypatch.setattr(lazy_libs.importlib, "import_module", fail)
    monkeypatch.delitem(sys.modules, "faiss", raising=False)
    with pytest.raises(MissingLibraryError, match=r"faiss-cpu is not installed \(numpy.core is missing\)") as e:
        lazy_libs.faiss()
    assert e.value.hint == "pip install 'mustcite[dense]'"


def test_a_dependency_of_mustcite_says_to_reinstall(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.metrics", None)
    with pytest.raises(MissingLibraryError) as e:
        lazy_libs.sklearn_metrics()
    assert "scikit-learn" in e.value.message and "reinstall mustcite" in e.value.hint


def test_the_module_is_imported_once_and_kept():
    first = lazy_libs.sklearn_metrics()
    assert first is sys.modules["sklearn.metrics"] and lazy_libs.sklearn_metrics() is first
