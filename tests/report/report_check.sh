#!/bin/sh
# The browser check of the report page (`make report-check`): installs Debian's Chromium when it is missing
# (needs root), then runs the slow test that opens outputs/report/index.html in headless Chromium.
# Run `python scripts/report.py` (or `dvc repro report`) first. Extra arguments go to pytest.
set -e
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
exec python -m pytest -q -m slow tests/report/test_report_browser.py "$@"
