"""Write ``pairwise_sets.csv`` and ``pairwise_true.csv``: three of Denny's simulated sets
as the faithful generator makes them, so tests/methods/test_pairwise.py can check
OLS/TLS/RAS against Tables 7 and 12 without running the generator.  Run once:

    .venv/bin/python tests/results/make_pairwise_fixtures.py

Sets (chain start, run order as in the regeneration README): 0551 (fresh, first of
"0551 0591"), 2191 (fresh MORE.BAS chain, after 1152 ... 1593), 3151 (fresh, first of
"3151 3152 3153 0151").  Ratings are the kept ones (.OBS), in file order; raters 1..9.
"""

from pathlib import Path

import numpy as np

from ratercal_cli.design import parse_code, table3_steps
from ratercal_cli.generators import basic1990 as g
from ratercal_cli.qbasic import QBasicRandom

CHAINS = {"0551": ["0551"], "3151": ["3151"],
          "2191": ["1152", "1153", "1191", "1192", "1193", "1551", "1591", "2191"]}


def main():
    here = Path(__file__).parent
    obs_rows, true_rows = [], []
    for target, chain in CHAINS.items():
        rng = QBasicRandom()
        for code in chain:
            cell = parse_code(code)
            q = g.pargen(rng, cell)
            steps = table3_steps(cell.max_score, np.float32)
            true, _ = g.truegen(q, steps)
            obs = g.obsgen(rng, cell, q, steps)
        k = obs.kept
        for p, r, s in zip(obs.paper[k], obs.rater[k], obs.score[k]):
            obs_rows.append(f"{target},{p + 1},{r + 1},{s}")
        for p, t in enumerate(true):
            true_rows.append(f"{target},{p + 1},{float(t)!r}")
    (here / "pairwise_sets.csv").write_text("set,paper,rater,score\n" + "\n".join(obs_rows) + "\n")
    (here / "pairwise_true.csv").write_text("set,paper,true\n" + "\n".join(true_rows) + "\n")


if __name__ == "__main__":
    main()
