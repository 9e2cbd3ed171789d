"""The parameters of the marginal Rasch models of raters (:mod:`.mml`): named blocks of one
natural vector, which of them are held fixed (anchors), and the linear map to the items'
cumulative parameters ``tau[u, 1..M]`` that :mod:`.mml_engine` evaluates.

Items ``u`` are the observed combinations (rater, level of facet 1, ..., level of facet F);
``tau[u, k]`` (k = 1..M) is a sum of terms, each linear in one block:

    PCM  (``model="pcm"``):  sum_{h<=k} steps[j, h]              + k sum_f facet_f[l_f] - k theta_mean
    RSM  (``model="rsm"``):  k severity[j] + sum_{h<=k} thresholds[g, h] + k sum_f facet_f[l_f] - k theta_mean

``j`` the item's rater, ``l_f`` its level of facet ``f`` and ``g`` its row of thresholds: 0
(shared by every item) or, with ``threshold_facet=f``, the item's level of facet ``f`` (one
threshold structure per level: per domain of a rubric).  ``theta_mean`` is the mean of the
papers' normal distribution and ``log_sigma`` the log of its sd (the last block; the engine
takes it apart).

Blocks (names, in this order): ``steps`` (J, M) or ``severity`` (J,) and ``thresholds``
(G, M); ``facet0``, ``facet1``, ... (L_f,); ``theta_mean`` (1,); ``log_sigma`` (1,).

Identification, where nothing is anchored (the default): ``theta_mean`` fixed at 0, each facet
sums to 0 and each row of RSM thresholds sums to 0.  Anchors: :meth:`Layout.fix` holds any
entries at given values (an anchored rater's severity, a domain's thresholds, ...); a block
with an anchored entry loses its sum-zero constraint (the anchors set its origin), and
:meth:`Layout.free` releases an entry (e.g. ``theta_mean`` once raters are anchored).  The
free coordinates ``phi`` map to the natural vector by ``value = C @ phi + offset``
(:meth:`Layout.free_map`), and to ``tau`` by ``A = B @ C``.

Weak priors (penalised ML; ``0.5 |R value|^2`` subtracted from log L): adjacent step or
threshold differences ~ N(0, step_sd^2), rater severities (PCM: the mean of a rater's steps
between its lowest and highest used category) and facet effects ~ N(0, location_sd^2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

__all__ = ["Layout", "make_layout"]


@dataclass
class Layout:
    """Natural parameters of one model (module docstring).

    ``blocks`` name -> slice of ``value``; ``shapes`` name -> shape; ``value`` the natural
    values (anchors, or where a fit starts); ``fixed`` True where held at ``value``;
    ``centred`` the blocks (or rows of ``thresholds``/``steps``: names with ``[row]``) summing to
    zero while none of their entries is fixed; ``B`` (U*M, n) sparse: ``tau[:, 1:].ravel() =
    B @ value``; ``penalty`` (rows, n) sparse: the prior rows; ``items`` (U, 1 + F) the items' rater and
    facet levels; ``model``, ``J``, ``M``, ``threshold_facet``.
    """

    model: str
    items: np.ndarray
    J: int
    M: int
    blocks: dict
    shapes: dict
    value: np.ndarray
    fixed: np.ndarray
    centred: list
    B: sparse.csr_matrix
    penalty: sparse.csr_matrix
    threshold_facet: int | None = None
    severity_rows: sparse.csr_matrix = field(default=None)  # (J, n): each rater's severity over ``value``

    @property
    def n(self):
        return self.value.size

    def index(self, name, at=None):
        """Positions in ``value`` of block ``name`` (all of it, or the entries ``at`` of its shape)."""
        sl = self.blocks[name]
        idx = np.arange(sl.start, sl.stop).reshape(self.shapes[name])
        return idx.ravel() if at is None else np.atleast_1d(idx[at]).ravel()

    def fix(self, name, at=None, values=None):
        """Hold entries of block ``name`` (``at``: an index into its shape; all by default) at
        ``values`` (default: the current ones).  Returns self."""
        idx = self.index(name, at)
        if values is not None:
            self.value[idx] = np.broadcast_to(np.asarray(values, dtype=np.float64).ravel(), idx.shape)
        self.fixed[idx] = True
        return self

    def free(self, name, at=None):
        """Release entries of block ``name``.  Returns self."""
        self.fixed[self.index(name, at)] = False
        return self

    def anchored(self) -> bool:
        """True if an entry other than the default identification is fixed (the scale is the anchors')."""
        default = np.zeros(self.n, dtype=bool)
        default[self.index("theta_mean")] = True
        return bool((self.fixed & ~default).any() or not self.fixed[self.index("theta_mean")].all())

    def _groups(self):
        """Sets of positions that sum to zero (centred blocks or rows with no fixed entry)."""
        out = []
        for name in self.centred:
            rows = self.index(name).reshape(self.shapes[name])
            rows = rows.reshape(-1, rows.shape[-1]) if name in ("thresholds",) else rows.reshape(1, -1)
            for r in rows:
                if r.size > 1 and not self.fixed[r].any():
                    out.append(r)
        return out

    def free_map(self):
        """(C, offset): ``value = C @ phi + offset`` over the free coordinates ``phi`` (a sum-zero
        group of n entries has n-1 of them, its last entry minus their sum)."""
        n = self.n
        col = 0
        rows, cols, vals = [], [], []
        in_group = np.zeros(n, dtype=bool)
        for g in self._groups():
            in_group[g] = True
            for i in g[:-1]:
                rows += [i, g[-1]]
                cols += [col, col]
                vals += [1.0, -1.0]
                col += 1
        for i in np.flatnonzero(~self.fixed & ~in_group):
            rows.append(i)
            cols.append(col)
            vals.append(1.0)
            col += 1
        C = sparse.csr_matrix((vals, (rows, cols)), shape=(n, col))
        offset = np.where(self.fixed, self.value, 0.0)
        return C, offset


def _sparse(rows, cols, vals, shape):
    return sparse.csr_matrix((np.asarray(vals, float), (np.asarray(rows), np.asarray(cols))), shape=shape)


def make_layout(model: str, items, J: int, levels, M: int, threshold_facet=None, used=None,
                step_sd: float = 5.0, location_sd: float = 10.0) -> Layout:
    """The default layout of ``model`` ("pcm" or "rsm") for ``items`` (U, 1 + F): rater (0..J-1)
    and the level of each facet (``levels[f]`` levels); ``used`` (J, M+1) bool: the categories
    each rater gave (the PCM's severity is the mean of its steps between the lowest and highest)."""
    if model not in ("pcm", "rsm"):
        raise ValueError(f"model must be 'pcm' or 'rsm', not {model!r}")
    items = np.asarray(items, dtype=np.int64).reshape(len(items), -1)
    U = items.shape[0]
    F = items.shape[1] - 1
    levels = [int(x) for x in levels]
    if threshold_facet is not None and (model != "rsm" or not 0 <= threshold_facet < F):
        raise ValueError("threshold_facet: a facet's index, for the rating scale model only")
    G = levels[threshold_facet] if threshold_facet is not None else 1
    shapes = {"steps": (J, M)} if model == "pcm" else {"severity": (J,), "thresholds": (G, M)}
    for f in range(F):
        shapes[f"facet{f}"] = (levels[f],)
    shapes["theta_mean"] = (1,)
    shapes["log_sigma"] = (1,)
    blocks, start = {}, 0
    for name, shp in shapes.items():
        size = int(np.prod(shp))
        blocks[name] = slice(start, start + size)
        start += size
    n = start
    B = _tau_map(model, items, blocks, n, M, threshold_facet)
    sev = _severity_rows(model, blocks, J, M, n, used)
    pen = _penalty(model, blocks, shapes, sev, J, G, M, F, n, step_sd, location_sd)
    value = np.zeros(n)
    fixed = np.zeros(n, dtype=bool)
    fixed[blocks["theta_mean"]] = True
    centred = [f"facet{f}" for f in range(F)] + (["thresholds"] if model == "rsm" else [])
    return Layout(model=model, items=items, J=J, M=M, blocks=blocks, shapes=shapes, value=value, fixed=fixed,
                  centred=centred, B=B, penalty=pen, threshold_facet=threshold_facet, severity_rows=sev)


def _tau_map(model, items, blocks, n, M, threshold_facet):
    """B (U*M, n): tau[u, k] = (B @ value)[u*M + k - 1] (module docstring).  Each item's entries in
    its rows' order (the steps or thresholds up to k, the severity before them, the facets, theta_mean
    after), all items at once."""
    U, F = items.shape[0], items.shape[1] - 1
    kk = np.arange(1, M + 1, dtype=np.float64)
    r = np.arange(U)[:, None] * M + np.arange(M)                 # (U, M) each item's rows
    low_k, low_h = np.tril_indices(M)                            # cumulative: (k, h <= k), by k
    parts = []                                                   # (rows, cols, vals), each (U, width)

    def cumulative(first):   # sum_{h<=k} of the block entries from ``first`` (U,) on
        parts.append((np.broadcast_to(r[:, low_k], (U, low_k.size)), first[:, None] + low_h,
                      np.ones((U, low_k.size))))

    if model == "pcm":
        cumulative(blocks["steps"].start + items[:, 0] * M)
    else:
        parts.append((r, np.broadcast_to((blocks["severity"].start + items[:, 0])[:, None], (U, M)),
                      np.broadcast_to(kk, (U, M))))
        g = items[:, 1 + threshold_facet] if threshold_facet is not None else np.zeros(U, dtype=np.int64)
        cumulative(blocks["thresholds"].start + g * M)
    for f in range(F):
        parts.append((r, np.broadcast_to((blocks[f"facet{f}"].start + items[:, 1 + f])[:, None], (U, M)),
                      np.broadcast_to(kk, (U, M))))
    parts.append((r, np.full((U, M), blocks["theta_mean"].start), np.broadcast_to(-kk, (U, M))))
    rows, cols, vals = (np.concatenate([part[i] for part in parts], axis=1).ravel() for i in range(3))
    return _sparse(rows, cols, vals, (U * M, n))


def _severity_rows(model, blocks, J, M, n, used):
    """(J, n), sparse: each rater's severity over the natural vector (PCM: the mean of its steps
    between the lowest and highest category it gave).  (Dense, 600 MB at 5,000 raters' PCM on 1-4.)"""
    if model != "pcm":
        return sparse.csr_matrix((np.ones(J), (np.arange(J), blocks["severity"].start + np.arange(J))), shape=(J, n))
    lo, hi = np.zeros(J, dtype=np.int64), np.full(J, M, dtype=np.int64)   # (a rater of one category: all steps)
    if used is not None:   # the lowest and highest category each rater gave, its steps between them, all raters
        used = np.asarray(used, dtype=bool)   # at once (a loop over raters: 2.1 ms at 200, 46 at 5,000; this 0.4, 0.7)
        some = used.sum(axis=1) > 1
        lo[some] = np.argmax(used[some], axis=1)
        hi[some] = M - np.argmax(used[some, ::-1], axis=1)
    width = hi - lo
    rows = np.repeat(np.arange(J), width)
    at = np.arange(rows.size) - np.repeat(np.cumsum(width) - width, width)   # (each step's place in its rater's run)
    cols = blocks["steps"].start + rows * M + lo[rows] + at
    return sparse.csr_matrix((np.repeat(1.0 / np.maximum(width, 1), width), (rows, cols)), shape=(J, n))


def _penalty(model, blocks, shapes, sev, J, G, M, F, n, step_sd, location_sd):
    """The prior rows (sparse): adjacent differences of steps / thresholds, severities and facet effects
    (made sparse, not from a dense (rows, n) array: 4 ms an MML fit of 200 raters' PCM)."""
    step_block = "steps" if model == "pcm" else "thresholds"
    nrow = J if model == "pcm" else G
    base = (blocks[step_block].start + np.arange(nrow)[:, None] * M + np.arange(M - 1)).ravel()   # (row, k)
    steps = sparse.csr_matrix((np.tile([1.0 / step_sd, -1.0 / step_sd], base.size),
                               np.column_stack([base, base + 1]).ravel(), np.arange(0, 2 * base.size + 1, 2)),
                              shape=(base.size, n))
    facets = [np.eye(shapes[f"facet{f}"][0], n, blocks[f"facet{f}"].start) / location_sd for f in range(F)]
    pen = sparse.vstack([steps, sparse.csr_matrix(sev / location_sd)] + [sparse.csr_matrix(x) for x in facets],
                        format="csr")
    pen.eliminate_zeros()   # (the zeros of an infinite sd)
    return pen
