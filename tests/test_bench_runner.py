"""``python -m benchmarks``: the experiment entries (schema, validation), the OK/FAIL comparison,
``run`` and ``check``, and the generic table renderer (paths, filters, formats, row groups).

Nothing here reads the committed results for their figures (``make bench-check`` does)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.runner.cli import command_line, main  # noqa: E402
from benchmarks.runner.entries import (  # noqa: E402
    Entry,
    EntryError,
    Expectation,
    compare,
    load_entries,
    parse_file,
)
from benchmarks.runner.render import Context, Missing, Renderer, SpecError, cell, fill, resolve  # noqa: E402

GOOD = """
page: README.md
entries:
  - name: demo
    measures: a figure
    command: python -c "pass"
    result: demo.json
    expected:
      - {path: a.b, value: 0.5, tol: 0.01}
"""


def _write(tmp_path: Path, text: str, name: str = "page.yaml") -> Path:
    (tmp_path / "README.md").write_text("# demo\n", encoding="utf-8")
    folder = tmp_path / "experiments"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- entries
def test_a_valid_file_gives_its_entries(tmp_path):
    [e] = parse_file(_write(tmp_path, GOOD), tmp_path)
    assert (e.name, e.page, e.result, e.source) == ("demo", "README.md", "demo.json", "experiments/page.yaml")
    assert e.expected == [Expectation("a.b", 0.5, 0.01, None)]


@pytest.mark.parametrize("change, message", [
    (("    result: demo.json\n", ""), "entry 'demo': missing result"),
    (("    measures: a figure\n", "    measures: a figure\n    colour: red\n"), "entry 'demo': unknown key(s) colour"),
    (("tol: 0.01", "tol: -1"), "entry 'demo': expected[0]: tol must be a number >= 0"),
    (("tol: 0.01", "tol: 0.01, rel: 0.1"), "entry 'demo': expected[0]: give tol or rel, not both"),
    (("{path: a.b, value: 0.5, tol: 0.01}", "{value: 0.5}"), "entry 'demo': expected[0]: an expected figure needs"),
    (("{path: a.b, value: 0.5, tol: 0.01}", "{path: a.b, value: yes, tol: 1}"), "tol applies to a number"),
    (("result: demo.json", "result: demo.csv"), "entry 'demo': result is a JSON file name"),
    (("page: README.md", "page: docs/nowhere.md"), "entry 'demo': page docs/nowhere.md does not exist"),
    (("name: demo", "name: de mo"), "a name holds letters"),
    (("    expected:\n      - {path: a.b, value: 0.5, tol: 0.01}\n", "    expected: []\n"),
     "entry 'demo': expected must be a non-empty list"),
    (("entries:", "entrees:"), "expected a mapping with page: and a list under entries:"),
    (("measures: a figure", "measures: [a figure"), "not valid YAML"),
])
def test_validation_errors_name_the_file_and_the_entry(tmp_path, change, message):
    path = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(EntryError) as err:
        parse_file(path, tmp_path)
    assert str(err.value).startswith("experiments/page.yaml: ")
    assert message in str(err.value)


@pytest.mark.parametrize("table, message", [
    ("{rows: [{label: x}]}", "table 't': columns must be a non-empty list"),
    ("{columns: [{header: a}], rows: []}", "table 't': rows must be a non-empty list"),
    ("{columns: [{header: a, colour: red}], rows: [{label: x}]}", "table 't': columns[0]: unknown key(s) colour"),
    ("{columns: [{header: a, align: right}], rows: [{label: x}]}", "align must look like --- or ---:"),
    ("{columns: [{header: a}], rows: [{eech: x}]}", "table 't': rows[0]: unknown key(s) eech"),
    ("{columns: [{header: a}, {header: b}], rows: [{cells: [x]}]}", "cells must be a list of 2 cells"),
    ("{columns: [{header: a}], rows: [{rows: [{each: 'a..b'}]}]}", "rows[0]: rows[0]: each: bad path"),
    ("{columns: [{header: a}], rows: [{label: x}], colour: red}", "table 't': unknown key(s) colour"),
])
def test_table_specs_are_validated(tmp_path, table, message):
    path = _write(tmp_path, GOOD + f"    tables:\n      t: {table}\n")
    with pytest.raises(EntryError) as err:
        parse_file(path, tmp_path)
    assert "experiments/page.yaml: entry 'demo': " in str(err.value) and message in str(err.value)


def test_names_of_entries_and_tables_are_unique_over_every_file(tmp_path):
    _write(tmp_path, GOOD, "a.yaml")
    _write(tmp_path, GOOD, "b.yaml")
    with pytest.raises(EntryError, match="experiments/b.yaml: entry 'demo': the name is taken by experiments/a.yaml"):
        load_entries(tmp_path / "experiments", tmp_path)
    _write(tmp_path, GOOD + "    tables:\n      t: {columns: [{header: a}], rows: [{label: x}]}\n", "a.yaml")
    _write(tmp_path, GOOD.replace("name: demo", "name: other")
           + "    tables:\n      t: {columns: [{header: a}], rows: [{label: x}]}\n", "b.yaml")
    with pytest.raises(EntryError, match="table 't' is also rendered by experiments/a.yaml"):
        load_entries(tmp_path / "experiments", tmp_path)


def test_the_committed_entries_load():
    """Every committed YAML follows the schema, and every entry's tables sit on its page."""
    entries = load_entries()
    assert len(entries) >= 60
    for e in entries:
        text = (ROOT / e.page).read_text(encoding="utf-8")
        for name in e.tables:
            assert f"<!-- table: {name} -->" in text, f"{e.source}: {name} is not on {e.page}"


