"""The inspector: the HTML report's content, that it is self-contained and built from the
Description alone, the pieces it computes, and the `synth inspect` command around it."""

from __future__ import annotations

import base64
import dataclasses
import re
import sys
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import synth.inspect
import synth.tables.source
import synth.tables.tableio
from synth.api import describe
from synth.engines import ENGINES
from synth.engines.privbayes import PrivBayesOutput
from synth.errors import DescriptionError, OutputError
from synth.generation.generate import fit_model
from synth.inspect import inspect_report, inspect_text, report_html, views
from synth.inspect.report import BANNER
from synth.privacy.measurement import Measurement
from synth.release.description import Description, save_description
from tests.conftest import mixed_table
from tests.test_cli import assert_clean_error, run_cli

pytest.importorskip("matplotlib")

NETWORK = [  # a PrivBayes-shaped network over mixed_table's columns, in topological order
    {"attribute": "city", "parents": []},
    {"attribute": "age", "parents": ["city"]},
    {"attribute": "income", "parents": ["age", "city"]},
    {"attribute": "joined", "parents": ["age"]},
    {"attribute": "member", "parents": ["income", "joined"]},
]


class Page(HTMLParser):
    """What the tests look at in a report: images, links, tags, table rows with their cells' text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.links: list[str] = []
        self.tags: set[str] = set()
        self.rows: list[tuple[str | None, list[str]]] = []
        self.text: list[str] = []
        self._in_cell = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.add(tag)
        self.links += [v or "" for k, v in attrs if k in ("src", "href")]
        if tag == "img":
            self.images.append(attributes)
        elif tag == "tr":
            self.rows.append((attributes.get("class"), []))
        elif tag == "td":
            self.rows[-1][1].append("")
            self._in_cell = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_cell:
            self.rows[-1][1][-1] += data

    def images_of(self, css_class: str) -> list[dict[str, str | None]]:
        return [i for i in self.images if i.get("class") == css_class]

    def rows_of(self, css_class: str) -> list[list[str]]:
        return [cells for cls, cells in self.rows if cls == css_class]


def privbayes_shaped(description: Description) -> Description:
    """A hand-made PrivBayes-like release: NETWORK, with one (column, *parents) table each, taken
    from the model of ``description`` (on the original codes) and called noisy."""
    model = fit_model(description, 50)
    tables = tuple(Measurement(attrs, model.marginal(attrs).ravel(), "discrete_gaussian", 10.0)
                   for attrs in ((node["attribute"], *node["parents"]) for node in NETWORK))
    output = PrivBayesOutput.from_dict({"network": NETWORK, "parent_groups": {}, "theta": 4.0, "max_cells": 1e6,
                                        "degree_used": 2})
    return dataclasses.replace(description, engine="privbayes", engine_output=output,
                               measurements=tables, compression={})


@pytest.fixture(scope="module")
def descriptions():
    table = mixed_table()
    independent = describe(table, epsilon=1.0, delta=1e-6, seed=3, engine="independent", report_to=None)
    mst = describe(table, epsilon=1.0, delta=1e-6, seed=3, engine="mst", report_to=None)
    return {"independent": independent, "mst": mst, "privbayes": privbayes_shaped(mst)}


@pytest.fixture(scope="module")
def pages(descriptions):
    return {name: report_html(d) for name, d in descriptions.items()}


@pytest.mark.parametrize("engine", ["independent", "mst", "privbayes"])
def test_report_shows_banner_ledger_pictures(descriptions, pages, engine):
    description, page = descriptions[engine], Page(pages[engine])
    text = " ".join(page.text)
    assert BANNER in text and "Privacy ledger" in text and "Cramér's V" in text
    assert "capped at 200 iterations" in text
    assert len(page.rows_of("ledger-entry")) == len(description.ledger)
    (total,) = page.rows_of("ledger-total")
    for cell, key in zip(total[5:8], ("epsilon", "delta", "rho")):
        assert float(cell) == pytest.approx(description.ledger_totals()[key], rel=1e-5, abs=1e-15)
    bars = page.images_of("distribution")
    assert [i["alt"] for i in bars] == [f"distribution of {n}" for n in description.schema.names]
    assert len(page.images_of("structure")) == 1 and len(page.images_of("dependence")) == 1
    assert views.structure(description).summary in text


@pytest.mark.parametrize("engine", ["independent", "mst", "privbayes"])
def test_report_is_self_contained(pages, engine):
    page = Page(pages[engine])
    assert page.images and all(link.startswith(("data:image/png;base64,", "#")) for link in page.links)
    assert not {"script", "link", "iframe", "object"} & page.tags
    assert "url(" not in pages[engine] and "@import" not in pages[engine]
    for image in page.images:
        assert base64.b64decode(image["src"].split(",", 1)[1]).startswith(b"\x89PNG")


def test_summary_states_budget_engine_and_seeding(descriptions, pages):
    text = " ".join(Page(pages["mst"]).text)
    for needle in ("Engine", "mst", "Budget", "Spent", "add-remove", "ρ-zCDP", "Seeded noise: NO privacy guarantee; do not share",
                   "Description format version", "synth 0.1.0", "Rows to generate"):
        assert needle in text, needle
    unseeded = dataclasses.replace(descriptions["mst"], noise={"sampler": "opendp", "seeded": False})
    assert "do not share" not in report_html(unseeded)


def test_structure_of_each_engine(descriptions):
    independent = views.structure(descriptions["independent"])
    assert independent.graph.number_of_edges() == 0 and "independent" in independent.summary
    mst = views.structure(descriptions["mst"])
    tree = {frozenset(pair) for pair in descriptions["mst"].engine_output.tree}
    assert not mst.graph.is_directed() and {frozenset(e) for e in mst.graph.edges} == tree
    network = views.structure(descriptions["privbayes"])
    assert network.graph.is_directed()
    assert set(network.graph.edges) == {(p, n["attribute"]) for n in NETWORK for p in n["parents"]}


@pytest.mark.parametrize("network", [
    [{"attribute": "ghost", "parents": []}],
    [{"attribute": "age"}],
    "not a list of nodes",
    [{"attribute": "age", "parents": ["city"]}, {"attribute": "city", "parents": ["age"]}],
])
def test_malformed_network_is_a_clean_error(descriptions, network):
    data = descriptions["privbayes"].to_dict()
    data["engine"]["output"]["network"] = network
    with pytest.raises(DescriptionError, match="network"):
        views.structure(Description.from_dict(data))  # refused on load, or when its graph is drawn


@pytest.mark.skipif("random" not in ENGINES, reason="engine 'random' (releases that measure nothing) not available")
def test_a_release_that_measured_nothing(descriptions):
    uniform = dataclasses.replace(descriptions["independent"], engine="random", measurements=())
    page = Page(report_html(uniform))
    text = " ".join(page.text)
    assert "Nothing was measured" in text and "synth generate needs --rows" in text and "nan" not in text
    assert len(page.images_of("distribution")) == len(uniform.schema.names)


@pytest.mark.skipif(not {"privbayes", "random"} <= set(ENGINES), reason="engines not available")
@pytest.mark.parametrize("engine", ["privbayes", "random"])
def test_report_of_the_real_engines(engine):
    description = describe(mixed_table(), epsilon=1.0, delta=1e-6, seed=5, engine=engine, report_to=None)
    page = Page(report_html(description))
    assert len(page.images_of("distribution")) == len(description.schema.names)
    assert len(page.images_of("structure")) == len(page.images_of("dependence")) == 1
    assert len(page.rows_of("ledger-entry")) == len(description.ledger)


def test_distributions_come_from_the_measurements(descriptions):
    for description in (descriptions["independent"], descriptions["mst"]):
        model = fit_model(description, 50)
        for d in views.distributions(description, model):
            (measurement,) = [m for m in description.measurements if m.attrs == (d.name,)]
            weights = 1.0 if measurement.weights is None else measurement.weights
            assert d.measured and d.values.size == description.schema.column(d.name).size
            assert d.values.sum() == pytest.approx((measurement.values / weights).sum())
            if d.name not in description.compression:
                np.testing.assert_allclose(d.values, measurement.values)


def test_unmeasured_column_uses_the_fitted_model(descriptions):
    description = descriptions["mst"]
    without_city = dataclasses.replace(
        description, measurements=tuple(m for m in description.measurements if m.attrs != ("city",)))
    model = fit_model(without_city, 50)
    city = views.distributions(without_city, model)[0]
    assert city.name == "city" and not city.measured and city.values.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(city.values, model.marginal(["city"]) / model.total)
    assert "Not measured alone" in report_html(without_city, iterations=50)


def test_many_categories_show_the_top_30(tmp_path):
    categories = [f"c{i:02d}" for i in range(50)]
    profile = tmp_path / "p.toml"
    profile.write_text('[release]\nepsilon = 1.0\ndelta = 0.0\nengine = "independent"\n\n'
                       f'[columns.code]\nkind = "categorical"\ncategories = {categories}\nsource = "public"\n\n'
                       '[columns.flag]\nkind = "boolean"\nsource = "public"\n')
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"code": rng.choice(categories, 1000), "flag": rng.random(1000) < 0.5})
    description = describe(table, profile, seed=1, report_to=None)
    (code, _) = views.distributions(description, fit_model(description))
    shown = code.shown()
    assert shown.size == views.MAX_BARS and set(np.argsort(-code.values, kind="stable")[:30]) == set(shown)
    assert "The 30 largest codes are shown; 22 more are not." in " ".join(Page(report_html(description)).text)


def test_numeric_bins_keep_their_order_when_cut(descriptions):
    income = views.distributions(descriptions["mst"], fit_model(descriptions["mst"], 50))[2]
    assert income.ordered and income.values.size > views.MAX_BARS
    assert list(income.shown()) == sorted(income.shown())


def test_cramers_v():
    assert views.cramers_v(np.outer([0.2, 0.8], [0.5, 0.3, 0.2])) == pytest.approx(0.0, abs=1e-12)
    assert views.cramers_v(np.diag([3.0, 5.0, 2.0])) == pytest.approx(1.0)
    assert np.isnan(views.cramers_v(np.array([[4.0, 6.0], [0.0, 0.0]])))


def test_wide_tables_keep_the_most_connected_columns(descriptions):
    description = descriptions["mst"]  # a tree of 5 columns: some have more neighbours than others
    graph = views.structure(description).graph
    names = description.schema.names
    degree = dict(graph.degree(weight="weight"))
    assert len(set(degree.values())) > 1
    assert views.heatmap_columns(names, graph) == names
    kept = views.heatmap_columns(names, graph, limit=2)
    left_out = tuple(n for n in names if n not in kept)
    assert len(kept) == 2 and kept == tuple(n for n in names if n in kept)  # in table order
    assert min(degree[n] for n in kept) >= max(degree[n] for n in left_out)
    model = fit_model(description, 50)
    result = views.dependence(model, names, kept)
    assert result.left_out == left_out and np.isnan(result.values[0, 0])
    assert result.values[0, 1] == result.values[1, 0] > 0


def test_independent_model_has_no_dependence(descriptions):
    description = descriptions["independent"]
    result = views.dependence(fit_model(description), description.schema.names, description.schema.names)
    off_diagonal = result.values[~np.eye(len(result.names), dtype=bool)]
    np.testing.assert_allclose(off_diagonal, 0.0, atol=1e-9)


def test_report_never_reads_private_data(tmp_path, monkeypatch, descriptions):
    def refuse(*args, **kwargs):
        raise AssertionError("the inspector tried to read a table")

    for module, name in ((synth.tables.source, "read_table"), (synth.tables.tableio, "read_frame"), (pd, "read_csv"), (pd, "read_parquet")):
        monkeypatch.setattr(module, name, refuse)
    path = inspect_report(descriptions["privbayes"], tmp_path / "r.html", iterations=20)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_text_view_shows_shares_not_counts(descriptions):
    shares = [float(s) for s in re.findall(r"(\d+\.\d)%", inspect_text(descriptions["mst"]))]
    assert shares and max(shares) <= 100.0


def test_cli_writes_the_report_and_refuses_to_overwrite(capsys, tmp_path, descriptions):
    desc = save_description(descriptions["mst"], tmp_path / "d.json")
    report = tmp_path / "r.html"
    code, out, err = run_cli(capsys, "inspect", str(desc), "--report", str(report))
    assert code == 0, err
    assert str(report) in out and Page(report.read_text(encoding="utf-8")).images_of("dependence")
    before = report.read_bytes()
    code, _, err = run_cli(capsys, "inspect", str(desc), "--report", str(report))
    assert_clean_error(code, err, "exists", "--force")
    assert report.read_bytes() == before
    assert run_cli(capsys, "inspect", str(desc), "--report", str(report), "--force")[0] == 0


def test_cli_without_report_prints_the_text_view(capsys, tmp_path, descriptions):
    desc = save_description(descriptions["mst"], tmp_path / "d.json")
    code, out, _ = run_cli(capsys, "inspect", str(desc))
    assert code == 0 and out == inspect_text(descriptions["mst"]) + "\n"
    assert list(tmp_path.iterdir()) == [desc]


def test_missing_matplotlib_is_a_clean_error(capsys, tmp_path, monkeypatch, descriptions):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    monkeypatch.delitem(sys.modules, "synth.inspect.figures", raising=False)
    monkeypatch.delattr(synth.inspect, "figures", raising=False)
    with pytest.raises(OutputError, match="pip install matplotlib"):
        report_html(descriptions["mst"])
    desc = save_description(descriptions["mst"], tmp_path / "d.json")
    code, _, err = run_cli(capsys, "inspect", str(desc), "--report", str(tmp_path / "r.html"))
    assert_clean_error(code, err, "matplotlib", "without --report")
    assert not (tmp_path / "r.html").exists()
