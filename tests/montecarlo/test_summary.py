"""Monte Carlo summaries: MCSE, paired intervals, facet levels, ranks and P(best) on small inputs
checked by hand and against scipy's paired t test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ratercal_cli.design import Cell
from ratercal_cli.montecarlo.render import render_markdown
from ratercal_cli.montecarlo.statistics import mean_mcse, mean_mcse_rows, t_interval
from ratercal_cli.montecarlo.summary import SUMMARY_CRITERIA, Cube, cell_levels, level_rows, summarise


def test_mean_mcse_by_hand():
    m, se, n = mean_mcse([1.0, 2.0, 3.0, 4.0, np.nan])
    # sd = sqrt(((1.5^2 + .5^2) * 2) / 3) = sqrt(5/3); se = sd / 2
    assert (m, n) == (2.5, 4)
    assert se == pytest.approx(math.sqrt(5 / 3) / 2, rel=1e-14)
    assert mean_mcse([7.0])[:1] == (7.0,) and math.isnan(mean_mcse([7.0])[1])
    assert mean_mcse([np.nan])[2] == 0


def test_paired_differences_are_scipy_paired_t_intervals():
    rng = np.random.default_rng(3)
    a = rng.normal(0.6, 0.05, 40)
    b = a + rng.normal(0.01, 0.02, 40)
    m, se, n = mean_mcse_rows(b - a)
    lo, hi = t_interval(m, se, n)
    t = stats.ttest_rel(b, a)
    ci = t.confidence_interval(0.95)
    assert n == 40
    assert m == pytest.approx(np.mean(b - a), rel=1e-12)
    assert se == pytest.approx(stats.sem(b - a), rel=1e-12)
    assert (lo, hi) == (pytest.approx(ci.low, rel=1e-10), pytest.approx(ci.high, rel=1e-10))
    # a pair with a missing value is dropped from both
    b2 = b.copy()
    b2[5] = np.nan
    ci2 = stats.ttest_rel(np.delete(b, 5), np.delete(a, 5)).confidence_interval(0.95)
    assert t_interval(*mean_mcse_rows(b2 - a)) == (pytest.approx(ci2.low, rel=1e-10), pytest.approx(ci2.high, rel=1e-10))


def test_row_versions_match_the_scalar_ones():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3, 9))
    x[0, 1, :8] = np.nan       # n = 1
    x[2, 2, ::3] = np.nan      # n = 6
    m, se, n = mean_mcse_rows(x)
    lo, hi = t_interval(m, se, n)
    for i in range(4):
        for j in range(3):
            em, ese, en = mean_mcse(x[i, j])
            assert n[i, j] == en
            assert m[i, j] == pytest.approx(em, rel=1e-13)
            if en > 1:
                assert se[i, j] == pytest.approx(ese, rel=1e-12)
                ci = stats.ttest_1samp(x[i, j][np.isfinite(x[i, j])], 0).confidence_interval(0.95)
                assert (lo[i, j], hi[i, j]) == (pytest.approx(ci.low, rel=1e-10), pytest.approx(ci.high, rel=1e-10))
            else:
                assert math.isnan(se[i, j]) and math.isnan(lo[i, j])


def test_cell_levels_and_their_order():
    one = Cell("1", 100, 5, "normal")
    two_plus = Cell("2+", 500, 9, "normal")
    three = Cell("3", 100, 5, "negative")
    assert cell_levels(one) == [("one-rater", "all", "all"), ("one-rater", "papers", "100"),
                                ("one-rater", "scale", "0-5"), ("one-rater", "quality", "normal"),
                                ("one-rater", "cell", "1151")]
    assert ("multi-rater", "raters", "2+") in cell_levels(two_plus)
    assert level_rows([three, one, two_plus]) == [
        ("multi-rater", "all", "all"), ("multi-rater", "raters", "2+"), ("multi-rater", "raters", "3"),
        ("multi-rater", "papers", "100"), ("multi-rater", "papers", "500"),
        ("multi-rater", "scale", "0-5"), ("multi-rater", "scale", "0-9"),
        ("multi-rater", "quality", "normal"), ("multi-rater", "quality", "negative"),
        ("multi-rater", "cell", "3153"), ("multi-rater", "cell", "2+591"),      # the cells in config order
        ("one-rater", "all", "all"), ("one-rater", "papers", "100"), ("one-rater", "scale", "0-5"),
        ("one-rater", "quality", "normal"), ("one-rater", "cell", "1151")]


LEVEL_ORDER_SCRIPT = """
import random
from ratercal_cli.design import Cell
from ratercal_cli.montecarlo.summary import level_rows
cells = [Cell(k, p, 5, "normal") for k in ("6", "10", "5", "2+", "4", "2") for p in (500, 100)]
orders = {tuple(r for r in level_rows(random.Random(i).sample(cells, len(cells))) if r[1] != "cell")
          for i in range(40)}   # the cells themselves follow the config's order
