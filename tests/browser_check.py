"""A page checker for synth's HTML pages in a real browser: the system's Chromium, headless, driven
by Selenium through the system's chromedriver.

``check_page`` opens one page and returns what a reader would find wrong with it: console errors,
images that do not render, empty tables, internal links that lead nowhere or do not scroll, anything
loaded from elsewhere, a PDF print that loses sections, and print styles that let tables, figures and
boxes be cut across pages. It never downloads anything (no Selenium Manager: both paths are given)
and needs no network. This is a helper for the tests, not a test module: it holds no test.
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

INSTALL = "apt-get install chromium chromium-driver"
REQUIRE = "SYNTH_REQUIRE_BROWSER"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Kept whole on a printed page (break-inside: avoid), and kept with what follows (break-after: avoid).
UNBROKEN = "table, img, figure, .figures, .banner, .warning, .score, .column"
HEADINGS = "h1, h2, h3"
A4 = {"paperWidth": 8.27, "paperHeight": 11.69}  # inches
STRANDED = 72  # points: a heading whose top is this close to the bottom of its printed page has nothing under it


@dataclass
class PageCheck:
    """What the browser found on one page: the problems (empty when it passes), its <h2> headings,
    the printed PDF's page count and text."""

    problems: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    pdf_pages: int = 0
    pdf_text: str = ""


def browser_required() -> bool:
    """Whether a missing browser must fail the tests rather than skip them: under CI (``CI`` set to
    anything but empty, 0 or false) or with ``SYNTH_REQUIRE_BROWSER=1``."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return ci or os.environ.get(REQUIRE, "").strip() == "1"


def find_browser() -> tuple[str, str] | str:
    """(Chromium's path, chromedriver's path), or a sentence saying what is missing and how to install it."""
    binary = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    driver = shutil.which("chromedriver")
    missing = [name for name, found in (("Chromium (chromium)", binary), ("its driver (chromedriver)", driver))
               if found is None]
    if binary is None or driver is None:
        return (f"the browser tests need {' and '.join(missing)} on the PATH, which "
                f"{'are' if len(missing) > 1 else 'is'} missing. Install them (Debian/Ubuntu: `{INSTALL}`; "
                ".ci/run does so); without them these tests skip, except under CI or with "
                f"{REQUIRE}=1, where they fail.")
    return binary, driver


def start_browser() -> Any:
    """A headless Chromium under Selenium that keeps its console log; pytest skips (or fails, see
    ``browser_required``) when the browser, its driver or Selenium is missing."""
    found = find_browser()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        found = "the browser tests need Selenium (pip install selenium, in the test extra), which is not installed."
    if isinstance(found, str):
        if browser_required():
            pytest.fail(found, pytrace=False)
        pytest.skip(found)
    binary, driver = found
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update",
                     "--host-resolver-rules=MAP * ~NOTFOUND"):  # no host name resolves: no network
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def browser_session() -> Iterator[Any]:
    """The body of a pytest fixture: one browser for the tests that share it, closed at the end."""
    driver = start_browser()
    try:
        yield driver
    finally:
        driver.quit()


def flat(text: str) -> str:
    """``text`` with ligatures unfolded (NFKC) and each run of white space as one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _console(driver: Any) -> list[str]:
    return [f"console error: {entry['message']}" for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def _images(driver: Any) -> list[str]:
    images = driver.execute_script(
        "return [...document.images].map(i => [i.alt || i.src.slice(0, 40), i.complete, i.naturalWidth,"
        " i.getBoundingClientRect().width])")
    return [f"image {alt!r} did not render (complete {complete}, natural width {natural}, shown width {shown})"
            for alt, complete, natural, shown in images if not (complete and natural > 0 and shown > 0)]


def _tables(driver: Any) -> list[str]:
    tables = driver.execute_script(
        "return [...document.querySelectorAll('table')].map((t, i) => [i, t.rows.length,"
        " [...t.rows].filter(r => r.querySelector('td')).length, [...t.rows].filter(r => r.cells.length == 0).length,"
        " t.getBoundingClientRect().height])")
    return [f"table {index + 1} has {rows} rows, {with_data} with data cells, {empty} without cells, "
            f"height {height}" for index, rows, with_data, empty, height in tables
            if rows == 0 or with_data == 0 or empty > 0 or height <= 0]


def _links(driver: Any) -> list[str]:
    """Each href="#id": the target exists, and following the link brings it into view."""
    problems = []
    targets = driver.execute_script(
        "return [...document.querySelectorAll('a[href^=\"#\"]')].map(a => a.getAttribute('href').slice(1))"
        ".filter(t => t.length > 0)")
    for target in targets:
        script = ("const t = document.getElementById(decodeURIComponent(arguments[0])); if (!t) return null;"
                  " window.scrollTo(0, 0);"
                  " document.querySelector('a[href=\"#' + CSS.escape(arguments[0]) + '\"]').click();"
                  " const top = t.getBoundingClientRect().top;"
                  " return [top, window.innerHeight, window.scrollY, decodeURIComponent(location.hash),"
                  " t.getClientRects().length > 0];")
        found = driver.execute_script(script, target)
        if found is None:
            problems.append(f"internal link #{target} points at no element (no id {target!r} on the page)")
            continue
        top, height, scrolled, fragment, shown = found
        if not (shown and -1 <= top < height) or fragment != f"#{target}":
            problems.append(f"following #{target} did not bring it into view (shown {shown}, its top at {top} px, window "
                            f"{height} px high, scrolled to {scrolled}, location {fragment!r})")
    driver.execute_script("window.scrollTo(0, 0); history.replaceState(null, '', location.pathname);")
    return problems


def _external(driver: Any) -> list[str]:
    """Anything the page loaded, or would load, from elsewhere than itself."""
    loaded = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith('data:'))")
    pointers = driver.execute_script(
        "const out = []; for (const e of document.querySelectorAll('[src], [srcset], link[href], [data], [poster]'))"
        " for (const a of ['src', 'srcset', 'href', 'data', 'poster']) { const v = e.getAttribute(a);"
        " if (v && !v.startsWith('data:') && !v.startsWith('#')) out.push(e.tagName.toLowerCase() + ' ' + a + '=' + v); }"
        " for (const s of document.querySelectorAll('style')) for (const m of s.textContent.matchAll(/url\\(|@import/g))"
        " out.push('style sheet ' + m[0]); return out;")
    return ([f"the page loaded {name}: it must be self-contained" for name in loaded]
            + [f"the page points at {pointer}: it must be self-contained" for pointer in pointers])