# ---------------------------------------------------------------------------- comparison
@pytest.mark.parametrize("expectation, actual, ok", [
    (Expectation("x", 0.5, tol=0.01), 0.509, True),
    (Expectation("x", 0.5, tol=0.01), 0.511, False),
    (Expectation("x", 0.5, tol=0.01), 0.49, True),
    (Expectation("x", 100, rel=0.5), 149, True),
    (Expectation("x", 100, rel=0.5), 151, False),
    (Expectation("x", 100, rel=0.5), 50, True),
    (Expectation("x", 3), 3, True),
    (Expectation("x", 3), 3.0, True),
    (Expectation("x", 3), 4, False),
    (Expectation("x", "HDTF"), "HDTF", True),
    (Expectation("x", "HDTF"), "ImageNet", False),
    (Expectation("x", True), True, True),
    (Expectation("x", True), 1, False),
    (Expectation("x", 0.5, tol=0.1), "0.5", False),
])
def test_expectations_hold_within_their_tolerance(expectation, actual, ok):
    assert expectation.holds(actual) is ok


def test_compare_gives_ok_and_fail_per_figure():
    entry = Entry("demo", "README.md", "a figure", "true", "demo.json",
                  [Expectation("a.b", 0.5, tol=0.01), Expectation("a.c", 2), Expectation("a.[d.e]", 1),
                   Expectation("a.missing", 1)])
    out = compare(entry, {"a": {"b": 0.505, "c": 3, "d.e": 1}})
    assert [o.ok for o in out] == [True, False, True, False]
    assert out[0].line() == "OK   demo: a.b = 0.505 (expected 0.5 ± 0.01)"
    assert out[1].line() == "FAIL demo: a.c = 3 (expected 2)"
    assert out[3].line() == "FAIL demo: a.missing = missing (expected 1)"


def _repo(tmp_path: Path, command: str, expected: str = "{path: score, value: 0.5, tol: 0.01}") -> list[str]:
    (tmp_path / "results").mkdir(exist_ok=True)
    _write(tmp_path, f"page: README.md\nentries:\n  - name: demo\n    measures: a figure\n"
                     f"    command: {command}\n    result: demo.json\n    expected: [{expected}]\n")
    return ["--root", str(tmp_path), "--experiments", str(tmp_path / "experiments"),
            "--results", str(tmp_path / "results")]


def test_check_reads_the_committed_result(tmp_path, capsys):
    args = _repo(tmp_path, "'true'")
    assert main([*args, "check"]) == 1
    assert "FAIL demo: " in capsys.readouterr().out        # no result yet
    (tmp_path / "results" / "demo.json").write_text('{"score": 0.505}', encoding="utf-8")
    assert main([*args, "check"]) == 0
    assert "OK   demo: score = 0.505 (expected 0.5 ± 0.01)" in capsys.readouterr().out
    (tmp_path / "results" / "demo.json").write_text('{"score": 0.7}', encoding="utf-8")
    assert main([*args, "check"]) == 1
    out = capsys.readouterr()
    assert "FAIL demo: score = 0.7 (expected 0.5 ± 0.01)" in out.out
    assert "1 of 1 figures disagree" in out.err and "demo (experiments/page.yaml): score = 0.7" in out.err


