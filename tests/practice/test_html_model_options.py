"""Regression (the new-user round of issue 28): the HTML report of ``adjust`` and ``compare`` recomputed
its check section without the command's model options, so ``--steps-by criterion`` printed a page headed
"shared thresholds" with one Table 8 beside scores from per-criterion thresholds, and ``--anchors`` a free
fit's severities (no anchor, no displacement) beside anchored scores; ``check --html`` had them right."""

import csv
import re

import numpy as np
from click.testing import CliRunner

from ratercal_cli.cli import cli

CRITERIA = ["ideas", "voice", "mech"]


def _rubric(path, seed=3, n=90):
    """A small analytic rubric of my own: 6 raters, 2 a student, 3 criteria on 1-4."""
    rng = np.random.default_rng(seed)
    sev, diff, kappa = np.linspace(-0.6, 0.6, 6), np.array([-0.3, 0.0, 0.3]), np.array([-1.2, 0.0, 1.2])
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "rater", *CRITERIA])
        for p in range(n):
            q = rng.normal(0, 1.2)
            for j in rng.choice(6, 2, replace=False):
                row = []
                for c in range(3):
                    cum = np.r_[0, np.cumsum(q - sev[j] - diff[c] - kappa)]
                    pr = np.exp(cum - cum.max())
                    row.append(1 + int(rng.choice(4, p=pr / pr.sum())))
                w.writerow([f"S{p:03d}", f"R{j + 1}", *row])
    return path


def _model_section(page):
    """The text of the page's many-facet section, up to the bias table."""
    i = page.index("Many-facet model")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page[i:page.index("bias (Facets Table 13)", i)]))


def test_adjust_and_compare_pages_show_the_model_they_fitted(tmp_path):
    f = _rubric(tmp_path / "rubric.csv")
    opts = ["--scale", "1-4", "--paper-col", "student", "--score-cols", ",".join(CRITERIA), "-q"]
    run = CliRunner()
    for cmd, extra in (("adjust", ["-m", "MFRM", "-o", str(tmp_path / "o.csv")]), ("compare", ["-m", "MFRM,TLI"])):
        page_path = tmp_path / f"{cmd}.html"
        res = run.invoke(cli, [cmd, str(f), *opts, "--steps-by", "criterion", *extra, "--html", str(page_path)])
        assert res.exit_code == 0, res.output
        section = _model_section(page_path.read_text())
        assert "thresholds per criterion" in section and "shared thresholds" not in section, cmd
        assert section.count("Category statistics") == 3, cmd     # one Table 8 per criterion
    a = tmp_path / "a.csv"
    assert run.invoke(cli, ["check", str(f), *opts, "--no-rasch", "--write-anchors", str(a)]).exit_code == 0
    page_path = tmp_path / "anchored.html"
    res = run.invoke(cli, ["adjust", str(f), *opts, "-m", "MFRM", "--anchors", str(a), "-o", str(tmp_path / "p.csv"),
                           "--html", str(page_path)])
    assert res.exit_code == 0, res.output
    section = _model_section(page_path.read_text())
    assert "displ" in section   # the anchored fit: anchor and displacement beside each measure
    anchors = {row["element"]: float(row["measure"]) for row in csv.DictReader(open(a)) if row["facet"] == "rater"}
    shown = dict(re.findall(r" (R\d) \d+ [\d.]+ (-?[\d.]+) ", section))
    assert shown and all(abs(float(v) - anchors[k]) < 0.006 for k, v in shown.items()), (shown, anchors)
