"""The evaluation's HTML report, JSON file and command line: self-contained page, clean errors, rendering."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from synth.api import describe, evaluate
from synth.evaluate.report import BANNER, PRIVACY_NOTE
from synth.release.description import save_description
from tests.conftest import mixed_table
from tests.test_cli import assert_clean_error, run_cli

RENDER_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "render_report.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.tags: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        attributes = dict(attrs)
        if tag == "img":
            self.images.append(attributes)
        self.links += [v for k, v in attrs if k in ("href", "src") and v and not v.startswith(("data:", "#"))]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("release")
    original = mixed_table(1500, seed=21)
    description = describe(original, epsilon=2.0, seed=1, report_to=None)
    from synth.generation.generate import generate

    paths = {"original": folder / "original.csv", "synthetic": folder / "synthetic.csv",
             "description": folder / "description.json", "report": folder / "report.html",
             "json": folder / "metrics.json"}
    original.to_csv(paths["original"], index=False)
    generate(description, rows=1200, seed=2).to_csv(paths["synthetic"], index=False)
    save_description(description, paths["description"])
    evaluate(paths["original"], paths["synthetic"], paths["description"], target="member",
             report=paths["report"], json_path=paths["json"])
    return paths


def test_report_is_one_self_contained_page_with_the_banner_and_every_picture(release):
    text = release["report"].read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    assert "script" not in page.tags and page.links == []  # nothing loaded from elsewhere
    assert "url(" not in text and "@import" not in text
    assert BANNER in text and PRIVACY_NOTE in text
    alts = [img["alt"] for img in page.images]
    for picture in ("distribution of city, original and synthetic", "histogram of marginal TVDs",
                    "associations: original", "associations: synthetic", "associations: difference",
                    "PCA scatter of both tables", "model scores by training data", "histogram of query errors",
                    "distances to the closest record"):
        assert picture in alts
    for img in page.images:
        source = img["src"] or ""
        assert source.startswith("data:image/png;base64,")
        assert base64.b64decode(source.split(",", 1)[1])[:8] == PNG_MAGIC
    assert "Privacy ledger" in text and "discrete_gaussian" in text  # the Description's ledger


def test_summary_numbers_are_in_the_json(release):
    data = json.loads(release["json"].read_text())
    text = release["report"].read_text(encoding="utf-8")
    summary = data["summary"]
    assert f"{summary['kmarginal_score']:.0f}" in text and f"{summary['2_way_mean_tvd']:.3f}" in text
    assert f"{summary['utility']['train_on_synthetic']:.3f} / {summary['utility']['train_on_original']:.3f}" in text
    assert summary["utility"]["target"] == "member" and data["schema_version"] == 3
    assert data["release"]["ledger"] and data["release"]["spent"]["epsilon"] <= 2.0  # the Description's ledger
    for k in ("1", "2", "3"):
        assert data["fidelity"]["marginals"][k]["scored"] <= data["fidelity"]["marginals"][k]["of"]


@pytest.mark.skipif(not RENDER_SCRIPT.exists(), reason="render script missing")
def test_report_renders_in_headless_chromium_with_no_missing_image(release, tmp_path):
    sys.path.insert(0, str(RENDER_SCRIPT.parent))
    import render_report

    if render_report.chromium() is None:
        pytest.skip("Chromium is not installed")
    shot = tmp_path / "shot.png"
    done = subprocess.run([sys.executable, str(RENDER_SCRIPT), str(release["report"]), "--screenshot", str(shot),
                           "--size", "800x600"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    images = int(re.search(r"(\d+) images, 0 missing", done.stdout).group(1))
    assert images == release["report"].read_text().count("<img ")
    assert shot.read_bytes()[:8] == PNG_MAGIC


def test_cli_evaluate_writes_report_and_json(capsys, release, tmp_path):
    report, metrics = tmp_path / "r.html", tmp_path / "m.json"
    code, out, err = run_cli(capsys, "evaluate", str(release["original"]), str(release["synthetic"]),
                             "--target", "income", "--report", str(report), "--json", str(metrics))
    assert code == 0, err
    assert "SDNist k-marginal score" in out and "trained on original" in out and str(report) in out
    assert "drafted from all rows of the original" in out  # no --description
    assert json.loads(metrics.read_text())["utility"]["ml"]["task"] == "regression"
    assert "k-way marginals" in err or "privacy diagnostics" in err  # progress on standard error
    code, out, err = run_cli(capsys, "evaluate", str(release["original"]), str(release["synthetic"]),
                             "--json", str(metrics), "--quiet", "--force")
    assert code == 0 and err == "" and "SDNist k-marginal score" in out  # --quiet hides progress, not results


def test_cli_refuses_an_existing_output_before_any_work(capsys, release):
    code, _, err = run_cli(capsys, "evaluate", str(release["original"]), str(release["synthetic"]),
                           "--report", str(release["report"]))
    assert_clean_error(code, err, "exists already", "--force")


def test_cli_bad_input_is_a_clean_error(capsys, release, tmp_path):
    original, synthetic = str(release["original"]), str(release["synthetic"])
    other = tmp_path / "other.csv"
    pd.read_csv(synthetic).rename(columns={"city": "town"}).to_csv(other, index=False)
    assert_clean_error(*run_cli(capsys, "evaluate", original, str(other))[::2], "same columns", "town")
    header_only = tmp_path / "empty.csv"
    header_only.write_text("city,age,income,joined,member\n")
    assert_clean_error(*run_cli(capsys, "evaluate", original, str(header_only))[::2], "no rows")
    assert_clean_error(*run_cli(capsys, "evaluate", original, synthetic, "--target", "salary")[::2],
                       "'salary' is not a column")
    constant = tmp_path / "constant.csv"
    pd.read_csv(original).assign(member=True).to_csv(constant, index=False)
    assert_clean_error(*run_cli(capsys, "evaluate", str(constant), synthetic, "--target", "member")[::2],
                       "single value")
    words = tmp_path / "words.csv"
    pd.read_csv(synthetic).assign(age="unknown").to_csv(words, index=False)
    assert_clean_error(*run_cli(capsys, "evaluate", original, str(words))[::2], "'age'", "kind")
