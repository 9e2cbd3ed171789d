"""The two-way additive fit ``score = paper + rater + error`` by least squares, the papers as fixed
effects: each rater's effect measured on the papers it shares with other raters, whatever the
papers' quality distribution across the raters (where papers went to raters by school or by a
pre-score the raters' raw means hold their papers' quality too; these effects do not).

Used by the links' say (:func:`ratercal_cli.practice.links.link_gain`: the effects, their noise and
the gain of adjusting by them) and by the shrinkage of a file's paper scores
(:func:`ratercal_cli.methods.shrinkage.kelley`, :func:`~ratercal_cli.methods.shrinkage.linear_eb`:
the error variance of one rating is the residual of this fit)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

__all__ = ["MAX_RATERS", "two_way"]

#: beyond this many raters the fit is not made (its eigendecomposition is raters^3: 1.8 s at 2,000): the links' say
#: is not heard, and a file's shrinkage centres its raters by their means
MAX_RATERS = 2000


def two_way(paper, rater, x, P: int, J: int) -> SimpleNamespace:
    """The fit of ratings (``paper`` in 0..P-1, ``rater`` in 0..J-1, scores ``x``): ``effect`` (J,), each
    rater's effect (summing to 0 over the raters who read, within each group of raters that share papers
    up to that group's offset, which no within-paper comparison measures), and what the links' say takes
    of it: ``A`` (papers x raters, sparse), ``M`` (each paper's raters' mean, sparse), ``xbar`` (each
    paper's mean score), ``Lp`` (the pseudo-inverse of the raters' information after the papers are taken
    out, L = sum over papers of diag(c_p) - c_p c_p' / n_p), ``keep`` (its eigenvalues kept), ``read``
    (papers with a rating), ``active`` (raters with one) and ``connected`` (the raters who read form one
    group linked through shared papers)."""
    d = _design(np.ascontiguousarray(paper, dtype=np.int64), np.ascontiguousarray(rater, dtype=np.int64), P, J)
    xbar = np.bincount(paper, weights=x, minlength=P) * d.inv_n
    b = np.bincount(rater, weights=x - xbar[paper], minlength=J)
    return SimpleNamespace(A=d.A, M=d.M, xbar=xbar, effect=d.Lp @ b, Lp=d.Lp, keep=d.keep, read=d.read,
                           active=d.active, connected=d.connected)


#: designs kept by :func:`_design` (the last few: a simulation's replications share their file's design, each method's
#: shrinkage asks for it again, and its eigendecomposition is raters^3: 1.8 s at 2,000 raters)
_DESIGNS: dict = {}
_KEPT = 4


def _design(paper, rater, P: int, J: int) -> SimpleNamespace:
    """What :func:`two_way` takes of the design alone (who read which paper), made once for the last few designs."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    h.update(paper)   # (the arrays' bytes, not a joined copy of them)
    h.update(rater)
    key = (P, J, h.digest())
    if key in _DESIGNS:
        return _DESIGNS[key]
    from scipy import sparse

    A = sparse.csr_matrix((np.ones(paper.size), (paper, rater)), shape=(P, J))
    n = np.bincount(paper, minlength=P).astype(np.float64)
    read = n > 0
    inv_n = np.divide(1.0, n, out=np.zeros(P), where=read)
    M = sparse.diags(inv_n) @ A                          # each paper's raters' mean
    L = np.diag(np.bincount(rater, minlength=J).astype(np.float64)) - (A.T @ M).toarray()
    w, U = np.linalg.eigh((L + L.T) / 2)
    keep = w > 1e-9 * max(float(w.max(initial=0.0)), 1e-300)
    active = np.bincount(rater, minlength=J) > 0
    # the pseudo-inverse: orthogonal to the null space (the constant over the raters who read, and each
    # rater who did not), so its effects sum to 0 over the raters who read and its covariance s2 Lp is theirs
    Lp = (U[:, keep] / w[keep]) @ U[:, keep].T
    for a in (inv_n, Lp, keep, read, active):   # (kept for the next caller: read-only)
        a.setflags(write=False)
    d = SimpleNamespace(A=A, M=M, inv_n=inv_n, Lp=Lp, keep=keep, read=read, active=active,
                        connected=bool(keep.sum() == active.sum() - 1))
    while len(_DESIGNS) >= _KEPT:
        _DESIGNS.pop(next(iter(_DESIGNS)))
    _DESIGNS[key] = d
    return d
