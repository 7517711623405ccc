"""The release card: built from real small releases (a clean one with a public profile, one without a
profile and seeded, one with data-derived domains, a relational one), it holds every section, flags
each end-to-end gap in the warning box (and a clean release not at all), sums the budget by purpose
to the ledger's totals, lists the files with their true hashes, refuses changed files, and shows an
evaluation's numbers and attack results when given; through the command line too."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synth import api
from synth.cli import main
from synth.sharing.card import SECTIONS, budget_summary, card_html, write_card
from synth.sharing.folder import read_folder
from tests.relational_cases import hospital, write_profile, write_sqlite

PUBLIC_PROFILE = """\
[release]
epsilon = 1.0
delta = 1e-9
engine = "mst"

[columns.pid]
kind = "id"
source = "public"

[columns.city]
kind = "categorical"
categories = ["Lyon", "Oslo", "Porto", "Quito"]
missing = false
source = {city_source}

[columns.age]
kind = "integer"
lower = 0
upper = 99
bins = 10
missing = false
source = "public"

[columns.note]
kind = "text"
source = "public"
"""


def table(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"pid": [f"P{i:05d}" for i in range(n)],
                         "city": rng.choice(["Lyon", "Oslo", "Porto", "Quito"], n),
                         "age": rng.integers(18, 80, n), "note": [f"free text {i}" for i in range(n)]})


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """clean: public profile; derived: city's domain data-derived; seeded: no profile, with a seed;
    relational: patients and visits, per person; data: the original CSV (for an evaluation)."""
    root = tmp_path_factory.mktemp("card")
    data = root / "data.csv"
    table().to_csv(data, index=False)
    made = {"data": data}
    for name, source in (("clean", '"public"'), ("derived", '"data-derived"')):
        profile = root / f"{name}.toml"
        text = PUBLIC_PROFILE.format(city_source=source)
        if name == "derived":
            text = text.replace("[release]\n", "[release]\naccept_data_derived_domains = true\n")
        profile.write_text(text, encoding="utf-8")
        # 1,200 synthetic rows: the noisy row count of 1,500 rows may round to 1,500 itself
        api.run(data, root / name, profile, rows=1200, report_to=None)
        made[name] = root / name
    api.run(pd.read_csv(data)[["city", "age"]], root / "seeded", epsilon=1.0, seed=3, engine="mst", report_to=None)
    made["seeded"] = root / "seeded"
    database = write_sqlite(hospital(parents=400), root / "hospital.sqlite")
    api.run_database(database, root / "relational", write_profile(root / "hospital.toml"), report_to=None)
    made["relational"] = root / "relational"
    return made


class Sections(HTMLParser):
    """The ids of the page's <h2> headings and the text of its warning boxes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.boxes: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "h2":
            self.ids.append(found.get("id") or "")
        if tag == "div" and "warning-box" in (found.get("class") or ""):
            self._depth = 1
            self.boxes.append("")
        elif tag == "div" and self._depth:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.boxes[-1] += data


def parse(html: str) -> Sections:
    parser = Sections()
    parser.feed(html)
    return parser


def card_of(release: Path, evaluation: dict | None = None) -> str:
    return card_html(read_folder(release), evaluation)


@pytest.mark.parametrize("name", ["clean", "derived", "seeded", "relational"])
def test_every_section_is_there_with_its_id_and_in_the_contents(releases: dict[str, Path], name: str) -> None:
    html = card_of(releases[name])
    assert parse(html).ids == [key for key, _ in SECTIONS]
    for key, _ in SECTIONS:
        assert f'href="#{key}"' in html
    assert "http://" not in html and "https://" not in html and "<script" not in html  # self-contained
    assert "@media print" in html and "break-inside: avoid" in html


def test_a_clean_public_release_has_no_warning_and_says_the_guarantee_holds(releases: dict[str, Path]) -> None:
    html = card_of(releases["clean"])
    assert parse(html).boxes == []
    assert "The guarantee holds end to end" in html and "does NOT hold" not in html
    assert "e^ε = e^1 ≈ 2.72 times" in html
    # what was left out: the identifier and the free text column, each with why
    left = html.split("Left out, and why")[1].split("</table>")[0]
    assert "pid" in left and "identifier" in left and "note" in left and "free text" in left
    assert "1,500" not in html  # the original row count is never on the card (only the synthetic files' rows)
    assert '<td class="number">1,200</td>' in html


def test_a_seeded_release_without_a_profile_is_flagged_twice_with_its_reasons(releases: dict[str, Path]) -> None:
    html = card_of(releases["seeded"])
    boxes = parse(html).boxes
    assert len(boxes) == 2  # at the top, and in the guarantee section
    assert all("SEEDED" in box and "NO privacy guarantee" in box for box in boxes)
    assert "found under DP, without a public profile" in html  # the dp-estimated domains: a note, not a gap
    assert "discovery" in html.split('id="budget"')[1]


