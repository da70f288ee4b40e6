"""Shared pieces of the browser tests: Debian's Chromium through playwright, pages with the network
cut off, axe-core, and the artefact folder for screenshots.

Skipped when Chromium, playwright or axe-core is missing, unless ATLAS_REQUIRE_BROWSER=1 (set by
.ci/run), which turns a missing piece into a failure. axe-core is the npm package's `axe.min.js`,
found at $ATLAS_AXE or under a node_modules folder of the repository."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def _skip_or_fail(reason: str):
    if os.environ.get("ATLAS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"ATLAS_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


_SHARED: dict = {"users": 0}


@pytest.fixture(scope="session")
def browser():
    """One Chromium for the whole session. Every test module imports this fixture, which makes a
    fixture per module; they all share one playwright instance (two sync_playwright() at once
    refuse to run), started by the first and stopped by the last."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip_or_fail("playwright is not installed")
    if not Path(CHROMIUM).exists():
        _skip_or_fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    if not _SHARED["users"]:
        _SHARED["playwright"] = sync_playwright().start()
        _SHARED["browser"] = _SHARED["playwright"].chromium.launch(executable_path=CHROMIUM, args=ARGS)
    _SHARED["users"] += 1
    try:
        yield _SHARED["browser"]
    finally:
        _SHARED["users"] -= 1
        if not _SHARED["users"]:
            _SHARED.pop("browser").close()
            _SHARED.pop("playwright").stop()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    ignore = ARTIFACTS / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return ARTIFACTS


class Page:
    """A page with the network cut off and every problem recorded."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.page = self.context.new_page()
        self.attempted: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context.route("**/*", self._route)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)

    def _route(self, route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            self.attempted.append(route.request.url)
            route.abort()

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, url: str, hook: str):
        self.page.goto(url)
        self.page.wait_for_function(f"window.{hook} && window.{hook}.ready")
        return self.page

    def check_clean(self):
        assert self.attempted == [], "network requests were attempted"
        assert self.errors == [], "console errors"
        assert self.dialogs == [], "a dialog opened: injected script ran"

    def close(self):
        self.context.close()




@pytest.fixture()
def tab(browser):
    t = Page(browser)
    yield t
    t.close()


def axe_script() -> str:
    """The text of axe-core's axe.min.js ($ATLAS_AXE, else node_modules/ of the repository)."""
    root = Path(__file__).resolve().parent.parent
    for cand in (os.environ.get("ATLAS_AXE"), root / "node_modules/axe-core/axe.min.js"):
        if cand and Path(cand).is_file():
            return Path(cand).read_text(encoding="utf-8")
    _skip_or_fail("axe-core not found (npm install axe-core; set ATLAS_AXE to its axe.min.js)")


def axe_violations(page, impacts=("serious", "critical")) -> list[dict]:
    """Run axe-core in the page; the violations of the given impacts, as {id, impact, help, targets}."""
    # evaluated, not added as a <script>: the pages' Content-Security-Policy refuses inline scripts
    page.evaluate(axe_script() + "\n;true")
    result = page.evaluate("async () => await axe.run(document)")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "targets": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in impacts]
