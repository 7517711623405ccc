"""synth's HTML pages in a real browser (headless Chromium): the evaluation and inspection reports of
a single table and of a relational release load with no console error, every image and table
renders, every internal link leads to its section, nothing is loaded from elsewhere, and the page
prints to PDF with all its sections and a print style that keeps tables and figures whole. The
checker itself is tested on pages broken on purpose, so that it cannot pass silently. Without
Chromium and chromedriver these tests skip and say what to install; under CI they fail instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from relational_cases import hospital, write_profile, write_sqlite

from synth import api
from synth.evaluate.relational import evaluate_database
from synth.evaluate.relational_report import write_database_report
from synth.generation.generate import generate
from synth.inspect import inspect_report
from synth.pages.htmlpage import image, page, table, with_contents
from synth.release.description import load_description
from tests import browser_check
from tests.browser_check import assert_page_passes, browser_session, check_page, section_ids
from tests.conftest import mixed_table

pytest.importorskip("matplotlib")

INSPECTION = ("Summary", "Privacy ledger", "Learnt structure", "Column distributions", "Pairwise dependence")
SECTIONS = {
    "evaluation": ("Summary", "Fidelity", "Utility", "Privacy diagnostics", "The release", "Privacy ledger"),
    "inspection": INSPECTION,
    "relational evaluation": ("The release", "visits", "Each table on its own"),
    "relational inspection": INSPECTION,
}
CARD_IDS = ("what-was-released", "guarantee", "public-input", "budget", "utility-and-attacks", "files", "annex")


@pytest.fixture(scope="module")
def browser():
    yield from browser_session()


@pytest.fixture(scope="module")
def pages(browser, tmp_path_factory) -> dict[str, Path]:
    """The four reports, of small releases (a few hundred rows): made once, after the browser started."""
    folder = tmp_path_factory.mktemp("pages")
    original = mixed_table(600, seed=3)
    description = api.describe(original, epsilon=2.0, seed=1, report_to=None)
    paths = {name: folder / f"{name.replace(' ', '-')}.html" for name in SECTIONS}
    api.evaluate(original, generate(description, rows=600, seed=2), description, target="member",
                 report=paths["evaluation"])
    inspect_report(description, paths["inspection"])
    database = write_sqlite(hospital(200, seed=3), folder / "h.sqlite")
    release = folder / "release"
    api.run_database(database, release, write_profile(folder / "p.toml", epsilon=4.0, seed=5), report_to=None)
    write_database_report(evaluate_database(database, release), paths["relational evaluation"])
    inspect_report(load_description(release / "visits.description.json"), paths["relational inspection"])
    return paths


def test_the_release_card_passes_every_check_in_the_browser(browser, tmp_path) -> None:
    """A single table's card with its evaluation attached (attacks included, whose section the evaluation
    report then shows too), and a relational release's card."""
    pytest.importorskip("anonymeter", reason="the attacks need anonymeter: pip install --no-deps 'anonymeter>=1.1'")
    data = tmp_path / "data.csv"
    mixed_table(500, seed=4).to_csv(data, index=False)
    release = tmp_path / "release"
    api.run(data, release, epsilon=2.0, seed=1, accept_rough_domains=True, report_to=None, holdout="20%")
    evaluation, report = tmp_path / "evaluation.json", tmp_path / "evaluation.html"
    api.evaluate(data, release / "synthetic.csv", release / "description.json", attacks=True,
                 holdout=tmp_path / "data.holdout.csv", json_path=evaluation, report=report)
    assert_page_passes(browser, report, headings=("Attacks",))
    assert_page_passes(browser, api.card(release, tmp_path / "card.html", evaluation), ids=CARD_IDS)
    database = write_sqlite(hospital(150, seed=4), tmp_path / "h.sqlite")
    relational = tmp_path / "relational"
    api.run_database(database, relational, write_profile(tmp_path / "p.toml", epsilon=4.0, seed=5), report_to=None)
    assert_page_passes(browser, api.card(relational, tmp_path / "relational-card.html"), ids=CARD_IDS)


@pytest.mark.parametrize("name", list(SECTIONS))
def test_each_report_passes_every_check_in_the_browser(browser, pages, name) -> None:
    check = assert_page_passes(browser, pages[name], SECTIONS[name])
    # the contents list links to every section, in page order
    links = browser.execute_script("return [...document.querySelectorAll('nav.contents a')].map(a => a.hash)")
    assert links == [f"#{i}" for i in section_ids(browser)] and len(links) == len(check.headings)


def _png() -> bytes:
    from matplotlib.figure import Figure

    from synth.pages.plotting import png

    figure = Figure(figsize=(2, 1))
    figure.add_subplot().plot([0, 1], [1, 0])
    return png(figure)


def _body(extra: str = "") -> str:
    """A small page in the reports' style: three sections, a table and a picture."""
    return ("<h1>A page</h1>\n<h2>First part</h2>\n" + table(["a", "b"], [["1", "2"], ["3", "4"]])
            + "<h2>Second part</h2>\n" + image(_png(), "figure", "a line") + "<h2>Élèves</h2>\n<p>A name "
            "outside ASCII, as a table's may be.</p>" + extra)


