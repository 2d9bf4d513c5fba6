"""The real report page in a real browser (slow tier; `sh tests/report/report_check.sh` installs Chromium
and runs it): `outputs/report/index.html` opened from disk in headless Chromium through the DevTools
protocol (`pipeline.report.browser`) loads without console errors or failed resource loads, every image
decodes, and its first screen is not blank."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from pipeline.report.browser import find_chromium, load_page

pytestmark = pytest.mark.slow
PAGE = Path(__file__).resolve().parents[2] / "outputs" / "report" / "index.html"


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip("Chromium is not installed: `apt-get update -qq && apt-get install -y -qq chromium` "
                    "(tests/report/report_check.sh does it)")
    return binary


def colours(png: bytes) -> int:
    """How many distinct colours the screenshot holds (capped at 2: blank or not)."""
    with Image.open(io.BytesIO(png)) as image:
        found = image.convert("RGB").getcolors(maxcolors=1)
    return 1 if found else 2


def test_harness_sees_errors_and_failed_loads(chromium, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<html><body><img src="missing.png"><script>console.error("boom"); throw new Error("thrown")</script></body></html>')
    loaded = load_page(page, browser=chromium)
    assert any("boom" in e for e in loaded.errors) and any("thrown" in e for e in loaded.errors)
    assert any("missing.png" in f for f in loaded.failed) and loaded.broken_images == 1
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    assert colours(load_page(blank, browser=chromium).screenshot) == 1


def test_report_page_in_chromium(chromium):
    if not PAGE.exists():
        pytest.skip(f"{PAGE} is missing: run `python scripts/report.py` (stage report) first")
    loaded = load_page(PAGE, browser=chromium)
    assert loaded.errors == []
    assert loaded.failed == []
    assert loaded.broken_images == 0
    assert colours(loaded.screenshot) == 2
