"""The MML PCM of many raters (issue 32: 5,000 raters on 1-4, 15,001 parameters, needed 15 GB): the
parameters x parameters arrays, the information's projection onto the free coordinates, the Cholesky
factor made in place by blocks, the delta-method SEs by blocks of rows, and the refusal of a fit
whose information cannot fit in memory.  Each is compared with the plain dense computation."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import ratercal_cli.methods.mml as mml_mod
from ratercal_cli import config
from ratercal_cli.errors import MethodError
from ratercal_cli.methods.mml import fit_mml
from ratercal_cli.methods.mml_engine import GridEngine
from ratercal_cli.methods.mml_layout import make_layout
from ratercal_cli.ratings import Ratings


def many_rater_ratings(raters=300, per=3, n_papers=3000, seed=5):
    """PCM scores 0-3 of ``n_papers`` papers, each by ``per`` raters drawn at random from ``raters``."""
    rng = np.random.default_rng([32, seed])
    rater = np.argsort(rng.random((n_papers, raters)), axis=1)[:, :per].ravel()
    paper = np.repeat(np.arange(n_papers), per)
    theta = rng.normal(0.0, 1.5, n_papers)[paper]
    thr = np.sort(np.array([-1.5, 0.0, 1.5]) + rng.normal(0.0, 0.4, (raters, 3)), axis=1)[rater]
    logit = np.concatenate([np.zeros((paper.size, 1)), np.cumsum(theta[:, None] - thr, axis=1)], axis=1)
    p = np.exp(logit - logit.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    score = (rng.random(paper.size)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return Ratings(paper=paper, rater=rater, score=np.minimum(score, 3), max_score=3, n_papers=n_papers,
                   n_raters=raters)


def test_the_factor_by_blocks_in_place_is_numpys_cholesky_and_gives_the_matrix_back(monkeypatch):
    monkeypatch.setattr(mml_mod, "FACTOR_BLOCK", 64)   # 300 rows: five blocks, the last of 44
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 320))
    A = X @ X.T + 0.5 * np.eye(300)
    A = (A + A.T) / 2.0
    work = A.copy()
    f = mml_mod._Cholesky(work, overwrite=True)
    assert np.shares_memory(f.L, work)
    np.testing.assert_allclose(np.tril(f.L), np.linalg.cholesky(A), rtol=0, atol=1e-12 * np.abs(A).max())
    q = rng.normal(size=300)
    np.testing.assert_allclose(f.solve(q), np.linalg.solve(A, q), rtol=1e-9, atol=1e-12)
    assert np.array_equal(f.matrix(), A)   # (its strict upper triangle and diagonal were kept)
    # not positive definite: numpy's error, in a block past the first
    B = A.copy()
    B[200:, 200:] -= 2.0 * np.linalg.eigvalsh(A).max() * np.eye(100)
    with pytest.raises(np.linalg.LinAlgError):
        mml_mod._Cholesky(B, overwrite=True)
    # a copy unless asked to overwrite
    C = A.copy()
    mml_mod._Cholesky(C)
    assert np.array_equal(C, A)


@pytest.mark.parametrize("model", ["pcm", "rsm"])
def test_the_projected_information_is_k_transposed_h_k_less_the_priors(model):
    """:meth:`_Objective._project` (entries summed by run of item pairs into one P x P array) against the
    dense ``K' H K - R'R`` of the engine's Hessian (:meth:`.BlockHessian.dense`); the RSM's items share
    their thresholds' columns (entries summed from many item pairs), with a facet."""
    r = many_rater_ratings(raters=40, n_papers=400)
    facet = np.arange(r.n_ratings) % 3 if model == "rsm" else None
    item, items, seen, levels = mml_mod._items(r, facet)
    counts = np.bincount(items[item, 0] * 4 + r.score, minlength=seen.size * 4).reshape(seen.size, 4)
    lay = make_layout(model, items, seen.size, levels, 3, None, used=counts > 0)
    eng = GridEngine(r.paper, item, r.score, items.shape[0], 4, 41)
    obj = mml_mod._Objective(eng, lay)
    rng = np.random.default_rng(1)
    phi = mml_mod._start(obj, counts, items) + 0.1 * rng.normal(size=obj.P)
    tau, ls = obj.tau(phi)
    ev = eng.evaluate(tau, ls, level=2)
    K = obj.K.toarray()
    pen = (lay.penalty @ obj.C).toarray()
    for h, scale in ((ev.H, 1.0), (ev.H_em, 2.5)):
        plain = scale * (K.T @ h.dense() @ K) - pen.T @ pen
        got = obj._project(h, scale)
        np.testing.assert_allclose(got, plain, rtol=0, atol=1e-11 * np.abs(plain).max())
        np.testing.assert_allclose(mml_mod._CompleteData(obj, h, scale).diagonal(), np.diag(plain), rtol=0,
                                   atol=1e-11 * np.abs(plain).max())


