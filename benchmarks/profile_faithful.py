"""Profile of the faithful study's commands: where simulate, adjust, score and report spend time.

    .venv/bin/python benchmarks/profile_faithful.py [--top 12] [--sort tottime|cumulative] [--code DIR]

Each command runs in a fresh process (its imports counted; Python's bytecode cache on) under
cProfile, on a fresh run folder; ``simulate``, ``adjust`` and ``report`` run serially here
(``jobs=1``) so the work they do in forked processes shows up.  ``--code DIR`` profiles another checkout
(e.g. the code before issue 11).  Prints each command's profiled time and its top entries;
benchmarks/README.md keeps them before and after the speed-ups of issue 11.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import cProfile, inspect, pstats, sys, io
prof = cProfile.Profile()
prof.enable()
import ratercal_cli.cli  # the command line's imports, as every command pays them
from ratercal_cli.study import Run
step, run_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]


def serial(fn):
    return {"jobs": 1} if "jobs" in inspect.signature(fn).parameters else {}  # older code: serial anyway


if step == "simulate":
    from ratercal_cli.study.simulate import run_stage, write_run_manifest
    run = Run.create(sys.argv[4], run_dir)
    run_stage(run, "obsgen", quiet=True, **serial(run_stage))
    write_run_manifest(run)
elif step == "adjust":
    from ratercal_cli.study.equate import run_equate
    run_equate(run_dir, quiet=True, jobs=1)
elif step == "score":
    from ratercal_cli.study.score import run_score
    run_score(Run(run_dir), quiet=True)
else:
    from ratercal_cli.report import build_report
    build_report(run_dir, out, quiet=True, **serial(build_report))
prof.disable()
buf = io.StringIO()
st = pstats.Stats(prof, stream=buf)
print(f"{step}: {st.total_tt:.3f} s profiled (imports included)")
st.strip_dirs().sort_stats(sys.argv[5]).print_stats(int(sys.argv[6]))
print("\n".join(buf.getvalue().splitlines()[6:]))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    ap.add_argument("--code", default=str(ROOT), help="the ratercal checkout to profile (e.g. an older one)")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=args.code)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode cache on, as a user has it
    with tempfile.TemporaryDirectory(prefix="ratercal-profile-") as tmp:
        run, out = Path(tmp) / "run", Path(tmp) / "report"
        for step in ("simulate", "adjust", "score", "report"):
            subprocess.run([sys.executable, "-c", CHILD, step, str(run), str(out),
                            str(ROOT / "configs" / "denny1990.yaml"), args.sort, str(args.top)],
                           check=True, cwd=args.code, env=env)


if __name__ == "__main__":
    main()
