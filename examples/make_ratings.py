"""Turn a simulated run of configs/district_example.yaml into examples/ratings.csv.

Usage: python examples/make_ratings.py RUN OUT.csv

Each data set of the run is one grade (by its number of papers, as in Table 2);
every rating is written, the third readings included, in the district's raw
form: grade, paper, rater, score.  Raters carry Table 2's numbers (1, 3..11).
"""

import csv
import sys
from pathlib import Path

from ratercal_cli.io import atomic_write

GRADES = {124: 5, 141: 8, 122: 11}
RATER_NUMBERS = [1, 3, 4, 5, 6, 7, 8, 9, 10, 11]


def main(run, out):
    rows = []
    for papers, grade in GRADES.items():
        path = Path(run) / f"0-{papers}-5-1" / "obsgen" / "ratings.csv"
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                rows.append([grade, f"G{grade}-{int(r['paper']):03d}", f"R{RATER_NUMBERS[int(r['rater']) - 1]}",
                             r["score"]])
    with atomic_write(out) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["grade", "paper", "rater", "score"])
        w.writerows(rows)


if __name__ == "__main__":
    main(*sys.argv[1:3])