def test_a_many_rater_fit_factored_by_blocks_ends_where_numpys_whole_factor_does(monkeypatch):
    """300 raters on 1-4, three a paper (901 parameters): factored in place by blocks of 128 rows and
    convergence confirmed by conjugate gradients, the same estimates and SEs as with numpy's Cholesky of
    the whole matrix (the plain path, every fit up to FACTOR_BLOCK parameters); the SEs by blocks of rows
    as the dense delta method's."""
    r = many_rater_ratings()
    monkeypatch.setattr(mml_mod, "FACTOR_BLOCK", 4096)
    whole = fit_mml(r, model="pcm")
    monkeypatch.setattr(mml_mod, "FACTOR_BLOCK", 128)
    confirmed, confirm = [], mml_mod._confirm
    monkeypatch.setattr(mml_mod, "_confirm", lambda H, g, stop: confirmed.append(confirm(H, g, stop)) or confirmed[-1])
    blocks = fit_mml(r, model="pcm")
    assert len(confirmed) == 1 and confirmed[0] is not None   # (convergence confirmed by conjugate gradients)
    assert whole.converged and blocks.converged and whole.phi.size == 901
    np.testing.assert_allclose(blocks.phi, whole.phi, rtol=0, atol=1e-9)
    np.testing.assert_allclose(blocks.steps_se, whole.steps_se, rtol=1e-8)
    np.testing.assert_allclose(blocks.severity_se, whole.severity_se, rtol=1e-8)
    # the delta method as dense rows (raters centred: every row holds the mean severity)
    lay = blocks.layout
    rows = mml_mod.reported_rows(lay)
    for name, got in (("severity", blocks.severity_se), ("steps", blocks.steps_se.ravel())):
        rc = rows[name].toarray() @ lay.free_map()[0].toarray()
        np.testing.assert_allclose(got, np.sqrt(((rc @ blocks.cov) * rc).sum(axis=1)), rtol=1e-10)
    C, offset = lay.free_map()
    np.testing.assert_allclose(rows["steps"] @ (C @ blocks.phi + offset), blocks.steps.ravel(), rtol=0, atol=1e-12)


def test_a_fit_whose_information_cannot_be_held_is_refused_before_it_starts(monkeypatch, tmp_path):
    r = many_rater_ratings(n_papers=600)
    monkeypatch.setattr(config, "memory_left", lambda: 4.0 * 2 ** 20)   # (the raters' pairs table, 2.1 MiB, fits)
    with pytest.raises(MethodError, match=r"^MML \(PCM\): 901 parameters need 0\.0 GiB for the information matrix "
                                          r"\(901 x 901\), more than the 0\.0 GiB this process can have; use -m MFRM "
                                          r"\(the rating scale model: one set of thresholds shared by every rater, 303 "
                                          r"parameters\)$"):
        fit_mml(r, model="pcm")
    path = tmp_path / "many.csv"
    path.write_text("paper,rater,score\n" + "".join(f"P{p},R{j},{s + 1}\n" for p, j, s in zip(r.paper, r.rater, r.score)))
    from ratercal_cli.cli import cli

    res = CliRunner().invoke(cli, ["adjust", str(path), "--scale", "1-4", "-m", "MML", "-o", str(tmp_path / "o.csv"),
                                   "-q"])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "parameters need" in lines[0] and lines[0].endswith(" parameters)"), res.output
    assert not (tmp_path / "o.csv").exists()


def test_convergence_is_confirmed_by_conjugate_gradients_on_the_information(monkeypatch):
    """Above FACTOR_BLOCK parameters the information that confirms convergence is not factored: conjugate
    gradients give its Newton step (numpy's solve's to 1e-12), and hand it back (H unchanged) where they do
    not confirm; the fit by blocks of the test above took this path."""
    monkeypatch.setattr(mml_mod, "FACTOR_BLOCK", 128)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 330))
    A = (X @ X.T) / 330 + np.kron(np.eye(100), np.ones((3, 3)))   # (coupled within blocks of 3, as a PCM's steps)
    A = (A + A.T) / 2.0
    g = 1e-4 * rng.normal(size=300)
    plain = np.linalg.solve(A, g)
    H = -A
    d = mml_mod._confirm(H, g, stop=2.0 * float(g @ plain))
    np.testing.assert_allclose(d, plain, rtol=0, atol=1e-12 * np.abs(plain).max())
    assert np.array_equal(H, A)   # (negated in place: the information)
    H = -A
    assert mml_mod._confirm(H, g, stop=0.5 * float(g @ plain)) is None
    assert np.array_equal(H, -A)
    monkeypatch.setattr(mml_mod, "FACTOR_BLOCK", 1024)   # (few parameters: factored)
    assert mml_mod._confirm(H, g, stop=1.0) is None


def test_a_fit_of_more_parameters_than_it_takes_is_refused_before_it_starts(monkeypatch, tmp_path):
    """5,000 raters on 0-5 (24,971 parameters): an edge tester's MML had not ended after 300 s, nor said a word, each
    step a factor of a 25k x 25k matrix. Past MAX_PARAMETERS the fit is refused in one line naming MFRM (here the
    limit lowered to 500 for a file of 300 raters, 901 parameters)."""
    monkeypatch.setattr(mml_mod, "MAX_PARAMETERS", 500)
    r = many_rater_ratings(n_papers=600)
    with pytest.raises(MethodError, match=r"^MML \(PCM\): 901 parameters are more than the 500 a fit takes here: .* "
                                          r"use -m MFRM \(the rating scale model: one set of thresholds shared by "
                                          r"every rater, 303 parameters\)$"):
        fit_mml(r, model="pcm")
    assert fit_mml(r, model="rsm") is not None   # (the MFRM's 303: under it)
