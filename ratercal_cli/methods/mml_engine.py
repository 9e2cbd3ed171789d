"""The marginal likelihood of the Rasch models of raters (:mod:`.mml`), its gradient and its
observed information, on an equally spaced grid shared by every paper.

A rating ``i`` of paper ``p`` is a score ``x`` in 0..M given by an "item" ``u`` (a rater, or a
rater in a level of one or more further facets) with

    P(x | theta) = exp(x theta - tau[u, x]) / sum_h exp(h theta - tau[u, h]),   tau[u, 0] = 0,

and the papers' qualities ``theta = sigma z``, ``z ~ N(0, 1)`` (a mean other than 0 is a term
``-x mu`` of ``tau``: see :class:`.mml_layout.Layout`).  A paper's ratings are independent
given ``theta``, so with nodes ``z_q`` (equally spaced over +-``SPAN``, weights ``h phi(z_q)``
normalised to sum 1: the trapezoidal rule, whose error for a smooth posterior of sd ``s``
falls like ``exp(-2 pi^2 (s / h)^2)``)

    log L = sum_p log sum_q w_q prod_{i in p} P(x_i | sigma z_q).

What makes this fast at a million ratings:

* ``log P`` is a table (cells ``u*K + x`` x nodes), the same for every paper: a paper's
  log-likelihood at the nodes is a sum of table rows (a sparse product), never a rating x
  node x category array; for papers of few ratings (PRODUCT_MAX) its likelihood is a product of
  rows of the table's exp (made once an evaluation), no exp a paper and node;
* a paper's likelihood at the nodes is exp(t theta - sum_i tau[u_i, x_i] - sum_i psi_u_i(theta))
  (t its total score, psi_u the log of item u's normalising sum): papers with the same items (as
  often) and total score are one *class* (called a *pattern* below), computed once from one of its
  papers, counted ``mult`` times and corrected by a constant in ``tau``
  (:meth:`GridEngine._class_constant`).  Everything else of a paper the gradient and the
  information take is its items, its total and its posterior (the complete-data score's indicator
  of the observed score is constant given the data; the per-item expected scores enter summed over
  the items): a complete panel's 47,494 patterns of 1M ratings are 106 classes;
* everything else is a sum over papers of per-(cell, node) or per-(item pair, node) weights
  (:meth:`GridEngine.evaluate`), gathered block by block of patterns (``PASS_BLOCK`` at a time, ``BLOCK``
  for the information):
  memory is patterns x nodes per block, whatever the number of ratings;
* with many ratings a paper (narrow posteriors), log L, the gradient and the posterior moments
  take each chunk of patterns whose posteriors lie near each other on the nodes where they lay
  at the last evaluation (:meth:`GridEngine._windows`; a chunk whose posteriors moved past its
  window is done again on the whole grid): half the nodes a pattern at 21 ratings a paper; so do
  the informations of an engine of at least INFO_WINDOWS_FROM ratings (their mean parts, which do not
  depend on the nodes, then from every chunk's posterior means, by blocks), and the node part takes
  each group of designs on the nodes where its patterns' posteriors lie;
* the observed information (Louis 1982) needs the posterior covariance of each paper's score
  vector, a sum over the *pairs* of the paper's items: its node part depends on a pattern only
  through its *design* (which items rated it, how often) and its posterior, so it is the
  patterns' posteriors summed per design (designs x nodes) times the tables (a sparse product a run
  of items' pairs at a time over the designs, then a BLAS product an item at a time; for a few
  designs of many items such as a rubric, one BLAS product per design), its mean part a sum per
  (pattern, item pair) of outer products of the posterior-mean probabilities, taken by groups of
  items (one sparse product a group) or a chunk of patterns at a time (or BLAS products where the items are dense).  Nothing is
  held per (pattern, item pair) or per (design, item pair): at 21 of 200 raters a paper those are
  11 times the ratings (issue 32: the designs x pairs array was 7 GiB at 1M ratings), so memory
  grows with the ratings whatever the shape.

Coordinates of the gradient and information: ``tau[u, 1..M]`` (row-major) and ``log sigma``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from ..ratings import by_paper
from .quality import log_category_probabilities

__all__ = ["GridEngine", "Evaluation", "SPAN", "grid_nodes", "unique_rows"]

#: the grid covers z in [-SPAN, SPAN] (the normal's mass outside: 2.6e-12)
SPAN = 7.0
#: patterns per block of the information's E step
BLOCK = 1 << 15
#: patterns per block of log L and the gradient (their patterns x nodes arrays, a few MiB, stay in
#: the cache across the passes over them: 15-20% less time a full evaluation than BLOCK at a time)
PASS_BLOCK = 1 << 13
#: exp of what lies below this (relative to a pattern's shift) is taken as exp(FLOOR), 1e-304: numpy's
#: exp is 4-8 times slower where it underflows (many ratings a paper on the whole grid); a pattern
#: whose posterior is kept (normalising sum over 1e-200) loses nothing by it (1e-104 of its sum); the
#: products of a pattern's factors (:func:`_shifted_exp`, few ratings) are taken only where none is below it
FLOOR = -700.0
#: (pattern, item pair) entries at a time in the mean part of the information
ENTRY_CHUNK = 1 << 18
#: ... and about this many at a time in their outer products (M^2 each: a few MiB, kept in the cache)
ENTRY_RUN = 1 << 12
#: a pattern x column matrix is held dense (BLAS products) when at least this share is nonzero
DENSE_SHARE = 0.05
DENSE_CELLS = 1 << 25
#: the patterns' items are held dense when N U^2 is at most this many times sum_p n_p^2 (the mean
#: part of the information then in BLAS products, at a cost of N (U M)^2 against the sparse sums'
#: sum_p (n_p M)^2, each about this much slower a product)
DENSE_GAIN = 8.0
#: the sparse mean part of the information goes an item at a time where the patterns have at least
#: this many ratings on average, else by chunks of (pattern, item pair) entries
BY_ITEM_FROM = 6.0
#: item pairs are found by a table of U^2 entries up to this size (else by a search)
PAIR_TABLE = 1 << 22
#: the designs' weights of each item pair (:meth:`GridEngine.pair_designs`) are made a group of items
#: at a time, at most about this many (design, item pair) entries a group, and kept between
#: informations where one group holds them all (a sample's: 1.8M entries at 21 of 200 raters a paper)
PAIR_ENTRIES = 1 << 21
#: pairs of entries a group of items' sparse product in the mean part of the information: its gathered
#: posterior means (ITEM_GROUP x M doubles, 2.6 MiB for scores 0-5) under numpy's 4 MiB threshold for huge pages, where the
#: one group of a sample at 21 of 200 raters a paper (1.15M pairs of entries, 46 MiB) was mapped afresh at
#: each information, its huge pages zeroed by the kernel (sys time, 0.03-0.3 s a fit at load)
ITEM_GROUP = 1 << 16
#: rows (entries and padding) of a batch of items in the posterior means of the (pattern, item) entries, one
#: stacked product a batch (:func:`_item_batches`, :meth:`_Louis.add_block`)
ITEM_BATCH = 1 << 12
#: item pairs a run of items' product in the node part of the information (its pairs x nodes result
#: held in the cache: :meth:`GridEngine.pair_designs`; 21 of 200 raters a paper, a sample's information: 2^10 pairs
#: made 200 sparse matrices of the runs cut into the windows' groups, 2^11 100, their set-up 21.7 -> 17.4 ms and
#: the products as fast; 2^12 and more slower products, 2^15 the node part 38 -> 49 ms)
PAIR_CHUNK = 1 << 11
#: patterns of at most this many ratings take their likelihoods at the nodes as products of a table of exps
#: (:func:`_shifted_exp`: a gather and a multiply a rating, ~0.4 ns a pattern x node each, where the exp of
#: their sums is ~6 ns a pattern x node on a machine without AVX-512), more as the exp of sums.  Measured
#: (8192 patterns, 49 nodes, AVX2): 2.5 ms the exp form at 3 ratings a pattern against 0.46 the product,
#: 4.3 ms against 3.6-4.0 at 16, 5.0 against 4.3 at 21 (25 nodes: 2.1 against 1.8 at 16, 2.4 against 2.2 at
#: 21); on a machine with AVX-512 (exp ~1 ns) the crossover is lower
PRODUCT_MAX = 16
#: papers' cells of at most this many ratings are sorted by a network of compare-exchanges of whole
#: columns (:func:`_sort_rows`), more by numpy's sort of each row
SORT_NETWORK = 6


def _operator(m):
    """``m`` as a dense array when dense enough (a rubric's many ratings a paper), else sparse."""
    rows, cols = m.shape
    if rows * cols and rows * cols <= DENSE_CELLS and m.nnz >= DENSE_SHARE * rows * cols:
        return m.toarray()
    return m


#: a pattern's posterior is taken to lie within TAIL posterior sds of its mean (grid trimming)
TAIL = 12.0
#: windows of the grid (:meth:`GridEngine._windows`): chunks of at most this many patterns (N / WINDOW_CHUNKS, at
#: least a quarter of it), each on the nodes within WINDOW_TAIL sds of its posteriors at the last evaluation (a
#: margin for the moves of a step), used where they hold at most WINDOW_GAIN of the whole grid's pattern x node
#: cells.  A chunk costs ~0.3 ms beyond its cells (a few dozen numpy and scipy calls), its window is wider the
#: wider its posteriors' means spread: 21 of 200 raters a paper, 1M ratings (47,619 patterns), a gradient of every
#: paper took 52-68 ms in 47 chunks of 1024 (1.61M cells), 49-60 in 24 (1.69M), 50-53 in 12 (1.9M)
WINDOW_CHUNK = 2048
WINDOW_CHUNKS = 24
WINDOW_TAIL = TAIL + 4.0
WINDOW_GAIN = 0.7
#: ... for an engine whose iterations start near the optimum (:attr:`GridEngine.window_tail`: every paper's in
#: a fit a sample steers), within TAIL + twice the largest move (sds) of a posterior from its window's place
#: at the last evaluation, at least NEAR_TAIL and at most WINDOW_TAIL: 21 of 200 raters a paper, 1M
#: ratings, 14% fewer cells, no chunk done again
NEAR_TAIL = TAIL + 1.0
#: a chunk's window holds where its posteriors lie within TAIL sds inside it or where it leaves out at most
#: WINDOW_MASS of each (their terms past the window's edges bounded by how they fall into them:
#: :func:`_window_leaves`), else the chunk is done again on the whole grid.  Each chunk learns its reach (sds,
#: before the margin for moves; at most TAIL): after a miss, what its posteriors' terms on the whole grid need
#: (at least that from then on), after a window that held, what would leave out about WINDOW_MASS x
#: WINDOW_SLACK by the fall of a normal posterior's terms (~exp(-k^2 / 2) at k sds, at most WINDOW_WIDEN sds more
#: than it reached; far tails fall slower than that, the prior's where the likelihood flattens, so the reach
#: found is more than they need).  A posterior of many ratings is near normal (its tails the likelihood's: its
#: chunk reaches ~8.5 sds, where the windows took TAIL = 12), one of papers scored near an end of the scale is
#: skewed (wider).  21 of 200 raters a paper, 1M ratings: 1.76M pattern x node cells a gradient of every paper
#: where 2.12M once the reaches are learned (19.6M where 22.2M in the PCM's fit, 18.0M where 20.3M in the
#: RSM's), the numbers the whole grid's to the bit there, no chunk of every paper's done again.  Windows placed
#: by guessed posteriors (:meth:`GridEngine._guess_where`) learn from the sds their posteriors now lie from the
#: window's edges, and the iterations' next windows take NEAR_TAIL's margin (the guess's error is no step's
#: move): the second gradient of every paper 2.4M cells where 1.7M, the third 2.0M where 1.7M
WINDOW_MASS = 1e-16
WINDOW_SLACK = 1e-3
WINDOW_WIDEN = 4.0
#: the informations take the windows (as log L and the gradient do) in an engine of at least this many ratings:
#: the same numbers to ~1e-13 relative, not to the bit, so smaller files (every one the tests compare with
#: R, mirt and psychotools, and the fits below 2 x SAMPLE_RATINGS that no sample steers) keep the whole grid's
#: (21 of 200 raters a paper, 1M ratings: the sample's two informations, 119 and 63 nodes, 0.27 s where 0.33 s;
#: every paper's, the SEs', 2.1 s where 2.6 s)
INFO_WINDOWS_FROM = 50_000
#: ... and GUESS_TAIL sds of posteriors guessed from another engine's (:meth:`GridEngine._guess_where`: at 21
#: of 200 raters a paper, 1M ratings, the guesses are up to 0.66 sds off, the RSM's 0.52; by the total score
#: alone, without the items' locations, up to 3.2 sds, and the tail was TAIL + 8: 2.8M pattern x node cells
#: the first gradient of every paper, now 2.1M, none done again)
GUESS_TAIL = TAIL + 3.0
#: the node part of an information takes each group of designs (:meth:`_Louis._design_spans`) on the nodes where
#: one of its designs' posterior weights is above SPAN_FLOOR of the group's largest, not on every node their
#: windows reached (made for log L to 1e-16 of a posterior: ~12 sds where this is ~8; the information's numbers
#: move by ~1e-16 of its largest): 21 of 200 raters a paper, 1M ratings, the sample's first information takes 55%
#: of the design x node cells, its node part 0.051 -> 0.040 s
SPAN_FLOOR = 1e-15


#: :func:`low_quantile` takes the values under a strided sample of about this many values' quantile
QUANTILE_SAMPLE = 1 << 12


def low_quantile(x, q: float) -> float:
    """``np.quantile(x, q)`` (its default, linear interpolation) for a low ``q``, the same number: the two
    values it interpolates between, ``x``'s (j)th and (j+1)th smallest (j = floor((n - 1) q)), are found among
    the values under a bound that holds them (a strided sample's quantile a little above ``q``), by a
    partition of those few, and interpolated by ``np.quantile`` itself; np.quantile partitions every value
    at four places (2 ms at each evaluation of 330k patterns, 1M ratings, where this takes 0.4).  Where
    the bound holds too few, or a value is nan, it is ``np.quantile`` of every value."""
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    vi = (n - 1) * q   # (np.quantile's virtual index)
    j = int(np.floor(vi))
    stride = n // QUANTILE_SAMPLE
    if stride >= 4 and j + 1 < n:
        s = x[::stride]
        k = min(s.size - 1, 2 * int(np.ceil(q * s.size)) + 8)
        low = x[x <= np.partition(s, k)[k]]
        if low.size >= j + 2 and not np.isnan(x).any():
            a, b = np.partition(low, (j, j + 1))[j:j + 2]
            return float(np.quantile(np.array([a, b]), vi - np.floor(vi)))   # (its gamma, from its index)
    return float(np.quantile(x, q))


def grid_nodes(n_nodes: int, lo: float = -SPAN, hi: float = SPAN):
    """Equally spaced standard-normal nodes over [lo, hi] and their log weights ``log(h phi(z))``
    (the trapezoidal rule; over +-SPAN they sum to 1 within 1e-11)."""
    z = np.linspace(lo, hi, n_nodes)
    h = (hi - lo) / max(n_nodes - 1, 1)
    return z, np.log(h) - 0.5 * z * z - 0.5 * np.log(2.0 * np.pi)


@dataclass
class Evaluation:
    """log L at one parameter value; with ``level >= 1`` the gradient, ``2`` the information."""
    ll: float
    g: np.ndarray = None      # (U*M + 1,) d log L / d (tau[:, 1:], log sigma)
    H: "BlockHessian" = None     # Louis Hessian of log L, same coordinates
    #: the expected complete-data Hessian (negative semidefinite, :attr:`H_em`), or (``level`` 1) the
    #: arguments of :func:`complete_data_hessian` that make it when first asked for
    em: object = None
    eap: np.ndarray = None    # per pattern: posterior mean and sd of theta (``moments=True``)
    eap_sd: np.ndarray = None
    posterior: np.ndarray = None   # per pattern: posterior expectations of the node functions ``G`` (``G`` given)
    z_sd_low: float = np.nan  # a low (1%) quantile of the patterns' posterior sd in z units
    z_lo: float = -SPAN       # where the posteriors lie: min (max) over patterns of mean -+ TAIL sd
    z_hi: float = SPAN
    where: tuple = None       # each pattern's posterior mean and sd (z units)

    @property
    def H_em(self) -> "BlockHessian":
        """The expected complete-data Hessian (level 1: made the first time it is asked for, a few U Q M^2
        flops that only the gradient a sample's information is scaled by needs, :meth:`.mml._Objective.scaled_to_complete`:
        2-3 ms an evaluation at 200 raters, 0.04 s of a fit at 21 of 200 raters a paper, 1M ratings)."""
        if isinstance(self.em, tuple):
            self.em = complete_data_hessian(*self.em)
        return self.em


class GridEngine:
    """Ratings of ``n_items`` items on 0..K-1, grouped into distinct patterns; evaluates log L and
    its derivatives at ``n_nodes`` grid nodes (:func:`grid_nodes`).  ``weight``: what each paper
    counts for (indexed by ``paper``; a sample's papers, :func:`.mml._sample_engine`), default 1."""

    def __init__(self, paper, item, score, n_items: int, K: int, n_nodes: int = 31, weight=None):
        paper = np.asarray(paper, dtype=np.int64)
        item = np.asarray(item, dtype=np.int64)
        score = np.asarray(score, dtype=np.int64)
        self.U, self.K, self.M = int(n_items), int(K), int(K) - 1
        self.n_ratings = paper.size
        cell = item * self.K   # (+ score in place: one array the size of the ratings, not two)
        cell += score
        self._patterns(paper, cell, None if weight is None else np.asarray(weight, dtype=np.float64))
        self.set_nodes(n_nodes)

    # ---- set-up -------------------------------------------------------------------------------
    def _patterns(self, paper, cell, weight=None):
        """The papers' classes (same items, as often, and same total score; :func:`paper_patterns`
        with ``K``), called *patterns* here: ``self.cells`` (patterns x cells, counts: the ratings of
        each class's first paper), ``mult`` (its papers' weights summed), ``pattern`` of every used
        paper (``papers``); ``n_obs`` the (weighted) ratings per cell, every paper's, and what
        :meth:`_class_constant` needs."""
        UK = self.U * self.K
        self.papers, self.pattern, groups = paper_patterns(paper, cell, UK, K=self.K)
        mult = np.concatenate([cnt for _, cnt in groups]) if groups else np.zeros(0, np.int64)
        self.mult = mult.astype(np.float64)
        self.N = n_pat = mult.size
        if weight is not None:
            self.mult = np.bincount(self.pattern, weights=weight[self.papers], minlength=n_pat)
        rows = np.repeat(np.array([R.shape[1] for R, _ in groups], dtype=np.int64),
                         [R.shape[0] for R, _ in groups])   # (each pattern's number of cells)
        cells = groups[0][0].ravel() if len(groups) == 1 else np.concatenate([np.zeros(0, np.int32)] + [
            R.ravel() for R, _ in groups])
        self.cells = _counts_matrix(np.ones(cells.size), cells, np.r_[0, np.cumsum(rows)], (n_pat, UK))
        self.n_obs = np.bincount(cell, weights=None if weight is None else weight[paper],
                                 minlength=UK).astype(np.float64).reshape(self.U, self.K)   # ratings per cell
        d = np.asarray(self.cells.T @ self.mult) - self.n_obs.ravel()   # the representatives' less every paper's
        self._const_at = np.flatnonzero(d)
        self._const_n = d[self._const_at]
        x = np.tile(np.arange(self.K, dtype=np.float64), self.U)
        self.total = np.asarray(self.cells @ x)   # each pattern's total score
        self.n_max = int(max((R.shape[1] for R, _ in groups), default=0))   # most ratings a pattern
        self.n_rat = rows   # each pattern's number of ratings
        c = self.cells
        self.items = _counts_matrix(c.data, c.indices // self.K, c.indptr, (n_pat, self.U))   # (sorted, as the cells)

    def _class_constant(self, tau):
        """log L of every paper less that of its class's representative (summed over the papers):
        a paper's likelihood at theta is exp(t theta - sum_i tau[u_i, x_i] - sum_i psi_u_i(theta)),
        a function of its items and total t but for the factor exp(-sum_i tau[u_i, x_i]), so this is
        sum_c m_c sum_(i in rep(c)) tau[u_i, x_i] - sum_(every rating) tau[u_i, x_i], linear in tau
        (the gradient's ``- n_obs`` takes every rating; the Hessians have no part of it)."""
        return float(self._const_n @ np.asarray(tau, dtype=np.float64).ravel()[self._const_at])

    def pattern_ratings(self):
        """The ratings of each pattern (class: those of its first paper): (pattern, item, score) arrays."""
        c = self.cells
        cell = np.repeat(c.indices, c.data.astype(np.int64))
        pattern = np.repeat(np.repeat(np.arange(self.N), np.diff(c.indptr)), c.data.astype(np.int64))
        return pattern, cell // self.K, cell % self.K

    design_blocks = None

    def _designs(self):
        """Distinct rows of ``items`` (which items rated a pattern, how often): ``design`` of every
        pattern and ``design_first`` (a pattern of each design).  The node part of the information
        depends on a pattern only through its design and posterior, so it is summed per design."""
        it = self.items
        n = np.diff(it.indptr)
        base = self.U * (int(it.data.max(initial=0)) + 1)
        design = np.empty(self.N, dtype=np.int64)
        firsts, n_des = [], 0
        for k in np.unique(n):
            sel = np.flatnonzero(n == k)
            at = it.indptr[sel][:, None] + np.arange(k)
            first, inv, _ = unique_rows(it.indices[at] * (base // self.U) + it.data[at].astype(np.int64), base)
            design[sel] = n_des + inv
            firsts.append(sel[first])
            n_des += first.size
        self.design = design
        self.design_first = np.concatenate(firsts) if firsts else np.zeros(0, np.int64)
        if self.n_ratings >= INFO_WINDOWS_FROM and self._order is not None:   # numbered by the groups of
            chunk = self._design_chunks()                                     # design_groups: no permutation
            by = np.argsort(chunk, kind="stable")
            rank = np.empty_like(by)
            rank[by] = np.arange(by.size)
            self.design, self.design_first = rank[design], self.design_first[by]
            self._groups = None, np.searchsorted(chunk[by], np.arange(self._order[1].size + 1))

    def _design_chunks(self):
        """Per design, the first chunk of the windows (:meth:`_windows`) that holds one of its patterns."""
        order, starts = self._order
        chunk = np.empty(self.N, dtype=np.int64)
        chunk[order] = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, self.N]))
        first = np.full(self.design_first.size, starts.size, dtype=np.int64)
        np.minimum.at(first, self.design, chunk)
        return first

    def _pairs(self):
        """The pairs of items u <= v rated together (``pair_u``, ``pair_v``, sorted by u then v, and
        ``pair_bounds``: item u's pairs are ``pair_bounds[u]:pair_bounds[u + 1]``), found from the
        designs (a sparse product: its size is the distinct pairs, at most U^2).  The items of the
        patterns are held dense (``items_dense``: BLAS products for the mean part of the
        information) where that costs little more than the sparse per-item sums: N U^2 against
        sum_p n_p^2 (a complete panel, a rubric); otherwise ``items_dense`` is the sparse matrix
        and the mean part is summed item by item (:meth:`_Louis._mean_by_item`, :meth:`_Louis._mean_by_entries`), never holding the
        (pattern, item pair) entries: at 21 of 200 raters a paper those are 11 times the ratings.
        Made at the first information (:meth:`evaluate` with ``level=2``): a fit that a sample steers
        never needs them of every paper."""
        self._designs()
        it = self.items
        D = it[self.design_first]
        self.design_items = D                       # designs x items (counts)
        on = D.copy()
        on.data = np.ones_like(on.data)
        co = sparse.triu((on.T @ on).tocsr()).tocoo()
        key = np.sort(co.row.astype(np.int64) * self.U + co.col)
        self.pair_u, self.pair_v = key // self.U, key % self.U
        self.pair_bounds = np.searchsorted(self.pair_u, np.arange(self.U + 1))
        self.pair_key = key
        self._pair_table = None
        if self.U * self.U <= PAIR_TABLE:
            self._pair_table = np.full(self.U * self.U, -1, dtype=np.int64)
            self._pair_table[key] = np.arange(key.size)
        n = np.diff(it.indptr).astype(np.float64)
        # (the dense copy made only where it is kept: 21 of 200 raters a paper is dense enough for
        # _operator, but not worth it, and the sample's copy cost its first information 5 ms)
        dense = _operator(it) if self.N * float(self.U) ** 2 <= DENSE_GAIN * float(n @ n) else it
        if isinstance(dense, np.ndarray):
            self.items_dense = dense
            self._design_blocks(dense[self.design_first])
        else:
            self.items_dense = it

    def pair_index(self, u, v):
        """The index in ``pair_u``, ``pair_v`` of item pairs (u, v), u <= v, rated together."""
        key = u.astype(np.int64) * self.U + v
        return self._pair_table[key] if self._pair_table is not None else np.searchsorted(self.pair_key, key)

    def pair_designs(self):
        """The designs' weights c_du c_dv of the item pairs (u, v >= u), for runs of items u0..u1-1 of at
        most about PAIR_CHUNK pairs each: [(u0, u1, W)], W (those pairs x designs, CSC) whose product
        with the designs' posteriors ``Cd`` is the pairs' C_uvq (:meth:`_Louis._node_pairs`: one
        product a run, its result small enough to stay in the cache while the designs' columns add
        into it, where one a design over every pair would scatter them across pairs x nodes).  Made a
        group of runs at a time, at most about PAIR_ENTRIES (design, pair) entries a group, and kept
        where one group holds them all (a sample's; where it takes them cut into groups of designs,
        :meth:`pair_designs_grouped`, those alone), else made at each information (nothing of the
        size of all the entries is held: at 21 of 200 raters a paper they are 11 times the ratings)."""
        if getattr(self, "_pair_designs", None) is not None:
            return self._pair_designs
        runs, one = self._pair_design_runs()
        if one:
            self._pair_designs = list(runs)
            return self._pair_designs
        return runs

    def _pair_design_runs(self):
        """The runs of :meth:`pair_designs`, made one at a time as they are taken, and whether they are one group
        (at most about PAIR_ENTRIES entries: kept)."""
        D = self.design_items                       # designs x items (counts), columns sorted
        n = np.diff(D.indptr)
        d_of = np.repeat(np.arange(n.size), n)
        after = D.indptr[d_of + 1] - np.arange(D.nnz)   # each entry's entries v >= u in its design
        by_item = sparse.csr_matrix((np.arange(D.nnz), D.indices, D.indptr), shape=D.shape).T.tocsr()
        per_item = np.bincount(D.indices, weights=after, minlength=self.U)
        cuts = np.unique(np.r_[0, np.searchsorted(np.cumsum(per_item), np.arange(PAIR_ENTRIES, per_item.sum(),
                                                                                   PAIR_ENTRIES), side="right"), self.U])
        bounds = self.pair_bounds
        run_cuts = np.searchsorted(bounds, np.arange(PAIR_CHUNK, bounds[-1], PAIR_CHUNK))
        ones = bool((D.data == 1).all())   # (every item once a design, as nearly always: weights 1)
        one = cuts.size <= 2

        def run(r0, r1):
            # the run's (design, u) entries by design then u (their places in D, sorted): W made in its CSC order
            # (from (row, column) pairs, its conversion took 40% of the time of pair_designs: 0.037 -> 0.022 s at 21 of
            # 200 raters a paper, a sample's 4,979 designs)
            e = np.sort(by_item.data[by_item.indptr[r0]:by_item.indptr[r1]])
            cnt = after[e]
            ev = np.repeat(e, cnt) + _ranges(cnt)                     # their (design, v >= u) entries
            u = np.repeat(D.indices[e], cnt)
            row = self.pair_index(u, D.indices[ev]) - bounds[r0]       # (ascending within each design)
            c = np.ones(row.size) if ones else np.repeat(D.data[e], cnt) * D.data[ev]
            ptr = np.zeros(n.size + 1, dtype=np.int64)
            np.add.at(ptr, d_of[e] + 1, cnt)
            W = sparse.csc_matrix((c, row, np.cumsum(ptr)), shape=(bounds[r1] - bounds[r0], n.size))
            return int(r0), int(r1), W

        def group(u0, u1):
            cut = np.unique(np.r_[u0, run_cuts[(run_cuts > u0) & (run_cuts < u1)], u1])
            return (run(r0, r1) for r0, r1 in zip(cut[:-1], cut[1:]))
        return (w for u0, u1 in zip(cuts[:-1], cuts[1:]) for w in group(u0, u1)), one

    def pair_designs_grouped(self):
        """:meth:`pair_designs` with each run's W cut into the groups of designs of :meth:`design_groups`:
        [(u0, u1, [W_g, or None for a group with no entries in the run])], kept where those are."""
        if self.__dict__.get("_grouped_designs") is not None:
            return self._grouped_designs
        perm, bounds = self.design_groups()

        def cut(W):
            W = W if perm is None else W[:, perm]
            ptr = W.indptr
            return [sparse.csc_matrix((W.data[ptr[g0]:ptr[g1]], W.indices[ptr[g0]:ptr[g1]], ptr[g0:g1 + 1] - ptr[g0]),
                                      shape=(W.shape[0], g1 - g0)) if ptr[g1] > ptr[g0] else None
                    for g0, g1 in zip(bounds[:-1], bounds[1:])]
        if self.__dict__.get("_pair_designs") is not None:
            runs, one = self._pair_designs, True
        else:   # (each run's W let go once cut, not kept beside its cuts: 14 MiB of a sample's at 21 of 200)
            runs, one = self._pair_design_runs()
        grouped = ((u0, u1, cut(W)) for u0, u1, W in runs)
        if one:
            self._grouped_designs = list(grouped)
            return self._grouped_designs
        return grouped

    def _design_blocks(self, X):
        """Few designs of many items each (a rubric): ``design_blocks``, per design its items, their
        counts, and its pairs (slots a <= b, pair index), for one BLAS product per design in the
        information (:meth:`_Louis._node_pairs`); None where the product per item pair is cheaper
        (many designs: its cost, sum over designs of n_d^2, against the pairs')."""
        n_d = (X > 0).sum(axis=1)
        self.design_blocks = None
        if float(n_d @ n_d) > 4.0 * self.pair_u.size:
            return
        key = self.pair_u * self.U + self.pair_v
        self.design_blocks = []
        for x in X:
            items = np.flatnonzero(x)
            a, b = np.triu_indices(items.size)
            self.design_blocks.append((items, x[items], a, b, np.searchsorted(key, items[a] * self.U + items[b])))

    def block_static(self, a, b) -> "_BlockStatic":
        """What the information needs of patterns a..b that does not change with the parameters."""
        cache = self.__dict__.setdefault("_static", {})
        if (a, b) not in cache:
            cache[(a, b)] = _BlockStatic(self, slice(a, b))
        return cache[(a, b)]

    def chunk_static(self, i, rows) -> "_BlockStatic":
        """:meth:`block_static` of chunk ``i`` of the windows (its patterns ``rows``), made once."""
        cache = self.__dict__.setdefault("_static", {})
        if ("chunk", i) not in cache:
            cache[("chunk", i)] = _BlockStatic(self, rows)
        return cache[("chunk", i)]

    def bar_layout(self, windows):
        """Where an information by the windows (:meth:`_Louis.by_windows`) puts the posterior means of the (pattern,
        item) entries: each chunk's rows of :func:`_item_batches` (padding and all) one after another, its static's
        ``bar_rows`` (r0, r1): ``(at, rows)``, the row of each entry (``items``' order) and the rows in all, made once
        with the chunks' statics (each chunk's means are made in their place: no gather and scatter of them, 7 ms
        an information of 10 chunks at 21 of 200 raters a paper)."""
        cache = self.__dict__.setdefault("_static", {})
        if "bar_layout" not in cache:
            at, r0 = np.empty(self.items.nnz, dtype=np.int64), 0
            for i, rows, _, _ in windows:
                st = self.chunk_static(i, rows)
                batches, where = st.item_batches
                n = batches[-1][3] + batches[-1][2].size if batches else 0
                st.bar_rows = r0, r0 + n
                at[st.ent_at] = r0 + where
                r0 += n
            cache["bar_layout"] = at, r0
        return cache["bar_layout"]

    def design_groups(self):
        """The designs grouped by the first chunk of the windows (:meth:`_windows`) that holds one of their
        patterns (posteriors near each other, on few nodes: :meth:`_Louis._node_pairs` takes each group's on
        its nodes alone): ``(perm, bounds)``, the designs in group order (None: in their own order, as
        :meth:`_designs` numbers them where the windows were there first) and each group's
        ``bounds[g]:bounds[g + 1]`` of them; None before the windows have ordered the patterns."""
        if self._order is None:
            return None
        if self.__dict__.get("_groups") is None:
            chunk = self._design_chunks()
            perm = np.argsort(chunk, kind="stable")
            self._groups = perm, np.searchsorted(chunk[perm], np.arange(self._order[1].size + 1))
        return self._groups

    @property
    def cells_op(self):
        """``cells`` as the evaluations take it (:func:`_operator`: dense for many ratings a paper)."""
        if "_cells_op" not in self.__dict__:
            self._cells_op = _operator(self.cells)
        return self._cells_op

    def release(self, passes: bool = True):
        """Let go of what the evaluations cached (``cells_op``, the blocks' and the windows' rows of it,
        the informations' per-block parts; not ``passes``: only the informations'): made again if another
        evaluation needs them."""
        informations = ("_static", "_grouped_designs")
        for name in ("_cells_op", "_cells_blocks", "_cells_by_chunk") + informations if passes else informations:
            self.__dict__.pop(name, None)
        self.guide = None

    def set_nodes(self, n_nodes: int, lo: float = -SPAN, hi: float = SPAN):
        self.z, self.logw = grid_nodes(int(n_nodes), lo, hi)
        self.Q = self.z.size

    # ---- tables -------------------------------------------------------------------------------
    def _tables(self, tau, log_sigma):
        sigma = np.exp(log_sigma)
        theta = sigma * self.z
        logP = log_category_probabilities(theta[None, :], np.asarray(tau, float)[:, None, :])  # (U, Q, K)
        return sigma, logP

    def _shifted(self, logP) -> "_Shifted":
        """The tables of an evaluation as :func:`_shifted_exp` takes them."""
        T = logP.transpose(0, 2, 1).reshape(self.U * self.K, self.Q)   # log P, cells x nodes (a copy)
        tmax, wmax = T.max(axis=1), self.logw.max()
        T -= tmax[:, None]
        lw = self.logw - wmax
        low = T.min(axis=0, initial=0.0)   # (each node's least log factor)
        # the factors of the product form (:func:`_shifted_exp`), where some pattern has few enough ratings
        E = np.exp(np.maximum(T, FLOOR)) if self.N and self.n_rat.min() <= PRODUCT_MAX else None
        return _Shifted(T, lw, np.exp(lw), tmax, wmax, self.n_max * -low.min(initial=0.0) > -FLOOR, E, low)

    def _pass(self, cells, runs, tab, qa, qb, m):
        """Patterns ``cells`` (weights ``m``; ``runs``: :meth:`_product_runs`) on nodes qa..qb-1 of the tables
        ``tab`` (:meth:`_shifted`): their log L (summed with ``m``), posterior means and sds (z units), and ``L``
        and ``s``: the posteriors are ``L w / s`` (``w``: the nodes' weights, :class:`_Shifted`), a product
        taken only where needed (the caller's pass over them, or the sums from them)."""
        L, top, S = _shifted_exp(cells, tab, qa, qb, self.z[qa:qb], runs)
        s = S[:, 0]
        mz = S[:, 1] / s
        sd = np.sqrt(np.maximum(S[:, 2] / s - mz * mz, 0.0))
        return float((top + np.log(s)) @ m), L, s, mz, sd

    def _cells_block(self, a, b):
        """Rows a..b of ``cells_op``, their transpose, its copy for :func:`_row_weighted` and their
        :meth:`_product_runs`, made once (a sparse
        slice is a copy: one of every rating at each evaluation, twice; a sparse transpose a new matrix,
        checked, at each use: 6 ms an evaluation of 330k patterns)."""
        cache = self.__dict__.setdefault("_cells_blocks", {})
        if (a, b) not in cache:
            c = self.cells_op
            if isinstance(c, np.ndarray):
                rows = c[a:b]
            else:   # (the rows' entries are a run of the whole's: views of its arrays, not a sparse slice's copy)
                s = c.indptr[a]
                rows = sparse.csr_matrix((c.data[s:c.indptr[b]], c.indices[s:c.indptr[b]], c.indptr[a:b + 1] - s),
                                         shape=(b - a, c.shape[1]))
            cache[(a, b)] = self._block_parts(np.arange(a, b), rows)
        return cache[(a, b)]

    def _block_parts(self, pats, rows):
        """What a pass over the patterns ``pats`` (their rows ``rows`` of ``cells_op``) takes, made once a block
        (:meth:`_cells_block`) or chunk (:meth:`_cells_rows`): the rows, their transpose, its copy for
        :func:`_row_weighted` and their :meth:`_product_runs`."""
        rows_T = rows.T
        return rows, rows_T, self._product_runs(pats, rows), _weighted_copy(rows_T)

    def _product_runs(self, pats, rows):
        """The patterns ``pats`` (their rows ``rows`` of ``cells_op``) cut into runs of consecutive rows of
        the same number n of ratings: [(r0, r1, Rt, sub)], for n at most PRODUCT_MAX ``Rt`` (n x (r1 - r0))
        the cells of their ratings (a cell a pattern has twice, twice) and ``sub`` None, else ``Rt`` None
        and ``sub`` their rows of ``cells_op``; None where every pattern has more (:func:`_shifted_exp`)."""
        n = self.n_rat[pats]
        if not n.size or n.min() > PRODUCT_MAX:
            return None
        c, runs = self.cells, []   # (sparse, as cells_op may not be)
        bounds = np.r_[0, np.flatnonzero(n[1:] != n[:-1]) + 1, n.size]
        for r0, r1 in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            k = int(n[r0])
            if k > PRODUCT_MAX:
                runs.append((r0, r1, None, rows[r0:r1]))
                continue
            p = pats[r0:r1]
            start = c.indptr[p]
            if (c.indptr[p + 1] - start == k).all():   # (k cells a pattern, each once, as nearly always: no sparse
                Rt = np.take(c.indices, start[None, :] + np.arange(k)[:, None])   # row slice, 4-8 ms a fit less)
            else:
                sub = c[p]
                Rt = np.repeat(sub.indices, sub.data.astype(np.int64)).reshape(r1 - r0, k).T
            runs.append((r0, r1, np.ascontiguousarray(Rt, dtype=np.int32), None))   # (as fast as intp, half the memory)
        return runs

    # ---- windows of the grid ------------------------------------------------------------------
    _where = None      # each pattern's posterior mean and sd (z units) at the last evaluation
    _where_at = None   # ... and its tau and sigma
    _order = None      # the patterns by posterior mean and the starts of its chunks (set once)
    window_misses = 0  # chunks done again on the whole grid (a posterior past its window)
    window_tail = WINDOW_TAIL   # the windows' least reach (sds): NEAR_TAIL where the steps are small
    _moved = np.inf             # the largest move (sds) of a posterior from its window's place at the last evaluation
    _reach = None               # each chunk's reach (sds, before the margin for moves; nan: TAIL)
    _least = None               # ... at least (where its window missed)
    _used = None                # ... and the reach its window took at this evaluation, with the margin
    _learn = False              # ... placed by the last evaluation's posteriors (not guessed ones)
    _placed = None              # where the windows placed the posteriors (mean, sd; z units)
    #: an engine of some of the same papers (a sample's, :func:`.mml._sample_engine`) whose last
    #: posteriors stand in for this one's at its first evaluation (:meth:`_guess_where`)
    guide = None

    def places(self):
        """Where the windows are placed now: the posteriors' places (:attr:`_where`, :attr:`_moved`) and each
        chunk's reach (a copy), for :meth:`restore` (the fit's last pass takes the windows the fit ended on)."""
        return self._where, self._moved, None if self._reach is None else (self._reach.copy(), self._least.copy())

    def restore(self, places):
        """The windows placed as :meth:`places` found them."""
        self._where, self._moved, reach = places
        self._reach, self._least = (None, None) if reach is None else (reach[0].copy(), reach[1].copy())

    def _guess_where(self, tau, sigma):
        """Each pattern's posterior mean and sd (z units) guessed from ``guide``'s last evaluation, or
        None (no guide, not evaluated yet, or windows that would not pay): those of the guide's patterns
        with as many ratings and the same total score, interpolated between totals, nan (the whole grid)
        for a number of ratings or a total beyond those the guide has, each moved by how far its items
        lie from theirs (at cumulative parameters ``tau`` and ``sigma`` here, the guide's at its evaluation).
        A Rasch posterior depends on a paper's items only through their parameters: with items of mean
        location (``tau[u, M] / M``) ``d`` logits higher its likelihood is about ``d`` higher, its
        posterior mean ``d (1 - sd_z^2)`` (the likelihood's share of the posterior's precision).  At 21 of 200
        raters a paper, 1M ratings, the guesses were up to 3.2 sds off without the move (their error's
        correlation with it 0.93), 1.1 with it (MFRM 3.2 and 0.5).  The guide is let go of."""
        guide, self.guide = self.guide, None
        if guide is None or guide._where is None or not guide.N or not self.N:
            return None
        gmz, gsd = guide._where
        h = (self.z[-1] - self.z[0]) / max(self.Q - 1, 1)
        if np.minimum(2.0 * GUESS_TAIL / h * gsd, self.Q).mean() > WINDOW_GAIN * self.Q:
            return None
        gtau, gsigma = guide._where_at
        count = np.asarray(self.cells.sum(axis=1)).ravel()
        gcount = np.asarray(guide.cells.sum(axis=1)).ravel()
        loc = np.asarray(self.items @ (tau[:, -1] / self.M)).ravel() / np.maximum(count, 1)   # (logits)
        gloc = np.asarray(guide.items @ (gtau[:, -1] / self.M)).ravel() / np.maximum(gcount, 1)
        mz, sd = np.full(self.N, np.nan), np.full(self.N, np.nan)
        for k in np.intersect1d(count, gcount):
            at, g = np.flatnonzero(count == k), gcount == k
            tot, inv = np.unique(guide.total[g], return_inverse=True)
            w = np.bincount(inv, weights=guide.mult[g])
            # (the totals are whole numbers: interpolated once each, then looked up, where np.interp of
            # every pattern's took 2 ms a quantity at 47,619 patterns)
            t = self.total[at]
            on = np.flatnonzero((t >= tot[0]) & (t <= tot[-1]))
            pos = (t[on] - tot[0]).astype(np.int64)
            whole = np.arange(tot[0], tot[-1] + 1.0)
            m_, s_, l_ = (np.interp(whole, tot, np.bincount(inv, weights=guide.mult[g] * x) / w)[pos]
                          for x in (gmz[g], gsd[g], gloc[g]))
            mz[at[on]] = (gsigma * m_ + (loc[at[on]] - l_) * (1.0 - s_ * s_)) / sigma   # (theta, then z here)
            sd[at[on]] = s_ * (gsigma / sigma)
        return mz, sd

    def _windows(self, tau=None, sigma=None):
        """Chunks of patterns whose posteriors lie near each other (by their means when first
        asked) and, for each, the nodes qa..qb-1 where those posteriors lay (within WINDOW_TAIL of
        their sds, fewer near the optimum, or the chunk's own reach) at the last evaluation:
        [(chunk, rows, qa, qb)], or None where the windows would not save much (few ratings a paper:
        wide posteriors) or before a first evaluation."""
        where, tail = self._where, min(WINDOW_TAIL, max(self.window_tail, TAIL + 2.0 * self._moved))
        if where is None:
            where, tail = None if tau is None else self._guess_where(tau, sigma), GUESS_TAIL
        if where is None or not self.N:
            return None
        self._placed = mz, sd = where
        z, h = self.z, (self.z[-1] - self.z[0]) / max(self.Q - 1, 1)
        if np.minimum(2.0 * tail / h * sd, self.Q).sum() > WINDOW_GAIN * self.N * self.Q:
            return None   # (a chunk's window holds each of its patterns' own: no gain to be had, no sort)
        if self._order is None:
            order = np.argsort(mz, kind="stable")
            step = min(WINDOW_CHUNK, max(WINDOW_CHUNK // 4, -(-self.N // WINDOW_CHUNKS)))
            step = -(-self.N // -(-self.N // step))   # (chunks of as many patterns as they can be: no small last one)
            if self.n_rat.min() < self.n_rat.max():   # (each chunk's patterns by their number of ratings: runs
                order = order[np.lexsort((self.n_rat[order], np.arange(self.N) // step))]   # :meth:`_product_runs` takes)
            self._order = order, np.arange(0, self.N, step)
        order, starts = self._order
        if self._reach is None:
            self._reach, self._least = np.full(starts.size, np.nan), np.zeros(starts.size)
        size = np.diff(np.r_[starts, self.N])
        self._learn = where is self._where   # (not guessed places: they may be off by some sds)
        if self._learn:   # (each chunk's own reach where it has one, and the margin for moves)
            self._used = np.where(np.isnan(self._reach), TAIL, self._reach) + (tail - TAIL)
        else:
            self._used = np.full(starts.size, tail)
        reach = np.repeat(self._used, size)
        lo = np.minimum.reduceat(mz[order] - reach * sd[order], starts)   # each chunk's reach
        hi = np.maximum.reduceat(mz[order] + reach * sd[order], starts)
        qa = np.maximum(0.0, np.floor((lo - z[0]) / h))
        qb = np.minimum(float(self.Q), np.ceil((hi - z[0]) / h) + 1)
        narrow = qb - qa >= 2   # (else, or not finite: the whole grid)
        qa, qb = np.where(narrow, qa, 0).astype(np.int64), np.where(narrow, qb, self.Q).astype(np.int64)
        if float(size @ (qb - qa)) > WINDOW_GAIN * self.N * self.Q:
            return None
        return [(i, order[a:a + n], int(x), int(y)) for i, (a, n, x, y) in enumerate(zip(starts, size, qa, qb))]

    def _cells_rows(self, i, rows):
        """Rows ``rows`` (chunk ``i`` of the windows) of ``cells_op``, as :meth:`_cells_block` (its transpose,
        copy and :meth:`_product_runs`), made once."""
        cache = self.__dict__.setdefault("_cells_by_chunk", {})
        if i not in cache:
            cache[i] = self._block_parts(rows, self.cells_op[rows])
        return cache[i]

    def _window_pass(self, tab, i, rows, qa, qb, ncell, mz_all, sd_z, Gw=None, post=None, acc=None):
        """log L of patterns ``rows`` (weighted) from their posteriors on nodes qa..qb-1, their
        posterior means and sds into ``mz_all``/``sd_z``, (``ncell`` given) their posterior
        counts into ``ncell``, (``Gw`` given: node functions times the nodes' weights) their
        posterior expectations of those functions into ``post`` and (``acc`` given) their parts of the
        information into ``acc``.  Where a posterior now reaches within TAIL sds of the window's edge
        (not the grid's) and the window leaves out more than WINDOW_MASS of it (:func:`_window_leaves`), the
        chunk is done on the whole grid: the window leaves out no more mass than the grid's own range
        (:func:`.mml.required_grid`) does, or none that shows.  The chunk's reach is learned from then on
        (:attr:`_reach`, WINDOW_MASS)."""
        cells, cells_T, runs, weighted = self._cells_rows(i, rows)
        z, m = self.z, self.mult[rows]
        used, learn, miss = self._used[i], self._learn, False
        for a, b in ((qa, qb), (0, self.Q)):
            ll, L, s, mz, sd = self._pass(cells, runs, tab, a, b, m)
            if (a, b) == (0, self.Q):
                break
            left = _window_leaves(L, s, tab.w, a, b, self.Q)
            inside = (a == 0 or np.min(mz - TAIL * sd) >= z[a]) and (b == self.Q or np.max(mz + TAIL * sd) <= z[b - 1])
            if inside or left <= WINDOW_MASS:
                if not learn:   # (placed by guessed posteriors: the nearest any now lies to an edge, in its sds)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        used = max(min(float(np.min((mz - z[a]) / sd)) if a else np.inf,
                                       float(np.min((z[b - 1] - mz) / sd)) if b < self.Q else np.inf), 0.0)
                if 1e-250 < left < np.inf and np.isfinite(used):   # (the reach that leaves out ~WINDOW_MASS x WINDOW_SLACK, were
                    fit = np.sqrt(max(used * used + 2.0 * np.log(left / (WINDOW_MASS * WINDOW_SLACK)), 0.0))   # it normal)
                    self._reach[i] = min(TAIL, max(self._least[i], min(fit, used + WINDOW_WIDEN)))
                break
            self.window_misses += 1
            miss = True
        if miss:   # (the reach the posteriors need, from their terms on the whole grid)
            self._reach[i] = self._least[i] = min(TAIL, _needed_reach(L, s, tab.w, z, mz, sd))
        mz_all[rows], sd_z[rows] = mz, sd
        if Gw is not None:
            post[rows] = (Gw[a:b].T @ L.T).T / s[:, None]
        if acc is not None:   # (as a block of the whole grid's, on nodes a..b-1)
            _add_information(acc, self.chunk_static(i, rows), cells_T, L, s, m, tab, ncell, a, b)
        elif ncell is not None:   # (the nodes' weights taken once, at the end: :meth:`evaluate`)
            ncell[:, a:b] += _row_weighted(cells_T, L, m / s, weighted)
        return ll

    # ---- evaluation ---------------------------------------------------------------------------
    def evaluate(self, tau, log_sigma, level: int = 0, moments: bool = False, G=None) -> Evaluation:
        """log L at cumulative parameters ``tau`` (U, K) and ``log_sigma``; ``level`` 1 adds the
        gradient, 2 the Louis and the complete-data Hessians; ``moments`` each pattern's
        posterior mean and sd of theta; ``G`` (nodes x k, functions at the grid's nodes; ``level`` 0 or
        1) each pattern's posterior expectations of them, ``posterior``: ``sum_q L_q w_q G_q / sum_q L_q w_q``
        over the nodes its posterior mean and sd are taken on (its window's or the whole grid), in the
        same pass."""
        if G is not None and level >= 2:
            raise ValueError("posterior expectations (G) are for evaluations of level 0 or 1")
        sigma, logP = self._tables(tau, log_sigma)
        U, K, M, Q, z = self.U, self.K, self.M, self.Q, self.z
        ll = 0.0
        ncell = np.zeros((U * K, Q)) if level >= 1 else None
        sd_z = np.empty(self.N)
        mz_all = np.empty(self.N)
        if level >= 2:
            P = np.exp(logP)
            E = P @ np.arange(K, dtype=np.float64)               # (U, Q)
            if not hasattr(self, "pair_u"):   # what only an information needs, made at the first
                self._pairs()
            acc = _Louis(self, P, E, sigma)
        tab = self._shifted(logP)
        Gw = None if G is None else np.asarray(G, dtype=np.float64) * tab.w[:, None]
        post = None if G is None else np.empty((self.N, Gw.shape[1]))
        windows = self._windows(tau, sigma) if level < 2 or self.n_ratings >= INFO_WINDOWS_FROM else None
        if level >= 2 and windows:
            acc.by_windows(windows)
        for i, rows, qa, qb in windows or ():   # patterns near each other, on the nodes where their posteriors lie
            ll += self._window_pass(tab, i, rows, qa, qb, ncell, mz_all, sd_z, Gw, post, acc if level >= 2 else None)
        if level >= 2 and windows:
            acc.add_means()
        step = BLOCK if level >= 2 else PASS_BLOCK
        for a in range(0, 0 if windows else self.N, step):
            b = min(self.N, a + step)
            (cells, cells_T, runs, weighted), m = self._cells_block(a, b), self.mult[a:b]
            llp, pi, s, mz_all[a:b], sd_z[a:b] = self._pass(cells, runs, tab, 0, Q, m)
            ll += llp
            if Gw is not None:
                post[a:b] = (Gw.T @ pi.T).T / s[:, None]
            if level == 1:
                ncell += _row_weighted(cells_T, pi, m / s, weighted)   # the posterior counts (but for the nodes' weights)
            elif level >= 2:
                _add_information(acc, self.block_static(a, b), cells_T, pi, s, m, tab, ncell, 0, Q)
        self._moved = np.inf
        if windows and self.N and not self._learn:   # (from guessed places: the guess's error, not a step's move)
            self._moved = 0.0
        elif windows and self.N:   # (how far the posteriors moved from where the windows put them)
            with np.errstate(divide="ignore", invalid="ignore"):
                moved = np.abs(mz_all - self._placed[0]) / sd_z
            self._moved = float(np.nanmax(moved)) if np.isfinite(moved).any() else np.inf
        self._where, self._where_at = (mz_all, sd_z), (np.asarray(tau, dtype=np.float64), sigma)
        ll += self._class_constant(tau)
        ev = Evaluation(ll=ll, eap=sigma * mz_all if moments else None, eap_sd=sigma * sd_z if moments else None,
                        posterior=post, where=self._where)
        if self.N:
            ev.z_sd_low = low_quantile(sd_z, 0.01)
            ev.z_lo, ev.z_hi = float(np.min(mz_all - TAIL * sd_z)), float(np.max(mz_all + TAIL * sd_z))
        if level == 0:
            return ev
        if level == 1:   # the nodes' weights, once (not into every block's or window's sums: 2.5M products a
            ncell *= tab.w   # gradient at 21 of 200 raters a paper, 1M ratings)
        P = np.exp(logP) if level < 2 else P
        n = ncell.reshape(U, K, Q)
        Nuq = n.sum(axis=1)                                      # (U, Q) expected ratings of u at node q
        g_tau = np.einsum("uq,uqk->uk", Nuq, P[:, :, 1:]) - self.n_obs[:, 1:]
        Eq = P @ np.arange(K, dtype=np.float64) if level < 2 else E
        xs = np.einsum("ukq,k->uq", n, np.arange(K, dtype=np.float64))   # expected score sums
        resid = xs - Nuq * Eq
        g_s = float(sigma * (resid @ z).sum())
        ev.g = np.r_[g_tau.ravel(), g_s]
        if level >= 2:
            ev.H, ev.em = acc.finish(Nuq, resid)
        else:   # (what a sample's information lacks, :func:`.mml._Objective._hessians`: made when asked for)
            ev.em = (P, Eq, Nuq, sigma, z)
        return ev


@dataclass
class _Shifted:
    """log P (cells x nodes) shifted by each cell's largest (``T = log P - tmax``), the log weights by
    their largest (``lw = logw - wmax``) and ``w = exp(lw)``; ``clip``: can a pattern's terms reach
    below FLOOR?  ``E = exp(T)`` (floored at exp(FLOOR), None where no pattern has PRODUCT_MAX ratings or
    fewer) and ``low`` each node's least ``T`` (:func:`_shifted_exp`)."""
    T: np.ndarray
    lw: np.ndarray
    w: np.ndarray
    tmax: np.ndarray
    wmax: float
    clip: bool
    E: np.ndarray = None
    low: np.ndarray = None
    _bufs: dict = None

    def scratch(self, size):
        """A scratch array of ``size`` doubles, the same one through the evaluation (:func:`_scratch`)."""
        if self._bufs is None:
            self._bufs = {}
        return _scratch(self._bufs, "", size)

    def product_max(self, qa, qb) -> float:
        """The most ratings a pattern may have for the product form on nodes qa..qb-1: no factor there is
        below exp(FLOOR / n) (each at least exp(least T)), so no product of n of them is below exp(FLOOR)."""
        least = -float(self.low[qa:qb].min(initial=0.0))
        return np.inf if least <= 0.0 else -FLOOR / least


def _scratch(bufs: dict, name, size, dtype=np.float64):
    """A scratch array of ``size`` doubles (or ``dtype``), ``bufs[name]`` (made anew only where too small): the same
    one through an evaluation, where a fresh one a block would be mapped afresh, page by page."""
    buf = bufs.get(name)
    if buf is None or buf.size < size:
        buf = bufs[name] = np.empty(size, dtype=dtype)
    return buf[:size]


def _window_leaves(L, s, w, qa, qb, Q) -> float:
    """The most of a pattern's posterior the nodes qa..qb-1 (a window of the grid's Q) may leave out, at
    one of its edges not the grid's (inf where it cannot be bounded): the terms there are ``pi_q = L_q w_q /
    s`` (summing to 1), and a posterior is log-concave (a normal prior times the category probabilities of
    a Rasch model, each log-concave in theta), so past an edge of the window its terms fall at least as fast
    as they do into the edge: the mass beyond is at most ``pi_e r / (1 - r)`` (``r = pi_e / pi_(e - 1)``
    the last ratio, under 1), or nothing worth a bound where ``pi_e`` is under 1e-100 (terms the floor may
    have raised, as it raises them on the whole grid)."""
    most = 0.0
    for e, f, at, inner in ((qa, qa + 1, 0, 1), (qb - 1, qb - 2, -1, -2)):
        if (at == 0 and e == 0) or (at == -1 and e == Q - 1):
            continue   # (the grid's own edge)
        if L.shape[1] < 2:
            return np.inf
        pe = L[:, at] * (w[e] / s)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = (L[:, at] * w[e]) / (L[:, inner] * w[f])
            bound = np.where(pe < 1e-100, 0.0, np.where(r < 1.0, pe * r / (1.0 - r), np.inf))
        most = max(most, float(bound.max(initial=0.0)))
    return most


def _needed_reach(L, s, w, z, mz, sd) -> float:
    """The most sds (and a node) from its mean that a pattern's posterior terms ``L w / s`` on the whole grid's
    nodes ``z`` reach at WINDOW_MASS x WINDOW_SLACK or more (posterior means ``mz``, sds ``sd``)."""
    big = L * (w / s[:, None]) >= WINDOW_MASS * WINDOW_SLACK
    lo, hi = z[np.argmax(big, axis=1)], z[z.size - 1 - np.argmax(big[:, ::-1], axis=1)]
    h = (z[-1] - z[0]) / max(z.size - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = (np.maximum(mz - lo, hi - mz) + h) / sd
    need = need[np.isfinite(need)]
    return float(need.max()) if need.size else TAIL


def _add_information(acc, st, cells_T, L, s, m, tab: _Shifted, ncell, qa, qb):
    """Patterns ``st`` (:class:`_BlockStatic`; their cells ``cells_T``, weights ``m``, likelihoods ``L`` on
    nodes qa..qb-1 of the tables ``tab`` with sums ``s``: :meth:`GridEngine._pass`) into an information's
    E step: their posteriors (``L`` made them, in place) counted into ``ncell`` and their parts into ``acc``
    (:class:`_Louis`), on the whole grid or a window's nodes alike."""
    L *= tab.w[qa:qb]
    L /= s[:, None]
    pim = L * m[:, None]
    ncell[:, qa:qb] += cells_T @ pim
    acc.add_block(st, L, pim, m, qa, qb)


def _counts_matrix(data, indices, indptr, shape):
    """The CSR matrix of rows whose entries are ``indices`` (sorted within each row: ``indptr``) with
    values ``data``, the values of an index a row has twice summed: made from those arrays where no
    row has one twice (nearly always: 3 of 200 raters a paper, 1M ratings, 10 ms less than from
    (row, column) pairs), else from the pairs."""
    twice = indices[1:] == indices[:-1]
    ends = indptr[1:-1]
    twice[ends[(ends > 0) & (ends < indices.size)] - 1] = False   # (an entry and the next row's first)
    if not twice.any():
        return sparse.csr_matrix((data, indices, indptr), shape=shape)
    m = sparse.csr_matrix((data, (np.repeat(np.arange(shape[0]), np.diff(indptr)), indices)), shape=shape)
    m.sum_duplicates()
    return m


def _weighted_copy(cells_T):
    """For :func:`_row_weighted`: a copy of ``cells_T`` (CSC, a column a pattern) and each entry's column,
    made once with the rows they are of (None where ``cells_T`` is dense)."""
    if isinstance(cells_T, np.ndarray):
        return None
    col = np.repeat(np.arange(cells_T.shape[1], dtype=np.int32), np.diff(cells_T.indptr))
    return cells_T.copy(), col


def _row_weighted(cells_T, L, weight, weighted):
    """``cells_T @ (weight[:, None] * L)``: the patterns' rows of ``L`` weighted and summed into their
    cells.  Where ``cells_T`` is sparse the weights go into the entries of its copy ``weighted``
    (:func:`_weighted_copy`: a multiply an entry, not one a pattern and node, 8% of a gradient at 3
    ratings a paper; nor a sparse matrix made a block, its entries checked, 0.08 of the 0.66 ms of a
    block's product here), the same numbers to the bit while a pattern's count of a cell is a power of
    two (1, nearly always)."""
    if weighted is None:
        return cells_T @ (L * weight[:, None])
    W, col = weighted
    np.multiply(cells_T.data, np.take(weight, col), out=W.data)
    return W @ L


def _shifted_exp(cells, tab: _Shifted, qa, qb, z, runs=None):
    """``L = exp(cells @ T)`` on nodes qa..qb-1 (patterns x nodes: each pattern's likelihood at the
    nodes over ``exp(top - wmax)``), ``top`` and the sums over the nodes of ``L w``, ``L w z`` and
    ``L w z^2`` (patterns x 3: one product, the weights ``w`` in it rather than in a pass over
    ``L``).  Each row is shifted by a bound of its largest term, ``top = cells @ tmax + wmax`` (the sum
    of its cells' largest, + the largest log weight: taken from the tables, not from the array), so
    that nothing overflows; a row so far below its bound that its sum underflows (many ratings a paper
    whose cells are largest at different nodes) is shifted by its own largest term.  Terms below
    FLOOR are clipped there (``tab.clip``).

    ``runs`` (:meth:`GridEngine._product_runs`): the rows of patterns of few ratings are the products of
    their ratings' rows of ``E = exp(T)`` (exp'd once an evaluation: a gather and a multiply a rating
    where the exp form takes an exp a pattern and node), the others ``exp(cells @ T)``.  A product is
    taken only where none of its factors is below exp(FLOOR / n) on these nodes (n ratings:
    :meth:`_Shifted.product_max`; else the exp of the sum of the same rows of ``T``), so every product is
    at least exp(FLOOR): no term is clipped (the product is exp(cells @ T) to rounding, a few units in
    the last place) and none is subnormal (slow on x86), nor any partial product, each at least the
    whole.  (A floor of the factors at exp(FLOOR / n) would not do: a floored factor would raise its term
    to up to exp(FLOOR / n) times the bound, where a row this keeps sums to as little as 1e-200 of it; a
    row of a lenient rater's 0 and a harsh one's top score, each factor near 1 at its end of the grid and
    below exp(FLOOR / n) at the other, would be mostly floor.)  In a fit the least log factor is ~75 on
    the whole grid (3 of 200 raters a paper, 1M ratings; 30-107 in its samples' fits): products up to 9
    ratings a pattern there, more on a window's nodes."""
    top = cells @ tab.tmax + tab.wmax
    if runs is None:
        L = cells @ tab.T[:, qa:qb]
        _exp_terms(L, tab)
    else:
        L = np.empty((cells.shape[0], qb - qa))
        most = tab.product_max(qa, qb)
        for r0, r1, Rt, sub in runs:
            out = L[r0:r1]
            if Rt is None:
                out[...] = sub @ tab.T[:, qa:qb]
                _exp_terms(out, tab)
                continue
            product = Rt.shape[0] <= most
            _gathered(tab.E[:, qa:qb] if product else tab.T[:, qa:qb], Rt, out, tab.scratch(out.size),
                      np.multiply if product else np.add)
            if not product:
                _exp_terms(out, tab)
    w = tab.w[qa:qb]
    Z = np.stack([w, w * z, w * z * z])
    S = (Z @ L.T).T   # (patterns x 3: BLAS's product of a 3-row matrix, a third faster than L times 3 columns)
    low = np.flatnonzero(~(S[:, 0] > 1e-200))
    if low.size:
        R = cells[low] @ tab.T[:, qa:qb]
        shift = (R + tab.lw[qa:qb]).max(axis=1)
        top[low] += shift
        R -= shift[:, None]
        np.maximum(R, FLOOR, out=R)
        np.exp(R, out=R)
        L[low], S[low] = R, R @ Z.T
    return L, top, S


def _exp_terms(X, tab: _Shifted):
    """``exp(X)`` in place, ``X`` (patterns x nodes) first clipped at FLOOR where it can reach below."""
    if tab.clip:
        np.maximum(X, FLOOR, out=X)
    np.exp(X, out=X)


def _gathered(A, Rt, out, buf, op):
    """``out`` = ``op`` (np.multiply or np.add) over j of ``A[Rt[j]]`` (rows of ``A``; ``buf`` a scratch of
    ``out.size``).  np.take with mode="clip" (the indices are in range): with its default, "raise", it
    writes into a buffer and copies that into ``out`` (twice the time)."""
    np.take(A, Rt[0], axis=0, mode="clip", out=out)
    if Rt.shape[0] > 1:
        b = buf.reshape(out.shape)
        for r in Rt[1:]:
            np.take(A, r, axis=0, mode="clip", out=b)
            op(out, b, out=out)


def paper_patterns(paper, cell, n_cells, in_order=False, K=None):
    """The papers' distinct patterns of ratings (each rating a cell in 0..n_cells-1): ``(papers,
    pattern, groups)``, the papers with ratings (ascending), each one's pattern, and per number n of
    ratings a pattern has (ascending) ``(R, cnt)``: its patterns' cells (patterns x n; they are
    numbered on from the previous group's) and how many papers have each.  A paper's cells are
    sorted (papers with the same ratings in any order share a pattern), or with ``in_order`` kept in
    the order the ratings come: a sum over a paper's ratings (``np.bincount``) then adds the same
    numbers in the same order for every paper of a pattern, so what is solved once per pattern is
    the same to the bit as solved per paper (:func:`.quality.quality_by_pattern`).

    With ``K`` (cells ``item * K + score``), papers with the same items (as often) and the same total
    score share a pattern, a *class*, whose cells ``R`` are those of its first paper (the Rasch
    models' sufficient statistic: :class:`GridEngine`).

    The papers' cells are taken a column (a paper's i-th rating) at a time: a group's rows are sorted
    by :func:`_sort_rows` and its items and totals summed column by column (numpy's sort and sums along
    rows of 2-3 entries cost a call a row: 3 of 200 raters a paper, 1M ratings, 26-33 ms here where 67)."""
    p, c = by_paper(paper, cell)
    start = np.flatnonzero(np.r_[True, p[1:] != p[:-1]]) if p.size else np.zeros(0, np.int64)   # (p sorted)
    papers, length = p[start], np.diff(np.r_[start, p.size])
    lengths = np.flatnonzero(np.bincount(length))
    # the cells (and with K the items and totals) as 32-bit integers where they fit, as scipy's sparse
    # matrices take them (:meth:`GridEngine._patterns`): half the memory of int64 copies of every rating
    narrow = np.int32 if max(n_cells, int(lengths.max(initial=0)) * (K or 1)) <= np.iinfo(np.int32).max else np.int64
    pattern = np.empty(papers.size, dtype=np.int64)
    groups = []
    n_pat = 0
    for n in lengths:
        if lengths.size == 1:   # every paper has n ratings: its cells are c's rows
            sel = slice(None)
            Rt = c.reshape(-1, n).T.astype(narrow)   # (a copy)
        else:
            sel = np.flatnonzero(length == n)
            Rt = c[start[sel] + np.arange(n)[:, None]].astype(narrow, copy=False)   # (n x papers: a row a column of R)
        if not in_order:
            _sort_rows(Rt)
        R = Rt.T   # (papers x n, its columns contiguous)
        if K is None:
            first, inv, cnt = unique_rows(R, n_cells)
        else:   # (sorted cells: sorted items)
            X = np.empty((n + 1, R.shape[0]), dtype=narrow)
            np.floor_divide(Rt, K, out=X[:n])
            tot, buf = X[n], np.empty(R.shape[0], dtype=narrow)   # the total score, sum_j Rt[j] - K X[j], a row
            tot[...] = 0                                          # at a time (numpy's sums along axis 0 of a few
            for j in range(n):                                    # rows: 10.8 ms at 3 of 200 raters a paper, 1M
                np.multiply(X[j], K, out=buf)                     # ratings, where this takes 0.8)
                np.subtract(Rt[j], buf, out=buf)
                tot += buf
            first, inv, cnt = unique_rows(X.T, [n_cells // K] * n + [n * (K - 1) + 1])
            X = tot = buf = None
        pattern[sel] = n_pat + inv
        groups.append((np.take(np.ascontiguousarray(R), first, axis=0), cnt))   # (np.take: 3 times faster than R[first])
        n_pat += first.size
    return papers, pattern, groups


def _sort_rows(Rt):
    """Sort ``Rt.T``'s rows in place (``Rt``: a row a column): for a few columns by a network of
    compare-exchanges of whole columns (odd-even transposition), else by numpy's row sort."""
    n = Rt.shape[0]
    if n > SORT_NETWORK:
        Rt.T.sort(axis=1)
        return
    lo = np.empty(Rt.shape[1], dtype=Rt.dtype)
    for r in range(n):
        for i in range(r % 2, n - 1, 2):
            np.minimum(Rt[i], Rt[i + 1], out=lo)
            np.maximum(Rt[i], Rt[i + 1], out=Rt[i + 1])
            Rt[i] = lo


def rating_patterns(paper, rater, score):
    """The papers' distinct patterns of ratings, the same raters giving the same scores in the same
    order (:func:`paper_patterns` with ``in_order``): ``(papers, pattern, (pattern, rater,
    score))``, the papers with ratings, each one's pattern and the patterns' ratings (each pattern's
    in its papers' order), as :attr:`.mml.MMLFit.patterns` gives them for :func:`.quality.quality_by_pattern`."""
    paper, rater = np.asarray(paper, dtype=np.int64), np.asarray(rater, dtype=np.int64)
    score = np.asarray(score, dtype=np.int64)
    lo = int(score.min(initial=0))
    S = int(score.max(initial=0)) - lo + 1
    papers, pattern, groups = paper_patterns(paper, rater * S + (score - lo), (int(rater.max(initial=-1)) + 1) * S,
                                             in_order=True)
    pat, cells, _ = pattern_cells(groups)
    return papers, pattern, (pat, cells // S, cells % S + lo)


def pattern_cells(groups):
    """``(pattern, cell, count)`` of :func:`paper_patterns`' groups: each pattern's cells a row each
    (pattern numbers on from group to group) and how many papers have each pattern."""
    pat, cell, cnt, n_pat = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], 0
    for R, c in groups:
        pat.append(np.repeat(np.arange(n_pat, n_pat + R.shape[0]), R.shape[1]))
        cell.append(R.ravel())
        cnt.append(c)
        n_pat += R.shape[0]
    return np.concatenate(pat), np.concatenate(cell), np.concatenate(cnt)


def unique_rows(R, base):
    """Distinct rows of the integer matrix ``R`` (entries in 0..base-1; ``base`` one for every column
    or one a column): (index of each one's first row, each row's distinct row, counts), numbered in
    the rows' lexicographic order as ``np.unique(R, axis=0)``.  Consecutive columns are packed into
    integer keys of at most 62 bits (which keeps that order), sorted by :func:`_radix_argsort`
    (``np.unique``'s row sort took 0.9 s for a 1M-rating rubric's 8 cells a paper; numpy's sort of
    one key 23 ms for 3 of 200 raters' 333k papers, where the radix passes take 8)."""
    n = R.shape[1]
    bases = [max(int(b), 1) for b in np.broadcast_to(base, (n,))]
    cols, sizes = [], []   # the columns of each key and its number of values
    for k, b in enumerate(bases):
        if cols and sizes[-1] * b <= 1 << 62:
            cols[-1].append(k)
            sizes[-1] *= b
        else:
            cols.append([k])
            sizes.append(b)
    keys = np.zeros((R.shape[0], len(cols)), dtype=np.int64)
    for j, ks in enumerate(cols):
        for k in ks:
            keys[:, j] = keys[:, j] * bases[k] + R[:, k]
    if keys.shape[1] == 1 and sizes[0] <= 4 * R.shape[0]:   # (a table: 2 of 200 raters a paper)
        _, inv = distinct_keys(keys[:, 0], sizes[0])
        first = np.full(int(inv.max(initial=-1)) + 1, R.shape[0])
        np.minimum.at(first, inv, np.arange(R.shape[0]))
        return first, inv, np.bincount(inv, minlength=first.size)
    return sorted_unique_rows(keys, _radix_argsort(keys, sizes))


def _radix_argsort(keys, sizes):
    """The stable (lexicographic) order of the rows of ``keys`` (non-negative integers, column j's
    below ``sizes[j]``), as ``np.lexsort(keys.T[::-1])``: least significant digit first, 16 bits a
    pass, each pass numpy's stable argsort of 16-bit integers (a radix sort, linear: a third of the
    time of a comparison sort at 333k keys)."""
    perm = None
    for j in range(keys.shape[1] - 1, -1, -1):
        col = keys[:, j]
        for shift in range(0, max(int(sizes[j] - 1).bit_length(), 1), 16):
            digit = ((col if perm is None else col[perm]) >> shift).astype(np.uint16)   # (the low 16 bits)
            order = np.argsort(digit, kind="stable")
            perm = order if perm is None else perm[order]
    return np.arange(keys.shape[0]) if perm is None else perm


def sorted_unique_rows(R, order=None):
    """:func:`unique_rows` of a matrix ``R`` of any numbers (integers, floats: -0.0 is 0.0 as for
    ``np.unique``) by one ``lexsort``, column by column (or ``order``, that lexicographic order, stable,
    already known): (index of each distinct row's first, each row's distinct row, counts), the distinct
    rows in lexicographic order."""
    if order is None:
        order = np.lexsort(R.T[::-1])   # stable: each distinct row's first is its smallest index
    Rs = np.take(R, order, axis=0)   # (rows in a random order: np.take, 3 times faster than R[order])
    differ = (Rs[1:, 0] != Rs[:-1, 0]) if R.shape[1] == 1 else (Rs[1:] != Rs[:-1]).any(axis=1)
    new = np.r_[True, differ] if R.shape[0] else np.zeros(0, dtype=bool)
    inv = np.empty(R.shape[0], dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    return order[new], inv, np.diff(np.r_[starts, R.shape[0]])


def distinct_keys(key, size, inverse=True):
    """``np.unique(key, return_inverse=True)`` of integer keys in 0..size-1, by a table of ``size``
    where that is not much longer than ``key`` (no sort: the (pattern, item pair) entries of a
    1M-rating rubric are 4.5M), else by :func:`_radix_argsort`; not ``inverse``: the distinct keys alone."""
    if size > 4 * key.size:
        order = _radix_argsort(key[:, None], [size])
        ks = key[order]
        new = np.r_[True, ks[1:] != ks[:-1]] if key.size else np.zeros(0, dtype=bool)
        if not inverse:
            return ks[new]
        inv = np.empty(key.size, dtype=np.int64)
        inv[order] = np.cumsum(new) - 1
        return ks[new], inv
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    if not inverse:
        return np.flatnonzero(seen)
    return np.flatnonzero(seen), (np.cumsum(seen) - 1)[key]


def _entry_pairs(indptr, r0, r1):
    """The pairs of entries a <= b within each row r0..r1 of a CSR matrix: (ia, ib, row)."""
    n = np.diff(indptr[r0:r1 + 1])
    offs = indptr[r0:r1]
    a_list, b_list, p_list = [], [], []
    for d in range(int(n.max()) if n.size else 0):
        ok = n > d
        cnt = n[ok] - d
        ia = np.repeat(offs[ok], cnt) + _ranges(cnt)
        a_list.append(ia)
        b_list.append(ia + d)
        p_list.append(np.repeat(np.flatnonzero(ok) + r0, cnt))
    cat = (lambda x: np.concatenate(x) if x else np.zeros(0, np.int64))
    return cat(a_list), cat(b_list), cat(p_list)


def _ranges(cnt):
    """Concatenated aranges 0..cnt[i]-1."""
    if cnt.size == 0:
        return np.zeros(0, np.int64)
    tot = int(cnt.sum())
    out = np.ones(tot, dtype=np.int64)
    out[0] = 0
    ends = np.cumsum(cnt)[:-1]
    out[ends] = 1 - cnt[:-1]
    return np.cumsum(out)


def _item_batches(order, bounds, ent_p):
    """The (pattern, item) entries of a block (``order``: the entries by item, item u's order[bounds[u]:bounds[u +
    1]]; ``ent_p`` each one's pattern) in batches of consecutive items, each item's entries padded to the
    batch's most (``n_max``), at most about ITEM_BATCH rows a batch: [(items, n_max, pats, r0)], ``pats`` the
    patterns of the batch's rows (padding: pattern 0) and r0 where its rows start among every batch's, and
    where each entry's row is (``at``).  The posterior means of a batch's entries are one stacked product
    (items x n_max x nodes times items x nodes x M: :meth:`_Louis.add_block`), where an item at a time took two
    numpy calls an item (200 items, 10 chunks of the windows, at each of a sample's informations: 24 -> 13 ms
    at 21 of 200 raters a paper, 1M ratings)."""
    cnt = np.diff(bounds)
    used = np.flatnonzero(cnt)
    n = cnt[used].tolist()
    at = np.empty(order.size, dtype=np.int64)
    batches, j0, r0 = [], 0, 0
    while j0 < used.size:
        j1, n_max = j0 + 1, n[j0]
        while j1 < used.size and (j1 + 1 - j0) * max(n_max, n[j1]) <= ITEM_BATCH:
            n_max = max(n_max, n[j1])
            j1 += 1
        items = used[j0:j1]
        e0, e1 = bounds[items[0]], bounds[items[-1] + 1]
        row = np.repeat(np.arange(items.size) * n_max - bounds[items], cnt[items]) + np.arange(e0, e1)
        pats = np.zeros(items.size * n_max, dtype=np.int64)
        pats[row] = ent_p[order[e0:e1]]
        at[order[e0:e1]] = r0 + row
        batches.append((items, n_max, pats, r0))
        r0 += pats.size
        j0 = j1
    return batches, at


class _BlockStatic:
    """Patterns ``rows`` (a block a..b, a slice, or a chunk of the windows): their rows of ``items``, total
    scores, distinct ``designs`` and ``designs_T`` (those designs x patterns: 1 at each pattern's design);
    with the items sparse, their (pattern, item) entries (``ent_at``: where in ``items``' entries) grouped
    by item (``item_order``: the entries by item, in the order of the patterns, and each item's bounds
    there) and sums over entries (``item_sum``: per item, weight mult x count).  Nothing here grows with the pairs of items a
    pattern has (those are enumerated an item at a time, :meth:`_Louis._mean_by_item`, or a chunk of
    patterns at a time, :meth:`entry_chunks`), but for at most PAIR_ENTRIES of them."""

    def __init__(self, eng: GridEngine, rows):
        it = eng.items[rows]
        n_rows = it.shape[0]
        self.rows, self.total = rows, eng.total[rows]
        self.designs, at = distinct_keys(eng.design[rows], eng.design_first.size)
        self.designs_T = sparse.csr_matrix((np.ones(n_rows), (at.ravel(), np.arange(n_rows))),
                                           shape=(self.designs.size, n_rows))
        if isinstance(eng.items_dense, np.ndarray):   # dense: the mean parts by BLAS (_Louis._add_dense)
            self.items = eng.items_dense[rows]
            self.items_T = self.items.T
            return
        self.items, self.items_T = it, it.T.tocsr()
        n = np.diff(it.indptr)
        self.ent_p = np.repeat(np.arange(n_rows), n)
        if isinstance(rows, slice):
            self.ent_at = slice(eng.items.indptr[rows.start], eng.items.indptr[rows.stop])
        else:
            self.ent_at = np.repeat(eng.items.indptr[rows], n) + _ranges(n)
        ent_u = it.indices
        order = _radix_argsort(ent_u[:, None], [eng.U])   # (stable, linear)
        bounds = np.searchsorted(ent_u[order], np.arange(eng.U + 1))
        # the entries by item (item u's: order[bounds[u]:bounds[u + 1]]), and in batches of items for the
        # posterior means of :meth:`_Louis.add_block`
        self.item_order = order, bounds
        self.m = eng.mult[rows]
        self.by_item_mean = ent_u.size >= BY_ITEM_FROM * n_rows
        self._entry_chunks = self._item_entries = None

    @cached_property
    def item_batches(self):
        """The entries in batches of items, and each one's row among theirs (:func:`_item_batches`)."""
        return _item_batches(*self.item_order, self.ent_p)

    @property
    def item_sum(self):
        """Per item, the sums over its entries with weights mult x count (items x entries, sparse)."""
        if self.__dict__.get("_item_sum") is None:
            it, ne = self.items, self.items.nnz
            self._item_sum = sparse.csr_matrix((self.m[self.ent_p] * it.data, (it.indices, np.arange(ne))),
                                               shape=(self.items_T.shape[0], ne))
        return self._item_sum

    def entry_chunks(self, eng: GridEngine, m):
        """The (pattern, a <= b) pairs of entries of the block's patterns (``m``: their weights), a
        chunk of patterns at a time (at most ENTRY_CHUNK pairs), sorted by item pair and cut into runs
        of item pairs q0..q1-1 of about ENTRY_RUN pairs of entries: [(q0, q1, ia, ib, S)], the entries
        and S (the run's item pairs x its pairs of entries: m_p c_pa c_pb in each one's item pair; one
        column a pair of entries, so made without sorting).  Kept where they are at most PAIR_ENTRIES (few ratings a
        pattern: 3 a pattern at 2 raters a paper), else made again at each information."""
        if self._entry_chunks is not None:
            return self._entry_chunks
        it = self.items
        indptr, c = it.indptr, it.data
        n = np.diff(indptr)
        cum = np.cumsum(n * (n + 1) // 2)
        cuts = np.unique(np.r_[0, np.searchsorted(cum, np.arange(ENTRY_CHUNK, cum[-1] if cum.size else 0,
                                                                     ENTRY_CHUNK), side="right"), n.size])

        def chunks():
            for r0, r1 in zip(cuts[:-1], cuts[1:]):
                ia, ib, pp = _entry_pairs(indptr, r0, r1)
                pair = eng.pair_index(it.indices[ia], it.indices[ib])
                o = _radix_argsort(pair[:, None], [eng.pair_u.size])   # by item pair (stable): each pair's sum in one place
                ia, ib, pp = ia[o], ib[o], pp[o]
                w = m[pp] * c[ia] * c[ib]
                ptr = np.r_[0, np.cumsum(np.bincount(pair, minlength=eng.pair_u.size))]
                runs = np.unique(np.r_[0, np.searchsorted(ptr, np.arange(ENTRY_RUN, ia.size, ENTRY_RUN)), ptr.size - 1])
                for q0, q1 in zip(runs[:-1], runs[1:]):   # item pairs q0..q1-1: their entries e0..e1-1
                    e0, e1 = ptr[q0], ptr[q1]
                    yield q0, q1, ia[e0:e1], ib[e0:e1], sparse.csr_matrix(
                        (w[e0:e1], np.arange(e1 - e0), ptr[q0:q1 + 1] - e0), shape=(q1 - q0, e1 - e0))
        if cum.size and cum[-1] > PAIR_ENTRIES:
            return chunks()
        self._entry_chunks = list(chunks())
        return self._entry_chunks

    def item_entries(self, eng: GridEngine, m):
        """Per group of items u0..u1-1 of the block's patterns (at most about ITEM_GROUP pairs of entries
        a group), their entries ``idx`` (by item), their weights ``w`` (m c_u; ``m``: the patterns'), their
        patterns' entries v >= u (a pattern's items are sorted: those after u's), ``ent``, with their
        counts ``c_ent`` (None: all 1, as nearly always), and the structure (each pair of entries' first row,
        column pointers, shape) of the sparse matrix G' of those (the group's item pairs x M rows (pair, l), its
        entries: a column an entry, its pattern's entries' M rows each; :meth:`_Louis._mean_by_item` makes the rows
        and puts in the numbers): [(s0, s1, idx, w, ent, c_ent, G')], s0..s1-1 the group's item pairs.  Kept where
        they are at most PAIR_ENTRIES (a sample's), else made again at each information."""
        if self._item_entries is not None:
            return self._item_entries
        it = self.items
        M = eng.M
        order, bounds = self.item_order
        cnt_all = it.indptr[self.ent_p[order] + 1] - order   # (each entry's entries v >= u, by item)
        cum = np.r_[0, np.cumsum(cnt_all)]
        # items a group at a time, at most about ITEM_GROUP pairs of entries a group (made in one go)
        cuts = np.unique(np.r_[0, np.searchsorted(cum[bounds], np.arange(ITEM_GROUP, cum[-1], ITEM_GROUP)), eng.U])
        ones = bool((it.data == 1).all())   # (every item once a pattern, as nearly always)

        def items():
            for g0, g1 in zip(cuts[:-1], cuts[1:]):
                e0, e1 = bounds[g0], bounds[g1]
                idx, cnt = order[e0:e1], cnt_all[e0:e1]
                ent = np.repeat(idx, cnt) + _ranges(cnt)
                s0, s1 = eng.pair_bounds[g0], eng.pair_bounds[g1]
                col = eng.pair_index(np.repeat(it.indices[idx], cnt), it.indices[ent]) - s0
                G_T = ((col * M).astype(np.int32), (np.r_[0, np.cumsum(cnt)] * M).astype(np.int32),   # (scipy's
                       ((s1 - s0) * M, e1 - e0))                                                     # index type)
                c_ent = None if ones else it.data[ent]
                yield s0, s1, idx, m[self.ent_p[idx]] * it.data[idx], ent, None if ones or (c_ent == 1).all() else c_ent, G_T
        n = np.diff(it.indptr)
        if float(n @ (n + 1)) / 2 > PAIR_ENTRIES:
            return items()
        self._item_entries = list(items())
        return self._item_entries


class _Louis:
    """Accumulates, block by block of patterns, the sums behind the observed information."""

    def __init__(self, eng: GridEngine, P, E, sigma):
        self.eng, self.P, self.E, self.sigma = eng, P, E, sigma
        U, Q, M = eng.U, eng.Q, eng.M
        npair = eng.pair_u.size
        self.Cd = np.zeros((eng.design_first.size, Q))   # per design: sum_p pi_pq m_p
        self.mean_pairs = np.zeros((npair, M * M))   # sum_p m_p c_pu c_pv Pbar_pu Pbar_pv'
        self.W = np.zeros((U, Q))                    # sum_p pi_pq m_p c_pu S_pq (the log sigma score)
        self.mean_us = np.zeros((U, M))              # sum_p m_p c_pu Pbar_pu Sbar_p
        self.ss = 0.0                                 # sum_p m_p (E_pi[S^2] - Sbar^2)
        self.Pk = np.ascontiguousarray(P[:, :, 1:])     # (U, Q, M)
        self.bar = self.Sbar = self.groups = self.PkT = None
        self._bufs = {}   # (scratch arrays through the information: :func:`_scratch`)

    def by_windows(self, windows):
        """The blocks come as the windows' chunks (:meth:`GridEngine._windows`), each on its nodes: the
        posterior means of the (pattern, item) entries (each chunk's where :meth:`GridEngine.bar_layout` puts
        them) and of the log sigma score are gathered, and the mean parts made from them by blocks of patterns
        (:meth:`add_means`); the node part takes each group of designs on its nodes
        (:meth:`GridEngine.design_groups`)."""
        eng = self.eng
        if not isinstance(eng.items_dense, np.ndarray):
            self.bar_at, rows = eng.bar_layout(windows)
            self.bar, self.Sbar = np.empty((rows, eng.M)), np.empty(eng.N)
        self.groups = eng.design_groups()

    def add_block(self, st, pi, pim, m, qa, qb):
        """The parts of patterns ``st`` (:class:`_BlockStatic`) on nodes qa..qb-1 (their posteriors ``pi``
        there, ``pim`` times their weights ``m``)."""
        eng, sigma, M = self.eng, self.sigma, self.eng.M
        whole = (qa, qb) == (0, eng.Q)
        z, E = (eng.z, self.E) if whole else (eng.z[qa:qb], self.E[:, qa:qb])
        if st.designs.size == self.Cd.shape[0] and whole:   # (every design: no gather and scatter of its rows)
            self.Cd += st.designs_T @ pim
        else:
            self.Cd[st.designs, qa:qb] += st.designs_T @ pim
        # the log sigma score at each node: S = sigma z D, D = total - sum_u c_u E_u
        D = st.items @ E                              # (patterns, nodes)
        np.subtract(st.total[:, None], D, out=D)
        Y = pi * D
        sz = sigma * z
        Sbar = Y @ sz
        D *= Y   # (Y D in D's place: no third patterns x nodes array, its pages mapped afresh at each information)
        self.ss += float(m @ (D @ (sz * sz) - Sbar * Sbar))
        Y *= m[:, None]
        if whole:
            self.W += (st.items_T @ Y) * sz
        else:
            self.W[:, qa:qb] += (st.items_T @ Y) * sz
        if isinstance(st.items, np.ndarray):   # many items a pattern (a rubric): all in BLAS products
            self._add_dense(st, pi, m, Sbar, qa, qb)
            return
        # posterior means of each (pattern, item) entry: Pbar (M), a batch of items in one stacked product
        # (:func:`_item_batches`; np.take: a gather of rows several times faster than indexing), then in the
        # entries' order
        batches, at = st.item_batches
        if self.bar is not None:   # (the chunk's rows of every chunk's: :meth:`GridEngine.bar_layout`)
            out = self.bar[st.bar_rows[0]:st.bar_rows[1]]
        else:
            rows = batches[-1][3] + batches[-1][2].size if batches else 0
            out = _scratch(self._bufs, "bar", rows * M).reshape(rows, M)
        for items, n_max, pats, r0 in batches:
            G = np.take(pi, pats, axis=0, mode="clip",   # (in range; "raise" would buffer and copy)
                        out=_scratch(self._bufs, "pi", pats.size * (qb - qa)).reshape(pats.size, qb - qa))
            np.matmul(G.reshape(items.size, n_max, qb - qa), self.Pk[items, qa:qb],
                      out=out[r0:r0 + pats.size].reshape(items.size, n_max, M))
        if self.bar is not None:   # (the mean parts once every chunk's are in: add_means)
            self.Sbar[st.rows] = Sbar
            return
        self._add_means(st, np.take(out, at, axis=0), Sbar, m)

    def add_means(self):
        """The mean parts from the gathered posterior means (:meth:`by_windows`), by blocks of patterns."""
        if self.bar is None:
            return
        eng = self.eng
        for a in range(0, eng.N, BLOCK):
            b = min(eng.N, a + BLOCK)
            st = eng.block_static(a, b)
            self._add_means(st, np.take(self.bar, self.bar_at[st.ent_at], axis=0), self.Sbar[a:b], eng.mult[a:b])

    def _add_means(self, st, bar, Sbar, m):
        self.mean_us += st.item_sum @ (bar * Sbar[st.ent_p][:, None])
        if st.by_item_mean:
            self._mean_by_item(st, bar, m)
        else:
            self._mean_by_entries(st, bar, m)

    def _mean_by_entries(self, st, bar, m):
        """``mean_pairs`` += sum_p m_p c_pu c_pv Pbar_pu Pbar_pv' over the item pairs u <= v of the
        block's patterns: the outer products of their (pattern, a <= b) pairs of entries, a chunk at
        a time (:meth:`_BlockStatic.entry_chunks`), summed into their item pairs by a sparse product."""
        M = self.eng.M
        for q0, q1, ia, ib, S in st.entry_chunks(self.eng, m):
            X = np.einsum("ek,el->ekl", np.take(bar, ia, axis=0), np.take(bar, ib, axis=0))   # (outer products)
            self.mean_pairs[q0:q1] += S @ X.reshape(-1, M * M)

    def _mean_by_item(self, st, bar, m):
        """As :meth:`_mean_by_entries`, by items (for many items a pattern, where the outer products of
        every pair of entries would be a large array to write and read): each (pattern, item u) entry's
        row (m c_u Pbar_u) against a sparse matrix of its pattern's entries v >= u (c_pv Pbar_pv, rows
        (pair, l)), a group of items in one product (:meth:`_BlockStatic.item_entries`); memory: the
        group's pairs of entries times M."""
        M = self.eng.M
        for s0, s1, idx, w, ent, c_ent, G_T in st.item_entries(self.eng, m):
            A = np.take(bar, idx, axis=0) * w[:, None]              # (the group's entries, M)
            first, ptr, shape = G_T
            # each pair of entries' M rows (pair, l), in a scratch array (kept, M times the pairs of entries were 23
            # MiB of a sample's at 21 of 200 raters a paper, mapped page by page at its first information)
            rows = _scratch(self._bufs, "rows", first.size * M, np.int32).reshape(first.size, M)
            for k in range(M):   # (a column at a time: numpy's broadcast of M = 5 a row took 3 times as long)
                np.add(first, k, out=rows[:, k])
            rows = rows.ravel()
            # (the entries v >= u of their patterns, M: a few MiB, in one array through the information)
            B = np.take(bar, ent, axis=0, mode="clip", out=_scratch(self._bufs, "B", ent.size * M).reshape(ent.size, M))
            if c_ent is not None:
                B *= c_ent[:, None]
            G_T = sparse.csc_matrix((B.ravel(), rows, ptr), shape=shape)
            res = (G_T @ A).reshape(s1 - s0, M, M)                  # [pair, l, k]
            self.mean_pairs[s0:s1] += res.transpose(0, 2, 1).reshape(s1 - s0, M * M)

    def _add_dense(self, st, pi, m, Sbar, qa, qb):
        """The mean parts with the patterns' items dense: Y = [c_pu Pbar_pu] (patterns x U*M) and Y' m Y."""
        eng, M, U = self.eng, self.eng.M, self.eng.U
        if self.PkT is None:
            self.PkT = self.Pk.transpose(1, 0, 2).reshape(eng.Q, U * M)   # (a copy)
        bar = (pi @ self.PkT[qa:qb]).reshape(-1, U, M)
        Y = (st.items[:, :, None] * bar).reshape(-1, U * M)
        G = (Y.T @ (Y * m[:, None])).reshape(U, M, U, M)
        self.mean_pairs += G[eng.pair_u, :, eng.pair_v, :].reshape(-1, M * M)
        self.mean_us += (Y.T @ (m * Sbar)).reshape(U, M)

    def _node_pairs(self, Pk):
        """Per item pair (u, v): sum_q C_uvq Pk[u, q] Pk[v, q]' with C_uvq = sum_p pi_pq m_p c_pu c_pv
        (= sum over designs of their weights c_u c_v times ``Cd``: :meth:`GridEngine.pair_designs`), one
        sparse product a run of items and one BLAS product per item u."""
        eng, Q, M = self.eng, self.eng.Q, self.eng.M
        pu, pv = eng.pair_u, eng.pair_v
        if eng.design_blocks is not None:   # few designs: (c Pk)' diag(Cd) (c Pk) over each design's items
            PkT = np.ascontiguousarray(Pk.transpose(1, 0, 2))   # (Q, U, M)
            cov = np.zeros((pu.size, M, M))
            for d, (items, c, a, b, pair) in enumerate(eng.design_blocks):
                Z = (PkT[:, items, :] * c[None, :, None]).reshape(Q, -1)
                G = ((Z * self.Cd[d][:, None]).T @ Z).reshape(items.size, M, items.size, M)
                cov[pair] += G[a, :, b, :]
            return cov
        cov = np.empty((pu.size, M, M))
        bounds = eng.pair_bounds
        PkQ = np.ascontiguousarray(Pk.transpose(1, 2, 0))   # (Q, M, U): the pairs' items innermost
        spans = self._design_spans()
        for u0, u1, W in eng.pair_designs() if spans is None else eng.pair_designs_grouped():
            if spans is None:
                C_run = W @ self.Cd                               # C_uvq of the run's pairs (pairs x Q)
            else:   # (each group of designs on the nodes where its posteriors are)
                C_run = np.zeros((bounds[u1] - bounds[u0], Q))
                for (Cg, qa, qb), Wg in zip(spans, W):
                    if Wg is not None and qb > qa:
                        C_run[:, qa:qb] += Wg @ Cg
            for u in range(u0, u1):
                s0, s1 = bounds[u], bounds[u + 1]
                if s1 == s0:
                    continue
                C = C_run[s0 - bounds[u0]:s1 - bounds[u0]]
                v0, v1 = pv[s0], pv[s1 - 1] + 1   # (u's pairs: every item from v0 to v1 - 1, or some of them)
                Pv = PkQ[:, :, v0:v1] if v1 - v0 == s1 - s0 else np.take(PkQ, pv[s0:s1], axis=2)
                B = Pv * C.T[:, None, :]                                 # (Q, M, pairs of u)
                cov[s0:s1] = (Pk[u].T @ B.reshape(Q, -1)).reshape(M, M, s1 - s0).transpose(2, 0, 1)
        return cov

    def _design_spans(self):
        """Per group of designs (:meth:`GridEngine.design_groups`, where the blocks came as the windows'
        chunks): its rows of ``Cd`` on the nodes qa..qb-1 where one is above SPAN_FLOOR of their largest, ``(Cd_g, qa,
        qb)``; else None."""
        if self.groups is None:
            return None
        perm, bounds = self.groups
        spans = []
        for g0, g1 in zip(bounds[:-1], bounds[1:]):
            C = self.Cd[g0:g1] if perm is None else self.Cd[perm[g0:g1]]
            top = C.max(axis=0, initial=0.0)   # (the nodes where one of the group's posteriors is above SPAN_FLOOR of its largest)
            on = np.flatnonzero(top > SPAN_FLOOR * top.max(initial=0.0))
            qa, qb = (int(on[0]), int(on[-1]) + 1) if on.size else (0, 0)
            spans.append((np.ascontiguousarray(C[:, qa:qb]), qa, qb))
        return spans

    def finish(self, Nuq, resid):
        """The Louis Hessian and the complete-data Hessian, sparse, in (tau[:, 1:], log sigma)."""
        eng, P, E, sigma, z = self.eng, self.P, self.E, self.sigma, self.eng.z
        U, M = eng.U, eng.M
        Pk = P[:, :, 1:]                                        # (U, Q, M)
        k = np.arange(1, M + 1, dtype=np.float64)
        Hem = complete_data_hessian(P, E, Nuq, sigma, z)
        em_blocks = Hem.blocks
        # tau-s: sum_q N sigma z P_k (k - E)
        em_ts = sigma * np.einsum("uq,q,uqk->uk", Nuq, z, Pk * (k[None, None, :] - E[:, :, None]))
        em_ss = float(sigma * (resid @ z).sum()) + Hem.ss
        # posterior covariance of the complete-data scores
        pu, pv = eng.pair_u, eng.pair_v
        cov = self._node_pairs(Pk)
        cov -= self.mean_pairs.reshape(-1, M, M)
        cov_ts = np.einsum("uq,uqk->uk", self.W, Pk) - self.mean_us
        # the items' own blocks (u == v pairs) take the complete-data part too
        diag = np.flatnonzero(pu == pv)
        cov[diag] += em_blocks[pu[diag]]
        missing = np.setdiff1d(np.arange(U), pu[diag])   # (every rated item has its pair (u, u))
        if missing.size:   # (else cov as it is: no copy of every pair's blocks)
            pu, pv, cov = np.r_[pu, missing], np.r_[pv, missing], np.concatenate([cov, em_blocks[missing]])
        H = BlockHessian(U, M, pu, pv, cov, em_ts + cov_ts, em_ss + self.ss)
        return H, Hem


def complete_data_hessian(P, E, Nuq, sigma, z) -> "BlockHessian":
    """The expected complete-data Hessian (EM's; Lange 1995) in (tau[:, 1:], log sigma): per item
    ``-sum_q N_uq (diag P_uq - P_uq P_uq')`` over its categories 1..M, ``-sigma^2 sum N_uq var_uq z_q^2``
    for log sigma and nothing between them; ``P`` (U, Q, K) the category probabilities at the nodes
    ``z``, ``E`` (U, Q) their means, ``Nuq`` (U, Q) every item's expected ratings at each node."""
    U, Q, K = P.shape
    M = K - 1
    Pk = P[:, :, 1:]
    diagP = np.einsum("uq,uqk->uk", Nuq, Pk)
    em_blocks = np.einsum("uq,uqk,uql->ukl", Nuq, Pk, Pk)
    em_blocks[:, np.arange(M), np.arange(M)] -= diagP
    var = np.einsum("uqk,k->uq", P, np.arange(K, dtype=np.float64) ** 2) - E * E
    ss = -float(sigma ** 2 * (Nuq * var * (z * z)).sum())
    return BlockHessian(U, M, np.arange(U), np.arange(U), em_blocks, np.zeros((U, M)), ss)


@dataclass
class BlockHessian:
    """A symmetric matrix in (tau[:, 1:], log sigma) held by its nonzero parts: the (M, M) blocks
    of item pairs ``(pair_u[i], pair_v[i])`` with ``pair_u <= pair_v`` (the block (v, u) is the
    transpose), the items' rows against log sigma ``ts`` (U, M) and ``ss``."""
    U: int
    M: int
    pair_u: np.ndarray
    pair_v: np.ndarray
    blocks: np.ndarray
    ts: np.ndarray
    ss: float

    def dense(self):
        U, M = self.U, self.M
        D = U * M
        H = np.zeros((D + 1, D + 1))
        for u, v, blk in zip(self.pair_u, self.pair_v, self.blocks):
            H[u * M:(u + 1) * M, v * M:(v + 1) * M] += blk
            if u != v:
                H[v * M:(v + 1) * M, u * M:(u + 1) * M] += blk.T
        H[:D, D] = H[D, :D] = self.ts.ravel()
        H[D, D] = self.ss
        return H

    def project(self, Ku, cols, ks, P, diagonal: bool = False):
        """``K' H K`` (P, P) for a map K whose rows of item u are ``Ku[u]`` (M, w) over the free
        coordinates ``cols[u]`` (w,; P marks padding) and whose log sigma row is ``ks`` (P,); its diagonal
        (P,) alone with ``diagonal``.  Each run of item pairs' products is added into the one P x P array,
        entry by entry (:func:`_add_entries`; a bincount over the (P + 1)^2 entries a run, as before, was two
        more such arrays and 1.5 s a call at 6,000 parameters: a PCM of 2,000 raters on 1-4)."""
        w = Ku.shape[2]
        out = np.zeros(P if diagonal else P * P)
        step = max(1, (1 << 21) // max(w * w, 1))
        for s0 in range(0, self.pair_u.size, step):
            pu, pv = self.pair_u[s0:s0 + step], self.pair_v[s0:s0 + step]
            X = np.matmul(np.matmul(np.take(Ku, pu, axis=0).transpose(0, 2, 1), self.blocks[s0:s0 + step]),
                          np.take(Ku, pv, axis=0))
            ca, cb = np.take(cols, pu, axis=0), np.take(cols, pv, axis=0)
            _add_entries(out, ca[:, :, None], cb[:, None, :], X, P, diagonal)
            off = pu != pv
            _add_entries(out, cb[off][:, :, None], ca[off][:, None, :], X[off].transpose(0, 2, 1), P, diagonal)
        t = np.bincount(cols.ravel(), np.einsum("umw,um->uw", Ku, self.ts).ravel(), minlength=P + 1)[:P]
        # + t ks' + ks t' + ss ks ks', nonzero only in the rows and columns where ks is (log sigma's: one)
        on = np.flatnonzero(ks)
        if diagonal:   # (the entries (on, on) of the sums below, in their order)
            out[on] += (t[on] * ks[on] + ks[on] * t[on]) + self.ss * (ks[on] * ks[on])
            return out
        H = out.reshape(P, P)
        rows = np.outer(t[on], ks) + np.outer(ks[on], t) + self.ss * np.outer(ks[on], ks)
        rows[:, on] = 0.0   # (those entries are the columns')
        H[on, :] += rows
        H[:, on] += np.outer(t, ks[on]) + np.outer(ks, t[on]) + self.ss * np.outer(ks, ks[on])
        return H


def _add_entries(out, rows, cols, x, P, diagonal):
    """``out[rows, cols] += x`` (broadcast alike), each x added into its entry of ``out`` one at a time, in
    their order (``np.add.at``: 12 times faster than summing each entry's x first by a sort of the keys,
    0.0035 s against 0.040 at 500k entries), those in the padding (row or column P) left out; ``out`` the
    flat P x P array, or with ``diagonal`` its diagonal (P,) (the entries off it left out)."""
    if not diagonal and rows.max(initial=0) < P and cols.max(initial=0) < P:   # (no padding: no masks)
        np.add.at(out, (rows * P + cols).ravel(), x.ravel())   # (flat: numpy's fast path of ufunc.at, 30 times
        return                                                  # the speed of an index of several dimensions)
    rows, cols = np.broadcast_arrays(rows, cols)
    keep = (rows < P) & (cols < P)
    if diagonal:
        keep &= rows == cols
    key = rows[keep] if diagonal else rows[keep] * P + cols[keep]
    np.add.at(out, key, x[keep])