def _print_styles(driver: Any) -> list[str]:
    """In print emulation: tables, figures and boxes not broken across pages, headings kept with what follows."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        found = driver.execute_script(
            "const show = e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '');"
            " const wrong = (sel, prop, want) => [...document.querySelectorAll(sel)]"
            "   .filter(e => getComputedStyle(e)[prop] != want).map(e => show(e) + ': ' + prop + ' is '"
            "   + getComputedStyle(e)[prop] + ', not ' + want);"
            f" return wrong('{UNBROKEN}', 'breakInside', 'avoid').concat(wrong('{HEADINGS}', 'breakAfter', 'avoid'));")
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    return [f"print style: {line} ({n} such element{'s' if n > 1 else ''})" for line, n in Counter(found).items()]


def _outline(entries: list[Any]) -> Iterator[Any]:
    """Every entry of a PDF outline (pypdf's nested lists), in order."""
    for entry in entries:
        if isinstance(entry, list):
            yield from _outline(entry)
        else:
            yield entry


def _pdf(driver: Any, check: PageCheck) -> list[str]:
    """Print to PDF (A4, backgrounds, an outline made from the headings): at least a page, and every
    <h2> section in the outline, i.e. printed as a heading (its words elsewhere, such as in a list of
    contents, do not count)."""
    from pypdf import PdfReader
    from selenium.common.exceptions import WebDriverException

    settings = {"printBackground": True, "generateDocumentOutline": True, **A4}
    try:
        printed = driver.execute_cdp_cmd("Page.printToPDF", settings)
    except WebDriverException as exc:  # Chromium now and then answers "Printing failed" once, then prints
        if "Printing failed" not in str(exc):
            raise
        printed = driver.execute_cdp_cmd("Page.printToPDF", settings)
    reader = PdfReader(io.BytesIO(base64.b64decode(printed["data"])))
    check.pdf_pages = len(reader.pages)
    check.pdf_text = flat(" ".join(page.extract_text() for page in reader.pages))
    problems = [] if check.pdf_pages > 0 else ["the printed PDF has no page"]
    entries = list(_outline(reader.outline))
    outline = Counter(flat(entry.title) for entry in entries)
    for entry in entries:
        top = entry.get("/Top")
        if top is not None and float(top) < STRANDED:
            page = reader.get_destination_page_number(entry) + 1
            problems.append(f"heading {flat(entry.title)!r} is stranded at the foot of printed page {page} "
                            f"({float(top):.0f} pt from the bottom), apart from what follows it")
    wanted = Counter(check.headings)
    found = sum(min(n, outline[heading]) for heading, n in wanted.items())
    if found != len(check.headings):
        lost = [heading for heading, n in wanted.items() if outline[heading] < n]
        problems.append(f"the printed PDF holds {found} of the page's {len(check.headings)} sections (by its "
                        f"outline of headings); missing: {lost}")
    return problems


def check_page(driver: Any, path: str | os.PathLike[str]) -> PageCheck:
    """Open the page at ``path`` in ``driver`` and collect every problem the checks find."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no page to check at {path}")
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(Path(path).resolve().as_uri())
    check = PageCheck()
    check.headings = [flat(text) for text in driver.execute_script(
        "return [...document.querySelectorAll('h2')].map(h => h.textContent)")]
    if not check.headings:
        check.problems.append("the page has no <h2> section heading")
    for found in (_images(driver), _tables(driver), _links(driver), _external(driver), _print_styles(driver)):
        check.problems += found
    check.problems += _pdf(driver, check)
    check.problems += _console(driver)  # last: the console also records what the steps above provoked
    return check


def section_ids(driver: Any) -> list[str]:
    """The ids of the open page's <h2> headings, or of the <section> around each (in page order)."""
    ids: list[str] = driver.execute_script(
        "return [...document.querySelectorAll('h2')].map(h => h.id || (h.closest('section') || {}).id || '')")
    return ids


def assert_page_passes(driver: Any, path: str | os.PathLike[str], headings: Iterable[str] = (),
                       ids: Iterable[str] = ()) -> PageCheck:
    """Check the page at ``path``: no problem, at least the given <h2> ``headings`` and section ``ids``
    (each heading printed in the PDF), and a PDF of at least one page. Returns what was found."""
    check = check_page(driver, path)
    assert check.problems == [], f"{path}:\n" + "\n".join(check.problems)
    assert set(map(flat, headings)) <= set(check.headings), f"{path}: sections {check.headings}"
    assert set(ids) <= set(section_ids(driver)), f"{path}: section ids {section_ids(driver)}"
    assert all(heading in check.pdf_text for heading in check.headings)
    assert check.pdf_pages >= 1
    return check

