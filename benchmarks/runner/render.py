"""One renderer for every measured table of the documentation.

A page holds a marker pair ``<!-- table: NAME -->`` ... ``<!-- /table -->``; the table NAME is data,
under ``tables:`` of an entry of ``benchmarks/experiments/*.yaml``::

    labels: {type1: Type I}       # optional: mappings for the label filter (or {NAME: {...}, ...})
    templates: {kind: "..."}      # optional: templates for the join filter
    file: other.json              # optional: the JSON file (default: the entry's result)
    columns:                      # one per column, left to right
      - header: "R@100 / MRR"     # a template, filled from the file's root
        align: "---:"             # optional; "---" by default
        col: type1                # optional: the value of $col in this column's cells
        cell: "{R@100|f3}"        # optional: the column's cell, unless the row gives all its cells
        bold_max: R@100           # optional: bold the cell of the row(s) with the highest value there
    rows:                         # groups of rows, top to bottom
      - each: tables.type1        # a row per member of a dict ($key: its key) or a list ($key: its index)
        keys: [a, b]              # optional: only these members, in this order (absent ones skipped)
        skip: [c]                 # optional: leave these members out
        where: f1                 # optional: a row only where this path leads to a value (not empty, 0, false)
        unless: identical         # optional: a row only where this path does not
        file: other.json          # optional: rows from this file
        vars: {system: lexical}   # optional: more $variables
        let: {k: "{chosen_k}"}    # optional: $variables filled from each row (for nested groups)
        label: "{$key|label}"     # the first cell, unless its column has a cell
        cell: "{.$col|f3}"        # the cells of the columns without a cell of their own
        cells: [...]              # or every cell of the row, one per column
        bold: true                # optional: bold every cell (or a list of the keys whose rows are bold)
        rows: [...]               # optional: nested groups, whose rows are the members of each row
      - label: fixed row          # without each: one row, whose object is the file (or the parent's row)
        cells: [...]
      - builder: name             # rows from a named function of benchmarks.runner.builders

A cell is a template, or a list of templates of which the first whose every field resolves is used.
A template is text with ``{PATH|filter|...}`` fields; a ``[[...]]`` part of it is left out when a
field in it does not resolve; a template with a field that does not resolve renders as "".

PATH is relative to the row's object (``/`` first: to the file's root; ``.`` alone: the object
itself); its parts are joined by ``.``; ``[a.b]`` is one part that holds dots; ``*`` fans out over
every member; ``?field=value`` is the first member (of a list of objects) whose field is value;
``$name`` in a part is replaced by a variable's value (``$key``, ``$col``, vars, let); ``$name``
alone is the value itself and ``.$name`` the member it names.

Filters, left to right:

* arithmetic: ``div:X mul:X sub:X add:X`` (X a number or a path), ``inv floor``;
* of a list: ``max min sum len count mid`` (count: the true ones; mid: the upper median);
  ``max:X min:X``: of the value and X;
* keep or drop: ``ge:X gt:X le:X lt:X ne:X truthy`` keep the value when the test holds, else it does
  not resolve (for alternatives and ``[[...]]``); ``blank`` renders a kept value as nothing;
* text: ``head:N`` (the first N characters), ``upto:S`` (up to S), ``label[:NAME]`` (through the
  table's labels), ``join:NAME`` (every member through ``templates[NAME]``, joined by ", ");
* formats: ``f1 f2 f3 f4`` (decimals), ``int`` (1,234), ``pct`` (12.3%), ``ratio`` (1.23x), ``p``
  (p < 0.001, p = 0.03), ``pval`` (the same without "p "), ``pshort`` (p 0.03), ``stars`` (``*``
  p < 0.05, ``**`` p < 0.01), ``secs`` (45 s, 12 min), ``hours`` (under 1 min ... 2.0 h), ``mb``
  (512 MB, 1.2 GB), ``yesno``, ``code`` (a message in backticks, escaped, cut at 110 characters),
  ``bold``, or any Python format spec (``.1f``, ``,.0f``, ``.2g``, ``.1e``, ``.0%``).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
MARKER = re.compile(r"(<!-- table: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)
#: files copied into the documentation as they are (source in results/, destination in docs/)
ASSETS = [("web_screenshot.png", "docs/assets/web_screenshot.png")]


class SpecError(ValueError):
    """A table spec or a template that cannot be read or rendered."""


class Missing(Exception):
    """A path that leads nowhere (or to None)."""


# ---------------------------------------------------------------------------- paths
_PART = re.compile(r"\[([^\]]*)\]|([^.\[]+)")
_VAR = re.compile(r"\$([A-Za-z][A-Za-z0-9]*)")


def split_path(path: str) -> tuple[bool, list[str]]:
    """``"/a.[b.c].d"`` -> ``(True, ["a", "b.c", "d"])``: whether it starts at the root, and its parts
    (a leading ``.`` says "relative" explicitly: ``.$col`` is the member named by ``$col``)."""
    absolute = path.startswith("/")
    text = path[1:] if absolute or (path.startswith(".") and path != ".") else path
    if text in ("", "."):
        return absolute, []
    parts, pos = [], 0
    while pos < len(text):
        m = _PART.match(text, pos)
        if not m:
            raise SpecError(f"bad path {path!r} at {text[pos:]!r}")
        parts.append(m.group(1) if m.group(1) is not None else m.group(2))
        pos = m.end()
        if pos < len(text):
            if text[pos] != ".":
                raise SpecError(f"bad path {path!r}: expected '.' at {text[pos:]!r}")
            pos += 1
    return absolute, parts


def _sub_vars(part: str, variables: dict) -> str:
    def sub(m: re.Match) -> str:
        if m.group(1) not in variables:
            raise SpecError(f"unknown variable ${m.group(1)}")
        return str(variables[m.group(1)])

    return _VAR.sub(sub, part)


def _step(obj, part: str):
    if part.startswith("?") and "=" in part:      # ?field=value: the first member whose field is value
        field, _, want = part[1:].partition("=")
        for _, item in members(obj):
            if isinstance(item, dict) and field in item and str(item[field]) == want:
                return item
        raise Missing(part)
    if isinstance(obj, dict):
        if part not in obj:
            raise Missing(part)
        return obj[part]
    if isinstance(obj, list) and re.fullmatch(r"-?\d+", part):
        i = int(part)
        if not -len(obj) <= i < len(obj):
            raise Missing(part)
        return obj[i]
    raise Missing(part)


def members(obj) -> list[tuple[str, object]]:
    """``(key, value)`` of every member of a dict, or ``(index, item)`` of a list."""
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, list):
        return [(str(i), v) for i, v in enumerate(obj)]
    raise Missing("not a dict or a list")


def resolve(path: str, row, root, variables: dict | None = None):
    """The value at ``path`` (see the module's docstring); :class:`Missing` when there is none."""
    variables = variables or {}
    m = _VAR.fullmatch(path)
    if m:
        if m.group(1) not in variables:
            raise SpecError(f"unknown variable ${m.group(1)}")
        return variables[m.group(1)]
    absolute, parts = split_path(path)
    values, fanned = [root if absolute else row], False
    for part in parts:
        if part == "*":
            values, fanned = [v for obj in values for _, v in members(obj)], True
            continue
        key = _sub_vars(part, variables)
        if fanned:
            out = []
            for obj in values:
                try:
                    v = _step(obj, key)
                except Missing:
                    continue
                if v is not None:
                    out.append(v)
            values = out
        else:
            values = [_step(values[0], key)]
    if fanned:
        return values
    if values[0] is None:
        raise Missing(path)
    return values[0]


# ---------------------------------------------------------------------------- filters and formats
def p_text(p: float) -> str:
    """A p-value the way the pages write it: ``p < 0.001`` or ``p = 0.03``."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.2f}".rstrip("0").rstrip(".")


def _hours(h: float) -> str:
    m = h * 60
    if m < 1:
        return "under 1 min"
    if m < 10:
        return f"{m:.1f} min"
    if m < 60:
        return f"{m:.0f} min"
    return f"{h:.1f} h"


def _code(s: str, limit: int = 110) -> str:
    s = str(s).replace("|", "\\|").replace("\n", " ")
    s = s if len(s) <= limit else s[:limit - 3] + "..."
    return f"`{s}`" if s else ""


def _number(x) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise SpecError(f"expected a number, got {x!r}")
    return x


def _values(x) -> list:
    if isinstance(x, dict):
        return list(x.values())
    if isinstance(x, list):
        return x
    raise SpecError(f"expected a list, got {x!r}")


FORMATS: dict[str, Callable] = {
    "f1": lambda x: f"{_number(x):.1f}", "f2": lambda x: f"{_number(x):.2f}",
    "f3": lambda x: f"{_number(x):.3f}", "f4": lambda x: f"{_number(x):.4f}",
    "int": lambda x: f"{_number(x):,}",
    "pct": lambda x: f"{100 * _number(x):.1f}%",
    "ratio": lambda x: f"{_number(x):.2f}x",
    "p": lambda x: p_text(_number(x)),
    "pval": lambda x: p_text(_number(x)).removeprefix("p "),
    "pshort": lambda x: f"p {x:.2g}" if _number(x) >= 0.001 else f"p {x:.1g}",
    "stars": lambda x: "**" if _number(x) < 0.01 else "*" if x < 0.05 else "",
    "secs": lambda x: f"{x:.0f} s" if _number(x) < 120 else f"{x / 60:.0f} min",
    "hours": lambda x: _hours(_number(x)),
    "mb": lambda x: f"{x / 1000:.1f} GB" if _number(x) >= 1000 else f"{x:.0f} MB",
    "yesno": lambda x: "yes" if x else "no",
    "code": _code,
    "bold": lambda x: f"**{x}**",
    "str": str,
}

#: filters that compute a value: name -> (function(value, argument), the argument: None (none taken),
#: "value" (a number or a path) or "text" (taken as written))
OPS: dict[str, tuple[Callable, str | None]] = {
    "div": (lambda x, a: _number(x) / _number(a), "value"),
    "mul": (lambda x, a: _number(x) * _number(a), "value"),
    "sub": (lambda x, a: _number(x) - _number(a), "value"),
    "add": (lambda x, a: _number(x) + _number(a), "value"),
    "inv": (lambda x, a: 1 / _number(x), None),
    "floor": (lambda x, a: math.floor(_number(x)), None),
    "max": (lambda x, a: max(_values(x)), None),
    "min": (lambda x, a: min(_values(x)), None),
    "sum": (lambda x, a: sum(_values(x)), None),
    "len": (lambda x, a: len(x), None),
    "count": (lambda x, a: sum(1 for v in _values(x) if v), None),
    "mid": (lambda x, a: sorted(_values(x))[len(_values(x)) // 2], None),
    "head": (lambda x, a: str(x)[:int(a)], "text"),
    "upto": (lambda x, a: str(x).split(a, 1)[0], "text"),
    # keep the value when the comparison holds, else count it as missing
    "ge": (lambda x, a: x if _number(x) >= _number(a) else None, "value"),
    "gt": (lambda x, a: x if _number(x) > _number(a) else None, "value"),
    "le": (lambda x, a: x if _number(x) <= _number(a) else None, "value"),
    "lt": (lambda x, a: x if _number(x) < _number(a) else None, "value"),
    "ne": (lambda x, a: x if x != a else None, "value"),
    "truthy": (lambda x, a: x if x else None, None),
    "blank": (lambda x, a: "", None),
}
_PYSPEC = re.compile(r"[<>^=]?[+\- ]?#?0?\d*[,_]?(\.\d+)?[eEfFgGd%]")


@dataclass
class Context:
    """Where a template is filled: the row's object, the file's root, the variables, the labels."""

    row: object
    root: object
    variables: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    templates: dict = field(default_factory=dict)

    def value(self, path: str):
        return resolve(path, self.row, self.root, self.variables)


def _argument(arg: str, ctx: Context):
    if re.fullmatch(r"-?\d+(\.\d*)?([eE]-?\d+)?", arg):
        return float(arg) if any(c in arg for c in ".eE") else int(arg)
    return ctx.value(arg)


def apply_filter(value, name: str, ctx: Context):
    fname, _, arg = name.partition(":")
    if fname == "label":
        table = ctx.labels.get(arg, {}) if arg else ctx.labels
        if not isinstance(table, dict):
            raise SpecError(f"labels {arg!r} is not a mapping")
        return table.get(str(value), value)
    if fname == "join":                 # each member through the table's template NAME, joined by ", "
        if arg not in ctx.templates:
            raise SpecError(f"join:{arg}: no template {arg!r} in the table's templates")
        return ", ".join(fill(ctx.templates[arg], Context(v, ctx.root, {**ctx.variables, "key": k}, ctx.labels,
                                                           ctx.templates))
                         for k, v in members(value))
    if fname in FORMATS:
        if arg:
            raise SpecError(f"format {fname!r} takes no argument")
        return FORMATS[fname](value)
    if fname in ("max", "min") and arg:     # max:X, min:X: of the value and X
        return (max if fname == "max" else min)(_number(value), _number(_argument(arg, ctx)))
    if fname in OPS:
        fn, takes = OPS[fname]
        if takes and not arg:
            raise SpecError(f"filter {fname!r} needs an argument ({fname}:X)")
        if arg and not takes:
            raise SpecError(f"filter {fname!r} takes no argument")
        return fn(value, _argument(arg, ctx) if takes == "value" else arg)
    if _PYSPEC.fullmatch(name):
        return format(_number(value), name)
    raise SpecError(f"unknown filter {name!r}")


_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_OPTIONAL = re.compile(r"\[\[(.*?)\]\]")


def fill(template: str, ctx: Context) -> str:
    """The template with its fields filled; :class:`Missing` when a field's path leads nowhere
    (a ``[[...]]`` part whose field leads nowhere is left out instead)."""
    if not isinstance(template, str):
        template = str(template)

    out, pos = [], 0
    for m in _OPTIONAL.finditer(template):
        out.append(_fill(template[pos:m.start()], ctx))
        try:
            out.append(_fill(m.group(1), ctx))
        except Missing:
            pass
        pos = m.end()
    out.append(_fill(template[pos:], ctx))
    return "".join(out)


def _fill(template: str, ctx: Context) -> str:
    def sub(m: re.Match) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        path, *filters = [s.strip() for s in m.group(1).split("|")]
        value = ctx.value(path)
        for f in filters:
            value = apply_filter(value, f, ctx)
            if value is None:
                raise Missing(f"{path}|{f}")
        return str(value)

    return _FIELD.sub(sub, template)


def cell(spec, ctx: Context) -> str:
    """A cell: one template (unresolved: ""), or a list of alternatives (the first that resolves)."""
    alternatives = spec if isinstance(spec, list) else [spec]
    for template in alternatives:
        try:
            return fill(template, ctx)
        except Missing:
            continue
    return ""


def truthy(path: str, ctx: Context) -> bool:
    """Whether ``path`` leads to a value that is there and not empty, zero or false."""
    try:
        return bool(ctx.value(path))
    except Missing:
        return False


# ---------------------------------------------------------------------------- tables
@dataclass
class Row:
    cells: list[str]
    numbers: list  # per column, the value bold_max compares (or None)


class Renderer:
    """Renders table specs against the JSON files of ``results``."""

    def __init__(self, results: Path = RESULTS):
        self.results = Path(results)
        self._cache: dict[str, object] = {}
        self._templates: dict = {}        # the templates of the table being rendered

    def load(self, name: str):
        if name not in self._cache:
            path = self.results / name
            if not path.exists():
                raise SpecError(f"no result file {path}")
            self._cache[name] = json.loads(path.read_text(encoding="utf-8"))
        return self._cache[name]

    def render(self, spec: dict, default_file: str | None = None) -> str:
        """The markdown table of one spec (header, alignment, rows; a newline at the end)."""
        if "text" in spec:              # the JSON holds the finished table
            data = self.load(spec.get("file") or default_file)
            ctx = Context(data, data)
            return str(ctx.value(spec["text"])).rstrip("\n") + "\n"
        columns = spec["columns"]
        file = spec.get("file") or default_file
        root = self.load(file) if file else {}
        labels = spec.get("labels") or {}
        self._templates = spec.get("templates") or {}
        header_ctx = Context(root, root, {}, labels, self._templates)
        header = [cell(c.get("header", ""), header_ctx) for c in columns]
        align = [c.get("align", "---") for c in columns]
        rows: list[Row] = []
        for group in spec["rows"]:
            rows += self._group(group, columns, root, root, {}, labels)
        for i, col in enumerate(columns):
            if col.get("bold_max") and len(rows) > 1:
                numbers = [r.numbers[i] for r in rows if r.numbers[i] is not None]
                best = max(numbers) if numbers else None
                for r in rows:
                    if r.numbers[i] is not None and r.numbers[i] == best:
                        r.cells[i] = f"**{r.cells[i]}**"
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
        lines += ["| " + " | ".join(r.cells) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    def _group(self, group: dict, columns: list, row_obj, root, variables: dict, labels: dict) -> list[Row]:
        if "file" in group:
            root = row_obj = self.load(group["file"])
        variables = {**variables, **(group.get("vars") or {})}
        if "builder" in group:
            from benchmarks.runner.builders import BUILDERS

            if group["builder"] not in BUILDERS:
                raise SpecError(f"unknown builder {group['builder']!r} (known: {', '.join(sorted(BUILDERS))})")
            args = {k: v for k, v in group.items() if k not in GROUP_KEYS}
            items = BUILDERS[group["builder"]](Context(row_obj, root, variables, labels, self._templates), **args)
        elif "each" in group:
            try:
                items = members(resolve(group["each"], row_obj, root, variables))
            except Missing:
                items = []
            if "keys" in group:
                found = dict(items)
                items = [(str(k), found[str(k)]) for k in group["keys"] if str(k) in found]
            skip = {str(k) for k in group.get("skip", [])}
            items = [(k, v) for k, v in items if k not in skip]
        else:
            items = [(variables.get("key"), row_obj)]
        out: list[Row] = []
        for key, obj in items:
            v = {**variables, "key": key} if key is not None else dict(variables)
            ctx = Context(obj, root, v, labels, self._templates)
            for name, template in (group.get("let") or {}).items():
                v[name] = cell(template, ctx)
            if "where" in group and not truthy(group["where"], ctx):
                continue
            if "unless" in group and truthy(group["unless"], ctx):
                continue
            if "rows" in group:
                for sub in group["rows"]:
                    out += self._group(sub, columns, obj, root, v, labels)
                continue
            out.append(self._row(group, columns, ctx, key))
        return out

    def _row(self, group: dict, columns: list, ctx: Context, key) -> Row:
        bold = group.get("bold", False)
        bold = bold if isinstance(bold, bool) else key in [str(k) for k in bold]
        cells, numbers = [], []
        for i, col in enumerate(columns):
            c = Context(ctx.row, ctx.root, {**ctx.variables, **({"col": col["col"]} if "col" in col else {})},
                        ctx.labels, ctx.templates)
            if "cells" in group:
                spec = group["cells"][i]
            elif i == 0 and "label" in group:
                spec = group["label"]
            elif "cell" in col:
                spec = col["cell"]
            else:
                spec = group.get("cell", "")
            text = cell(spec, c)
            cells.append(f"**{text}**" if bold else text)
            number = None
            if col.get("bold_max"):
                try:
                    number = c.value(col["bold_max"])
                except Missing:
                    number = None
            numbers.append(number)
        return Row(cells, numbers)


#: the keys a row group may have (a builder gets the others as its arguments)
GROUP_KEYS = {"each", "keys", "skip", "where", "unless", "file", "vars", "let", "label", "cell", "cells", "bold",
              "rows", "builder"}
TABLE_KEYS = {"file", "labels", "templates", "columns", "rows", "text"}
COLUMN_KEYS = {"header", "align", "col", "cell", "bold_max"}


# ---------------------------------------------------------------------------- pages
def pages(root: Path = ROOT) -> list[Path]:
    """The pages that may hold generated tables: README.md and every page of docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def render_pages(tables: dict[str, Callable[[], str]], check: bool, root: Path = ROOT,
                 results: Path = RESULTS) -> list[str]:
    """Rewrite (or, with ``check``, compare) every generated table of the pages under ``root``
    and copy the assets; the problems found, one line each. ``tables`` maps a name to a function
    that renders it."""
    problems: list[str] = []
    seen: set[str] = set()
    for page in pages(root):
        if not page.exists():
            continue
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(root).as_posix()

        def sub(m: re.Match, rel=rel) -> str:
            name = m.group("name")
            seen.add(name)
            if name not in tables:
                problems.append(f"{rel}: unknown table {name!r}")
                return m.group(0)
            try:
                body = tables[name]()
            except (SpecError, Missing, KeyError, TypeError, ValueError) as e:
                problems.append(f"{rel}: table {name!r} cannot be rendered: {e}")
                return m.group(0)
            if check and body != m.group("body"):
                problems.append(f"{rel}: table {name!r} disagrees with its JSON")
            return m.group(1) + body + m.group(4)

        new = MARKER.sub(sub, text)
        if not check and new != text:
            page.write_text(new, encoding="utf-8")
    for name in sorted(set(tables) - seen):
        problems.append(f"table {name!r} is on no page (no <!-- table: {name} --> marker)")
    for src, dst in ASSETS:
        s, d = results / src, root / dst
        if not s.exists():
            problems.append(f"{dst}: its source {s} is missing")
        elif check:
            if not d.exists() or d.read_bytes() != s.read_bytes():
                problems.append(f"{dst}: differs from {s}")
        else:
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(s, d)
    return problems
