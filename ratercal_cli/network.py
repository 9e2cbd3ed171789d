"""Which raters are linked through shared papers.

Two raters are linked when they scored the same paper; raters are connected when a
chain of such links joins them.  Methods that put every rater on one scale from
within-paper comparisons (OLS/TLS/RAS, the PCM) can only do so inside one connected
group: a rater in another group has an undetermined offset.

Functions
---------
rating_pairs(ratings)            every pair of ratings on the same paper (BASIC loop order)
paper_pairs(paper)               the same pairs a distance at a time, of ratings sorted by paper
shared_papers(ratings)           (n_raters, n_raters) number of papers two raters share
rater_components(ratings, ...)   connected-component label per rater (-1: no ratings)
disconnected_raters(ratings,...) raters cut off from the largest component
require_connected(ratings, ...)  raise MethodError naming those raters
all_linked(adjacency, active)    whether require_connected would pass, for a stack of data sets
"""

from __future__ import annotations

import numpy as np

from .errors import MethodError
from .ratings import Ratings, by_paper


def rating_pairs(ratings: Ratings):
    """Index pairs ``(first, second)`` of ratings that share a paper.

    Follows the loading loop of OLS.BAS / RASCHEXT.BAS: papers in the order of
    their first rating, each paper's ratings sorted by rater number (stable for a
    rater who appears twice), then ``FOR j1 = 1 TO mj-1: FOR j2 = j1+1 TO mj``.
    So ``rater[first] <= rater[second]`` and a paper with m ratings gives
    m(m-1)/2 pairs.  Returns two int64 arrays of rating indices.
    """
    n = ratings.n_ratings
    empty = np.zeros(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    paper, rater = ratings.paper, ratings.rater
    uniq, first_seen = np.unique(paper, return_index=True)
    paper_rank = np.empty(ratings.n_papers, dtype=np.int64)
    paper_rank[uniq] = first_seen
    order = np.lexsort((np.arange(n), rater, paper_rank[paper]))
    p_sorted = paper[order]
    max_per_paper = int(np.bincount(paper).max())
    firsts, seconds, keys1, keys2 = [], [], [], []
    for k in range(1, max_per_paper):
        pos = np.flatnonzero(p_sorted[:-k] == p_sorted[k:])
        firsts.append(order[pos])
        seconds.append(order[pos + k])
        keys1.append(pos)
        keys2.append(pos + k)
    if not firsts:
        return empty, empty
    first = np.concatenate(firsts)
    second = np.concatenate(seconds)
    loop_order = np.lexsort((np.concatenate(keys2), np.concatenate(keys1)))
    return first[loop_order], second[loop_order]


#: :func:`shared_papers` multiplies dense matrices where their papers x raters^2 products are at most
#: this many times the rater pairs the counts visit (the papers' squared numbers of ratings): a panel
#: that reads every paper (21 raters, 1M ratings: 0.01 s, the sparse product 0.05 s), and many raters
#: a paper of a few hundred (21 of 200, 1M ratings, where the ratio is 90: 0.034 s, the pair counts
#: 0.083 s; they break even near 200; at 3 of 200 it is 4,400 and the pair counts 0.012 s)
DENSE_GRAM = 120
#: ... DENSE_ROWS papers at a time, in float32 (its BLAS product twice as fast as float64's; sums of 0s
#: and 1s, exact to 2^24), in one block of memory DENSE_ROWS x raters x 4 bytes, whatever the number of
#: papers, emptied again after each product: 200 raters, 6.5 MB.  Its entries are set by their flat
#: places and the block emptied whole (by (paper, rater) pairs, setting and emptying took a third of
#: it: 21 of 200 raters a paper, 1M ratings, 0.045 s, now 0.029-0.034 on a machine without AVX-512;
#: a complete panel of 21, 0.020 s, now 0.004-0.006).  (Blocks of 2^16 papers, 52 MB, each
#: allocated anew, cost 0-0.12 s of system time on top of the 0.04 s the products take (21 of 200 raters a
#: paper, 1M ratings, one array of 38 MB): the kernel's transparent huge pages, zeroed and compacted for
#: every fresh array; 2^11 to 2^13 papers, none.)
DENSE_ROWS = 1 << 13


def shared_papers(ratings: Ratings) -> np.ndarray:
    """Symmetric int matrix: ``out[a, b]`` = number of papers raters a and b both scored.

    The diagonal holds each rater's number of papers.  It is ``A' A`` for the papers x raters
    incidence matrix ``A``: dense for many raters a paper (:data:`DENSE_GRAM`), a block of papers at a
    time, else counted from the ratings sorted by paper, the pairs of ratings ``d`` apart on one paper
    for d = 1, 2, ... (:func:`_pair_counts`): the papers' rater pairs are never listed, which at 21
    raters a paper and 1M ratings were 10M pairs and 12 s of ``adjust -m MML`` (issue 32), nor
    multiplied as sparse matrices (1M ratings, 2, 3 and 21 of 200 raters a paper: 0.047, 0.072 and
    0.093 s, the counts 0.007, 0.016 and 0.073 s, 21 of 200 dense 0.034 s).
    """
    from .config import require_memory   # (here: the paths that never build the table do not import config)

    P, J = ratings.n_papers, ratings.n_raters
    require_memory(3 * 8.0 * J * J, f"the table of papers shared by each pair of the {J:,} raters",
                   "the methods that move each rater's scores alone (NO, MN, TMN, LI, TLI, EQP) and check's "
                   "--no-rasch do without it")   # (the counts, their sums, the table: three raters^2 int64 arrays)
    paper, rater = by_paper(ratings.paper, ratings.rater)
    k = np.bincount(paper, minlength=P).astype(np.float64)
    if float(P) * J * J <= DENSE_GRAM * float(k @ k):
        W = np.zeros((J, J), dtype=np.int64)
        A = np.zeros((min(DENSE_ROWS, P), J), dtype=np.float32)
        flat = A.reshape(-1)   # (a view: the ratings' entries set by their flat places)
        cuts = np.searchsorted(paper, np.arange(0, P + DENSE_ROWS, DENSE_ROWS))
        for p0, (a, b) in zip(range(0, P, DENSE_ROWS), zip(cuts[:-1], cuts[1:])):
            at = paper[a:b] - p0
            at *= J
            at += rater[a:b]
            flat[at] = 1.0   # (a rater's repeat on a paper: once)
            block = A[:min(DENSE_ROWS, P - p0)]
            W += (block.T @ block).astype(np.int64)
            block.fill(0.0)
        return W
    W = _pair_counts(paper, rater, J)
    if W is None:   # a rater's repeat on a paper: once
        key = np.unique(paper.astype(np.int64) * J + rater)
        W = _pair_counts(key // J, key % J, J)
    return W


def paper_pairs(paper):
    """The pairs of ratings on one paper, of ratings sorted by ``paper``: ``(d, same)`` for d = 1, 2, ..., the
    positions ``same`` whose rating ``d`` on is on the same paper (each pair of a paper's ratings once, as
    ``(same, same + d)``), never all the pairs at once (10M at 21 raters a paper and 1M ratings).  The ratings
    ``d`` apart on one paper are among those ``d - 1`` apart on one (the papers are sorted): once these are
    few, each pass looks only at them (the work the papers' pairs of ratings, not the ratings times the most
    ratings a paper has)."""
    n, at, d = paper.size, None, 1   # at: the positions whose rating d on may be on their paper (None: all)
    while d < n:
        if at is None:   # many: two slices compared, quicker than gathering at the positions
            same = np.flatnonzero(paper[:-d] == paper[d:])
        else:
            at = at[: np.searchsorted(at, n - d)]
            same = at[paper[at + d] == paper[at]]
        if not same.size:
            return
        yield d, same
        at = same if same.size <= n // 8 else None
        d += 1


def _pair_counts(paper, rater, J):
    """:func:`shared_papers` of ratings sorted by paper, or None where a rater scored a paper twice (pairs by
    :func:`paper_pairs`; the memory a few arrays over the ratings)."""
    W = np.zeros(J * J, dtype=np.int64)
    for d, same in paper_pairs(paper):
        a, b = rater[same], rater[same + d]
        if (a == b).any():
            return None
        W += np.bincount(a * J + b, minlength=J * J)
    W = W.reshape(J, J)
    W += W.T
    W[np.diag_indices(J)] = np.bincount(rater, minlength=J)   # (the pairs counted have a != b: none there)
    return W


def consecutive_links(paper, rater, n_raters: int):
    """The distinct pairs (low, high) of raters who rated a paper one after the other (the ratings sorted by
    paper): they link the same raters as every pair of a paper's raters would (:func:`rating_pairs`: 10M pairs,
    0.9 GiB and 2 s at 21 raters a paper and 1M ratings, where these are a few a rater), for
    :func:`rater_components` and :func:`require_connected`.  Distinct by a table of raters x raters where that
    is not much longer than the pairs, else by sorting."""
    p, r = by_paper(paper, rater)
    J = max(int(n_raters), 1)
    r = r.astype(np.int32 if J * J < 1 << 31 else np.int64)   # (half the memory to pass over)
    key = (np.minimum(r[:-1], r[1:]) * J + np.maximum(r[:-1], r[1:]))[p[1:] == p[:-1]].astype(np.int64)
    if J * J <= 4 * key.size:
        seen = np.zeros(J * J, dtype=bool)
        seen[key] = True
        key = np.flatnonzero(seen)
    else:
        key = np.unique(key)
    return key // J, key % J


def min_label_components(n, low, high):
    """Connected components by min-label propagation with pointer jumping.

    Each node ends with the smallest node index of its component.  Faster than
    scipy.sparse.csgraph for the few raters and links of a rating design.
    """
    labels = np.arange(n)
    if low.size == 0:
        return labels
    while True:
        before = labels.copy()
        m = np.minimum(labels[low], labels[high])
        np.minimum.at(labels, low, m)
        np.minimum.at(labels, high, m)
        labels = labels[labels]
        if np.array_equal(labels, before):
            return labels


def rater_components(ratings: Ratings, links=None):
    """Connected-component label of each rater; -1 for raters with no ratings.

    ``links``: optional ``(low, high)`` rater index arrays to use instead of the
    links implied by shared papers (e.g. only the pairs a method could use).
    Labels are numbered 0, 1, ... in order of each component's lowest rater.
    """
    nr = ratings.n_raters
    if links is None:   # (the raters who read a paper one after the other link what all its pairs would)
        low, high = consecutive_links(ratings.paper, ratings.rater, nr)
    else:
        low, high = (np.asarray(x, dtype=np.int64) for x in links)
    labels = min_label_components(nr, low, high)
    active = np.bincount(ratings.rater, minlength=nr) > 0
    # renumber by lowest active rater, raters without ratings -> -1
    out = np.full(nr, -1, dtype=np.int64)
    if active.any():
        uniq, first, inverse = np.unique(labels[active], return_index=True, return_inverse=True)
        rank = np.empty(uniq.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(uniq.size)
        out[active] = rank[inverse.ravel()]
    return out


def disconnected_raters(ratings: Ratings, links=None) -> np.ndarray:
    """Indices of raters with ratings outside the largest connected component.

    The largest component has the most raters; ties go to the one with more
    ratings, then to the one holding the lowest rater index.
    """
    labels = rater_components(ratings, links)
    active = labels >= 0
    if not active.any():
        return np.zeros(0, dtype=np.int64)
    n_comp = labels.max() + 1
    size = np.bincount(labels[active], minlength=n_comp)
    per_rater = np.bincount(ratings.rater, minlength=ratings.n_raters)
    weight = np.bincount(labels[active], weights=per_rater[active], minlength=n_comp)
    # labels are numbered by lowest rater: the last key picks the lowest-numbered group
    best = np.lexsort((np.arange(n_comp), -weight, -size))[0]
    return np.flatnonzero(active & (labels != best))


def require_connected(ratings: Ratings, method: str = "", links=None, note: str = "") -> None:
    """Raise :class:`MethodError` naming raters not linked to the largest group.

    ``method`` prefixes the message (e.g. ``"OLS"``); ``links`` as in
    :func:`rater_components`; ``note`` is appended to the message.
    """
    cut = disconnected_raters(ratings, links)
    if cut.size == 0:
        return
    labels = rater_components(ratings, links)
    main = np.flatnonzero((labels >= 0) & ~np.isin(np.arange(labels.size), cut))
    name = lambda idx: ", ".join(str(ratings.rater_ids[i]) for i in idx)  # noqa: E731
    prefix = f"{method}: " if method else ""
    word = "rater" if cut.size == 1 else "raters"
    raise MethodError(
        f"{prefix}{word} {name(cut)} not linked through shared papers to raters {name(main)}; "
        "their scores cannot be put on the same scale (drop them or add papers they share)" + note
    )


def all_linked(adjacency, active) -> np.ndarray:
    """For each data set of a stack (the Monte Carlo fast path): whether every rater with
    ratings (``active`` ``(B, n_raters)``) is linked to the others through the links
    ``adjacency`` ``(B, n_raters, n_raters)`` (bool, either direction), i.e. whether
    :func:`require_connected` would pass.  Reachability by repeated squaring."""
    B, nr = active.shape
    reach = (adjacency | np.swapaxes(adjacency, 1, 2) | np.eye(nr, dtype=bool)).astype(np.float64)
    for _ in range(int(np.ceil(np.log2(max(nr, 2)))) + 1):
        reach = (reach @ reach > 0).astype(np.float64)
    from_first = reach[np.arange(B), np.argmax(active, axis=1)] > 0
    return np.all(from_first | ~active, axis=1)