def test_run_runs_the_command_then_checks_what_it_wrote(tmp_path, capsys):
    write = "python -c \"import json; json.dump({'score': SCORE}, open('results/demo.json', 'w'))\""
    args = _repo(tmp_path, json.dumps(write.replace("SCORE", "0.5")))
    assert main([*args, "run", "demo"]) == 0
    assert "OK   demo: score = 0.5" in capsys.readouterr().out
    args = _repo(tmp_path, json.dumps(write.replace("SCORE", "0.9")))
    assert main([*args, "run", "demo"]) == 1
    assert "FAIL demo: score = 0.9" in capsys.readouterr().out
    args = _repo(tmp_path, "'true'")
    assert main([*args, "run", "demo"]) == 1
    assert "FAIL demo: the command did not write demo.json" in capsys.readouterr().out
    args = _repo(tmp_path, "'exit 3'")
    assert main([*args, "run", "demo"]) == 1
    assert "FAIL demo: the command exited with 3" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown entry: nothing"):
        main([*args, "run", "nothing"])


def test_list_names_every_entry(tmp_path, capsys):
    args = _repo(tmp_path, "'true'")
    assert main([*args, "list", "--commands"]) == 0
    out = capsys.readouterr().out
    assert "demo  README.md: a figure" in out and "$ true" in out and "1 entries, 0 tables" in out


def test_a_bad_entry_file_is_an_error_not_a_traceback(tmp_path, capsys):
    args = _repo(tmp_path, "'true'", expected="{value: 1}")
    assert main([*args, "check"]) == 1
    err = capsys.readouterr().err
    assert "error: experiments/page.yaml: entry 'demo': expected[0]: an expected figure needs" in err


@pytest.mark.parametrize("command, expected", [
    ("python benchmarks/x.py --a 1", "PY benchmarks/x.py --a 1"),
    (".venv/bin/python benchmarks/x.py", "PY benchmarks/x.py"),
    ("HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/x.py", "HF_HUB_OFFLINE=1 PY benchmarks/x.py"),
    ("A=1 B=x python3.11 benchmarks/x.py", "A=1 B=x PY benchmarks/x.py"),
    ("X=1 .venvs/incite/bin/python benchmarks/p.py", "X=1 .venvs/incite/bin/python benchmarks/p.py"),
    ("mustcite works build --json > out.json", "mustcite works build --json > out.json"),
])
def test_commands_run_with_this_interpreter(command, expected):
    entry = Entry("x", "README.md", "m", command, "x.json", [])
    assert command_line(entry, "PY") == expected


# ---------------------------------------------------------------------------- paths and templates
DATA = {"tables": {"type1": {"BM25": {"R@100": 0.31433, "MRR": 0.325},
                             "mustcite": {"R@100": 0.6429, "R@100 ratio": 2.045}}},
        "per_file": {"a.b.npy": {"sha256": "0123456789abcdef0123", "identical": True}},
        "rows": [{"band": "2013", "n": 1234567, "wall_s": 1.5, "tb": False},
                 {"band": "2019", "n": 5, "wall_s": 4.86, "tb": True}],
        "p": 0.0301, "none": None}


@pytest.mark.parametrize("path, value", [
    ("tables.type1.BM25.R@100", 0.31433),
    ("/tables.type1.mustcite.R@100 ratio", 2.045),
    ("per_file.[a.b.npy].sha256", "0123456789abcdef0123"),
    ("rows.1.band", "2019"),
    ("rows.-1.n", 5),
    ("rows.*.wall_s", [1.5, 4.86]),
    ("rows.?band=2019.n", 5),
    ("tables.$col.BM25.MRR", 0.325),
    ("$col", "type1"),
    (".", DATA),
])
def test_paths(path, value):
    assert resolve(path, DATA, DATA, {"col": "type1"}) == value


@pytest.mark.parametrize("path", ["nothing", "rows.7.n", "rows.?band=1999", "none", "p.q"])
def test_paths_that_lead_nowhere(path):
    with pytest.raises(Missing):
        resolve(path, DATA, DATA)


def test_an_unknown_variable_is_a_spec_error():
    with pytest.raises(SpecError, match=r"unknown variable \$tag"):
        resolve("tables.$tag", DATA, DATA)


