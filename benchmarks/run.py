"""`make bench`: every benchmark of the project, each in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    failed = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        failed |= subprocess.run([sys.executable, str(script)]).returncode
    sys.exit(failed)
