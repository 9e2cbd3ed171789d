"""How often the rubric bias table flags the planted cells, and any other, over generated files.

Usage: python examples/rubric_bias_seeds.py [FIRST LAST]   (seeds FIRST..LAST, default 1..30)

Each seed is the README's rubric (:mod:`examples.make_rubric`'s year 1 design: 500 papers, 12 raters,
2 a paper, 4 criteria, 1-6, R3 1 logit harsher on org, R8 1 logit kinder on sent_form) generated
afresh; the bias table (:func:`ratercal_cli.practice.bias.bias_table`) is computed purified (the
default) and sum-to-zero.  Prints a line per seed and the counts the README quotes.
"""

import sys

import numpy as np

from ratercal_cli.generators.rubric import simulate_rubric
from ratercal_cli.practice.bias import bias_table
from ratercal_cli.ratings import Ratings

PLANTED = {("R3", "org"), ("R8", "sent_form")}


def rubric(seed):
    bias = np.zeros((12, 4))
    bias[2, 1], bias[7, 3] = 1.0, -1.0
    rub = simulate_rubric(seed=seed, bias=bias)
    papers = {p: k for k, p in enumerate(dict.fromkeys(r[0] for r in rub.rows))}
    C = len(rub.criteria)
    P = np.repeat([papers[r[0]] for r in rub.rows], C)
    R = np.repeat([rub.raters.index(r[1]) for r in rub.rows], C)
    S = np.array([int(x) - 1 for r in rub.rows for x in r[2:]])
    lev = np.tile(np.arange(C), len(rub.rows))
    return Ratings(P, R, S, 5, len(papers), 12, rater_ids=tuple(rub.raters)), lev, tuple(rub.criteria)


def main(first=1, last=30):
    tally = {True: [0, 0, 0, []], False: [0, 0, 0, []]}
    for seed in range(first, last + 1):
        r, lev, crit = rubric(seed)
        line = [f"seed {seed}:"]
        for purify in (True, False):
            bt = bias_table(r, lev, crit, "criterion", purify=purify)
            sig = {(x["rater"], x["level"]) for x in bt.significant}
            t2 = {(x["rater"], x["level"]) for x in bt.flagged} - PLANTED
            t = tally[purify]
            t[0] += PLANTED <= sig
            t[1] += not (sig - PLANTED)
            t[2] += len(t2)
            t[3].append(next(x["bias"] for x in bt.rows if (x["rater"], x["level"]) == ("R3", "org")))
            line.append(f"{'purified' if purify else 'sum-to-zero'}: others significant "
                        f"{sorted(sig - PLANTED) or 'none'}, |t| >= 2 {len(t2)};")
        print(" ".join(line), flush=True)
    n = last - first + 1
    for purify, (both, clean, t2, b) in tally.items():
        print(f"{'purified' if purify else 'sum-to-zero'}: both planted significant after Holm in {both} of {n}, "
              f"no other cell in {clean} of {n}; other cells with |t| >= 2: {t2 / n:.1f} a file (of 46); "
              f"R3 on org: mean bias {np.mean(b):.2f} logits (planted 1)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
