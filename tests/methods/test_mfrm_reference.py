"""The many-facet MFRM (paper + rater + one or two further facets, shared thresholds) against an
independent fit in R: the marginal likelihood by ``integrate`` paper by paper, maximised by ``optim``
(BFGS), SEs from ``optimHess`` (tests/results/make_mfrm_reference.R on mfrm_120x6_3crit_2sess_0-3.csv,
made by simulate_mfrm_small.py).  Priors off, as R has none."""

import csv

import numpy as np
import pytest

from ratercal_cli.methods.mml import fit_mml
from ratercal_cli.ratings import Ratings

from support import RESULTS

DATA = RESULTS / "mfrm_120x6_3crit_2sess_0-3.csv"


def _reference(facets):
    path = RESULTS / f"mfrm_r_reference_{'+'.join(facets)}.csv"
    with open(path) as fh:
        return {row["parameter"]: row for row in csv.DictReader(fh)}


@pytest.mark.parametrize("facets", [("criterion",), ("criterion", "session")])
def test_multi_facet_mfrm_matches_r(facets):
    ref = _reference(facets)
    d = np.loadtxt(DATA, delimiter=",", skiprows=1, dtype=int)
    col = {"criterion": 2, "session": 3}
    r = Ratings.from_labels(d[:, 0], d[:, 1], d[:, 4], 3, rater_ids=range(1, 7))
    levels = [d[:, col[f]] - 1 for f in facets]
    fit = fit_mml(r, model="rsm", facet=levels[0] if len(levels) == 1 else np.column_stack(levels),
                  step_sd=1e6, location_sd=1e6)   # priors off
    assert fit.converged

    def est(name):
        return float(ref[name]["estimate"])

    def se(name):
        return float(ref[name]["se"])

    # agreement found: estimates 3e-8, log L 2e-10, SEs 1e-7 relative; allowed: far more
    assert fit.loglik == pytest.approx(est("loglik"), abs=1e-6)
    np.testing.assert_allclose(fit.severity, [est(f"beta_{j}") for j in range(1, 7)], atol=1e-4)
    np.testing.assert_allclose(fit.thresholds, [est(f"kappa_{k}") for k in (1, 2, 3)], atol=1e-4)
    assert fit.theta_mean == pytest.approx(est("mu"), abs=1e-4)
    assert np.log(fit.sigma) == pytest.approx(est("log_sigma"), abs=1e-4)
    for k, f in enumerate(facets):
        n = int(d[:, col[f]].max())
        gam, gam_se = fit.effects[f"facet{k}"]
        np.testing.assert_allclose(gam, [est(f"gamma_{f}_{lv}") for lv in range(1, n + 1)], atol=1e-4)
        np.testing.assert_allclose(gam_se, [se(f"gamma_{f}_{lv}") for lv in range(1, n + 1)], rtol=2e-3)
    np.testing.assert_allclose(fit.severity_se, [se(f"beta_{j}") for j in range(1, 7)], rtol=2e-3)
    np.testing.assert_allclose(fit.thresholds_se, [se(f"kappa_{k}") for k in (1, 2, 3)], rtol=2e-3)
    assert fit.sigma_se / fit.sigma == pytest.approx(se("log_sigma"), rel=2e-3)
