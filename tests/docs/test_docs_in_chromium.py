"""/docs renders the API in a real headless Chromium, with every network name unresolvable (offline).

Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them); skipped with the reason otherwise.
"""

from __future__ import annotations

import shutil

import pytest
import trio

from tests.support.app import live_server, settings_for

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None or CHROMEDRIVER is None,
        reason="headless Chromium not available: install Debian's chromium and chromium-driver",
    ),
    pytest.mark.parametrize("database_url", ["sqlite"], indirect=True),
]

RENDER_TIMEOUT = 60.0


def rendered_operations(url: str) -> dict[str, object]:
    """Load `url` in headless Chromium and return what Swagger UI rendered (blocking; run in a thread)."""
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        # Offline: every host name but the loopback server's fails to resolve.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.get(url)
        wait = WebDriverWait(driver, RENDER_TIMEOUT)
        wait.until(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, ".opblock")
                or d.find_elements(By.CSS_SELECTOR, ".errors-wrapper, .version-pragma, .loading-container .errors")
            )
        )
        paths = [e.get_attribute("data-path") for e in driver.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
        return {
            "doctype": driver.execute_script("return document.doctype && document.doctype.name"),
            "title": " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".info .title")),
            "errors": [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".errors-wrapper, .version-pragma")],
            "paths": paths,
            "methods": [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".opblock-summary-method")],
        }
    finally:
        driver.quit()


async def test_docs_lists_the_operations_in_chromium(database_url) -> None:
    async with live_server(settings_for(database_url)) as (client, running):
        document = (await client.get("/openapi.json")).json()
        url = running.urls[0].rstrip("/") + "/docs"
        seen = await trio.to_thread.run_sync(rendered_operations, url)
    assert seen["doctype"] == "html"
    assert seen["errors"] == [], seen["errors"]
    assert seen["title"].startswith("agentgov")
    expected = [(m, p) for p, item in document["paths"].items() for m in item]
    assert len(seen["paths"]) == len(expected)
    assert set(seen["paths"]) == set(document["paths"])
    assert "/api/v1/policies/{policy_id}/versions/{version}" in seen["paths"]