@pytest.mark.parametrize("template, text", [
    ("{tables.type1.BM25.R@100|f3} / {tables.type1.BM25.MRR|f2}", "0.314 / 0.33"),
    ("{rows.0.n|int}", "1,234,567"),
    ("{tables.type1.BM25.R@100|pct}", "31.4%"),
    ("{tables.type1.mustcite.R@100 ratio|ratio}", "2.04x"),
    ("{tables.type1.mustcite.R@100|div:tables.type1.BM25.R@100|.2f}x", "2.05x"),
    ("{rows.1.wall_s|sub:rows.0.wall_s|.2f}", "3.36"),
    ("{rows.*.wall_s|max|.2f} s", "4.86 s"),
    ("{rows.*.tb|count}", "1"),
    ("{rows|len}", "2"),
    ("{p|p}", "p = 0.03"),
    ("{p|pval}", "= 0.03"),
    ("{p|pshort}", "p 0.03"),
    ("{p|stars}", "*"),
    ("{p|.1e}", "3.0e-02"),
    ("{p|max:0.04|.2f}", "0.04"),
    ("{per_file.[a.b.npy].sha256|head:4}…", "0123…"),
    ("{per_file.[a.b.npy].identical|yesno}", "yes"),
    ("{rows.0.band|upto:1}", "20"),
    ("{{literal}}", "{literal}"),
])
def test_templates_and_filters(template, text):
    assert fill(template, Context(DATA, DATA)) == text


@pytest.mark.parametrize("fmt, value, text", [
    ("p", 0.0004, "p < 0.001"), ("p", 0.005, "p = 0.005"), ("p", 0.2, "p = 0.2"),
    ("pshort", 0.0005, "p 0.0005"), ("stars", 0.004, "**"), ("stars", 0.2, ""),
    ("secs", 45.2, "45 s"), ("secs", 1500, "25 min"),
    ("hours", 0.01, "under 1 min"), ("hours", 0.1, "6.0 min"), ("hours", 0.5, "30 min"), ("hours", 2.04, "2.0 h"),
    ("mb", 512.4, "512 MB"), ("mb", 1234, "1.2 GB"),
    ("code", "a | b\nc", "`a \\| b c`"), ("code", "", ""), ("code", "x" * 120, "`" + "x" * 107 + "...`"),
    ("f4", 0.12345, "0.1235"), (",.0f", 2397.0, "2,397"), (".0%", 0.318, "32%"),
])
def test_formats(fmt, value, text):
    assert fill("{v|" + fmt + "}", Context({"v": value}, {})) == text


def test_alternatives_and_optional_parts():
    ctx = Context(DATA, DATA)
    assert cell(["{nothing|f3}", "{p|f3}"], ctx) == "0.030"
    assert cell(["{nothing}", "-"], ctx) == "-"
    assert cell("{nothing}", ctx) == ""
    assert cell("{p|f2}[[ (p={p|ge:0.001|.1g})]]", ctx) == "0.03 (p=0.03)"
    assert cell("{p|f2}[[ (p={p|lt:0.001|.1g})]]", ctx) == "0.03"
    assert cell(["{rows.0.n|ge:100|int} big", "{rows.0.n|gt:0} small", "-"], ctx) == "1,234,567 big"
    assert cell(["{rows.0.tb|truthy|blank}yes", "**no**"], ctx) == "**no**"


@pytest.mark.parametrize("template, error", [
    ("{p|nosuch}", "unknown filter 'nosuch'"),
    ("{p|div}", "filter 'div' needs an argument"),
    ("{p|f3:2}", "format 'f3' takes no argument"),
    ("{rows|f3}", "expected a number"),
    ("{p|join:x}", "no template 'x'"),
])
def test_bad_filters_are_spec_errors(template, error):
    with pytest.raises(SpecError, match=error):
        fill(template, Context(DATA, DATA))


# ---------------------------------------------------------------------------- tables
def _render(tmp_path: Path, spec: dict, files: dict) -> str:
    for name, data in files.items():
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    return Renderer(tmp_path).render(spec, next(iter(files)))


RESULT = {"tables": {t: {"BM25": {"R@100": r, "MRR": m}, "mustcite": {"R@100": 2 * r, "MRR": m + 0.1}}
                     for t, r, m in (("type1", 0.3, 0.4), ("cited", 0.25, 0.5))},
          "runs": [{"name": "a", "ok": True, "f1": 0.5}, {"name": "b", "ok": False, "f1": None},
                   {"name": "c", "ok": True, "f1": 0.75}]}


def test_rows_by_members_with_columns_by_variable(tmp_path):
    spec = {"labels": {"type1": "Type I"},
            "columns": [{"header": "truth", "cell": "{$key|label}"},
                        {"header": "BM25", "col": "BM25"}, {"header": "mustcite", "col": "mustcite", "align": "---:"}],
            "rows": [{"each": "tables", "cell": "{.$col.R@100|f3} / {.$col.MRR|f3}", "bold": ["cited"]}]}
    assert _render(tmp_path, spec, {"r.json": RESULT}) == (
        "| truth | BM25 | mustcite |\n|---|---|---:|\n"
        "| Type I | 0.300 / 0.400 | 0.600 / 0.500 |\n"
        "| **cited** | **0.250 / 0.500** | **0.500 / 0.600** |\n")


