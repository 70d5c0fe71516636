"""The documentation: README shape, generated tables against their JSON, and the strict mkdocs build."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _tables_module():
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "scripts" / "docs_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_tables_agree_with_their_json():
    problems = _tables_module().run(check=True)
    assert not problems, "pages whose tables disagree with benchmarks/results (run python scripts/docs_tables.py):\n" \
                         + "\n".join(problems)


def test_agreement_check_detects_a_changed_table(tmp_path):
    """The check fails when a page's table differs from what its JSON gives (so the test above can fail)."""
    mod = _tables_module()
    page = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- table: headline -->" in page
    (tmp_path / "docs").mkdir()
    tampered = page.replace("| **mustcite** |", "| **mustcite** (edited) |", 1)
    assert tampered != page
    (tmp_path / "README.md").write_text(tampered, encoding="utf-8")
    problems = [p for p in mod.run(check=True, root=tmp_path) if "README.md" in p]
    assert problems == ["README.md: table 'headline' disagrees with its JSON"]


def test_every_measured_table_is_generated():
    """Every page table with figures sits between table markers, except the descriptive tables listed."""
    descriptive = {"stages/collect.md": 1, "experiments/baselines.md": 1, "index.md": 1, "design.md": 0,
                   "experiments/index.md": 1, "api/facade.md": 1, "stages/check-refs.md": 1, "stages/corpus.md": 1}
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
