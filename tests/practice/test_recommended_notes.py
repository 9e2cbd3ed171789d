"""The warnings of ``adjust -m recommended`` are of the scores it writes.

A new user's file (600 papers, 20% read twice, a harsh rater, a graded response model on 1-6) was recommended
MN (shrunk) by the simulation, and warned "MN: 36 adjusted rating(s) and 30 paper score(s) fall outside the
scale 1-6": a method not asked for, at its unshrunk scores, which the output does not hold (its recommended
columns lay inside 1-6).  The warning is now of the recommended scores written, named as the recommendation.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from support import run

THRESHOLDS = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])


def sample_double_scored(seed, n=600, raters=10, share=0.2) -> str:
    """A fifth of the papers read twice, the rest once; a graded response model (slopes 0.6-1.5, rater R1
    1.6 logits harsh) on 1-6."""
    rng = np.random.default_rng(seed)
    severity = rng.normal(0.0, 0.5, raters)
    severity[0] = 1.6
    severity -= severity.mean()
    slope = rng.uniform(0.6, 1.5, raters)
    theta = rng.normal(0.0, 1.0, n)
    lines = ["paper,rater,score"]
    for p in range(n):
        for j in rng.choice(raters, 2 if rng.random() < share else 1, replace=False):
            at_least = 1.0 / (1.0 + np.exp(-slope[j] * 1.7 * (theta[p] - THRESHOLDS - severity[j])))
            lines.append(f"P{p + 1:04d},R{j + 1},{1 + int((rng.random() < at_least).sum())}")
    return "\n".join(lines) + "\n"


def test_out_of_scale_warnings_are_of_the_recommended_scores_written(tmp_path):
    data, out = tmp_path / "sample20.csv", tmp_path / "out.csv"
    data.write_text(sample_double_scored(0))
    res = run("adjust", data, "--scale", "1-6", "-m", "recommended", "--simulate", "20", "-o", out)
    assert res.exit_code == 0, res.output
    method = re.search(r"recommended (\S+) \(shrunk\)", res.stderr)
    assert method and method.group(1) == "MN", res.stderr   # (this file's: a non-truncating method, shrunk)
    written = pd.read_csv(out)
    outside = [int(((written[c] < 1) | (written[c] > 6)).sum()) for c in ("recommended", "recommended_paper")]
    papers_outside = int(((written.groupby("paper").recommended_paper.first() < 1) |
                          (written.groupby("paper").recommended_paper.first() > 6)).sum())
    lines = [w for w in res.stderr.splitlines() if "fall outside the scale" in w]
    assert not [w for w in lines if re.match(r"warning: \S+: MN:", w)], lines   # not the unshrunk MN's
    assert outside[0] == 1 and lines == [f"warning: {data}: recommended MN (shrunk): {outside[0]} adjusted rating(s) "
                                         f"and {papers_outside} paper score(s) fall outside the scale 1-6 (MN does not "
                                         "truncate; TMN does)"]
    named = run("adjust", data, "--scale", "1-6", "-m", "recommended,MN", "--simulate", "20", "-o", tmp_path / "o2.csv")
    assert any(re.match(rf"warning: {re.escape(str(data))}: MN: \d+ adjusted rating", w) for w in named.stderr.splitlines())