def test_data_derived_domains_are_named_in_the_warning_box(releases: dict[str, Path]) -> None:
    boxes = parse(card_of(releases["derived"])).boxes
    assert len(boxes) == 2
    assert all("city" in box and "read from the private data without noise" in box for box in boxes)
    assert all("age" not in box and "SEEDED" not in box for box in boxes)


@pytest.mark.parametrize("name", ["clean", "seeded", "relational"])
def test_the_budget_summary_adds_up_to_the_ledger(releases: dict[str, Path], name: str) -> None:
    folder = read_folder(releases[name])
    if folder.stored is not None:
        from synth.release.description import LedgerEntry
        ledger = [LedgerEntry.from_dict(e) for e in folder.stored.record["ledger"]]
    else:
        ledger = list(folder.descriptions["table"].ledger)
    key, rows = budget_summary(ledger, range(0))
    assert key == "rho"  # these releases account in zCDP
    assert math.isclose(sum(share for *_, share, _ in rows), 1.0, rel_tol=1e-12)
    assert sum(count for _, count, *_ in rows) == len(ledger)
    assert math.isclose(math.fsum(amount for _, _, amount, _, _ in rows), math.fsum(e.cost.rho for e in ledger),
                        rel_tol=1e-12)
    names = [row[0] for row in rows]
    assert "measurement" in names and "selection" in names
    assert ("discovery" in names) == (name == "seeded")  # only the release without a profile discovers
    assert ("bounding" in names) == (name == "relational")
    assert not [n for n in names if n.startswith("other")]
    page = card_of(releases[name]).split('class="budget-summary"')[1].split("</table>")[0]
    shown = [float(v) for v in re.findall(r'<td class="number">([0-9.]+)%</td>', page)]
    assert shown[-1] == 100.0 and abs(sum(shown[:-1]) - 100.0) <= 0.05 * len(rows)  # rounded to 0.1 %


def test_a_profile_draft_step_is_its_own_purpose() -> None:
    ledger = load_description_ledger()
    _, rows = budget_summary(ledger, range(0, 3))
    assert rows[0][0] == "profile draft" and rows[0][1] == 3
    assert math.isclose(sum(r[3] for r in rows), 1.0)


def load_description_ledger() -> list:
    """A ledger of four measurements and a selection, built by hand."""
    from synth.release.description import LedgerEntry
    entries = [{"index": i, "mechanism": "discrete_gaussian" if i != 4 else "exponential",
                "query": f"marginal(c{i})" if i != 4 else "select the worst-estimated of 3 marginals",
                "sensitivity": 1.0, "noise_scale": 2.0, "cost": {"epsilon": 0.0, "delta": 0.0, "rho": 0.01 * (i + 1)},
                "note": ""} for i in range(5)]
    return [LedgerEntry.from_dict(e) for e in entries]


def files_table(html: str) -> dict[str, tuple[str, int]]:
    part = html.split('id="files"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>([^<]+)</td><td><code class=\"hash\">([0-9a-f]{64})</code></td>"
                      r"<td class=\"number\">([0-9,]+)</td></tr>", part)
    return {name: (sha, int(size.replace(",", ""))) for name, sha, size in rows}


@pytest.mark.parametrize("name", ["clean", "relational"])
def test_the_files_table_holds_each_file_with_its_true_hash(releases: dict[str, Path], name: str) -> None:
    release = releases[name]
    listed = files_table(card_of(release))
    manifest = json.loads((release / "manifest.json").read_text())
    expected = {f.get("name", f.get("file")) for f in manifest["files"]} | {"manifest.json"}
    assert set(listed) == expected
    for file, (sha, size) in listed.items():
        assert sha == hashlib.sha256((release / file).read_bytes()).hexdigest()
        assert size == (release / file).stat().st_size
    manifest_sha = hashlib.sha256((release / "manifest.json").read_bytes()).hexdigest()
    assert manifest_sha in card_of(release).split('id="annex"')[1]


