"""`make bench`: every benchmark of the project, each in its own process, then a summary.

Each script's targets are ratios measured in its own run (against ``adjust -m NO`` on the same file,
against the old code, against a peer); absolute times are printed for information.  The exit status
is 1 if any script missed a target (or failed), else 0.  Each script's output passes through as it
comes; the summary repeats each script's target lines (those ending ``ok`` or ``FAILED``) with its
exit status, minutes and load average.  The arguments below make the run cover every
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
    "bench_mirt.py": ["--sizes", "100000,1000000", "--shapes",
                      "3 of 200,complete 21,21 of 200,rubric 84=168000"],   # issue 32's shapes (the rubric: 2,000 papers)
}


def is_target(line: str) -> bool:
    """A line that states a target's outcome: the scripts end those with ``ok`` or ``FAILED``."""
    words = line.split()
    return bool(words) and (words[-1] in ("ok", "FAILED") or "FAILED" in words)


def run_script(script: Path):
    """Runs one script, its output passed through as it comes; returns (exit status, its target
    lines, the highest 1-minute load average seen while it ran)."""
    gib = LIMIT_GIB.get(script.name)
    limit = (lambda: resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))) if gib else None
    targets, peak = [], os.getloadavg()[0]
    with subprocess.Popen([sys.executable, "-u", str(script), *ARGS.get(script.name, [])], preexec_fn=limit,
                          stdout=subprocess.PIPE, text=True, bufsize=1) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            peak = max(peak, os.getloadavg()[0])
            if is_target(line):
                targets.append(line.rstrip())
    return proc.returncode, targets, peak


def main(argv):
    scripts = [s for s in sorted(HERE.glob("bench_*.py")) if not argv or any(a in s.name for a in argv)]
    results = []
    start = time.perf_counter()
    print(f"== make bench: {len(scripts)} scripts; {time.strftime('%H:%M UTC', time.gmtime())}, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    for script in scripts:
        print(f"== {script.name} {' '.join(ARGS.get(script.name, []))}".rstrip(), flush=True)
        t, load = time.perf_counter(), os.getloadavg()[0]
        code, targets, peak = run_script(script)
        results.append((script.name, code, time.perf_counter() - t, load, peak, os.getloadavg()[0], targets))
    print(f"== summary ({time.strftime('%H:%M UTC', time.gmtime())}): each script's exit status, minutes and load "
          "average (1 minute: at its start, highest, at its end), then its target lines")
    for name, code, seconds, load, peak, end, targets in results:
        print(f"{name:<24} {'ok' if code == 0 else f'FAILED (exit {code})':<16} {seconds / 60:6.1f} min  "
              f"load {load:4.1f} / {peak:4.1f} / {end:4.1f}")
        for line in targets:
            print(f"    {line}")
    failed = [name for name, code, *_ in results if code != 0]
    print(f"make bench: {'FAILED: ' + ', '.join(failed) if failed else 'ok'} in "
          f"{(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
