"""MN/TMN: x - mean_j + mean (EZEQ.BAS), TMN clipped to [0, M]."""

import inspect

import numpy as np
import pytest

from ratercal_cli.errors import MethodError, NotFittedError
from ratercal_cli.methods import make_method, method_codes
from ratercal_cli.methods.mean import MeanEquating
from ratercal_cli.ratings import Ratings


def _hand():
    # rater 0: 0 0 0 4 (mean 1); rater 1: 3 4 (3.5); rater 2: 2 3 (2.5); all: 16/8 = 2
    return Ratings(paper=[0, 0, 1, 1, 2, 2, 3, 3], rater=[0, 1, 0, 1, 0, 2, 0, 2],
                   score=[0, 3, 0, 4, 0, 2, 4, 3], max_score=4, n_papers=4, n_raters=3)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_hand_example(variant):
    m = MeanEquating(variant).fit(_hand())
    assert m.mean_.tolist() == [1.0, 3.5, 2.5] and m.grand_mean_ == 2.0
    adj = m.transform(_hand())
    # rater 0: +1, rater 1: -1.5, rater 2: -0.5
    assert adj.rating.tolist() == [1, 1.5, 1, 2.5, 1, 1.5, 5, 2.5]
    assert adj.paper.tolist() == [1.25, 1.75, 1.25, 3.75]


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_truncated_clips_to_scale(variant):
    adj = make_method("TMN", variant).fit_transform(_hand())
    assert adj.rating.tolist() == [1, 1.5, 1, 2.5, 1, 1.5, 4, 2.5]
    assert adj.paper.tolist() == [1.25, 1.75, 1.25, 3.25]


def _random(seed, n_papers=300, n_raters=9, m=5):
    rng = np.random.default_rng(seed)
    rater = np.concatenate([rng.choice(n_raters, 2, replace=False) for _ in range(n_papers)])
    score = np.clip(rng.integers(0, m + 1, rater.size) + (rater % 3 - 1), 0, m)
    return Ratings(np.repeat(np.arange(n_papers), 2), rater, score, m, n_papers, n_raters)


def test_faithful_is_the_basic_expression_in_singles():
    """Scalar float32 replay of EZEQ.BAS: mn(j) = s(j)/n(j); sc = x - mn(r) + mn(0);
    paper = (sc1 + sc2) / mj."""
    r = _random(3)
    f = np.float32
    n = [0] * 9
    s = [0] * 9
    for j, x in zip(r.rater, r.score):
        n[j] += 1
        s[j] += int(x)
    mn = [f(f(s[j]) / f(n[j])) for j in range(9)]
    mn0 = f(f(sum(s)) / f(sum(n)))
    expect = [f(f(f(x) - mn[j]) + mn0) for j, x in zip(r.rater, r.score)]
    adj = MeanEquating("faithful").fit_transform(r)
    assert adj.rating.tolist() == [float(v) for v in expect]
    papers = [f(f(f(0) + expect[2 * i]) + expect[2 * i + 1]) / f(2) for i in range(r.n_papers)]
    assert adj.paper.tolist() == [float(v) for v in papers]
    # the double-precision formula agrees to single precision
    corr = MeanEquating("corrected").fit_transform(r)
    np.testing.assert_allclose(adj.rating, corr.rating, atol=2e-6)


def test_corrected_matches_independent_formula():
    r = _random(4)
    x = r.score.astype(float)
    means = np.array([x[r.rater == j].mean() for j in range(9)])
    expect = x - means[r.rater] + x.mean()
    adj = MeanEquating("corrected").fit_transform(r)
    np.testing.assert_allclose(adj.rating, expect, rtol=0, atol=1e-12)
    np.testing.assert_allclose(adj.paper, (expect[0::2] + expect[1::2]) / 2, atol=1e-12)


def test_one_rating_rater():
    # rater 2 has one rating (3); all ratings 1 1 3 3 3 -> mean 2.2
    r = Ratings(paper=[0, 0, 1, 1, 2], rater=[0, 1, 0, 1, 2], score=[1, 3, 1, 3, 3],
                max_score=4, n_papers=3, n_raters=3)
    # faithful (like the BASIC): the one rating becomes the overall mean
    assert MeanEquating("faithful").fit_transform(r).rating[4] == pytest.approx(2.2, abs=1e-6)
    # corrected: a rater below min_ratings=2 is left unadjusted
    m = MeanEquating("corrected").fit(r)
    assert m.shift_.tolist() == pytest.approx([1.2, -0.8, 0.0])
    assert m.transform(r).rating[4] == 3.0
    assert MeanEquating("corrected", min_ratings=1).fit_transform(r).rating[4] == pytest.approx(2.2)


def test_rater_without_ratings_cannot_be_transformed():
    r = _hand()
    m = MeanEquating("corrected").fit(r.subset(r.rater != 2))
    assert np.isnan(m.mean_[2])
    with pytest.raises(MethodError, match="rater"):
        m.transform(r)


def test_codes_and_params():
    assert make_method("TMN").code == "TMN" and make_method("MN").code == "MN"
    m = MeanEquating(truncate=True)
    assert m.get_params() == {"variant": "corrected", "truncate": True, "min_ratings": None}
    assert m.set_params(variant="faithful", min_ratings=3) is m and m.get_params()["variant"] == "faithful"
    with pytest.raises(ValueError, match="shift: is not a parameter of MeanEquating"):
        m.set_params(shift=1)
    # every registered method: get_params is its __init__ signature, and make_method gives the
    # variant only to the 1990 methods that have one
    for code in method_codes():
        est = make_method(code, "faithful")
        assert set(est.get_params()) == set(inspect.signature(type(est).__init__).parameters) - {"self"}
        assert est.get_params().get("variant", "faithful") == "faithful"
    assert "variant" not in make_method("CML").get_params()


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a is b or a == b


def test_transform_before_fit_and_transform_leaves_the_estimator_alone():
    tested = []
    r = _hand()
    with pytest.raises(NotFittedError, match="MeanEquating is not fitted"):
        MeanEquating().transform(r)
    for code in method_codes():
        est = make_method(code, "corrected")
        try:
            est.fit(r)
        except MethodError:   # e.g. CML: too few papers to estimate every step
            continue
        before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
        est.transform(r)
        after = vars(est)
        assert before.keys() == after.keys(), code
        assert all(_same(before[k], after[k]) for k in before), code
        tested.append(code)
    assert {"NO", "MN", "LI", "EQP", "OLS", "RAS", "PCM", "WLS", "MML", "MFRM"} <= set(tested)
