"""The experiment scripts in ``benchmarks/`` use the product's public API only, and never the tests.

The public API: the package facade ``mustcite`` (its ``__all__``), the ground modules of
:data:`GROUND` (their ``__all__``, else their names without a leading underscore) and the
subpackages of :data:`PACKAGES` (their ``__all__``). Every import in every ``benchmarks/**/*.py``,
also those inside functions, is read with ``ast``; each public module is imported once to read
its names. A subpackage imports the names of its ``_LAZY`` table on first use only (PEP 562), so
that importing it stays cheap; the table is checked against the source, without importing.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SRC = ROOT / "src" / "mustcite"

#: ground modules whose names are public
GROUND = ("config", "io", "errors", "engine", "parallel")
#: stage subpackages and front ends whose ``__all__`` is public
PACKAGES = ("corpus", "collect", "extract", "retrieval", "labels", "benchmark", "recommend", "scidoca", "refcheck",
            "api", "lsp")
PUBLIC = ("mustcite", *(f"mustcite.{m}" for m in GROUND + PACKAGES))
#: what importing a public module must not import
HEAVY = ("torch", "sentence_transformers", "transformers", "onnxruntime", "sklearn", "faiss", "pylate", "fastapi",
         "uvicorn", "pygls")


@cache
def public_names(module: str) -> frozenset[str]:
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    return frozenset(names)


def _mentions_tests(node: ast.AST) -> bool:
    """Whether an expression names the tests folder (a string "tests", or a path through it)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            parts = n.value.replace("\\", "/").strip("/").split("/")
            if "tests" in parts:
                return True
    return False


def _is_sys_path(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
        and node.value.id == "sys"


def _test_modules() -> set[str]:
    """Top-level names importable from tests/ only (a benchmark of the same name shadows it)."""
    names = {p.stem for p in (ROOT / "tests").glob("*.py")} | \
        {p.parent.name for p in (ROOT / "tests").glob("*/__init__.py")}
    return names - {p.stem for p in BENCHMARKS.glob("*.py")}


def problems(path: Path) -> list[str]:
    """Every import of ``path`` outside the public API, and every reach into tests/, as file:line: why."""
    rel = path.relative_to(ROOT)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    from_tests = _test_modules()
    out: list[str] = []

    def bad(node: ast.AST, why: str) -> None:
        out.append(f"{rel}:{node.lineno}: {why}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.partition(".")[0]
                if top == "mustcite" and a.name not in PUBLIC:
                    bad(node, f"import {a.name}: not public (import from its subpackage)")
                elif top in from_tests:
                    bad(node, f"import {a.name}: a module of tests/")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.partition(".")[0]
            if top in from_tests:
                bad(node, f"from {node.module} import ...: a module of tests/")
            if top != "mustcite":
                continue
            if node.module not in PUBLIC:
                bad(node, f"from {node.module} import ...: not public (import from "
                          f"{'.'.join(node.module.split('.')[:2])})")
                continue
            for a in node.names:
                if a.name.startswith("_") and a.name != "__version__":
                    bad(node, f"from {node.module} import {a.name}: a private name")
                elif a.name == "*" or a.name not in public_names(node.module):
                    bad(node, f"from {node.module} import {a.name}: not in {node.module}'s public names")
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and _is_sys_path(f.value) and any(map(_mentions_tests, node.args)):
                bad(node, f"sys.path.{f.attr}(...) into tests/")
            if isinstance(f, ast.Attribute) and f.attr == "addsitedir" and any(map(_mentions_tests, node.args)):
                bad(node, "site.addsitedir(...) into tests/")
            for kw in node.keywords:
                if kw.arg == "cwd" and _mentions_tests(kw.value):
                    bad(node, "a child process started in tests/")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                t = t.value if isinstance(t, ast.Subscript) else t
                if _is_sys_path(t) and _mentions_tests(node.value):
                    bad(node, "sys.path set to include tests/")
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == "PYTHONPATH" and _mentions_tests(v):
                    bad(node, "PYTHONPATH into tests/")
    return out


SCRIPTS = sorted(BENCHMARKS.rglob("*.py"))


def test_there_are_scripts():
    assert len(SCRIPTS) > 10


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_benchmark_imports_only_the_public_api(path):
    found = problems(path)
    assert not found, "\n".join(found)


def test_the_check_can_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "BENCHMARKS", tmp_path / "benchmarks")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    (tmp_path / "benchmarks").mkdir()
    script = tmp_path / "benchmarks" / "x.py"
    script.write_text("import sys\nfrom pathlib import Path\n"
                      "sys.path.insert(0, str(Path(__file__).parents[1] / 'tests'))\n"
                      "from mustcite.retrieval.bm25 import BM25Retriever\n"
                      "from mustcite.retrieval import _LAZY, make_retriever, no_such_name\n"
                      "def f():\n    import mustcite.recommend.train\n    from test_x import y\n"
                      "from mustcite import must_cite, version\n")
    lines = sorted(int(p.split(": ", 1)[0].rsplit(":", 1)[1]) for p in problems(script))
    assert lines == [3, 4, 5, 5, 7, 8, 9]


@pytest.mark.parametrize("package", PACKAGES)
def test_lazy_names_are_defined_where_they_point(package):
    """Each ``_LAZY`` entry names a submodule that binds the name at its top level, and no lazy
    name is also a submodule (an imported submodule would hide it)."""
    init = SRC / package / "__init__.py"
    lazy: dict[str, str] = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            lazy = ast.literal_eval(node.value)
    wrong = []
    for name, where in lazy.items():
        module, _, attr = where.partition(":")
        base = SRC / package / Path(*module.split("."))
        file = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if not file.is_file():
            wrong.append(f"{name}: no module {module}")
            continue
        bound = set()
        for node in ast.parse(file.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    bound |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).partition(".")[0] for a in node.names}
        if (attr or name) not in bound:
            wrong.append(f"{name}: {module} defines no {attr or name}")
        if (SRC / package / f"{name}.py").exists() or (SRC / package / name / "__init__.py").exists():
            wrong.append(f"{name}: also a submodule of mustcite.{package}")
    assert not wrong, "\n".join(wrong)


def test_public_modules_import_nothing_heavy():
    """Importing every public module (and reading each ``__all__``) loads no heavy library."""
    code = ("import importlib, sys\n"
            f"for m in {PUBLIC!r}:\n    importlib.import_module(m)\n"
            f"print(' '.join(h for h in {HEAVY!r} if h in sys.modules))")
    src = str(Path(importlib.import_module("mustcite").__file__).parents[1])   # the mustcite under test
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.strip() == "", f"heavy libraries imported: {done.stdout.strip()}"
