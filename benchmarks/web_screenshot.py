"""Screenshot of the web page with a real model -> benchmarks/results/web_screenshot.png.

Serves ``--model`` (default ``<work>/models/recommender``) with uvicorn on 127.0.0.1, opens the page
in Debian's chromium through Playwright, pastes the title and abstract of a query paper (default:
the first test query of the neurips-2024 benchmark, a NeurIPS 2024 paper the model never saw) and
saves the page once the results are shown.

    python benchmarks/web_screenshot.py [--model DIR] [--queries FILE.jsonl] [--index 0]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

OUT = Path(__file__).parent / "results" / "web_screenshot.png"


def main() -> int:
    from playwright.sync_api import expect, sync_playwright

    from mustcite.api import create_app, running
    from mustcite.config import Workspace
    from mustcite.recommend import load_default
    from mustcite.retrieval import read_queries

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path)
    ap.add_argument("--queries", type=Path,
                    default=Workspace.resolve().root / "benchmarks" / "neurips-2024" / "queries" / "test.jsonl")
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    q = read_queries(args.queries)[args.index]
    rec = load_default(model=args.model)
    with running(create_app(rec)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox", "--headless", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(base + "/")
            # no eval: the CSP forbids it
            expect(page.locator("#health")).to_have_text(re.compile(r"^model ready"), timeout=120_000)
            page.fill("#title", q.title)
            page.fill("#abstract", q.abstract)
            page.fill("#top", str(args.top))
            page.click("#recommend-btn")
            page.wait_for_selector("#results li.result", timeout=120_000)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=False)
            shown = page.locator("#results li.result .title").all_inner_texts()
        finally:
            browser.close()
    print(json.dumps({"query": {"id": q.id, "title": q.title}, "model": rec.describe(), "shown": shown,
                      "screenshot": str(args.out)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
