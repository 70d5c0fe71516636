"""The package's layers point one way, and no module imports itself round a loop.

Every import of every module under ``src/mustcite`` is read from the source (also those inside
functions and under ``if TYPE_CHECKING:``). An import may name a module of its own layer or of a
lower one, and no loop of imports may form, type-only imports (under ``TYPE_CHECKING``) included:
a loop that only type hints close still ties the modules together.

Run as a script for the figures: ``python tests/test_layers.py [--src DIR] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Lowest first. A top-level module or subpackage of ``mustcite`` belongs to exactly one layer;
#: ``mustcite`` itself (the package facade) is the top layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("ground", ("errors", "version", "io", "tarstream", "numeric", "retry", "config", "engine", "parallel",
                "run_markers", "datasets", "schemas", "quiet", "lazy_libs", "lazy_exports", "shown", "bibwrite")),
    ("corpus", ("corpus",)),
    ("collect", ("collect",)),
    ("extract", ("extract",)),
    ("retrieval", ("retrieval",)),
    ("labels", ("labels",)),
    ("benchmark", ("benchmark",)),
    ("recommend", ("recommend",)),
    ("scidoca", ("scidoca",)),
    ("refcheck", ("refcheck",)),
    ("front ends", ("api", "web", "lsp")),
    ("command line", ("cli", "__main__")),
    ("facade", ("",)),
]


@dataclass(frozen=True)
class Import:
    source: str        # the importing module
    target: str        # the imported module (the longest module name the import resolves to)
    line: int
    in_function: bool
    type_only: bool


def modules(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted((src / "mustcite").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(src: Path = SRC) -> list[Import]:
    """Every import of a ``mustcite`` module by another one."""
    mods = modules(src)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    out: list[Import] = []

    def visit(node: ast.AST, name: str, package: str, in_function: bool, type_only: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function = True
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, name, package, in_function, True)
            for child in node.orelse:
                visit(child, name, package, in_function, type_only)
            return
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
        for t in targets:
            if t == "mustcite" or t.startswith("mustcite."):
                target = resolve(t)
                if target and target != name:
                    out.append(Import(name, target, node.lineno, in_function, type_only))
        for child in ast.iter_child_nodes(node):
            visit(child, name, package, in_function, type_only)

    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        visit(tree, name, package, False, False)
    return out


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, (_, members) in enumerate(LAYERS):
        if top in members:
            return i
    raise KeyError(f"{module}: its top-level name {top!r} is in no layer (add it to LAYERS)")


def upward(edges: list[Import]) -> list[Import]:
    """Imports that name a module of a higher layer."""
    return [e for e in edges if layer_of(e.target) > layer_of(e.source)]


def loops(edges: list[Import]) -> list[list[str]]:
    """The import loops, type-only imports included: strongly connected groups of more than one module."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(set(graph) | {t for ts in graph.values() for t in ts}):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:                       # Tarjan's algorithm without recursion
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    group.append(m)
                    if m == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def report(src: Path = SRC) -> dict:
    mods = modules(src)
    edges = imports(src)
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in mods.items()}
    largest = max(sizes, key=sizes.get)
    found = loops(edges)
    up = upward(edges)
    return {
        "modules": len(mods),
        "lines": sum(sizes.values()),
        "largest_module": {"module": largest, "lines": sizes[largest]},
        "modules_over_600_lines": sorted(m for m, n in sizes.items() if n > 600),
        "imports": len(edges),
        "imports_inside_functions": sum(e.in_function for e in edges),
        "loops": len(found),
        "modules_in_loops": sum(len(g) for g in found),
        "largest_loop": max((len(g) for g in found), default=0),
        "upward_imports": len(up),
        "layers": [name for name, _ in LAYERS],
    }


# ---------------------------------------------------------------------------------------- tests

def _where(e: Import) -> str:
    return f"{e.source}:{e.line} -> {e.target}"


def test_every_module_has_a_layer():
    for m in modules():
        layer_of(m)


def test_no_import_points_up_a_layer():
    bad = upward(imports())
    assert not bad, "imports pointing up a layer:\n" + "\n".join(
        f"{_where(e)} ({LAYERS[layer_of(e.source)][0]} -> {LAYERS[layer_of(e.target)][0]})" for e in bad)


def test_no_import_loops():
    found = loops(imports())
    assert not found, "import loops:\n" + "\n".join(" <-> ".join(g) for g in found)


def test_the_checks_can_fail(tmp_path):
    """The scanner sees a loop through a function-level import, a loop that only a type hint closes,
    and an import that points up."""
    pkg = tmp_path / "mustcite"
    (pkg / "corpus").mkdir(parents=True)
    (pkg / "recommend").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "corpus" / "__init__.py").write_text("")
    (pkg / "recommend" / "__init__.py").write_text("")
    (pkg / "corpus" / "a.py").write_text("def f():\n    from ..recommend import b\n")
    (pkg / "recommend" / "b.py").write_text("from mustcite.corpus.a import f\n")
    (pkg / "recommend" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                            "    from .d import g\n")
    (pkg / "recommend" / "d.py").write_text("from .c import h\n")
    edges = imports(tmp_path)
    assert [_where(e) for e in upward(edges)] == ["mustcite.corpus.a:2 -> mustcite.recommend.b"]
    assert loops(edges) == [["mustcite.corpus.a", "mustcite.recommend.b"],
                            ["mustcite.recommend.c", "mustcite.recommend.d"]]
    assert [e.type_only for e in edges if e.source.endswith(".c")] == [True]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="import figures of the package: layers, loops, sizes")
    ap.add_argument("--src", type=Path, default=SRC, help="the src folder to read (default: this checkout's)")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args()
    rep = report(args.src)
    edges = imports(args.src)
    rep["loop_members"] = loops(edges)
    rep["upward"] = [_where(e) for e in upward(edges)]
    text = json.dumps(rep, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    sys.exit(0)
