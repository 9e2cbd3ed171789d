"""A district-style export written the way spreadsheets and student systems write them, for the
tests of ``check``, ``adjust`` and ``compare`` on practitioners' files (issue 18): a UTF-8
byte-order mark, CRLF line ends, every field quoted, names with commas ("Smith, J."), the header
``"Student ID","Reader","Score"``, blank and NA scores, a rater whose name is sometimes typed in
capitals, one whose accented name is sometimes decomposed (NFD), a final all-empty row, and a 1-6
scale on which no rater gave... every score is used, so the observed range is the real one."""

from __future__ import annotations

import csv
import io
import unicodedata

import numpy as np

from ratercal_cli.models.pcm import sample_scores

RATERS = ("Smith, J.", "Brown, Sam", "Zoë Adams", "Garcia, M.", "Lee, K.", "Nguyen, T.",
          "O'Neil, P.", "Patel, R.", "Kim, S.", "Jones, A.", "Müller, H.", "Wright, D.")
#: Spelled otherwise on some rows: "BROWN, SAM" and "Zoë Adams" with a decomposed ë.
VARIANTS = {"Brown, Sam": "BROWN, SAM", "Zoë Adams": unicodedata.normalize("NFD", "Zoë Adams")}


def district_export(path, n_papers=300, seed=18, variant_share=0.3, low=1, high=6):
    """Write the export to ``path``; returns the rows written as (paper, rater, score text) with the
    rater's true name (before any variant spelling)."""
    rng = np.random.default_rng(seed)
    m = high - low
    n_r = len(RATERS)
    severity = np.linspace(-0.8, 0.8, n_r)
    rng.shuffle(severity)
    steps = np.linspace(-2.5, 2.5, m)
    rows, truth = [], []
    for p in range(n_papers):
        theta = rng.normal(0.0, 1.3)
        who = rng.choice(n_r, 3, replace=False)
        s = sample_scores(rng, np.full(3, theta), steps[None, :] + severity[who][:, None])
        k = 3 if abs(int(s[0]) - int(s[1])) > 1 else 2
        for i in range(k):
            name = RATERS[who[i]]
            shown = VARIANTS.get(name, name) if rng.random() < variant_share * (name in VARIANTS) else name
            score = str(int(s[i]) + low)
            if rng.random() < 0.01 or len(rows) in (3, 10):   # blank and NA scores, two at least
                score = "" if rng.random() < 0.5 else "NA"
            rows.append((f"S{10000 + p}", shown, score))
            truth.append((f"S{10000 + p}", name, score))
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    w.writerow(["Student ID", "Reader", "Score"])
    w.writerows(rows)
    buf.write(",,\r\n")                      # the spreadsheet's last, empty row
    with open(path, "wb") as fh:
        fh.write(b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8"))
    return truth


#: The options that name the export's columns.
COLUMNS = ("--paper-col", "Student ID", "--rater-col", "Reader", "--score-col", "Score")