@pytest.mark.parametrize("victim", ["synthetic.csv", "description.json", "description.model.npz"])
def test_a_changed_or_missing_file_stops_the_card_naming_it(releases: dict[str, Path], tmp_path: Path,
                                                            victim: str, capsys: pytest.CaptureFixture[str]) -> None:
    release = tmp_path / "release"
    shutil.copytree(releases["clean"], release)
    data = bytearray((release / victim).read_bytes())
    data[len(data) // 2] ^= 1
    (release / victim).write_bytes(bytes(data))
    assert main(["card", str(release), "-o", str(tmp_path / "card.html")]) == 2
    error = capsys.readouterr().err
    assert f"{victim}: changed" in error and "synth card: error:" in error and "Traceback" not in error
    assert not (tmp_path / "card.html").exists()
    (release / victim).unlink()
    assert main(["card", str(release), "-o", str(tmp_path / "card.html")]) == 2
    assert f"{victim}: missing" in capsys.readouterr().err


def test_the_relational_card_states_the_person_level_unit(releases: dict[str, Path]) -> None:
    html = card_of(releases["relational"])
    guarantee = html.split('id="guarantee"')[1].split('id="public-input"')[0]
    assert "one person" in guarantee and "root table" in guarantee and "patients" in guarantee
    assert "their row and every row that refers to it" in guarantee
    released = html.split('id="what-was-released"')[1].split('id="guarantee"')[0]
    assert "patients" in released and "visits" in released and "fresh keys" in released
    assert "SEEDED" in parse(html).boxes[0]  # the test profile seeds its noise


def test_with_an_evaluation_its_numbers_appear(releases: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    release = releases["clean"]
    evaluation = tmp_path / "ev.json"
    assert main(["evaluate", str(releases["data"]), str(release / "synthetic.csv"), "--description",
                 str(release / "description.json"), "--json", str(evaluation), "-q"]) == 0
    summary = json.loads(evaluation.read_text())["summary"]
    out = tmp_path / "card.html"
    capsys.readouterr()
    assert main(["card", str(release), "-o", str(out), "--evaluation", str(evaluation)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote the release card to {out}"
    html = out.read_text()
    section = html.split('id="utility-and-attacks"')[1].split('id="files"')[0]
    for k in (1, 2):
        assert f"{summary[f'{k}_way_mean_tvd']:.4f}" in section
    assert "not differentially private" in section and "no attack results" in section
    assert out.stat().st_mode & 0o077 == 0  # a card holding an evaluation is the owner's only
    assert "No evaluation was attached" in card_of(release)


def attacks_section(epsilon_bound: float) -> dict:
    def anonymeter(risk: float) -> dict:
        return {"risk": risk, "risk_ci": [max(risk - 0.02, 0), risk + 0.02], "attack_rate": risk + 0.1,
                "baseline_rate": 0.1, "control_rate": 0.1, "n_attacks": 500, "reading": f"risk read as {risk}"}

    membership = {"auc": 0.51, "tpr": 0.2, "fpr": 0.19, "threshold": 0.3, "epsilon_lower_bound": epsilon_bound,
                  "confidence": 0.95, "reading": "membership reading"}
    return {"attacks": {
        "notice": "Attacks read the original data: not DP, for the data owner.",
        "rows": {"training": 1200, "holdout": 300, "synthetic": 1200, "attacked": 300},
        "sampling": "targets: 300 training and 300 holdout rows drawn at random (seed 0)",
        "release_epsilon": 1.0, "tables": ["release", "bootstrap", "shuffled"],
        "anonymeter": {name: {"release": anonymeter(0.013), "bootstrap": anonymeter(0.647), "shuffled": anonymeter(0.0)}
                       for name in ("singling_out", "linkability", "inference")},
        "membership": {"attack": "distance to the closest synthetic row", "release": membership,
                       "bootstrap": {**membership, "auc": 0.93, "epsilon_lower_bound": 2.37},
                       "shuffled": {"reading": "could not run: too few rows"}},
        "verdict": "No attack advantage distinguishable from the control (verdict marker).", "seconds": 1.5}}


def test_an_attacks_section_shows_the_table_and_the_verdict(releases: dict[str, Path]) -> None:
    html = card_of(releases["clean"], attacks_section(0.04))
    section = html.split('id="utility-and-attacks"')[1].split('id="files"')[0]
    assert "(verdict marker)" in section
    attack_table = section.split('class="attacks"')[1].split("</table>")[0]
    assert attack_table.count("<tr") == 1 + 3 * 3 + 3  # header, three anonymeter attacks and membership, each ×3
    for text in ("0.647", "[0.627, 0.667]", "0.930", "2.37", "0.04", "risk read as 0.013", "could not run: too few rows",
                 "singling out", "linkability", "inference", "bootstrap", "shuffled"):
        assert text in attack_table, text
    assert "targets: 300 training" in section


def test_the_card_is_written_as_a_file_of_the_release_and_refuses_to_overwrite(releases: dict[str, Path],
                                                                               tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "card.html"
    write_card(releases["relational"], out)
    assert main(["card", str(releases["relational"]), "-o", str(out)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["card", str(releases["relational"]), "-o", str(out), "--force"]) == 0
    assert main(["card", str(tmp_path), "-o", str(tmp_path / "other.html")]) == 2
    assert "holds no manifest.json" in capsys.readouterr().err


def test_a_file_that_is_not_an_evaluation_is_refused(releases: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["card", str(releases["clean"]), "-o", str(tmp_path / "c.html"), "--evaluation", str(bad)]) == 2
    assert "is not an evaluation" in capsys.readouterr().err



def test_a_relational_evaluation_shows_each_table_and_the_links(releases: dict[str, Path], tmp_path: Path) -> None:
    evaluation = tmp_path / "ev.json"
    api.evaluate_database(releases["relational"].parent / "hospital.sqlite", releases["relational"], json_path=evaluation)
    data = json.loads(evaluation.read_text())
    html = card_of(releases["relational"], data)
    section = html.split('id="utility-and-attacks"')[1].split('id="files"')[0]
    assert "Table patients" in section and "Table visits" in section
    assert f"{data['tables']['patients']['1_way_mean_tvd']:.4f}" in section
    assert f"{data['children_per_parent']['visits']['tvd']:.4f}" in section and "visits rows with a parent" in section