assert len(orders) == 1, orders
print(";".join(lv for _, f, lv in orders.pop() if f in ("raters", "papers")))
"""


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_level_order_does_not_depend_on_the_hash_seed():
    """Raters per paper 4, 5, 6, 10 have no entry in the known order: they follow it by number
    (10 after 6), whatever the order of the cells and the string hash seed (set iteration order)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = str(Path(__file__).resolve().parents[1])
    outs = set()
    for seed in ("0", "1", "2", "3", "12345"):
        res = subprocess.run([sys.executable, "-c", LEVEL_ORDER_SCRIPT], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=repo), timeout=60)
        assert res.returncode == 0, res.stderr
        outs.add(res.stdout.strip())
    assert outs == {"2;2+;4;5;6;10;100;500"}


def _rows(records):
    """parse_rows-like dict from (set, rep, variant, method, rmse, accuracy, error)."""
    n = len(records)
    out = {"set": np.array([r[0] for r in records], dtype=object),
           "replication": np.array([r[1] for r in records]),
           "variant": np.array([r[2] for r in records], dtype=object),
           "method": np.array([r[3] for r in records], dtype=object),
           "error": np.array([r[6] for r in records], dtype=object)}
    for c in SUMMARY_CRITERIA:
        out[c] = np.full(n, 0.5)
    out["rmse"] = np.array([r[4] for r in records], dtype=float)
    out["accuracy"] = np.array([r[5] for r in records], dtype=float)
    return out


# Two multi-rater cells (2 and 3 raters), three replications, methods A and B, one variant.
CELLS = [Cell("2", 100, 5, "normal"), Cell("3", 100, 5, "normal")]
RMSE = {  # (cell, rep) -> (A, B)
    ("2151", 0): (0.50, 0.55), ("2151", 1): (0.60, 0.58), ("2151", 2): (0.40, 0.47),
    ("3151", 0): (0.30, 0.36), ("3151", 1): (0.20, 0.30), ("3151", 2): (0.35, 0.33),
}


def small_cube(fail=False):
    recs = []
    for (s, k), (a, b) in RMSE.items():
        if fail and (s, k) == ("3151", 1):
            recs.append((s, k, "corrected", "A", np.nan, np.nan, "MethodError: singular"))
        else:
            recs.append((s, k, "corrected", "A", a, 0.9, ""))
        recs.append((s, k, "corrected", "B", b, 0.8, ""))
    return Cube.from_rows(_rows(recs), CELLS, ["corrected"], ["A", "B"], 3)


