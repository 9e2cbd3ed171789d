"""PARGEN, TRUEGEN and OBSGEN as the 1990 QuickBASIC programs computed them.

All arithmetic is in singles (float32); the random numbers come from
:class:`~ratercal_cli.qbasic.QBasicRandom`, whose state the caller carries from
one program (and one data set) to the next, as ``CHAIN`` did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..design import QUALITY_CODES, Cell, keep_first, needs_third, shape_quality
from ..qbasic import QBasicRandom, print_singles, read_singles

F32 = np.float32


def pargen_seed(cell: Cell) -> float:
    """PARGEN.BAS ``q = mj * np * mp * skew: RANDOMIZE q`` (mj = 0 for 2+ sets)."""
    return float(cell.basic_mj * cell.papers * cell.max_score * QUALITY_CODES[cell.quality])


def obsgen_seed(cell: Cell) -> float:
    """OBSGEN.BAS ``q = MJ * np + mp * skew: RANDOMIZE q``."""
    return float(cell.basic_mj * cell.papers + cell.max_score * QUALITY_CODES[cell.quality])


def pargen(rng: QBasicRandom, cell: Cell) -> np.ndarray:
    """Paper qualities, as written by ``PRINT #`` and read back by ``INPUT #`` (float32).

    Per paper, two RNDs: ``z = SQR(-2 * LOG(RND)) * SIN(PI2 * RND)``, ``PI2 = ATN(1) * 8``;
    normal ``z * 3 + 2``, positive skew ``ABS(z) * 5 - 3``, negative ``-5 * ABS(z) + 7``.
    """
    rng.randomize(pargen_seed(cell))
    u = rng.rnd_array(2 * cell.papers).reshape(cell.papers, 2).astype(F32)
    pi2 = F32(np.arctan(F32(1))) * F32(8)
    with np.errstate(divide="ignore"):
        z = np.sqrt(F32(-2) * np.log(u[:, 0])) * np.sin(pi2 * u[:, 1])
    return read_singles(print_singles(shape_quality(z, cell.quality)))


def rater_true_scores(quality: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """TRUEGEN.BAS: each rater's PCM expected score, shape (papers, raters).

    ``e(J) = e(J - 1) * EXP(ab - J(I, J))``, ``s(I) = SUM e(L) / T * L``; computed
    in log space (TRUEGEN rescaled by EXP(20) instead; the result is the same
    to single precision).
    """
    from ..models.pcm import expected_score

    q = np.asarray(quality, dtype=np.float64)[:, None]
    return expected_score(q, np.asarray(steps, dtype=np.float64)[None, :, :])


def truegen(quality: np.ndarray, steps: np.ndarray):
    """True score of each paper: the mean over the raters of their PCM expected
    score, written by ``PRINT #2, ave / nj`` (7 significant digits).

    Returns (paper true scores, per-rater expected scores), both as read back.
    """
    per_rater = rater_true_scores(quality, steps)
    true = per_rater.mean(axis=1)
    return read_singles(print_singles(true)), per_rater


@dataclass
class ObservedRatings:
    """OBSGEN's output before the 2+ bookkeeping is flattened.

    Per generated rating (in generation order): paper index, rater index (0-based),
    score, order within the paper (1, 2, 3) and whether it was kept in the .OBS
    file (the 2+ design drops one of the first two when a third is drawn).  With an analytic
    rubric (:mod:`ratercal_cli.rater_effects`) a reading is a rating per criterion: ``criterion``
    gives each rating's (0-based; None without criteria), the readings' ratings in criterion order.
    """

    paper: np.ndarray
    rater: np.ndarray
    score: np.ndarray
    order: np.ndarray
    kept: np.ndarray
    criterion: np.ndarray | None = None


def step_pass_thresholds(quality: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``1 / (1 + EXP(J(r, k) - ab))`` in singles, shape (papers, raters, M)."""
    q = np.asarray(quality, dtype=F32)[:, None, None]
    d = np.asarray(steps, dtype=F32)[None, :, :]
    with np.errstate(over="ignore"):
        return (F32(1) / (F32(1) + np.exp(d - q))).astype(np.float64)


def obsgen(rng: QBasicRandom, cell: Cell, quality: np.ndarray, steps: np.ndarray) -> ObservedRatings:
    """OBSGEN.BAS: draw each paper's raters, then walk each rater's steps.

    Raters: ``fnr(nj) = INT(RND * nj) + 1``, redrawn until distinct, all of a
    paper's raters drawn before its scores.  SCOREGEN: ``sc = 0: DO UNTIL RND >
    1 / (1 + EXP(J(r, sc + 1) - ab)): sc = sc + 1: IF sc = mp THEN EXIT DO: LOOP``.
    2+ sets: score r1 and r2; if ``ABS(s1 - s2) > 1`` draw r3, score it, keep r3 with
    whichever of s1, s2 is nearer s3 (on a tie, drop the lower score), written
    kept-one first, then r3.
    """
    rng.randomize(obsgen_seed(cell))
    nj = steps.shape[0]
    mp = cell.max_score
    thr = step_pass_thresholds(quality, steps).tolist()
    state = rng.seed
    A, C, MASK, MOD = 16598013, 12820163, 0xFFFFFF, float(1 << 24)
    out_p, out_r, out_s, out_o, out_k = [], [], [], [], []

    def fnr():
        nonlocal state
        state = (state * A + C) & MASK
        return int(state / MOD * nj)  # INT(RND * nj) (+1 dropped: 0-based)

    def scoregen(t):
        nonlocal state
        sc = 0
        while True:
            state = (state * A + C) & MASK
            if state / MOD > t[sc]:
                return sc
            sc += 1
            if sc == mp:
                return sc

    rpp = cell.raters_per_paper
    for i in range(cell.papers):
        ti = thr[i]
        if rpp == "1":
            r1 = fnr()
            s1 = scoregen(ti[r1])
            out_p.append(i); out_r.append(r1); out_s.append(s1); out_o.append(1); out_k.append(True)
            continue
        r1 = fnr()
        r2 = r1
        while r2 == r1:
            r2 = fnr()
        if rpp == "3":
            r3 = r1
            while r3 == r2 or r3 == r1:
                r3 = fnr()
            scores = [scoregen(ti[r1]), scoregen(ti[r2]), scoregen(ti[r3])]
            for o, (r, s) in enumerate(zip((r1, r2, r3), scores), start=1):
                out_p.append(i); out_r.append(r); out_s.append(s); out_o.append(o); out_k.append(True)
            continue
        s1 = scoregen(ti[r1])
        s2 = scoregen(ti[r2])
        if rpp == "2+" and needs_third(s1, s2):
            r3 = r1
            while r3 == r2 or r3 == r1:
                r3 = fnr()
            s3 = scoregen(ti[r3])
            keep1 = keep_first(s1, s2, s3)
            rows = ((r1, s1, 1, keep1), (r2, s2, 2, not keep1), (r3, s3, 3, True))
        else:
            rows = ((r1, s1, 1, True), (r2, s2, 2, True))
        for r, s, o, k in rows:
            out_p.append(i); out_r.append(r); out_s.append(s); out_o.append(o); out_k.append(k)
    rng.seed = state
    return ObservedRatings(
        paper=np.array(out_p, dtype=np.int64),
        rater=np.array(out_r, dtype=np.int64),
        score=np.array(out_s, dtype=np.int64),
        order=np.array(out_o, dtype=np.int64),
        kept=np.array(out_k, dtype=bool),
    )
