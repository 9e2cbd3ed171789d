"""What halo costs: configs/rater_effects.yaml against itself without halo, paired replication by replication.

The study is run six times into ``--out``: without its ``halo`` and ``halo_error`` lines, with halo alone
(the general-impression model: a rater's impression of the paper is the paper's overall quality), and
as configured (halo whose impression carries a rater-specific error, ``halo_error``, issue 29), each
scored as the rubric mean (``score: mean``) and with ``criteria: {score: each}`` (every paper's score
on each criterion against its criterion true score).  Halo changes only the quality a rater scores a
criterion at, not a random draw, and the impression's error comes from a stream of its own
(rater_effects.py), so the runs are the same papers, raters and uniform draws (common random
numbers): the difference of a method's criterion in replication ``k`` is paired.  Per replication the
difference is averaged over the multi-rater cells; ``halo.csv`` gives, for each effect (``halo``:
halo alone - neither; ``halo_error``: halo with the impression's error - neither), its mean, Monte
Carlo standard error and 95% t interval (ratercal_cli/montecarlo/statistics.py), for the RMSE, r and
decision accuracy of every method at every shrinkage level, beside the two means.

    python results/corrected/rater_effects/halo.py --out runs/halo --jobs 2
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from ratercal_cli.config import load_config
from ratercal_cli.montecarlo.run import MonteCarloRun
from ratercal_cli.montecarlo.statistics import mean_mcse, t_interval

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[2] / "configs" / "rater_effects.yaml"
MEASURES = ("rmse", "r", "accuracy")


#: the runs: which of the config's lines each keeps
EFFECTS = {"no_halo": (), "halo": ("halo:",), "halo_error": ("halo:", "halo_error:")}


def variant_config(text: str, effect: str, score: str) -> str:
    """The config's text with the ``halo`` and ``halo_error`` lines ``effect`` keeps, scored ``score``."""
    drop = tuple({"halo:", "halo_error:"} - set(EFFECTS[effect]))
    lines = [x for x in text.splitlines() if not x.strip().startswith(drop)]
    text = "\n".join(lines) + "\n"
    assert text.count("criteria: {") == 1 and text.count("name: rater_effects\n") == 1
    return text.replace("criteria: {", f"criteria: {{score: {score}, ").replace(
        "name: rater_effects\n", f"name: rater_effects_{effect}_{score}\n")


def run(text, out, jobs) -> Path:
    """Run one variant of the study; the path of its replications.csv."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(text)
    mc = MonteCarloRun(load_config(out / "config.yaml"), out)
    mc.run(jobs=jobs, quiet=True)
    mc.summarise()
    return mc.root / "replications.csv"


def read(path) -> dict:
    """``{(shrinkage, method, measure): {replication: {set: value}}}``."""
    out = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["set"].startswith("1"):   # one rater a paper: not in this design
                continue
            for m in MEASURES:
                if row[m] != "":
                    out.setdefault((row["shrinkage"], row["method"], m), {}).setdefault(
                        int(row["replication"]), {})[row["set"]] = float(row[m])
    return out


def paired(with_effect: dict, without: dict):
    """Rows of ``halo.csv`` for one scoring and effect."""
    for key in with_effect:
        a, b = with_effect[key], without[key]
        reps = sorted(set(a) & set(b))
        diff = [np.mean([a[k][s] - b[k][s] for s in a[k]]) for k in reps if a[k].keys() == b[k].keys()]
        ma, _, _ = mean_mcse([np.mean(list(a[k].values())) for k in reps])
        mb, _, _ = mean_mcse([np.mean(list(b[k].values())) for k in reps])
        m, se, n = mean_mcse(diff)
        lo, hi = t_interval(m, se, n)
        yield list(key) + [f"{ma:.4f}", f"{mb:.4f}", f"{m:+.4f}", f"{se:.4f}", f"{float(lo):+.4f}",
                           f"{float(hi):+.4f}", str(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the six runs")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    text = CONFIG.read_text()
    rows = []
    for score in ("mean", "each"):
        runs = {e: read(run(variant_config(text, e, score), args.out / f"{score}_{e}", args.jobs)) for e in EFFECTS}
        for effect in ("halo", "halo_error"):
            rows += [[score, effect] + r for r in paired(runs[effect], runs["no_halo"])]
    with open(HERE / "halo.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["score", "effect", "shrinkage", "method", "measure", "with_effect", "without", "difference",
                    "mcse", "ci_low", "ci_high", "replications"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
