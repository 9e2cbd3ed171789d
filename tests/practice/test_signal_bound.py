"""adjust's paper-signal warning decides "the papers differ" without scipy.special where the F statistic
is beyond doubt (Cantelli's inequality, :func:`ratercal_cli.practice.agreement.papers_clearly_differ`):
that answer must never contradict the F test itself, and on an ordinary large file it must be the one given."""

import numpy as np
import pytest

from ratercal_cli.practice.agreement import icc_oneway, papers_clearly_differ
from ratercal_cli.practice.simulate import clear_paper_signal, no_paper_signal, paper_signal
from ratercal_cli.ratings import Ratings


def _design(rng, n_papers, k, n_raters, spread, M=5):
    """``k`` of ``n_raters`` raters a paper (k may vary by paper), papers' qualities of SD ``spread``."""
    per = rng.integers(1, k + 1, n_papers) if rng.random() < 0.3 else np.full(n_papers, k)
    paper = np.repeat(np.arange(n_papers), per)
    rater = np.concatenate([rng.choice(n_raters, m, replace=False) for m in per])
    quality = rng.normal(0, spread, n_papers)
    score = np.clip(np.rint(M / 2 + quality[paper] + rng.normal(0, 1, paper.size)), 0, M).astype(np.int64)
    return Ratings(paper=paper, rater=rater, score=score, max_score=M, n_papers=n_papers, n_raters=n_raters)


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_never_contradicts_the_f_test(seed):
    rng = np.random.default_rng(seed)
    said, agreed = 0, 0
    for _ in range(60):
        r = _design(rng, int(rng.integers(2, 400)), int(rng.integers(2, 5)), 8,
                    float(rng.choice([0.0, 0.02, 0.1, 0.2, 0.5, 1.0])))
        icc = icc_oneway(r)
        for alpha in (0.05, 0.01, 0.2):
            if papers_clearly_differ(r, alpha):
                said += 1
                assert icc.p_value < alpha, (icc, alpha)
            agreed += icc.p_value < alpha
    # the bound decides a good share of the significant ones, not none
    assert 0 < said <= agreed


def test_edges_say_nothing_or_what_the_test_says():
    one = Ratings(paper=np.array([0, 0]), rater=np.array([0, 1]), score=np.array([1, 2]), max_score=5,
                  n_papers=1, n_raters=2)   # one paper: nothing to test
    assert not papers_clearly_differ(one, 0.05) and not no_paper_signal(icc_oneway(one))
    same = Ratings(paper=np.repeat(np.arange(40), 2), rater=np.tile([0, 1], 40), score=np.full(80, 3), max_score=5,
                   n_papers=40, n_raters=2)   # no variation at all: the test's p is NaN, a warning
    assert not papers_clearly_differ(same, 0.05) and no_paper_signal(icc_oneway(same))
    exact = Ratings(paper=np.repeat(np.arange(40), 2), rater=np.tile([0, 1], 40),
                    score=np.repeat(np.arange(40) % 6, 2), max_score=5, n_papers=40, n_raters=2)
    assert papers_clearly_differ(exact, 0.05) and icc_oneway(exact).p_value == 0   # raters agree exactly: F infinite


def test_a_large_file_with_a_difference_is_decided_by_the_bound():
    rng = np.random.default_rng(1)
    r = _design(rng, 50_000, 2, 200, 0.3)
    assert clear_paper_signal(r) and not no_paper_signal(paper_signal(r))
    # and random scores are left to the test
    assert not clear_paper_signal(_design(rng, 50_000, 2, 200, 0.0))


def test_adjust_s_signal_warning_imports_no_simulation(tmp_path):
    """The warning's test lives with the ANOVA it reads (practice/agreement.py): ``adjust`` no longer
    imports practice/simulate.py and the generators behind it (4 ms of every ``adjust``), and
    ``simulate`` still offers its names.  Fails before: 'ratercal_cli.practice.simulate' was in sys.modules."""
    from support import modules_after_adjust

    from ratercal_cli.practice import agreement, simulate

    assert simulate.paper_signal is agreement.paper_signal and simulate.SIGNAL_ALPHA == agreement.SIGNAL_ALPHA
    data = tmp_path / "r.csv"
    r = _design(np.random.default_rng(1), 60, 2, 6, 1.0)
    data.write_text("paper,rater,score\n" + "".join(f"P{p},R{j},{s}\n" for p, j, s in zip(r.paper, r.rater, r.score)))
    assert modules_after_adjust(data, tmp_path / "o.csv", ["MML"], ["ratercal_cli.practice.simulate",
                                                                    "ratercal_cli.generators"]) == []
