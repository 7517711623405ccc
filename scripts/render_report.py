"""Render a synth HTML report in headless Chromium: check that every image shows, save a screenshot.

Usage (Chromium must be installed, e.g. `apt-get install chromium`):

    python scripts/render_report.py synth-demo/evaluation.html                   # check only
    python scripts/render_report.py synth-demo/evaluation.html --screenshot docs/evaluate-report.png

The check loads a copy of the page with a small script appended that, once the page has loaded,
records how many <img> elements it has and which of them did not decode (zero natural width). The
browser runs with every host name unresolvable, so a page that needed the network would show missing
images. Exit status 0 when every image rendered, 1 when some did not, 2 when Chromium is absent.
The screenshot is of the page's top (the banner and summary scores first) at a fixed window size.
"""

from __future__ import annotations

import argparse
import html.parser
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PROBE = """<script>
window.addEventListener("load", () => {
  const missing = Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt);
  document.body.setAttribute("data-images", String(document.images.length));
  document.body.setAttribute("data-missing", JSON.stringify(missing));
});
</script>"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=15000",
         "--host-resolver-rules=MAP * ~NOTFOUND"]


def chromium() -> str | None:
    """The path of an installed Chromium or Chrome, or None."""
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


class _Body(html.parser.HTMLParser):
    """Reads the probe's attributes off the <body> element of the dumped DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.attributes: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.attributes = dict(attrs)


def check_images(report: Path, browser: str) -> tuple[int, list[str]]:
    """How many images the rendered page has, and the alt texts of those that did not render."""
    page = report.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>")
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe.html"
        probe.write_text(page, encoding="utf-8")
        done = subprocess.run([browser, *FLAGS, "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                              timeout=300, check=False)
    body = _Body()
    body.feed(done.stdout)
    if "data-images" not in body.attributes:
        raise SystemExit(f"Chromium did not render {report} (exit {done.returncode}): {done.stderr[-2000:]}")
    return int(body.attributes["data-images"] or 0), json.loads(body.attributes.get("data-missing") or "[]")


def screenshot(report: Path, target: Path, browser: str, width: int, height: int) -> None:
    """A PNG of the top ``width`` × ``height`` pixels of the rendered page."""
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([browser, *FLAGS, f"--window-size={width},{height}", f"--screenshot={target.resolve()}",
                    report.resolve().as_uri()], capture_output=True, timeout=300, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=Path, help="an HTML report written by synth")
    parser.add_argument("--screenshot", type=Path, help="also save a PNG of the page's top here")
    parser.add_argument("--size", default="1280x2000", help="screenshot window size (default 1280x2000)")
    args = parser.parse_args()
    browser = chromium()
    if browser is None:
        print("Chromium is not installed (apt-get install chromium); nothing was checked.", file=sys.stderr)
        return 2
    images, missing = check_images(args.report, browser)
    print(f"{args.report}: {images} images, {len(missing)} missing{': ' + ', '.join(missing) if missing else ''}")
    if args.screenshot is not None:
        width, height = (int(x) for x in args.size.lower().split("x"))
        screenshot(args.report, args.screenshot, browser, width, height)
        print(f"saved a screenshot to {args.screenshot}")
    return 1 if missing or images == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