def test_summary_by_hand():
    summary, paired = summarise(small_cube())
    get = {(r["method"], r["facet"], r["level"]): r for r in summary}
    # all: per replication the mean of the two cells
    a = np.array([(0.50 + 0.30) / 2, (0.60 + 0.20) / 2, (0.40 + 0.35) / 2])
    b = np.array([(0.55 + 0.36) / 2, (0.58 + 0.30) / 2, (0.47 + 0.33) / 2])
    ra, rb = get[("A", "all", "all")], get[("B", "all", "all")]
    assert ra["rmse"] == pytest.approx(a.mean()) and ra["rmse_mcse"] == pytest.approx(stats.sem(a))
    assert rb["rmse"] == pytest.approx(b.mean()) and rb["n"] == 3
    assert (ra["rank"], rb["rank"]) == (1, 2)
    # A best in every replication at 'all'
    assert (ra["p_best"], rb["p_best"]) == (1.0, 0.0)
    # B - A = .055, .04, .025: the t interval excludes 0, so A is not tied with B
    ci = stats.ttest_rel(a, b).confidence_interval(0.95)
    p = next(x for x in paired if x["criterion"] == "rmse" and x["level"] == "all")
    assert (p["method_a"], p["method_b"]) == ("A", "B")
    assert p["mean_diff"] == pytest.approx((a - b).mean())
    assert (p["ci_low"], p["ci_high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert ra["tied_next"] is False and not ci.low <= 0 <= ci.high
    # level raters=2: A is best in reps 0 and 2, B in rep 1
    r2a, r2b = get[("A", "raters", "2")], get[("B", "raters", "2")]
    assert r2a["p_best"] == pytest.approx(2 / 3) and r2b["p_best"] == pytest.approx(1 / 3)
    assert r2a["rmse"] == pytest.approx(0.5) and r2a["rank"] == 1
    d = np.array([-0.05, 0.02, -0.07])
    lo, hi = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert r2a["tied_next"] is True and lo <= 0 <= hi
    assert get[("A", "all", "all")]["accuracy"] == pytest.approx(0.9)
    assert get[("A", "all", "all")]["accuracy_mcse"] == 0.0


def test_a_method_that_failed_is_not_ranked_where_it_failed():
    """A fails on 3151 replication 1.  Its means are over the sets it could fit, so at 'all' and at
    raters=3 it is left out of the ranking and P(best) (B, complete, is ranked 1 with P(best) 1);
    at raters=2, where A has every set, both are ranked as before.  The old code ranked A 2nd at
    'all' (0.4583 > 0.4317) and gave B P(best) 1/3, comparing A's one-cell replication 1 with B's
    two-cell one."""
    cube = small_cube(fail=True)
    assert cube.failures == {("corrected", "none", "A"): 1}
    summary, paired = summarise(cube)
    get = {(r["method"], r["facet"], r["level"]): r for r in summary}
    ra, rb = get[("A", "all", "all")], get[("B", "all", "all")]
    # replication 1 of A is the 2-rater cell alone: the mean over the data sets it could fit
    a = np.array([(0.50 + 0.30) / 2, 0.60, (0.40 + 0.35) / 2])
    assert ra["rmse"] == pytest.approx(a.mean())
    assert (ra["sets"], ra["failed"], rb["sets"], rb["failed"]) == (6, 1, 6, 0)
    assert (ra["rank"], ra["p_best"], ra["tied_next"]) == (None, None, None)
    assert (rb["rank"], rb["p_best"]) == (1, 1.0)
    r3a, r3b = get[("A", "raters", "3")], get[("B", "raters", "3")]
    assert r3a["n"] == 2 and r3a["rmse"] == pytest.approx((0.30 + 0.35) / 2)
    assert (r3a["rank"], r3a["failed"], r3a["sets"]) == (None, 1, 3) and r3b["rank"] == 1
    # raters=2: A complete, ranked among both as without the failure
    r2a, r2b = get[("A", "raters", "2")], get[("B", "raters", "2")]
    assert (r2a["failed"], r2a["rank"], r2b["rank"]) == (0, 1, 2)
    assert r2a["p_best"] == pytest.approx(2 / 3) and r2b["p_best"] == pytest.approx(1 / 3)
    # the paired difference at 'all' uses, in replication 1, only the set both methods have
    p = next(x for x in paired if x["criterion"] == "rmse" and x["level"] == "all")
    d = np.array([(-0.05 - 0.06) / 2, 0.02, (-0.07 + 0.02) / 2])
    assert p["mean_diff"] == pytest.approx(d.mean()) and p["n"] == 3
    md = render_markdown(summary, paired, {"name": "t", "generator": "pcm", "true_score": "model",
                                           "replications": 3, "cells": 2, "seed": 1, "cut": 3.25})
    assert f"| A | {a.mean():.4f} ± {stats.sem(a):.4f} | - | - |" in md
    assert f"| B | {np.mean([0.455, 0.44, 0.40]):.4f} ± " in md and " | 1 | 1.00 |" in md
    assert ("- corrected A failed on some data sets, so it is not ranked (-) at: all cells (1 of 6); "
            "raters 3 (1 of 3); papers 100 (1 of 6); scale 0-5 (1 of 6); quality normal (1 of 6). "
            "Its mean there is over the data sets it could fit.") in md
    assert "| raters | 3 | 0.3250 ± 0.0250 (-) |" in md


def test_markdown_has_ranks_with_standard_errors():
    cube = small_cube()
    summary, paired = summarise(cube)
    md = render_markdown(summary, paired, {"name": "t", "generator": "pcm", "true_score": "model",
                                           "replications": 3, "cells": 2, "seed": 1, "cut": 3.25})
    a = np.array([0.4, 0.4, 0.375])
    assert f"| A | {a.mean():.4f} ± {stats.sem(a):.4f} | 1 | 1.00 |" in md
    assert "| raters | 2 | 0.5000 ± 0.0577 (1=) |" in md


def test_shrinkage_is_a_dimension_ranked_within_its_group_with_paired_kelley_minus_none():
    """Columns (variant, shrinkage, method): A and B ranked within none and within kelley, each
    method's kelley - none paired per replication, and each cell on its own (facet ``cell``) with
    its winner in the Markdown, ``=`` joining a method whose paired interval contains 0."""
    recs = []
    for (s, k), (a, b) in RMSE.items():
        recs += [(s, k, "corrected", "A", a, 0.9, ""), (s, k, "corrected", "B", b, 0.8, "")]
    none = _rows(recs)
    kel = _rows([(s, k, v, m, x - (0.10 if m == "B" else 0.02), acc, e) for s, k, v, m, x, acc, e in recs])
    data = {key: np.concatenate([none[key], kel[key]]) for key in none}
    data["shrinkage"] = np.array(["none"] * len(recs) + ["kelley"] * len(recs), dtype=object)
    cube = Cube.from_rows(data, CELLS, ["corrected"], ["A", "B"], 3, shrinkages=("none", "kelley"))
    summary, paired = summarise(cube)
    get = {(r["shrinkage"], r["method"], r["facet"], r["level"]): r for r in summary}
    assert (get[("none", "A", "all", "all")]["rank"], get[("none", "B", "all", "all")]["rank"]) == (1, 2)
    assert (get[("kelley", "A", "all", "all")]["rank"], get[("kelley", "B", "all", "all")]["rank"]) == (2, 1)
    p = next(x for x in paired if x["criterion"] == "rmse" and x["level"] == "all" and x["method_a"] == "B"
             and x["method_b"] == "B")
    assert (p["shrinkage_a"], p["shrinkage_b"]) == ("kelley", "none") and p["mean_diff"] == pytest.approx(-0.10)
    # per cell: 2151 none, A - B = -.05, .02, -.07 (interval contains 0): "A = B"; 3151 A - B = -.06, -.10, .02
    c2 = get[("none", "A", "cell", "2151")]
    assert c2["rmse"] == pytest.approx(0.5) and c2["rank"] == 1 and c2["tied_next"] is True
    assert {x["criterion"] for x in paired if x["facet"] == "cell"} == {"rmse"}
    md = render_markdown(summary, paired, {"name": "t", "generator": "pcm", "true_score": "model",
                                           "replications": 3, "cells": 2, "seed": 1, "cut": 3.25})
    assert "### multi-rater: RMSE by cell, corrected/none" in md and "### multi-rater: RMSE by cell, corrected/kelley" in md
    assert "| 2151 | 0.5000 ± 0.0577 | 0.5333 ± 0.0328 | A = B |" in md
    # kelley: B - A = -.03, -.10, -.01, mean -.047, t interval +-.117: B first, tied with A
    assert "| 2151 | 0.4800 ± 0.0577 | 0.4333 ± 0.0328 | B = A |" in md
    # 3151 kelley: B - A = -.02, +.02, -.10 (.26, .20, .23 against .28, .18, .33): B first, tied
    assert "| 3151 | 0.2633 ± 0.0441 | 0.2300 ± 0.0173 | B = A |" in md
