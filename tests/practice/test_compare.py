"""compare: Table 4 matrices, Table 5 pass/fail, classical MDS, the PNG."""

import numpy as np

from ratercal_cli.practice.compare import (
    classical_mds,
    method_differences,
    pass_fail,
)


def test_method_differences_by_hand():
    s = {"NO": np.array([1.0, 2.0, 3.0, 4.0]),
         "MN": np.array([1.5, 2.0, 2.5, 4.0]),
         "LI": np.array([2.0, 1.0, np.nan, 3.0])}      # paper 3 dropped for every pair
    c = method_differences(s)
    assert c.n_papers == 3 and c.methods == ["NO", "MN", "LI"]
    # over papers 1, 2, 4: NO-MN diffs -.5 0 0; NO-LI -1 1 1; MN-LI -.5 1 1
    np.testing.assert_allclose(c.rmsd[0, 1], np.sqrt(0.25 / 3))
    np.testing.assert_allclose(c.rmsd[0, 2], 1.0)
    np.testing.assert_allclose(c.rmsd[1, 2], np.sqrt(2.25 / 3))
    np.testing.assert_allclose(c.maxdiff, [[0, .5, 1], [.5, 0, 1], [1, 1, 0]])
    X = np.array([[1, 2, 4], [1.5, 2, 4], [2, 1, 3]])
    np.testing.assert_allclose(c.corr, np.corrcoef(X), atol=1e-12)
    np.testing.assert_allclose(c.rmsd, c.rmsd.T)
    assert c.to_dict()["corr"][0][0] == 1.0


def test_constant_method_has_no_correlation():
    c = method_differences({"A": np.array([1.0, 1, 1]), "B": np.array([1.0, 2, 3])})
    assert np.isnan(c.corr[0, 1]) and np.isnan(c.corr[0, 0]) and c.corr[1, 1] == 1.0
    assert c.to_dict()["corr"][0] == [None, None]


def test_pass_fail_by_hand():
    s = {"NO": np.array([3.0, 3.5, 3.25, 2.0, 4.0]),
         "MN": np.array([3.3, 3.2, 3.25 - 1e-12, 2.0, np.nan]),
         "RAS": np.array([3.0, 3.0, 3.0, 3.5, 4.0])}
    rows = {r["method"]: r for r in pass_fail(s, 3.25)}
    assert rows["NO"] == {"method": "NO", "passing": 3, "failing": 2, "helped": 0, "hurt": 0}
    # MN: paper 1 helped (3.3 vs 3.0), paper 2 hurt (3.2 vs 3.5), 3.25 - 1e-12 passes, NaN not counted
    assert rows["MN"] == {"method": "MN", "passing": 2, "failing": 2, "helped": 1, "hurt": 1}
    assert rows["RAS"] == {"method": "RAS", "passing": 2, "failing": 3, "helped": 1, "hurt": 2}
    assert pass_fail({"MN": s["MN"]}, 3.25)[0]["helped"] is None


def test_classical_mds_rectangle():
    # corners of a 4 x 3 rectangle: B = X X' with X centred, eigenvalues 4 * 2**2 and 4 * 1.5**2
    X = np.array([[0, 0], [4, 0], [4, 3], [0, 3]], float)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    coords, eig = classical_mds(D, 2)
    np.testing.assert_allclose(eig, [16, 9, 0, 0], atol=1e-10)
    np.testing.assert_allclose(np.abs(coords), [[2, 1.5]] * 4, atol=1e-10)
    Dhat = np.sqrt(((coords[:, None] - coords[None]) ** 2).sum(-1))
    np.testing.assert_allclose(Dhat, D, atol=1e-10)


def test_classical_mds_against_independent_eigen():
    # a non-Euclidean 4 x 4 "distance" matrix; B by the double-centring formula written out
    D = np.array([[0, 3, 4, 5], [3, 0, 6, 4], [4, 6, 0, 2], [5, 4, 2, 0]], float)  # one negative eigenvalue
    D2 = D ** 2
    B = -0.5 * (D2 - D2.mean(0, keepdims=True) - D2.mean(1, keepdims=True) + D2.mean())
    lam, vec = np.linalg.eig(B)
    order = np.argsort(lam.real)[::-1]
    lam, vec = lam.real[order], vec.real[:, order]
    coords, eig = classical_mds(D, 2)
    np.testing.assert_allclose(eig, lam, atol=1e-10)
    for k in range(2):
        v = vec[:, k] / np.linalg.norm(vec[:, k]) * np.sqrt(lam[k])
        assert np.allclose(coords[:, k], v, atol=1e-10) or np.allclose(coords[:, k], -v, atol=1e-10)
        assert coords[np.abs(coords[:, k]).argmax(), k] > 0




def test_pass_fail_table5_columns():
    baseline = np.array([3.0, 3.5, 3.25, 2.0, 4.0, 3.2])
    adjusted = np.array([3.3, 3.0, 3.25, 2.1, 3.9, 3.1])
    # adjusted passes: papers 0, 2, 4 -> 3 pass, 3 fail; helped: paper 0; hurt: paper 1
    rows = pass_fail({"NO": baseline, "MN": adjusted}, 3.25)
    assert rows[1] == {"method": "MN", "passing": 3, "failing": 3, "helped": 1, "hurt": 1}
    assert rows[0] == {"method": "NO", "passing": 3, "failing": 3, "helped": 0, "hurt": 0}
