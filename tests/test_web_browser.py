"""The web page in a real browser (Debian chromium via Playwright) against uvicorn on 127.0.0.1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import recommender as S

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install -y chromium)"),
    pytest.mark.data,                  # the page serves the slice recommender (helpers.recommender)
]


@pytest.fixture(scope="module")
def server():
    from mustcite.api.app import create_app
    from mustcite.api.serve import running

    with running(create_app(S.trained())) as url:
        yield url


def test_paste_title_and_abstract_and_see_results(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    # a held-out paper whose top 10 includes papers its labelled neighbours cite (shown as "Cited by")
    rec = S.trained()
    q, expected = next((q, r) for q in S.held_out_queries()
                       for r in [rec.recommend(q["title"], q["abstract"], 10)]
                       if any(x.evidence["neighbours"] for x in r))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=["--no-sandbox", "--headless", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.goto(server + "/")
            # locator assertions, not wait_for_function strings: the page's CSP (script-src 'self')
            # forbids eval, and the test must run under the CSP users get
            expect(page.locator("#health")).to_have_text(re.compile(r"^model ready"), timeout=60_000)
            page.fill("#title", q["title"])
            page.fill("#abstract", q["abstract"])
            page.fill("#top", "10")
            page.click("#recommend-btn")
            page.wait_for_selector("#results li.result", timeout=60_000)
            items = page.locator("#results li.result")
            assert items.count() == 10
            assert items.first.get_attribute("data-paper-id") == expected[0].paper_id
            assert items.first.locator(".title").inner_text() == expected[0].title
            assert page.locator("#results .tier").first.inner_text() == expected[0].tier_name
            assert page.locator("#results .evidence li").first.inner_text() == expected[0].reasons[0]
            assert re.search(r"^Chance it is: .*\bcited \d+%$", page.locator("#results .probs").first.inner_text())
            page.locator("#results .bib").first.click()
            expect(page.locator("#copied")).to_have_text("copied")
            assert "recommendations" in page.locator("#summary").inner_text()
            SCREENSHOT = tmp_path / "page.png"   # the committed screenshot (full model): benchmarks/web_screenshot.py
            page.screenshot(path=str(SCREENSHOT), full_page=False)
            # a bad input shows the API's message and the page keeps working
            page.fill("#title", "   ")
            page.click("#recommend-btn")
            expect(page.locator("#status")).to_have_class("error")
            assert "title" in page.locator("#status").inner_text().lower()
        finally:
            browser.close()
    assert SCREENSHOT.stat().st_size > 20_000