def test_fixed_rows_transposed_and_from_other_files(tmp_path):
    spec = {"columns": [{"header": "R@100 / MRR"}, {"header": "Type I", "col": "type1"},
                        {"header": "cited", "col": "cited"}],
            "rows": [{"label": "BM25", "vars": {"m": "BM25"}, "cell": "{tables.$col.$m.R@100|f3}"},
                     {"label": "**mustcite**", "vars": {"m": "mustcite"}, "cell": "**{tables.$col.$m.R@100|f3}**"},
                     {"file": "other.json", "cells": ["other ({n})", "{n|int}", ""]}]}
    assert _render(tmp_path, spec, {"r.json": RESULT, "other.json": {"n": 1234}}) == (
        "| R@100 / MRR | Type I | cited |\n|---|---|---|\n| BM25 | 0.300 | 0.250 |\n"
        "| **mustcite** | **0.600** | **0.500** |\n| other (1234) | 1,234 |  |\n")


def test_keys_skip_where_unless_and_bold_max(tmp_path):
    columns = [{"header": "run", "cell": "{name}"}, {"header": "F1", "cell": "{f1|f3}", "bold_max": "f1"}]
    assert _render(tmp_path, {"columns": columns, "rows": [{"each": "runs", "where": "f1"}]}, {"r.json": RESULT}) == (
        "| run | F1 |\n|---|---|\n| a | 0.500 |\n| c | **0.750** |\n")
    assert _render(tmp_path, {"columns": columns, "rows": [{"each": "runs", "unless": "ok"}]}, {"r.json": RESULT}) == (
        "| run | F1 |\n|---|---|\n| b |  |\n")
    assert _render(tmp_path, {"columns": columns, "rows": [{"each": "runs", "keys": [2, 0, 9], "skip": [0]}]},
                   {"r.json": RESULT}) == "| run | F1 |\n|---|---|\n| c | 0.750 |\n"


def test_nested_groups_with_let(tmp_path):
    spec = {"columns": [{"header": "truth", "cell": "{$truth}"}, {"header": "method", "cell": "{$key}"},
                        {"header": "R@100", "cell": "{R@100|f2}"}],
            "rows": [{"each": "tables", "let": {"truth": "{$key}"}, "rows": [{"each": ".", "keys": ["mustcite"]}]}]}
    assert _render(tmp_path, spec, {"r.json": RESULT}) == (
        "| truth | method | R@100 |\n|---|---|---|\n| type1 | mustcite | 0.60 |\n| cited | mustcite | 0.50 |\n")


def test_join_with_a_template_and_labels(tmp_path):
    spec = {"labels": {"main": {"True": "main", "False": "not main"}},
            "templates": {"track": "{$key} {papers|int} ({main|label:main})"},
            "columns": [{"header": "tracks", "cell": "{tracks|join:track}"}], "rows": [{}]}
    data = {"tracks": {"long": {"papers": 1500, "main": True}, "demo": {"papers": 3, "main": False}}}
    assert _render(tmp_path, spec, {"r.json": data}) == "| tracks |\n|---|\n| long 1,500 (main), demo 3 (not main) |\n"


def test_a_table_kept_as_text_and_the_markdown_builder(tmp_path):
    table = ("| Method | R@100 | MRR |\n|---|---:|---:|\n| BM25 | 0.6570 | 0.6091 |\n"
             "| **mpnet** | **0.7671**** | 0.6105 |\n")
    data = {"table": table + "\n", "tables": {"type1": table}}
    assert _render(tmp_path, {"text": "table"}, {"r.json": data}) == table
    spec = {"columns": [{"header": "method", "cell": "{$key}"}, {"header": "R@100 / MRR", "col": "type1"}],
            "rows": [{"builder": "markdown_tables", "path": "tables", "cell": "{.$col.R@100|f3} / {.$col.MRR|f3}"}]}
    assert _render(tmp_path, spec, {"r.json": data}) == (
        "| method | R@100 / MRR |\n|---|---|\n| BM25 | 0.657 / 0.609 |\n| mpnet | 0.767 / 0.611 |\n")


def test_an_unknown_builder_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError, match="unknown builder 'nosuch'"):
        _render(tmp_path, {"columns": [{"header": "a"}], "rows": [{"builder": "nosuch"}]}, {"r.json": {}})
