"""Raters in groups that share no paper (each school read by its own raters) are left alone by the
one recommendation; the summary line beside it said "assignment random (not tested)", which reads as
the opposite of the reason.  It now says the assignment cannot be tested."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ratercal_cli.practice.check import check
from ratercal_cli.ratings import Ratings


def test_the_summary_says_the_assignment_cannot_be_tested():
    rng = np.random.default_rng(11)
    rows = []
    for s, mu in zip("ABC", (1.5, 2.5, 3.5)):
        raters = [f"{s}{i}" for i in range(1, 4)]
        for p in range(40):
            q = rng.normal(mu, 0.8)
            for r in rng.choice(raters, 2, replace=False):
                rows.append((f"{s}-{p:03d}", r, int(np.clip(round(q + rng.normal(0, 0.5)), 0, 5))))
    r = Ratings.from_frame(pd.DataFrame(rows, columns=["paper", "rater", "score"]), scale="0-5")
    checked = check(r)
    line = checked.summary().splitlines()[1]
    assert line.startswith("  all papers: recommended NO -- the raters fall into 3 groups that share no paper")
    assert "; assignment not testable (the raters' groups share no paper); " in line
    assert "assignment random" not in line
