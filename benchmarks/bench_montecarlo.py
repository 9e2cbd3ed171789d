"""Benchmark: data sets per second of the corrected Monte Carlo study, new code beside the old.

    .venv/bin/python benchmarks/bench_montecarlo.py [--replications 200] [--jobs 2]
        [--reference PATH] [--old-config FILE] [--no-serial-check] [--profile]

The old code is the commit before issue 11 (``f0bbdaa``: its ``ratercal_cli/`` and the
``configs/corrected.yaml`` it ran, extracted by ``git archive`` into
``benchmarks/.reference-f0bbdaa/`` on first use; ``--reference PATH``: a folder holding another
older ``ratercal_cli/``, ``--old-config`` its config).  Each run is a fresh process into its own
temporary folder:

1. the new code, then the old, on the old config (32 cells, ten methods, both variants: the same
   data sets and methods, so the same work): both rates, and the ratio of their CPU seconds (all
   their processes'), the target (the machine is shared: the wall time is mostly what else runs;
   rates and the wall ratio are printed for information);
2. the new code on today's ``configs/corrected.yaml`` (which adds ``shrinkage: kelley``, a second
   paper score per method, and columns the old code does not write): its rate for information, its
   peak memory (< 1 GiB), and its numbers against the old run's on the rows and columns both write
   (:func:`compare_with_old`): every row identical as text but those :data:`WHY` explains;
3. the new code on today's config serially: the same bytes as the ``--jobs`` run.

Exits 1 if the ratio is below TARGET_RATIO, the memory above 1 GiB, a row differs from the old
code's for no known reason, or the serial bytes differ.  ``--profile`` prints the top of a cProfile
of a serial ``-r 20`` run of the new code.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
REFERENCE_COMMIT = "f0bbdaa"
TARGET_RATE = 500.0   # (issue 11's absolute rate, on a quiet machine; printed for information)
TARGET_RATIO = 3.0    # old / new CPU seconds in the same run (measured 4.0-4.6x in wall time at load ~1)
TARGET_MIB = 1024.0
OUTPUTS = ("replications.csv", "summary.csv", "paired.csv", "summary.md")

#: runs ``montecarlo`` in a child and reports (wall seconds, CPU seconds, peak RSS MiB of the largest process)
_CHILD = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(sys.argv[1:]).returncode
wall = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": wall, "cpu": u.ru_utime + u.ru_stime, "mib": u.ru_maxrss / 1024.0}))
"""


def reference_path(path=None) -> Path:
    """The old code's folder (holding ``ratercal_cli/`` and, extracted from git, the
    ``configs/corrected.yaml`` it ran); extracted by ``git archive`` if needed."""
    if path:
        return Path(path).resolve()
    ref = REPO / "benchmarks" / f".reference-{REFERENCE_COMMIT}"
    for member, present in (("ratercal_cli", ref / "ratercal_cli" / "__init__.py"),
                            ("configs/corrected.yaml", ref / "configs" / "corrected.yaml")):
        if not present.exists():
            ref.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "-C", str(REPO), "archive", REFERENCE_COMMIT, member],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(ref)], input=archive, check=True)
    return ref


