"""`make bench`: every benchmark of the project, each in its own process, then a summary.

Each script's targets are ratios measured in its own run (against ``adjust -m NO`` on the same file,
against the old code, against a peer); absolute times are printed for information.  The exit status
is 1 if any script missed a target (or failed), else 0.  The arguments below make the run cover every
figure of issue 21's table: 1M ratings (every method, ``check`` with 800 raters), 5M ratings (MML and
MFRM beside NO) and ``mirt`` at 100,000 and 1,000,000 ratings and on the 84-ratings-a-paper rubric.
It takes a long while (benchmarks/README.md: "How long `make bench` takes").

    .venv/bin/python benchmarks/run.py [NAME ...]     # only the scripts whose names contain NAME
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: address-space limit of a script and its children (the peer's PCM at 1M ratings asks ~15 GB; the
#: machine is shared: past this it fails with MemoryError rather than push others out)
LIMIT_GIB = {"bench_mirt.py": 12}

#: arguments per script (the others run with their defaults)
ARGS = {
    "bench_large_files.py": ["--big", "--big-only", "MML,MFRM"],
    "bench_mirt.py": ["--sizes", "100000,1000000"],
}


def main(argv):
    scripts = [s for s in sorted(HERE.glob("bench_*.py")) if not argv or any(a in s.name for a in argv)]
    results = []
    start = time.perf_counter()
    print(f"== make bench: {len(scripts)} scripts; load average {os.getloadavg()[0]:.1f}", flush=True)
    for script in scripts:
        print(f"== {script.name} {' '.join(ARGS.get(script.name, []))}".rstrip(), flush=True)
        t = time.perf_counter()
        gib = LIMIT_GIB.get(script.name)
        limit = (lambda: resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))) if gib else None
        code = subprocess.run([sys.executable, str(script), *ARGS.get(script.name, [])], preexec_fn=limit).returncode
        results.append((script.name, code, time.perf_counter() - t, os.getloadavg()[0]))
    print("== summary (exit status per script; minutes and the load average at its end for information)")
    for name, code, seconds, load in results:
        print(f"{name:<24} {'ok' if code == 0 else f'FAILED (exit {code})':<16} {seconds / 60:6.1f} min  load {load:4.1f}")
    failed = any(code != 0 for _, code, _, _ in results)
    print(f"make bench: {'FAILED' if failed else 'ok'} in {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
