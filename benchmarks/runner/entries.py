"""The experiment entries of ``benchmarks/experiments/*.yaml``: reading, validating, checking.

One YAML file per documentation page that reports measured figures::

    page: docs/experiments/performance.md     # the page (each entry may name another with page:)
    entries:
      - name: cold_start                      # unique over every file
        measures: wall time and peak RSS of each everyday command from a new process
        command: python benchmarks/cold_start.py --before 7bd8a5a
        result: cold_start.json               # in benchmarks/results/
        expected:                             # figures the page reports, as paths into the result
          - {path: speedup.recommend, value: 5.3, tol: 0.3}     # |actual - value| <= tol
          - {path: versions.after.serve.seconds, value: 9.2, rel: 0.5}   # or within 50% of value
          - {path: rows_total, value: 154}                       # exact (also for text and booleans)
        tables:                               # the generated tables it renders (see render.py)
          cold_start: {columns: [...], rows: [...]}

Paths are those of the table templates (``a.b``, ``[key.with.dots]``, list indices).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from benchmarks.runner.render import (
    COLUMN_KEYS,
    GROUP_KEYS,
    RESULTS,
    ROOT,
    TABLE_KEYS,
    Missing,
    SpecError,
    resolve,
    split_path,
)

EXPERIMENTS = ROOT / "benchmarks" / "experiments"
ENTRY_KEYS = {"name", "page", "measures", "command", "result", "expected", "tables"}
REQUIRED = ("name", "measures", "command", "result", "expected")
EXPECT_KEYS = {"path", "value", "tol", "rel"}
NAME = re.compile(r"[\w.-]+")


class EntryError(ValueError):
    """An entry that does not follow the schema; the message names the file and the entry."""


@dataclass
class Expectation:
    path: str
    value: object
    tol: float | None = None
    rel: float | None = None

    def describe(self) -> str:
        if self.tol is not None:
            return f"{self.value} ± {self.tol}"
        if self.rel is not None:
            return f"{self.value} ± {self.rel:.0%}"
        return repr(self.value)

    def holds(self, actual) -> bool:
        if isinstance(self.value, bool) or isinstance(actual, bool):     # True is not 1 here
            return isinstance(self.value, bool) and isinstance(actual, bool) and actual == self.value
        if not isinstance(self.value, (int, float)):
            return actual == self.value
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return False
        if self.tol is not None:
            return abs(actual - self.value) <= self.tol + 1e-12
        if self.rel is not None:
            return abs(actual - self.value) <= self.rel * abs(self.value) + 1e-12
        return actual == self.value


@dataclass
class Entry:
    name: str
    page: str
    measures: str
    command: str
    result: str
    expected: list[Expectation]
    tables: dict[str, dict] = field(default_factory=dict)
    source: str = ""   # the YAML file it comes from, relative to the repository


@dataclass
class Outcome:
    entry: str
    path: str
    ok: bool
    actual: object
    expected: str

    def line(self) -> str:
        return f"{'OK  ' if self.ok else 'FAIL'} {self.entry}: {self.path} = {self.actual} (expected {self.expected})"


def _fail(where: str, message: str):
    raise EntryError(f"{where}: {message}")


def _check_path(where: str, path) -> None:
    if not isinstance(path, str) or not path:
        _fail(where, f"a path must be a non-empty string, got {path!r}")
    try:
        split_path(path)
    except SpecError as e:
        _fail(where, str(e))


def _check_templates(where: str, spec) -> None:
    items = spec if isinstance(spec, list) else [spec]
    for t in items:
        if not isinstance(t, (str, int, float)):
            _fail(where, f"a cell is a template string or a list of them, got {t!r}")


def _check_group(where: str, group, n_columns: int) -> None:
    if not isinstance(group, dict):
        _fail(where, f"a row group is a mapping, got {group!r}")
    unknown = set(group) - GROUP_KEYS
    if unknown and "builder" not in group:
        _fail(where, f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(GROUP_KEYS))})")
    if "each" in group:
        _check_path(f"{where}: each", group["each"])
    for key in ("where", "unless"):
        if key in group:
            _check_path(f"{where}: {key}", group[key])
    for key in ("keys", "skip"):
        if key in group and not isinstance(group[key], list):
            _fail(where, f"{key} must be a list")
    if "cells" in group:
        if not isinstance(group["cells"], list) or len(group["cells"]) != n_columns:
            _fail(where, f"cells must be a list of {n_columns} cells (one per column)")
        for i, c in enumerate(group["cells"]):
            _check_templates(f"{where}: cells[{i}]", c)
    for key in ("label", "cell"):
        if key in group:
            _check_templates(f"{where}: {key}", group[key])
    for key in ("vars", "let"):
        if key in group and not isinstance(group[key], dict):
            _fail(where, f"{key} must be a mapping")
    if "bold" in group and not isinstance(group["bold"], (bool, list)):
        _fail(where, "bold is true, false or a list of keys")
    if "rows" in group:
        if not isinstance(group["rows"], list):
            _fail(where, "rows must be a list of row groups")
        for i, sub in enumerate(group["rows"]):
            _check_group(f"{where}: rows[{i}]", sub, n_columns)


def check_table(where: str, spec) -> None:
    """Raise :class:`EntryError` naming ``where`` when a table spec does not follow the schema."""
    if not isinstance(spec, dict):
        _fail(where, "a table is a mapping")
    unknown = set(spec) - TABLE_KEYS
    if unknown:
        _fail(where, f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(TABLE_KEYS))})")
    if "text" in spec:
        _check_path(f"{where}: text", spec["text"])
        return
    columns = spec.get("columns")
    if not isinstance(columns, list) or not columns:
        _fail(where, "columns must be a non-empty list")
    for i, col in enumerate(columns):
        if not isinstance(col, dict):
            _fail(f"{where}: columns[{i}]", "a column is a mapping")
        unknown = set(col) - COLUMN_KEYS
        if unknown:
            _fail(f"{where}: columns[{i}]", f"unknown key(s) {', '.join(sorted(unknown))}")
        if "align" in col and not re.fullmatch(r":?-{3,}:?", str(col["align"])):
            _fail(f"{where}: columns[{i}]", f"align must look like --- or ---:, got {col['align']!r}")
    rows = spec.get("rows")
    if not isinstance(rows, list) or not rows:
        _fail(where, "rows must be a non-empty list of row groups")
    for i, group in enumerate(rows):
        _check_group(f"{where}: rows[{i}]", group, len(columns))


def _expectation(where: str, item) -> Expectation:
    if not isinstance(item, dict):
        _fail(where, f"an expected figure is a mapping with path and value, got {item!r}")
    unknown = set(item) - EXPECT_KEYS
    if unknown:
        _fail(where, f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(EXPECT_KEYS))})")
    if "path" not in item or "value" not in item:
        _fail(where, "an expected figure needs path and value")
    _check_path(where, item["path"])
    for key in ("tol", "rel"):
        if key in item:
            if isinstance(item[key], bool) or not isinstance(item[key], (int, float)) or item[key] < 0:
                _fail(where, f"{key} must be a number >= 0, got {item[key]!r}")
            if isinstance(item["value"], bool) or not isinstance(item["value"], (int, float)):
                _fail(where, f"{key} applies to a number, and value is {item['value']!r}")
    if "tol" in item and "rel" in item:
        _fail(where, "give tol or rel, not both")
    return Expectation(item["path"], item["value"], item.get("tol"), item.get("rel"))


def parse_file(path: Path, root: Path = ROOT) -> list[Entry]:
    """The entries of one YAML file; :class:`EntryError` naming the file (and entry) when it is wrong."""
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise EntryError(f"{rel}: not valid YAML: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        _fail(rel, "expected a mapping with page: and a list under entries:")
    unknown = set(data) - {"page", "entries"}
    if unknown:
        _fail(rel, f"unknown top-level key(s) {', '.join(sorted(unknown))} (known: page, entries)")
    out = []
    for i, raw in enumerate(data["entries"]):
        where = f"{rel}: entries[{i}]"
        if not isinstance(raw, dict):
            _fail(where, "an entry is a mapping")
        if isinstance(raw.get("name"), str):
            where = f"{rel}: entry {raw['name']!r}"
        unknown = set(raw) - ENTRY_KEYS
        if unknown:
            _fail(where, f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(ENTRY_KEYS))})")
        for key in REQUIRED:
            if key not in raw:
                _fail(where, f"missing {key}")
        for key in ("name", "measures", "command", "result"):
            if not isinstance(raw[key], str) or not raw[key].strip():
                _fail(where, f"{key} must be a non-empty string")
        if not NAME.fullmatch(raw["name"]):
            _fail(where, "a name holds letters, digits, '_', '.' and '-' only")
        if "\n" in raw["measures"].strip():
            _fail(where, "measures is one line")
        if not raw["result"].endswith(".json") or "/" in raw["result"]:
            _fail(where, f"result is a JSON file name in benchmarks/results/, got {raw['result']!r}")
        page = raw.get("page", data.get("page"))
        if not isinstance(page, str) or not page:
            _fail(where, "no page (give page: at the top of the file or in the entry)")
        if not (root / page).is_file():
            _fail(where, f"page {page} does not exist")
        if not isinstance(raw["expected"], list) or not raw["expected"]:
            _fail(where, "expected must be a non-empty list of figures")
        expected = [_expectation(f"{where}: expected[{j}]", item) for j, item in enumerate(raw["expected"])]
        tables = raw.get("tables") or {}
        if not isinstance(tables, dict):
            _fail(where, "tables must be a mapping of table name to spec")
        for name, spec in tables.items():
            if not NAME.fullmatch(str(name)):
                _fail(where, f"bad table name {name!r}")
            check_table(f"{where}: table {name!r}", spec)
        out.append(Entry(raw["name"], page, raw["measures"].strip(), raw["command"].strip(), raw["result"],
                         expected, dict(tables), rel))
    return out


def load_entries(folder: Path = EXPERIMENTS, root: Path = ROOT) -> list[Entry]:
    """Every entry of every ``*.yaml`` of ``folder``; names of entries and tables must be unique."""
    entries: list[Entry] = []
    names: dict[str, str] = {}
    tables: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        for e in parse_file(path, root):
            if e.name in names:
                raise EntryError(f"{e.source}: entry {e.name!r}: the name is taken by {names[e.name]}")
            names[e.name] = e.source
            for t in e.tables:
                if t in tables:
                    raise EntryError(f"{e.source}: entry {e.name!r}: table {t!r} is also rendered by {tables[t]}")
                tables[t] = f"{e.source} (entry {e.name!r})"
            entries.append(e)
    return entries


def compare(entry: Entry, data) -> list[Outcome]:
    """Each expected figure of ``entry`` against the result ``data``."""
    out = []
    for x in entry.expected:
        try:
            actual = resolve(x.path, data, data)
        except Missing:
            out.append(Outcome(entry.name, x.path, False, "missing", x.describe()))
            continue
        out.append(Outcome(entry.name, x.path, x.holds(actual), actual, x.describe()))
    return out


def result_path(entry: Entry, results: Path = RESULTS) -> Path:
    return results / entry.result
