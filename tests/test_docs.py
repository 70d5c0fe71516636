"""The documentation: README shape, the tables tool, the nav and the strict mkdocs build.

Whether the committed lab figures agree with the pages is not checked here: ``make bench-check``
(``python -m benchmarks check`` and ``python -m benchmarks tables --check``) does that."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.runner.cli import main as bench_main  # noqa: E402

ENTRY = """
page: README.md
entries:
  - name: demo
    measures: a figure
    command: python -c "pass"
    result: demo.json
    expected: [{path: rows.a.score, value: 0.5, tol: 0.01}]
    tables:
      demo_table:
        columns:
          - {header: run, cell: "{$key}"}
          - {header: score, align: "---:", cell: "{score|f3}"}
        rows: [{each: rows}]
"""


def _repository(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository in miniature: a README with one generated table, its entry, its JSON, the asset."""
    experiments, results = tmp_path / "benchmarks" / "experiments", tmp_path / "benchmarks" / "results"
    for folder in (experiments, results, tmp_path / "docs" / "assets"):
        folder.mkdir(parents=True)
    (experiments / "readme.yaml").write_text(ENTRY, encoding="utf-8")
    (results / "demo.json").write_text(json.dumps({"rows": {"a": {"score": 0.5}, "b": {"score": 0.25}}}),
                                       encoding="utf-8")
    (results / "web_screenshot.png").write_bytes(b"png")
    (tmp_path / "README.md").write_text("# demo\n\n<!-- table: demo_table -->\n<!-- /table -->\n", encoding="utf-8")
    return tmp_path, experiments, results


def _tables(root: Path, experiments: Path, results: Path, *extra: str) -> int:
    return bench_main(["--root", str(root), "--experiments", str(experiments), "--results", str(results),
                       "tables", *extra])


def test_tables_writes_the_table_and_the_asset(tmp_path):
    root, experiments, results = _repository(tmp_path)
    assert _tables(root, experiments, results, "--check") == 1      # the page has no table yet
    assert _tables(root, experiments, results) == 0
    assert (root / "README.md").read_text(encoding="utf-8") == (
        "# demo\n\n<!-- table: demo_table -->\n| run | score |\n|---|---:|\n| a | 0.500 |\n| b | 0.250 |\n"
        "<!-- /table -->\n")
    assert (root / "docs" / "assets" / "web_screenshot.png").read_bytes() == b"png"
    assert _tables(root, experiments, results, "--check") == 0


def test_tables_check_fails_when_a_json_changes(tmp_path, capsys):
    root, experiments, results = _repository(tmp_path)
    assert _tables(root, experiments, results) == 0
    (results / "demo.json").write_text(json.dumps({"rows": {"a": {"score": 0.75}}}), encoding="utf-8")
    capsys.readouterr()
    assert _tables(root, experiments, results, "--check") == 1
    assert "README.md: table 'demo_table' disagrees with its JSON" in capsys.readouterr().err


def test_tables_check_fails_when_a_page_is_edited(tmp_path, capsys):
    root, experiments, results = _repository(tmp_path)
    assert _tables(root, experiments, results) == 0
    readme = root / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("0.250", "0.260"), encoding="utf-8")
    capsys.readouterr()
    assert _tables(root, experiments, results, "--check") == 1
    assert "README.md: table 'demo_table' disagrees with its JSON" in capsys.readouterr().err


def test_tables_check_names_an_unknown_table_and_a_stale_asset(tmp_path, capsys):
    root, experiments, results = _repository(tmp_path)
    assert _tables(root, experiments, results) == 0
    (root / "docs" / "page.md").write_text("<!-- table: nowhere -->\n<!-- /table -->\n", encoding="utf-8")
    (results / "web_screenshot.png").write_bytes(b"png, newer")
    capsys.readouterr()
    assert _tables(root, experiments, results, "--check") == 1
    err = capsys.readouterr().err
    assert "docs/page.md: unknown table 'nowhere'" in err
    assert "docs/assets/web_screenshot.png: differs from" in err


def test_every_measured_table_is_generated():
    """Every page table with figures sits between table markers, except the descriptive tables listed."""
    descriptive = {"stages/collect.md": 1, "experiments/baselines.md": 1, "index.md": 1, "design.md": 0,
                   "experiments/index.md": 1, "api/facade.md": 1, "stages/check-refs.md": 1, "stages/corpus.md": 1,
                   "api/recommender.md": 1}
    marker = re.compile(r"<!-- table: [\w.-]+ -->\n.*?<!-- /table -->", re.S)
    for page in sorted(DOCS.rglob("*.md")):
        rel = page.relative_to(DOCS).as_posix()
        text = marker.sub("", page.read_text(encoding="utf-8"))
        headers = [ln for ln in text.splitlines() if re.match(r"^\|[-:| ]+\|$", ln.strip())]
        assert len(headers) <= descriptive.get(rel, 0), f"{rel}: a table outside the generated markers"


def test_readme_is_short_and_starts_with_the_two_setup_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines (at most 250)"
    body = [ln for ln in lines if ln.strip()]
    assert body[0].startswith("# mustcite")
    assert body[1] == "```"
    assert body[2].startswith("make demo ") and body[3].startswith("make test ") and body[4] == "```"
    assert "benchmarks/results/web_screenshot.png" in "\n".join(lines)


def _nav_files(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_files(value) if isinstance(value, list) else [value]
    return out


def test_nav_covers_every_page_and_every_entry_exists():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert not set(nav) - pages, f"nav entries without a file: {sorted(set(nav) - pages)}"
    assert not pages - set(nav), f"pages missing from the nav: {sorted(pages - set(nav))}"


def test_mkdocs_strict_build_has_no_warning(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists():
        mkdocs = shutil.which("mkdocs")
    if not mkdocs:
        pytest.fail("mkdocs is not installed (pip install -e '.[test]')")
    proc = subprocess.run([str(mkdocs), "build", "--strict", "-q", "-d", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    warnings = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "WARNING" in ln or "ERROR" in ln]
    assert proc.returncode == 0 and not warnings, "mkdocs build --strict:\n" + (proc.stdout + proc.stderr)[-4000:]
    assert (tmp_path / "site" / "index.html").exists()