def run(code_root: Path, out: Path, config: str, replications: int, jobs: int) -> dict:
    """One ``montecarlo`` run of the package under ``code_root`` (a fresh interpreter whose
    ``sys.path`` starts there); returns the wall time, the CPU time of its processes and their
    peak memory (the largest process's)."""
    cmd = [sys.executable, "-c", _CHILD, sys.executable, "-c",
           "import sys; sys.path.insert(0, sys.argv.pop(1)); from ratercal_cli.commands.montecarlo import "
           "montecarlo; montecarlo(sys.argv[1:])", str(code_root),
           str(config), "--out", str(out), "-r", str(replications), "-j", str(jobs), "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(REPO))
    lines = proc.stdout.strip().splitlines()
    res = json.loads(lines[-1]) if proc.returncode == 0 and lines else {"rc": proc.returncode}
    if res["rc"] != 0:
        err = proc.stderr.strip().splitlines()
        raise SystemExit(f"montecarlo: FAILED under {code_root} on {config}: {err[-1] if err else 'no message'}")
    return res


def same_bytes(a: Path, b: Path) -> dict:
    return {name: (a / "montecarlo" / name).read_bytes() == (b / "montecarlo" / name).read_bytes()
            for name in OUTPUTS}


def profile(config: str, replications: int = 20, top: int = 25):
    """cProfile of a serial run (this checkout), the top entries by internal time."""
    import cProfile
    import io
    import pstats

    sys.path.insert(0, str(REPO))
    from ratercal_cli.config import load_config
    from ratercal_cli.montecarlo.run import MonteCarloRun

    cfg = load_config(config)
    with tempfile.TemporaryDirectory(prefix="ratercal-bench-") as tmp:
        prof = cProfile.Profile()
        prof.enable()
        r = MonteCarloRun(cfg, tmp, replications=replications)
        r.run(jobs=1, quiet=True)
        r.summarise()
        prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    print(buf.getvalue())


#: why rows of the new code differ from f0bbdaa's on the rows and columns both write; a row of
#: replications.csv that differs for none of these reasons is a failure
WHY = {
    "PCM": "the corrected PCM's paper qualities: issue 10's one person-quality solver (it solves papers "
           "the old solver left in a Newton cycle) and issue 23's WLE in place of the bounded ML",
    "thin": "issue 18: a corrected method leaves a rater with one rating out of its fit (f0bbdaa fitted "
            "a parameter to that rating; EQP moved it to the overall median)",
}
#: the (variant, method) whose every row may differ, with its reason (a key of :data:`WHY`)
EXPECTED_CHANGES = {("corrected", "PCM"): "PCM"}
#: summary.csv's columns that rank a method among the others of its group (variant, shrinkage): they
#: follow a changed method's RMSE, so they may differ for every method of a variant with a changed row
RANKING = ("rank", "p_best", "tied_next")
#: the columns naming a row of each file; the old code has no ``shrinkage`` (its rows are today's
#: ``shrinkage: none``)
ROW_KEYS = {
    "replications.csv": ("set", "replication", "variant", "shrinkage", "method"),
    "summary.csv": ("variant", "shrinkage", "method", "scope", "facet", "level"),
    "paired.csv": ("scope", "facet", "level", "criterion", "variant_a", "shrinkage_a", "method_a",
                   "variant_b", "shrinkage_b", "method_b"),
}


def _read_rows(path: Path):
    """(header, {row key: {column: text}}) of one of the study's CSVs; a missing shrinkage is ``none``."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames)
        keys = ROW_KEYS[path.name]
        rows = {tuple(rec.get(k, "none") if k.startswith("shrinkage") else rec[k] for k in keys): rec
                for rec in reader}
    return header, rows


def thin_rater_sets(config: str, sets) -> set:
    """The ``(set, replication)`` of ``sets`` whose data set has a rater with fewer ratings than
    ``base.MIN_RATINGS`` (made again by this checkout's generator: the two codes' data sets are the same)."""
    sys.path.insert(0, str(REPO))
    from ratercal_cli.config import load_config
    from ratercal_cli.generators.modern import generate_set
    from ratercal_cli.methods.base import MIN_RATINGS
    from ratercal_cli.montecarlo.replicate import set_ratings
    from ratercal_cli.montecarlo.spec import StudySpec

    cfg = load_config(config)
    spec = StudySpec.from_config(cfg)
    spec.prepare()
    out = set()
    for code, rep in sorted(set(sets)):
        cell = cfg.cell(code)
        gen = generate_set(cell, spec.generator, spec.seed, int(rep), spec.steps_for(cell.max_score),
                           spec.linear or None, spec.true_score, spec.rater_effects(), spec.rubric_design())
        n = np.bincount(set_ratings(gen, cell, spec.n_raters, spec.rubric_design()).rater, minlength=spec.n_raters)
        if ((n > 0) & (n < MIN_RATINGS)).any():
            out.add((code, rep))
    return out


def _compare_file(name, new: Path, old: Path, expected):
    """One CSV of the new run against the old code's on the rows both have (keyed by
    :data:`ROW_KEYS`), as text in the columns both have.  ``expected(key, columns)`` gives the reason
    (a key of :data:`WHY`, or ``"ranking"``) a differing row may differ, or None."""
    new_header, new_rows = _read_rows(new / "montecarlo" / name)
    old_header, old_rows = _read_rows(old / "montecarlo" / name)
    columns = [c for c in old_header if c in new_header and c not in ROW_KEYS[name]]
    res = dict(rows=0, columns=columns, same=0, expected={}, unexpected=[],
               missing=[" ".join(k) for k in old_rows if k not in new_rows]
               + [c for c in old_header if c not in new_header],
               new_rows={}, new_columns=[c for c in new_header if c not in old_header], differ={})
    old_facets = {dict(zip(ROW_KEYS[name], k)).get("facet") for k in old_rows}
    for key, rec in new_rows.items():
        if key not in old_rows:
            named = dict(zip(ROW_KEYS[name], key))
            tag = "shrinkage " + "/".join(sorted({v for k, v in named.items() if k.startswith("shrinkage")}))
            if named.get("facet") not in (None, *old_facets):
                tag += f", facet {named['facet']}"
            res["new_rows"][tag] = res["new_rows"].get(tag, 0) + 1
            continue
        res["rows"] += 1
        differ = [c for c in columns if rec[c] != old_rows[key][c]]
        if not differ:
            res["same"] += 1
            continue
        res["differ"][key] = differ
        why = expected(key, differ)
        if why:
            res["expected"][why] = res["expected"].get(why, 0) + 1
        else:
            res["unexpected"].append((key, differ))
    return res


def compare_with_old(new: Path, old: Path, config: str) -> dict:
    """The new run's CSVs against the old code's (run on ``config``), on what both write: for each
    file the rows both have (the old rows are today's ``shrinkage: none``) compared as text in the
    columns both have.  A replications.csv row may differ for a reason of :data:`WHY` (its method in
    :data:`EXPECTED_CHANGES`, or a corrected method on a data set with a thin rater, checked by making
    the data set again); a summary.csv or paired.csv row if its method (either of a pair) has such
    replication rows, and the :data:`RANKING` columns of a variant with such a method.  Returns per
    file: ``rows``, ``columns`` (compared), ``same``, ``expected`` ({reason: rows}), ``unexpected``
    ([(key, columns)]), ``missing`` (old rows or columns the new run lacks), ``new_rows`` ({shrinkage:
    rows} only the new code writes), ``new_columns``."""
    keys = ROW_KEYS["replications.csv"]
    first = _compare_file("replications.csv", new, old, lambda key, differ: None)
    named = [dict(zip(keys, k)) for k in first["differ"]]
    thin = thin_rater_sets(config, [(n["set"], n["replication"]) for n in named
                                    if n["variant"] == "corrected" and (n["variant"], n["method"]) not in EXPECTED_CHANGES])

    def replication_reason(key, differ):
        n = dict(zip(keys, key))
        if (n["variant"], n["method"]) in EXPECTED_CHANGES:
            return EXPECTED_CHANGES[(n["variant"], n["method"])]
        return "thin" if n["variant"] == "corrected" and (n["set"], n["replication"]) in thin else None

    out = {"replications.csv": _compare_file("replications.csv", new, old, replication_reason)}
    # a method's summaries and pairs follow its replications
    moved = {}
    for key, differ in first["differ"].items():
        why = replication_reason(key, differ)
        if why:
            n = dict(zip(keys, key))
            moved.setdefault((n["variant"], n["method"]), why)

    def summary_reason(key, differ):
        n = dict(zip(ROW_KEYS["summary.csv"], key))
        if (n["variant"], n["method"]) in moved:
            return moved[(n["variant"], n["method"])]
        if set(differ) <= set(RANKING) and any(v == n["variant"] for v, _ in moved):
            return "ranking"
        return None

    def paired_reason(key, differ):
        n = dict(zip(ROW_KEYS["paired.csv"], key))
        return next((moved[(n[f"variant_{s}"], n[f"method_{s}"])] for s in "ab"
                     if (n[f"variant_{s}"], n[f"method_{s}"]) in moved), None)

    out["summary.csv"] = _compare_file("summary.csv", new, old, summary_reason)
    out["paired.csv"] = _compare_file("paired.csv", new, old, paired_reason)
    out["moved"] = moved
    return out


def print_comparison(cmp: dict) -> bool:
    """Prints what :func:`compare_with_old` found; True if nothing differs unexpectedly and nothing
    the old code writes is missing."""
    ok = True
    moved = cmp["moved"]
    print("montecarlo: same numbers as the old code? compared as text on the rows and columns both write "
          "(the old rows are today's shrinkage none); rows that may differ, and why:")
    for why, text in WHY.items():
        methods = sorted(f"{v} {m}" for (v, m), w in moved.items() if w == why)
        print(f"montecarlo:   [{why}] {text}: {', '.join(methods) if methods else 'no row differs so in this run'}")
    print("montecarlo:   a summary or pair of those methods follows their rows; [ranking] the "
          f"{'/'.join(RANKING)} of the other methods of their variant follow their RMSE")
    for name in ROW_KEYS:
        r = cmp[name]
        good = not r["unexpected"] and not r["missing"]
        ok &= good
        extra = []
        if r["new_rows"]:
            extra.append("not compared: " + ", ".join(f"{n} rows with {k}"
                                                     for k, n in sorted(r["new_rows"].items())
                                                     ) + " (only the new code writes them)")
        if r["new_columns"]:
            extra.append(f"{len(r['new_columns'])} new columns ({', '.join(r['new_columns'][:3])}"
                         f"{', ...' if len(r['new_columns']) > 3 else ''})")
        exp = ", ".join(f"{n} [{w}]" for w, n in sorted(r["expected"].items())) or "none"
        print(f"montecarlo:   {name}: {r['rows']} rows x {len(r['columns'])} columns compared: {r['same']} identical; "
              f"differ as expected: {exp}; differ unexpectedly: {len(r['unexpected'])}"
              + (f"; old rows/columns missing: {len(r['missing'])}" if r["missing"] else "")
              + ("; " + "; ".join(extra) if extra else "") + f"  {'ok' if good else 'FAILED'}")
        for key, differ in r["unexpected"][:5]:
            print(f"montecarlo:     unexpected: {' '.join(key)}: {', '.join(differ)}")
        for miss in r["missing"][:5]:
            print(f"montecarlo:     missing in the new run: {miss}")
    print("montecarlo:   summary.md: not compared (it renders summary.csv and paired.csv; its layout "
          "changed with the shrinkage column)")
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "corrected.yaml"))
    ap.add_argument("--replications", "-r", type=int, default=200)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--reference", default=None, help="folder holding the old ratercal_cli/ (default: "
                                                       f"git archive {REFERENCE_COMMIT})")
    ap.add_argument("--old-config", default=None, help="the config the old code runs (default: the reference's "
                                                       "configs/corrected.yaml, i.e. f0bbdaa's)")
    ap.add_argument("--serial-check", action=argparse.BooleanOptionalAction, default=True,
                    help="also run the new code serially and compare its bytes with the --jobs run")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    if args.profile:
        profile(args.config)
        return 0
    ref = reference_path(args.reference)
    old_config = Path(args.old_config or ref / "configs" / "corrected.yaml")
    if not old_config.exists():
        raise SystemExit(f"montecarlo: no config for the old code at {old_config} (--old-config)")
    sys.path.insert(0, str(REPO))
    from ratercal_cli.config import load_config

    n_cells = len(load_config(str(old_config)).cells)
    n = args.replications * n_cells
    ok = True
    with tempfile.TemporaryDirectory(prefix="ratercal-bench-") as tmp:
        tmp = Path(tmp)
        # the ratio: both codes on the old config (the same data sets and methods: the same work),
        # back to back; today's config (shrinkage: kelley too) does more work and is timed apart
        same = run(REPO, tmp / "same", old_config, args.replications, args.jobs)
        old = run(ref, tmp / "old", old_config, args.replications, args.jobs)
        print(f"montecarlo: {n} data sets ({args.replications} replications x {n_cells} cells), both variants, "
              f"-j {args.jobs}; load average {os.getloadavg()[0]:.1f}")
        print(f"montecarlo: the old code's study ({old_config.relative_to(REPO) if old_config.is_relative_to(REPO) else old_config}), "
              "new and old code back to back (times for information):")
        print(f"montecarlo:   new {n / same['wall']:7.1f} data sets/s ({same['wall']:.1f} s, CPU {same['cpu']:.1f} s, "
              f"peak {same['mib']:.0f} MiB)")
        print(f"montecarlo:   old {n / old['wall']:7.1f} data sets/s ({old['wall']:.1f} s, CPU {old['cpu']:.1f} s, "
              f"peak {old['mib']:.0f} MiB) [{ref.name}]")
        ratio = old["cpu"] / same["cpu"]
        print(f"montecarlo: ratio new/old {ratio:.2f}x in CPU seconds (in data sets/s of wall time "
              f"{old['wall'] / same['wall']:.2f}x, for information); target >= {TARGET_RATIO:g}x  "
              f"{'ok' if ratio >= TARGET_RATIO else 'FAILED'}")
        ok &= ratio >= TARGET_RATIO
        new = run(REPO, tmp / "new", args.config, args.replications, args.jobs)
        good_mib = max(new["mib"], same["mib"]) < TARGET_MIB
        shrinkages = ", ".join(load_config(args.config).shrinkages)
        print(f"montecarlo: today's study ({Path(args.config).name}, shrinkage {shrinkages}), new code: "
              f"{n / new['wall']:7.1f} data sets/s ({new['wall']:.1f} s, CPU {new['cpu']:.1f} s; issue 11 asked "
              f"{TARGET_RATE:.0f}/s on a quiet machine: for information), peak {new['mib']:.0f} MiB "
              f"(target < {TARGET_MIB:.0f})  {'ok' if good_mib else 'FAILED'}")
        ok &= good_mib
        ok &= print_comparison(compare_with_old(tmp / "new", tmp / "old", str(old_config)))
        if args.serial_check:
            wall = run(REPO, tmp / "serial", args.config, args.replications, 1)["wall"]
            same_b = same_bytes(tmp / "new", tmp / "serial")
            print(f"montecarlo: today's study serially {n / wall:7.1f} data sets/s; same bytes as -j {args.jobs}: "
                  + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in same_b.items())
                  + f"  {'ok' if all(same_b.values()) else 'FAILED'}")
            ok &= all(same_b.values())
    # the absolute rates are for information (the machine is shared); the ratio is the target
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
