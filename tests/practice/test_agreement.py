"""Agreement statistics against R (psych 2.2.9 and base R): tests/results/r_agreement.csv,
made by tests/results/make_agreement_references.R (R is not needed to run these tests)."""

import csv
import math

import numpy as np
import pytest

from support import RESULTS

from ratercal_cli.practice.agreement import agreement, icc_oneway, krippendorff_alpha, pair_tables, weighted_kappa
from ratercal_cli.ratings import Ratings

DATASETS = {"cml_500x2_0-9": 9, "agreement_grade11_0-5": 5}


def _ratings(name):
    with open(RESULTS / f"{name}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    raters = [r["rater"] for r in rows]
    if all(r.isdigit() for r in raters):
        raters = [int(r) for r in raters]
    return Ratings.from_labels([r["paper"] for r in rows], raters, [int(r["score"]) for r in rows],
                               DATASETS[name])


def _reference(name):
    with open(RESULTS / "r_agreement.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["dataset"] == name]
    overall = {r["statistic"]: float(r["value"]) for r in rows if not r["rater_a"]}
    pairs = {}
    for r in rows:
        if r["rater_a"]:
            pairs.setdefault((r["rater_a"], r["rater_b"]), {})[r["statistic"]] = (
                math.nan if r["value"] == "NA" else float(r["value"]))
    return overall, pairs


@pytest.mark.parametrize("name", DATASETS)
def test_pairwise_agreement_matches_r(name):
    got = agreement(_ratings(name))
    _, ref = _reference(name)
    # a pair's statistics are symmetric; R's script ordered raters as text (R10 < R2), ours naturally
    mine = {tuple(sorted((str(p["rater_a"]), str(p["rater_b"])))): p for p in got.pairs}
    ref = {tuple(sorted(k)): v for k, v in ref.items()}
    assert set(mine) == set(ref)       # exactly the pairs that share papers
    for key, r in ref.items():
        m = mine[key]
        assert m["papers"] == r["papers"]
        assert m["exact"] == pytest.approx(r["exact"], abs=1e-9)
        assert m["adjacent"] == pytest.approx(r["adjacent"], abs=1e-9)
        if math.isnan(r["kappa_w"]):
            assert math.isnan(m["kappa_w"])
        else:
            assert m["kappa_w"] == pytest.approx(r["kappa_w"], abs=1e-8), key


@pytest.mark.parametrize("name", DATASETS)
def test_overall_agreement_matches_r(name):
    got = agreement(_ratings(name)).overall
    ref, _ = _reference(name)
    for k in ("exact", "adjacent", "kappa_w", "alpha_ordinal", "alpha_interval"):
        assert got[k] == pytest.approx(ref[k], abs=1e-8), k
    for k in ("icc1", "icc1_lo", "icc1_hi", "icc1k", "icc1k_lo", "icc1k_hi", "k0"):
        assert got["icc"][k] == pytest.approx(ref[k], abs=1e-8), k


def test_krippendorff_worked_example():
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability', section C: 4 observers,
    12 units; the published alphas (nominal .743, ordinal .815, interval .849), values 1-5 as 0-4."""
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    p, r, s = zip(*[(u, o, v - 1) for o, row in enumerate(data) for u, v in enumerate(row) if v is not None])
    ratings = Ratings(np.array(p), np.array(r), np.array(s), 4, 12, 4)
    assert krippendorff_alpha(ratings, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(ratings, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(ratings, "interval") == pytest.approx(0.849, abs=5e-4)


def test_pair_tables_only_pairs_that_share_papers():
    # raters 0,1 share papers 0-1; rater 2 shares paper 2 with rater 1; raters 0 and 2 share none
    r = Ratings(np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 0, 1, 2]), np.array([1, 2, 3, 3, 0, 2]), 3, 3, 3)
    pairs, tables = pair_tables(r)
    assert pairs.tolist() == [[0, 1], [1, 2]]
    assert tables[0, 1, 2] == 1 and tables[0, 3, 3] == 1 and tables.sum() == 3
    assert tables[1, 0, 2] == 1        # rater 1 (a) scored 0, rater 2 (b) scored 2
    # perfect agreement: kappa 1; a constant rater: undefined
    assert weighted_kappa(np.diag([2, 0, 3]))[()] == pytest.approx(1.0)
    assert math.isnan(weighted_kappa(np.array([[0, 0], [0, 4]]))[()])


@pytest.mark.parametrize("table_cells", [1 << 22, 0])
def test_pair_tables_count_what_the_listed_pairs_say(monkeypatch, table_cells):
    """pair_tables counts the pairs of ratings a distance at a time (at 21 of 200 raters a paper and 1M ratings
    they were 10M pairs, listed and sorted); each table is the listed pairs' (rating_pairs), a rater's two
    readings of a paper included (a = b, in the file's order), by the raters^2 x scores^2 table and by sorting."""
    import ratercal_cli.practice.agreement as ag

    monkeypatch.setattr(ag, "PAIR_TABLE_CELLS", table_cells)
    rng = np.random.default_rng(5)
    for _ in range(150):
        J, P, n, K = (int(x) for x in (rng.integers(1, 30), rng.integers(1, 40), rng.integers(0, 150), rng.integers(2, 7)))
        r = Ratings(rng.integers(0, P, n), rng.integers(0, J, n), rng.integers(0, K, n), K - 1, P, J)
        ra, rb, xa, xb = ag.rating_pairs(r)
        listed = {}
        for key in zip(ra.tolist(), rb.tolist(), xa.tolist(), xb.tolist()):
            listed[key] = listed.get(key, 0) + 1
        pairs, tables = pair_tables(r)
        got = {(a, b, x, y): int(tables[q, x, y]) for q, (a, b) in enumerate(pairs.tolist())
               for x in range(K) for y in range(K) if tables[q, x, y]}
        assert got == listed
        assert sorted(set(zip(ra.tolist(), rb.tolist()))) == [tuple(p) for p in pairs.tolist()]


def test_icc_of_identical_ratings_is_one_and_needs_two_papers():
    r = Ratings(np.array([0, 0, 1, 1, 2, 2, 2]), np.array([0, 1, 0, 1, 0, 1, 2]),
                np.array([1, 1, 3, 3, 4, 4, 4]), 5, 3, 3)
    same = icc_oneway(r)
    assert (same.icc1, same.icc1k, same.n_papers, same.k0) == (1.0, 1.0, 3, pytest.approx(16 / 7))   # (7 - 17/7) / 2
    assert math.isnan(same.icc1_lo)
    noisy = Ratings(np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1]), np.array([1, 2, 3, 3, 4, 5]), 5, 3, 2)
    got = icc_oneway(noisy)
    # MSB = 2*((1.5-3)^2 + 0 + (4.5-3)^2)/2 = 4.5, MSW = (0.5 + 0 + 0.5)/3 = 1/3
    assert got.icc1 == pytest.approx((4.5 - 1 / 3) / (4.5 + 1 / 3))
    assert got.icc1k == pytest.approx((4.5 - 1 / 3) / 4.5)
    assert math.isnan(icc_oneway(noisy.subset(noisy.paper == 0)).icc1)


def test_text_shows_the_weakest_pairs_when_there_are_many():
    from ratercal_cli.practice.agreement import format_agreement

    got = agreement(_ratings("cml_500x2_0-9")).to_dict()     # 36 rater pairs
    full = format_agreement(got)
    thin = sum(p["papers"] < 10 for p in got["pairs"])     # folded into one line (issue 18)
    assert sum(1 for line in full if line[:1].isdigit()) == 36 - thin
    assert (f"{thin} rater pairs sharing fewer than 10 papers" in "\n".join(full)) == (thin > 0)
    short = format_agreement(got, max_pairs=5)
    rows = [line.split() for line in short if line[:1].isdigit()]
    assert len(rows) == 5 and "every pair in --json" in short[6 + (thin > 0)]   # (below ICC's two lines of meaning)
    assert "ICC(1,k): the reliability of a paper's raw mean" in short[4]
    worst = sorted((p for p in got["pairs"] if p["papers"] >= 10), key=lambda p: (p["exact"], p["papers"]))[:5]
    assert [(int(r[0]), int(r[1])) for r in rows] == [(p["rater_a"], p["rater_b"]) for p in worst]
