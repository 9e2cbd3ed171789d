"""What a person must be told about the methods applied to one group of ratings: the ``warning:``
lines of ``adjust`` and ``compare``, in the file's own scores.

* a method skipped, and why;
* raters with too few ratings (:data:`~ratercal_cli.methods.base.MIN_RATINGS`), named with the
  methods that left their ratings unadjusted (and the faithful ones that did not);
* scores a model found no rater giving, named as scores of the scale ("never gave a 6"), not as
  the methods' 0-based categories;
* adjusted scores that are not finite, and adjusted scores outside the scale (a method that does
  not truncate can leave it; the truncated ones cannot).
"""

from __future__ import annotations

import numpy as np

from ..methods.apply import Applied, non_finite_count
from ..ratings import Ratings

#: The truncated counterpart of a method that can leave the scale.
TRUNCATED = {"MN": "TMN", "LI": "TLI", "OLS": "TLS"}


def _scores(ks, low):
    """``a 6``, ``1 or 6``, ``1, 2 or 6``: the scores of 0-based categories ``ks``."""
    s = [str(int(k) + low) for k in ks]
    return f"a {s[0]}" if len(s) == 1 else f"{', '.join(s[:-1])} or {s[-1]}"


def category_notes(code, est, ratings: Ratings, low: int) -> list:
    """Scores no rater (MFRM) or a named rater (MML) gave, from the fit's ``result_.unused``; other
    estimators' ``warnings_`` as they are."""
    res = getattr(est, "result_", None)
    unused = getattr(res, "unused", None)
    if unused is None:
        return [f"{code}: {w}" for w in getattr(est, "warnings_", ())]
    seen = ratings.ratings_per_rater() > 0
    why = "the rater's thresholds next to those scores rest on the model's weak prior"
    if getattr(est, "model", "pcm") == "rsm":
        ks = np.flatnonzero(unused[seen].all(axis=0)) if seen.any() else []
        return [f"{code}: no rater gave {_scores(ks, low)}; the shared thresholds next to "
                f"{'it' if len(ks) == 1 else 'them'} rest on the model's weak prior"] if len(ks) else []
    by_scores: dict = {}   # (the raters who never gave the same scores said once: 500 raters' list was an 11 KB line)
    for j in np.flatnonzero(seen):
        ks = np.flatnonzero(unused[j])
        if ks.size:
            by_scores.setdefault(tuple(ks.tolist()), []).append(str(ratings.rater_ids[j]))
    out = [f"{'rater' if len(who) == 1 else 'raters'} {_some(who)} never gave {_scores(list(ks), low)}"
           for ks, who in by_scores.items()]
    if len(out) > NAMED_SETS:
        out = out[:NAMED_SETS] + [f"{len(out) - NAMED_SETS} more sets of raters each never gave some scores"]
    return [f"{code}: {'; '.join(out)}: {why}"] if out else []


#: at most this many raters named in one clause of a note, and this many clauses (sets of raters), then how many more
NAMED = 5
NAMED_SETS = 10


def _some(names) -> str:
    """``R1, R2, R3, R4, R5 and 12 more``: the first NAMED of ``names``."""
    return ", ".join(names) if len(names) <= NAMED else f"{', '.join(names[:NAMED])} and {len(names) - NAMED} more"


def thin_notes(applied: Applied, ratings: Ratings) -> list:
    """The raters with too few ratings and which methods left them unadjusted (NO leaves everyone)."""
    left, adjusted = {}, []
    for code, est in applied.estimators.items():
        thin = tuple(getattr(est, "thin_raters_", ()))
        if code == "NO":
            continue
        if thin:
            left.setdefault(thin, []).append(code)
        elif est.faithful:
            adjusted.append(code)
    notes = []
    for thin, codes in left.items():
        names = _some([str(ratings.rater_ids[j]) for j in thin])
        n = ratings.ratings_per_rater()[list(thin)]
        fewest = int(n.min())
        notes.append(f"rater(s) {names} with fewer than {int(min(applied.estimators[c].min_ratings_used() for c in codes))} "
                     f"ratings (fewest {fewest}): left unadjusted by {', '.join(codes)} (their ratings keep "
                     "their raw scores and count as such in their papers' scores; flag thin)")
    if notes and adjusted:
        notes.append(f"the faithful {', '.join(adjusted)} adjust them as the 1990 programs did")
    return notes


def out_of_scale_notes(applied: Applied, ratings: Ratings, low: int, labels=None) -> list:
    """Per method, adjusted ratings and paper scores outside ``0..M`` (shown as the file's scale); ``labels``:
    how to name a method's scores (``{"MN": "recommended MN (shrunk)"}``), default its code."""
    notes = []
    m = ratings.max_score
    has = ratings.ratings_per_paper() > 0
    tol = 1e-9 * max(m, 1)   # rounding, not leaving: RAS gave 5.000000000000001 on 0-5 (written 5.0000)
    for code, adj in applied.adjusted.items():
        r = np.asarray(adj.rating)
        p = np.asarray(adj.paper)[has]
        n_r = int(((r < -tol) | (r > m + tol)).sum())
        n_p = int(((p < -tol) | (p > m + tol)).sum())
        if n_r or n_p:
            alt = TRUNCATED.get(code)
            notes.append(f"{(labels or {}).get(code, code)}: {n_r} adjusted rating(s) and {n_p} paper score(s) "
                         "fall outside the scale "
                         f"{low}-{low + m}" + (f" ({code} does not truncate; {alt} does)" if alt else ""))
    return notes


def unlinked_notes(applied: Applied, ratings: Ratings) -> list:
    """Where the raters fall into groups that share no paper (schools read by their own raters), what the
    methods applied did: each put the groups on one scale as if their papers had been assigned at random
    (check recommends NO there, and MML refuses; ``-m TLI`` said nothing)."""
    codes = [c for c in applied.adjusted if c != "NO"]
    if not codes or ratings.max_raters_per_paper() < 2:
        return []
    from ..network import consecutive_links, rater_components

    labels = rater_components(ratings, consecutive_links(ratings.paper, ratings.rater, ratings.n_raters))
    groups = [np.flatnonzero(labels == k) for k in range(int(labels.max(initial=-1)) + 1)]
    if len(groups) < 2:
        return []
    show = "; ".join(", ".join(str(ratings.rater_ids[j]) for j in g[:3]) + (" ..." if g.size > 3 else "")
                     for g in groups[:3]) + ("; ..." if len(groups) > 3 else "")
    return [f"{', '.join(codes)}: the raters fall into {len(groups)} groups that share no paper ({show}); "
            f"{'it puts' if len(codes) == 1 else 'they put'} the groups on one scale as if the papers had been "
            "assigned to them at random: a group whose papers are weaker has them raised, as if its raters were "
            "severe (check recommends NO unless the assignment was random)"]


def method_notes(applied: Applied, ratings: Ratings, low: int = 0) -> list:
    """Every note of the module, in the order a reader needs them."""
    notes = [f"{code} skipped: {reason}" for code, reason in applied.skipped.items()]
    notes += unlinked_notes(applied, ratings)
    notes += thin_notes(applied, ratings)
    for code, est in applied.estimators.items():
        notes += category_notes(code, est, ratings, low)
    notes += [f"{code}: {n} adjusted score(s) are not finite (e.g. a rater whose scores do not vary) "
              "and are left blank" for code, adj in applied.adjusted.items() if (n := non_finite_count(adj))]
    notes += out_of_scale_notes(applied, ratings, low)
    return notes
