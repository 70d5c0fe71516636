"""Heavy and optional libraries come through :mod:`mustcite.lazy_libs`, which names the pip extra
that installs a missing one.

Every ``.py`` file under ``src/mustcite`` is read with ``ast``: a function (or lambda) there may not
import one of :data:`HEAVY` itself, by an import statement or by ``importlib.import_module`` /
``__import__`` with a literal name; only ``lazy_libs.py`` does. A module that imports such a library
at its top is not flagged (``tests/test_bench_imports.py`` keeps the public modules free of them).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from mustcite import lazy_libs
from mustcite.errors import MissingLibraryError, MustciteError

SRC = Path(__file__).resolve().parents[1] / "src"
#: the libraries only lazy_libs imports inside functions
HEAVY = ("torch", "sentence_transformers", "transformers", "sklearn", "onnxruntime", "faiss", "pylate", "ray")


def function_level_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of each import made inside a function or lambda of ``source``: import
    statements, and ``importlib.import_module`` / ``__import__`` calls with a literal module name."""
    out: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function = True
        if in_function:
            if isinstance(node, ast.Import):
                out.extend((node.lineno, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                out.append((node.lineno, node.module))
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name in ("import_module", "__import__"):
                    out.append((node.lineno, node.args[0].value))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(ast.parse(source), False)
    return out


def heavy_imports_in_functions(src: Path = SRC) -> list[str]:
    """``path:line: module`` for each function-level import of a :data:`HEAVY` library outside lazy_libs.py."""
    bad = []
    for path in sorted((src / "mustcite").rglob("*.py")):
        if path == src / "mustcite" / "lazy_libs.py":
            continue
        for line, module in function_level_imports(path.read_text(encoding="utf-8")):
            if module.partition(".")[0] in HEAVY:
                bad.append(f"{path.relative_to(src.parent)}:{line}: {module}")
    return bad


def test_heavy_libraries_are_imported_in_functions_only_by_lazy_libs():
    bad = heavy_imports_in_functions()
    assert not bad, ("heavy libraries imported inside functions (use mustcite.lazy_libs):\n" + "\n".join(bad))


def test_the_scan_sees_imports_in_functions(tmp_path):
    pkg = tmp_path / "src" / "mustcite"
    pkg.mkdir(parents=True)
    (pkg / "lazy_libs.py").write_text("def torch():\n    import torch\n    return torch\n")
    (pkg / "a.py").write_text(
        "import torch\n"                                        # module level: allowed here
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import sklearn\n"
        "def f():\n    import torch.nn.functional as F\n"        # 6
        "class C:\n    def m(self):\n        from sklearn.metrics import f1_score\n"   # 9
        "        def inner():\n            import rayon, raytracer\n"                # not ray
        "g = lambda: __import__('pylate')\n"                    # 12
        "def h():\n    import importlib\n    return importlib.import_module('transformers.utils')\n")  # 15
    assert heavy_imports_in_functions(tmp_path / "src") == [
        "src/mustcite/a.py:6: torch.nn.functional", "src/mustcite/a.py:9: sklearn.metrics",
        "src/mustcite/a.py:12: pylate", "src/mustcite/a.py:15: transformers.utils"]


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


@pytest.mark.parametrize(("argv", "module", "extra"), [
    (["lsp"], "pygls", "lsp"),
    (["serve", "--port", "1"], "uvicorn", "serve"),
])
def test_a_command_names_the_missing_extra(monkeypatch, capsys, argv, module, extra):
    from mustcite.cli.main import main

    monkeypatch.setitem(sys.modules, module, None)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"needs {module}, which is not installed" in err and f"mustcite[{extra}]" in err
    assert "Traceback" not in err
