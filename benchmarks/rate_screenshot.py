"""Screenshot of the rater page -> benchmarks/results/rate_page.png.

Draws a stratified sample (``mustcite agreement sample``) from a real extraction of one NeurIPS 2024
paper of shared/data (or takes ``--sample``), serves the rater page with uvicorn on 127.0.0.1 writing
to a temporary folder, opens it in Debian's chromium through Playwright, answers the first
instance by keyboard (Type I = 1, Type II = 4), presses 1 for Type I on the second, and saves the page.

    python benchmarks/rate_screenshot.py [--sample S.csv] [--abstracts papers.jsonl] [--out PNG]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

OUT = Path(__file__).parent / "results" / "rate_page.png"


def main() -> int:
    from playwright.sync_api import sync_playwright

    from mustcite.api import create_rate_app, running
    from mustcite.labels import RatingStore

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=Path)
    ap.add_argument("--abstracts", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rate-shot-"))
    sample = args.sample
    if sample is None:
        from mustcite.config import find_data_dir
        from mustcite.extract import extract_paths
        from mustcite.labels import write_sample

        files = sorted((find_data_dir() / "neurips" / "fulltext_2024").glob("*.md.gz"))[1:2]
        extract_paths(files, tmp / "ext", workers=1, progress=False)
        sample = tmp / "sample.csv"
        write_sample(tmp / "ext", sample, n=20, seed=1)
    store = RatingStore.open(sample, tmp / "ratings", args.abstracts)
    wait = "(item) => document.body.dataset.item === item && !document.body.dataset.busy"
    with running(create_rate_app(store)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox", "--headless", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            page.goto(base + "/rate")
            page.fill("#rater-name", "alice")
            page.press("#rater-name", "Enter")
            page.wait_for_function(wait, arg=store.instances[0]["item"])
            page.keyboard.press("1")
            page.keyboard.press("4")
            page.wait_for_function(wait, arg=store.instances[1]["item"])
            page.keyboard.press("1")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=False)
            shown = page.locator("#item-id").inner_text()
        finally:
            browser.close()
    print(json.dumps({"sample": str(sample), "instances": len(store.instances), "shown": shown,
                      "ratings": (tmp / "ratings" / "alice.csv").read_text(), "screenshot": str(args.out)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
