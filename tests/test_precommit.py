"""The pre-commit hooks (``.pre-commit-hooks.yaml``) run by pre-commit itself on a sample paper repository.

``pre-commit try-repo`` takes the hooks from this checkout (uncommitted changes included) and runs
them in a new git repository holding a real-record ``refs.bib`` and a ``main.tex``; the corpus is the
NeurIPS 2019-2022 slice of :mod:`helpers.recommender`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import recommender as R

pytestmark = pytest.mark.data("neurips/fulltext_2023")

REPO = Path(__file__).resolve().parents[1]
INVENTED = ("@inproceedings{doe2021flux,\n  title = {Neural Flux Capacitors for Zero-Shot Time Travel},\n"
            "  author = {Doe, Jane and Roe, Richard},\n  booktitle = {Advances in Neural Information Processing "
            "Systems},\n  year = {2021}\n}\n")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    if not R.have_data():
        pytest.skip("needs the NeurIPS proceedings lists")
    work = R.write_corpus(tmp_path_factory.mktemp("hook-work"))
    (work / "models").mkdir()
    os.symlink(R.model_dir(), work / "models" / "recommender")
    paper = tmp_path_factory.mktemp("paper-repo")
    real = next(r for r in R.pool() if r["year"] == 2021 and len(r["authors"] or []) >= 2)
    authors = " and ".join(real["authors"])
    (paper / "refs.bib").write_text(
        f"@inproceedings{{real2021,\n  title = {{{real['title']}}},\n  author = {{{authors}}},\n"
        f"  booktitle = {{Advances in Neural Information Processing Systems}},\n  year = {{2021}}\n}}\n\n" + INVENTED,
        encoding="utf-8")
    (paper / "main.tex").write_text(
        "\\documentclass{article}\n\\title{Diffusion models for image generation}\n\\begin{document}\n"
        "\\begin{abstract}\nWe train a denoising diffusion model for image synthesis and compare it with "
        "generative adversarial networks.\n\\end{abstract}\nWe build on \\cite{real2021,doe2021flux}.\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    env = dict(os.environ, MUSTCITE_WORK=str(work), HF_HUB_OFFLINE="1",
               PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org")
    subprocess.run(["git", "init", "-q", str(paper)], check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=paper, check=True, env=env)
    return paper, env, real


def _hook(sample, hook: str) -> subprocess.CompletedProcess:
    paper, env, _ = sample
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--all-files",
                           "--verbose"], cwd=paper, env=env, capture_output=True, text=True, timeout=600)


def test_check_refs_hook_fails_on_an_invented_entry_and_passes_once_it_is_gone(sample):
    paper, env, real = sample
    got = _hook(sample, "mustcite-check-refs")
    assert got.returncode == 1, got.stdout + got.stderr
    assert "doe2021flux" in got.stdout and "not_found" in got.stdout
    assert "Traceback" not in got.stdout + got.stderr
    text = (paper / "refs.bib").read_text(encoding="utf-8")
    (paper / "refs.bib").write_text(text[:text.index("@inproceedings{doe2021flux")], encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=paper, check=True, env=env)
    got = _hook(sample, "mustcite-check-refs")
    assert got.returncode == 0, got.stdout + got.stderr
    assert "real2021" in got.stdout and "verified" in got.stdout
    (paper / "refs.bib").write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=paper, check=True, env=env)


def test_audit_hook_audits_the_project(sample):
    got = _hook(sample, "mustcite-audit")
    assert got.returncode in (0, 1), got.stdout + got.stderr
    assert "references:" in got.stdout and "Traceback" not in got.stdout + got.stderr
    # a failing audit says why: a missing paper over the gate
    if got.returncode == 1:
        assert "fail" in (got.stdout + got.stderr).lower()
