"""Render an HTML report of ``ratercal check|adjust|compare --html`` to a PNG in headless Chromium,
to look at it as a browser shows it (issue 18: the report must open in a browser as it is).

    ratercal adjust examples/ratings.csv --scale 0-5 --group-col grade --resolve-discrepancies \\
        --method recommended --cut 3.25 --bootstrap 200 -o adjusted.csv --html report.html
    python examples/render_report.py report.html report.png

Needs Debian's ``chromium`` (``apt-get install -y chromium``).  The page is opened from the file
with the network and every background service of the browser switched off, so a report that needed
anything from outside would show it missing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def render(html: Path, png: Path, width: int = 1200, height: int = 4000) -> Path:
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        sys.exit("no chromium on PATH: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                        f"--screenshot={png.resolve()}", html.resolve().as_uri()],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return png


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python examples/render_report.py REPORT.html OUT.png")
    print(f"wrote {render(Path(sys.argv[1]), Path(sys.argv[2]))}")
