"""How much do the methods disagree on these data?  Denny's Tables 4 and 5 and Figures 7-10.

Table 4: between every pair of methods, over the papers' adjusted scores, the root
mean squared difference, the maximum absolute difference and the correlation.
Table 5: papers passing and failing at a cut score (Denny used 3.25, an average of
3.5 after rounding), and the papers each method "helped" (pass adjusted, fail
unadjusted) and "hurt" (the reverse) relative to no equating.  Figures 7-10 map
the methods by their RMSDs; Denny used ALSCAL, here classical (Torgerson) MDS
(:func:`ratercal_cli.report.mds.classical_mds`), drawn by the report's
:func:`ratercal_cli.report.figures.mds_figure`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .criteria import passes
from .errors import MethodError, RatercalError
from .methods import make_method
from .ratings import Ratings
from .report.mds import classical_mds, rmsd_matrix  # noqa: F401  (one MDS and RMSD for the report and compare)

#: Tolerance on the cut: a paper scoring ``cut - 1e-9`` passes (3.25 from floating sums).


# -- running the methods -------------------------------------------------------------
def apply_methods(ratings: Ratings, methods, variant="faithful", strict=True):
    """Fit and transform each method; returns ``({code: Adjusted}, [warnings])``.

    ``strict``: a method that fails raises :class:`RatercalError` with a one-line
    message; otherwise it is skipped with a warning (``--method all``).
    """
    results, notes = {}, []
    for code in methods:
        try:
            with np.errstate(all="ignore"):
                est = make_method(code, variant)
                adj = est.fit_transform(ratings)
            notes += [f"{code}: {w}" for w in getattr(est, "warnings_", ())]  # e.g. MML's unused categories
        except MethodError as exc:
            if strict:
                raise
            notes.append(f"{code} skipped: {exc}")
            continue
        except (RatercalError, KeyError):
            raise
        except Exception as exc:  # a method's own failure: one line, never a traceback
            msg = f"{code} failed: {type(exc).__name__}: {exc}".splitlines()[0]
            if strict:
                raise MethodError(msg) from exc
            notes.append(msg + "; skipped")
            continue
        bad = int((~np.isfinite(adj.rating)).sum() + (~np.isfinite(adj.paper)).sum())
        if bad:
            notes.append(f"{code}: {bad} adjusted score(s) are not finite (e.g. a rater whose scores "
                         "do not vary) and are left blank")
        results[code] = adj
    return results, notes


# -- Table 4 -------------------------------------------------------------------------
@dataclass
class MethodComparison:
    """K x K matrices over the papers every method scored."""

    methods: list
    rmsd: np.ndarray
    maxdiff: np.ndarray
    corr: np.ndarray
    n_papers: int

    def to_dict(self):
        return {"methods": list(self.methods), "n_papers": self.n_papers,
                **{k: _nan_to_none(getattr(self, k)) for k in ("rmsd", "maxdiff", "corr")}}


def method_differences(paper_scores) -> MethodComparison:
    """RMSD, max |difference| and Pearson r between every pair of methods' paper scores.

    ``paper_scores``: ``{code: array over papers}``; papers where any method has a
    non-finite score are left out of every pair.
    """
    methods = list(paper_scores)
    X = np.vstack([np.asarray(paper_scores[m], dtype=np.float64) for m in methods])
    X = X[:, np.isfinite(X).all(axis=0)]
    n = X.shape[1]
    if n == 0:
        nan = np.full((len(methods),) * 2, np.nan)
        return MethodComparison(methods, nan, nan.copy(), nan.copy(), 0)
    rmsd = rmsd_matrix(X)
    maxdiff = np.abs(X[:, None, :] - X[None, :, :]).max(axis=2)
    Xc = X - X.mean(axis=1, keepdims=True)
    ss = np.sqrt((Xc * Xc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = (Xc @ Xc.T) / np.outer(ss, ss)
    corr = np.clip(corr, -1.0, 1.0)
    np.fill_diagonal(corr, np.where(ss > 0, 1.0, np.nan))
    return MethodComparison(methods, rmsd, maxdiff, corr, n)


# -- Table 5 -------------------------------------------------------------------------
def pass_fail(paper_scores, cut: float, reference: str = "NO"):
    """Per method: passing (score >= cut), failing, helped and hurt relative to ``reference``.

    Papers with a non-finite score in a method count for neither; helped/hurt are
    ``None`` when ``reference`` is not among the methods.
    """
    ref = paper_scores.get(reference)
    ref_pass = None if ref is None else passes(ref, cut)
    ref_ok = None if ref is None else np.isfinite(ref)
    rows = []
    for m, s in paper_scores.items():
        s = np.asarray(s, dtype=np.float64)
        ok = np.isfinite(s)
        passed = ok & passes(s, cut)
        row = {"method": m, "passing": int(passed.sum()), "failing": int((ok & ~passed).sum())}
        if ref_pass is not None:
            both = ok & ref_ok
            row["helped"] = int((both & passed & ~ref_pass).sum())
            row["hurt"] = int((both & ~passed & ref_pass).sum())
        else:
            row["helped"] = row["hurt"] = None
        rows.append(row)
    return rows


# -- text ----------------------------------------------------------------------------
def format_matrix(methods, M, nd=4) -> str:
    w = max(nd + 3, max(len(m) for m in methods))
    lines = [" " * w + "".join(m.rjust(w + 1) for m in methods)]
    for m, row in zip(methods, M):
        lines.append(m.ljust(w) + "".join(("-" if not np.isfinite(v) else f"{v:.{nd}f}").rjust(w + 1)
                                          for v in row))
    return "\n".join(lines)


def format_comparison(cmp: MethodComparison, pf_rows, cut) -> str:
    out = [f"Between methods, over {cmp.n_papers} papers' adjusted scores (Denny's Table 4)", "",
           "root mean squared difference", format_matrix(cmp.methods, cmp.rmsd), "",
           "maximum difference", format_matrix(cmp.methods, cmp.maxdiff), "",
           "correlation", format_matrix(cmp.methods, cmp.corr), ""]
    if pf_rows:
        out.append(f"Pass/fail at cut {cut:g} (score >= cut passes) relative to NO (Denny's Table 5)")
        out.append(f"{'method':<8}{'passing':>9}{'failing':>9}{'helped':>8}{'hurt':>6}")
        for r in pf_rows:
            h = "-" if r["helped"] is None else r["helped"]
            u = "-" if r["hurt"] is None else r["hurt"]
            out.append(f"{r['method']:<8}{r['passing']:>9}{r['failing']:>9}{h:>8}{u:>6}")
    return "\n".join(out)


def _nan_to_none(a):
    return [[None if not math.isfinite(v) else float(v) for v in row] for row in np.asarray(a)]
