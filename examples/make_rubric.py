"""Write the README's analytic-rubric example: two administrations of a 4-criterion rubric.

Usage: python examples/make_rubric.py examples/

``rubric_year1.csv``: 500 papers, 12 raters (2 a paper), criteria style, org, conv, sent_form on
1-6, one row per reading with a column per criterion (the wide export of a scoring system), from
the many-facet rating scale model (:mod:`ratercal_cli.generators.rubric`) with two rater x criterion
biases planted: R3 1 logit harsher on org, R8 1 logit kinder on sent_form.
``rubric_year2.csv``: next year's 500 papers by the same raters, R5 now 1 logit more severe.
"""

import csv
import sys
from pathlib import Path

import numpy as np

from ratercal_cli.generators.rubric import simulate_rubric
from ratercal_cli.io import atomic_write

SEVERITY = np.linspace(-0.6, 0.6, 12)


def main(folder):
    bias = np.zeros((12, 4))
    bias[2, 1], bias[7, 3] = 1.0, -1.0
    year2 = SEVERITY.copy()
    year2[4] += 1.0
    for name, seed, sev, prefix in (("rubric_year1.csv", 1, SEVERITY, "A"), ("rubric_year2.csv", 2, year2, "B")):
        rub = simulate_rubric(seed=seed, severity=sev, bias=bias, paper_prefix=prefix)
        with atomic_write(Path(folder) / name) as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["student", *rub.header[1:]])
            w.writerows(rub.rows)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples")