def _problems(browser, tmp_path: Path, html: str) -> list[str]:
    path = tmp_path / "page.html"
    path.write_text(html, encoding="utf-8")
    return check_page(browser, path).problems


def _push_to_foot(html: str) -> str:
    """The page opened by a heading near the foot of the first printed page (a spacer above it, no
    margin of its own) and a tall picture under it: only its print style can keep the two together."""
    foot = ('<div style="height: 25.8cm"></div><h2 style="margin: 0">Foot</h2>'
            + image(_png(), "figure", "tall").replace("<img ", '<img style="height: 10cm" '))
    return html.replace("<body>\n", "<body>\n" + foot, 1)


def test_a_sound_page_passes_so_each_mutation_below_is_what_fails(browser, tmp_path) -> None:
    assert _problems(browser, tmp_path, page("sound", _body(), contents=True)) == []
    assert _problems(browser, tmp_path, _push_to_foot(page("sound", _body(), contents=True))) == []


@pytest.mark.parametrize(("mutation", "caught"), [
    (lambda html: html.replace('href="#second-part"', 'href="#third-part"'),
     "internal link #third-part points at no element"),
    (lambda html: html.replace('<h2 id="second-part">', '<h2 id="second-part" style="display: none">'),
     "following #second-part did not bring it into view"),
    (lambda html: html.replace("base64,", "base64,AAAA", 1), "image 'a line' did not render"),
    (lambda html: html.replace("</body>", "<script>notDefinedAnywhere();</script></body>"),
     "notDefinedAnywhere is not defined"),
    (lambda html: html.replace("</body>", '<img alt="far" src="http://127.0.0.1:9/x.png"></body>'),
     "it must be self-contained"),
    (lambda html: html.replace("</body>", "<table></table></body>"), "table 2 has 0 rows"),
    (lambda html: html.replace("</style>", "@media print { #second-part { display: none; } }</style>"),
     "the printed PDF holds 2 of the page's 3 sections"),
    (lambda html: html.replace("@media print", "@media speech"), "print style: table: breakInside is auto"),
    (lambda html: html.replace("<h2 ", "<h3 ").replace("</h2>", "</h3>"), "the page has no <h2> section heading"),
    (lambda html: _push_to_foot(html).replace("break-after: avoid;", ""),
     "heading 'Foot' is stranded at the foot of printed page 1"),
], ids=["broken-link", "link-to-hidden", "broken-image", "script-error", "external-image", "empty-table",
        "section-not-printed", "no-print-style", "no-sections", "heading-stranded"])
def test_the_checker_catches_a_broken_page(browser, tmp_path, mutation, caught) -> None:
    html = mutation(page("broken", _body(), contents=True))
    problems = _problems(browser, tmp_path, html)
    assert any(caught in problem for problem in problems), problems


def test_the_contents_list_names_each_section_once_and_keeps_the_ids_a_page_gave() -> None:
    body = ('<h1>T</h1><p>intro</p><h2>Summary</h2><p>a</p><h2 id="kept">Given &amp; kept</h2>'
            "<h2>Summary</h2><h2>Élèves &lt;b&gt;</h2>")
    html = with_contents(body)
    ids = re.findall(r'<h2 id="([^"]*)">', html)
    assert ids == ["summary", "kept", "summary-2", "élèves-b"]
    assert re.findall(r'<a href="#([^"]*)">', html) == ids
    assert html.index("<nav") > html.index("intro") and html.index("<nav") < html.index("<h2")
    assert with_contents("<h1>T</h1><h2>Only one</h2>") == "<h1>T</h1><h2>Only one</h2>"
    assert "<nav" not in page("t", body) and "<nav" in page("t", body, contents=True)


def test_a_missing_browser_skips_with_what_to_install_and_fails_under_ci(monkeypatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(browser_check.REQUIRE, raising=False)
    monkeypatch.setattr(browser_check.shutil, "which", lambda name: "/usr/bin/chromium" if name == "chromium" else None)
    message = browser_check.find_browser()
    assert isinstance(message, str) and "chromedriver" in message and "Chromium (chromium)" not in message
    assert "apt-get install chromium chromium-driver" in message
    with pytest.raises(pytest.skip.Exception, match="chromedriver"):
        browser_check.start_browser()
    for variable, value in (("CI", "true"), (browser_check.REQUIRE, "1")):
        with monkeypatch.context() as env:
            env.setenv(variable, value)
            with pytest.raises(pytest.fail.Exception, match="apt-get install chromium chromium-driver"):
                browser_check.start_browser()
    monkeypatch.setenv("CI", "false")  # set, but to "no": a local run still skips
    with pytest.raises(pytest.skip.Exception):
        browser_check.start_browser()
    monkeypatch.setattr(browser_check.shutil, "which", lambda name: None)
    message = browser_check.find_browser()
    assert isinstance(message, str) and "Chromium (chromium) and its driver (chromedriver)" in message
