"""Does who read what say how good a paper is?  ``check --assignment auto`` (the default) looks at
the file instead of assuming random assignment (issue 29).

Chapter 5 says: with non-random assignment of papers to raters, do not equate.  A district rarely
says, and a file can show it.  Three pieces of evidence, all from the ratings:

1. **Clusters in the rater-paper network** (:func:`network_clusters`): raters joined by the papers
   they share, weighted by how many, split into communities by Louvain's modularity method
   (Blondel et al. 2008; ``networkx.community.louvain_communities``, seeded, so the same file gives
   the same clusters).  A school read by its own pair of raters is such a community.  The split
   is kept only when it is clear: modularity at least :data:`MIN_MODULARITY` (a random design of
   two readers a paper among twelve raters has about 0.01; six schools each read by their own pair
   about 0.4), and beyond what Louvain finds in random assignments of the same design
   (:func:`null_modularity`: the raters shuffled among the ratings) by :data:`NULL_MARGIN`.  A sparse
   network splits whoever read what: two readers a paper among 150 raters, ten ratings a rater,
   gave 0.27-0.29 on random designs, so a fixed threshold kept arbitrary clusters on 5 of 16 such
   files (and the multi-group models fitted them); their rewirings give as much.  A paper's
   cluster is the one most of its readers are in; a tie goes to its first reader's (the first in
   the file's ``order`` column, else the file's first line of the paper).
2. **The quality of the papers each rater read** (:func:`assignment_evidence`), measured by the
   conditional-ML rating scale model (:func:`.rater_report.fit_rater_model`: papers' Warm
   measures, which do not assume any distribution of quality, so they are not biased by the
   confound they are testing for): under random assignment every rater's papers have the same
   mean measure up to sampling error.  Each of rater ``j``'s papers is measured from its *other*
   ratings (its rest measure, :func:`rest_measures`): a paper's measure from all its ratings leans
   on the severities of the raters who read it (Warm's estimate from a few ratings is pulled toward
   where its raters' categories lie) and on ``j``'s own rating, so that on random designs the
   raters' means differed beyond chance: on 12 random files each of seven designs (2-5 of 10-200
   raters a paper, scores 1-4, tests/results/assignment_calibration.py) the test rejected at .05 in
   67%, 50%, 58%, 0%, 100%, 33% and 92% of them (2 of 12 raters a paper, as in 1990: 67%), where
   from the rest measures in 0%, 8%, 0%, 0%, 17%, 0% and 0% (at .01, the decision's level,
   :data:`ALPHA`: none but 8% at 2 of 200).  A rest measure's raters are, under random assignment, a
   random draw whoever ``j`` is.  (Left: the 17%, at 2 of 200 raters a paper with 20 ratings a
   rater, where the co-raters' severities, estimated from 20 ratings each, err together through the
   rater they share.)  The statistic is ``sum_j n_j (m_j - m)^2 / s^2`` (``m_j`` the mean rest
   measure of rater ``j``'s ``n_j`` papers, at most :data:`REST_PAPERS` of them, ``m`` and ``s^2``
   the rest measures' mean and variance; on each paper's first readings, :func:`design_readings`),
   referred to chi-square on ``J - 1`` df (conservative:
   raters who share papers have correlated means); beside it the correlation of the raters' raw
   means with ``m_j`` (a rater who read the good papers gives high scores whatever his severity).
   With clusters, the one-way ANOVA of the measures by cluster.

   Those were the tests until a school read by its own pair of raters broke them: where a rater's
   co-readers are always the same few, their severities do not average out, and a rest measure (Warm's
   estimate from one or two ratings) leans on them: six schools of *equal* quality each read by its own
   pair (tests/confounded.py) were called non-random on 6 of 8 files.  Now (issue: "papers of
   different quality" at equal means):

   * **By rater**, with at least :data:`TWO_WAY_RATINGS` ratings a rater (and at most
     :data:`TWO_WAY_RATERS` raters): the rest ratings of rater ``j``'s papers, grouped by ``j``, in a
     two-way model with each rest rater's own mean (:func:`group_effects`): under random assignment a
     rater's score has the same mean on every other rater's papers, whatever its severity, slope or
     use of the scale, so no model of the ratings enters; its Wald test robust to the readings of one
     paper being alike.  With fewer ratings a rater that covariance is too small (2 of 150 raters a
     paper, ten a rater: p < 1e-5 on random files), and each rest's total is compared with its
     expectation given who gave it, over one distribution of quality for every paper
     (:func:`score_residuals`, :func:`quality_distribution`: nonparametric, fitted given the CML
     tau), its z's mean by rater as ``m_j`` above.
   * **By cluster**: the clusters' effect in the two-way model of the design readings' scores with each
     rater's own mean (:func:`cluster_effects`): a school read by its own raters alone says nothing
     of its quality; the effect rests on the raters who read in more than one.

   tests/results/assignment_calibration.py (share of files called non-random at .01): six schools of
   equal means with own pairs 100% -> 8%; of means -0.5..0.5 100% -> 50% (the earlier 100% was the
   measures' lean, not the schools); the random designs 0-8% as before.  Left: sparse schools (15 of
   ten raters each, ten ratings a rater) of equal means 83% (the by-rater z: the co-readers' CML
   severities, from ten ratings each, err together within a school).
3. **CML against MML severities**: the marginal model (:class:`~ratercal_cli.methods.mml.
   MarginalRaterModel`, rating scale form, one normal distribution of quality) reads a weak
   cluster's raters as severe where the conditional one does not; ``z_j = (b_MML - b_CML) /
   sqrt(se_MML^2 + se_CML^2)`` (both centred), summed as chi-square on ``J - 1`` df.  Shown as
   evidence; the decision rests on 2 (the direct test).

The assignment is taken as non-random (*confounded*) when the papers' quality differs between
raters (2, the rater or the cluster test) at ``alpha`` (:data:`ALPHA`, .01).  With clusters, the marginal models fit a
mean quality per cluster (the multi-group model, ``MarginalRaterModel(clusters=)``), whose
clusters are the network's or a column of the file (``--cluster-col school``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import MethodError, mention
from ..ratings import Ratings

__all__ = ["ASSIGNMENTS", "MIN_MODULARITY", "Assignment", "network_clusters", "assignment_evidence",
           "decide_assignment", "shared_verdict"]

#: what ``--assignment`` takes: ``auto`` decides from the file
ASSIGNMENTS = ("auto", "random", "nonrandom")
#: the assignment is taken as non-random where a test's p is under ALPHA: a false alarm turns the
#: recommendation to the PCM (11th or last of 12 in the simulation of the README's example) and Chapter 5's
#: rule to NO, where a confound small enough to pass at .01 moves the marginal models' scores little; and at
#: 20 ratings a rater the by-rater test is liberal (tests/results/assignment_calibration.py, 2 of 200 raters a
#: paper: 33% of random files under .05, 8% under .01; the README example's grade 11, 24 ratings a rater, drawn
#: with random first readers: p = .03 from the rest measures, .12 from the rests' totals)
ALPHA = 0.01
#: a confound with clusters is met by the multi-group model (a mean quality per cluster) unless its severities
#: differ from the conditional model's (CML, no distribution of quality) at this level: then the clusters do not
#: capture it.  chi2 of the centred differences over their SEs: p 0.93-0.997 on school-confounded files
#: (tests/confounded.py's district, seeds 1-3) and chains of raters (its chain, 0 and 1), where the multi-group MML
#: was the advice's best; 0.0004, 0.0025 and 0.031 on a researcher tester's chains (lenient raters given the weak
#: papers, reliable raters), where the multi-group MML was 0.06-0.19 RMSE behind the best method
CLUSTER_FIT_ALPHA = 0.05
#: a network split into communities is kept as clusters from this modularity on
MIN_MODULARITY = 0.15
#: the Louvain method's seed (the same file gives the same clusters)
LOUVAIN_SEED = 29
#: a split is kept only where its modularity is beyond the largest of random assignments of the same design
#: (:func:`null_modularity`) by this much: their spread is 0.005-0.01 (sd; 10 rewirings of a random design of
#: 2 readers a paper among 150 raters, 10 ratings a rater), the largest of 10 0.01-0.02 above their mean
NULL_MARGIN = 0.02
#: random assignments of the design Louvain is run on (drawn with NULL_SEED: the same file, the same decision)
NULL_REWIRINGS = 10
NULL_SEED = 29
#: ... fewer where one has many links: at most this many links in all (at least 2 rewirings)
NULL_LINKS = 500_000
#: :func:`modularity_bound` finds all eigenvalues of up to this many raters' modularity matrix (LAPACK), of
#: more the top one (Lanczos: 5,000 raters, 1M ratings, 14-15 s -> 2-2.5 s; the same bound to 1e-9)
DENSE_EIGEN = 400
#: a rater's papers measured from their other ratings (:func:`rest_measures`): at most this many of each
#: rater's, drawn with REST_SEED (the test's power is spent long before: a school-confounded district
#: file gives p < 1e-6 with 40-150 a rater; a paper of 21 ratings costs 20 entries a rest measure)
REST_PAPERS = 500
REST_SEED = 29
#: the by-rater test's two-way model (:func:`group_effects`) up to this many raters; beyond, the model's residuals
TWO_WAY_RATERS = 1500
#: ... and from this many ratings a rater in it (fewer: its robust covariance is too small, 2 of 150 raters a paper
#: at ten a rater p < 1e-5 on random files): the rests of papers read twice or more, not every rating (a file of
#: 1,000 papers, 10% read twice, 12 raters, 1-4: 1,100 ratings passed for 80 a rater where 200 entered the model,
#: and random files were called non-random at p < .01 in 16% of 200, 4-6 of 30 of a tester's)
TWO_WAY_RATINGS = 80


@dataclass
class Assignment:
    """What :func:`decide_assignment` found for one group's ratings."""

    given: str                          # auto, random or nonrandom (what the user said)
    assignment: str                     # random or nonrandom (what the rule is given)
    confounded: bool | None             # the papers' quality differs by rater (None: not tested)
    clusters: np.ndarray | None = None  # per paper: its cluster (0..C-1; -1 no ratings), or None
    cluster_labels: tuple = ()
    cluster_source: str = ""            # "network" or "column NAME"
    modularity: float = math.nan
    within: float = math.nan            # share of ratings by a rater of the paper's own cluster
    by_rater: dict = field(default_factory=dict)     # chi2, df, p, r (raw mean vs papers' measure), r_p
    by_cluster: dict = field(default_factory=dict)   # F, df, p, eta2, means
    severity: dict = field(default_factory=dict)     # chi2, df, p, max_z, rater
    cluster_fit: dict = field(default_factory=dict)  # the multi-group MML's severities against CML's: chi2, df, p, ...
    reason: str = ""
    alpha: float = math.nan             # the tests' level (the decision: confounded where a p is under it)

    @property
    def clustered(self) -> bool:
        """Whether the confound has clusters to model (whether or not a mean per cluster meets it)."""
        return bool(self.confounded and self.clusters is not None and len(self.cluster_labels) > 1)

    @property
    def multigroup(self) -> bool:
        """Whether the marginal models should fit a mean quality per cluster: the confound has clusters, and
        the multi-group model's severities agree with the conditional model's (:attr:`cluster_fit`,
        CLUSTER_FIT_ALPHA), which need no distribution of quality."""
        return self.clustered and not self.clusters_miss

    @property
    def clusters_miss(self) -> bool:
        """The clusters do not capture the confound: a mean quality per cluster leaves the multi-group
        model's severities off the conditional model's (a trend along a chain of raters, not schools)."""
        return bool(self.cluster_fit) and self.cluster_fit["p"] < CLUSTER_FIT_ALPHA

    def to_dict(self) -> dict:
        from .text import json_clean

        return json_clean({"given": self.given, "assignment": self.assignment, "confounded": self.confounded,
                           "clusters": len(self.cluster_labels) if self.clusters is not None else 0,
                           "cluster_source": self.cluster_source, "modularity": self.modularity,
                           "within_cluster_share": self.within, "papers_quality_by_rater": self.by_rater,
                           "papers_quality_by_cluster": self.by_cluster, "cml_vs_mml_severity": self.severity,
                           "cml_vs_multigroup_severity": self.cluster_fit,
                           "multigroup": self.multigroup, "alpha": self.alpha, "reason": self.reason})

    def lines(self) -> list:
        """The text ``check`` prints."""
        # (untested: "random" is what the rule is given, not what the file showed -- the summary's "not testable"
        # stood beside "ASSIGNMENT (auto): random", a researcher tester's)
        said = "not tested" if self.given == "auto" and self.confounded is None else self.assignment
        out = [f"ASSIGNMENT ({self.given}): {said} -- {self.reason}"]
        if self.clusters is not None and self.cluster_labels:
            out.append(f"  clusters ({self.cluster_source}): {len(self.cluster_labels)}"
                       + (f", modularity {self.modularity:.2f}" if np.isfinite(self.modularity) else "")
                       + (f", {100 * self.within:.0f}% of ratings by a rater of the paper's own cluster"
                          if np.isfinite(self.within) else ""))
        b = self.by_rater
        if b:
            out.append(f"  papers' quality by rater (their other readers' scores): chi2({b['df']}) = {b['chi2']:.1f}, p "
                       f"{_p(b['p'])}; raters' raw means against their papers' quality r = {b['r']:.2f}")
        c = self.by_cluster
        if c and "chi2" in c:
            out.append(f"  papers' quality by cluster (each rater's scores by the paper's cluster, its mean out): "
                       f"chi2({c['df'][0]}) = {c['chi2']:.1f}, p {_p(c['p'])} ({c['df'][1]} ratings by raters of "
                       "more than one cluster)")
        elif c:
            out.append(f"  papers' quality by cluster: F({c['df'][0]}, {c['df'][1]}) = {c['F']:.1f}, p {_p(c['p'])}, "
                       f"eta^2 = {c['eta2']:.2f}")
        s = self.severity
        if s:
            out.append(f"  CML vs MML severities: chi2({s['df']}) = {s['chi2']:.1f}, p {_p(s['p'])}; largest |z| "
                       f"{s['max_z']:.1f} (rater {s['rater']})")
        s = self.cluster_fit
        if s:
            out.append(f"  CML vs the multi-group MML's severities: chi2({s['df']}) = {s['chi2']:.1f}, p {_p(s['p'])}; "
                       f"largest |z| {s['max_z']:.1f} (rater {s['rater']})")
        return out


def _p(p) -> str:
    """``= 0.046`` or ``< .001``."""
    return "= nan" if not np.isfinite(p) else ("< .001" if p < 0.001 else f"= {p:.3f}")


def modularity_bound(W) -> float:
    """An upper bound of the modularity of every partition of the rater network ``W``
    (:func:`.network.shared_papers`; its diagonal is not a link): with the modularity matrix
    ``B = W - k k' / 2m`` (``k`` the raters' weighted degrees, ``m`` the links' total weight) a
    partition's modularity is ``sum_c s_c' B s_c / 2m`` over its communities' indicator vectors, at
    most ``lambda_max(B) n / 2m`` for the ``n`` linked raters.  A random design's network is near
    its mean, ``B`` near 0 (2 of 200 raters a paper at 1M ratings: 0.03; a complete panel: 0), so
    that a bound below :data:`MIN_MODULARITY` shows that no split is kept without Louvain's search
    (0.5 s at 200 raters) or importing networkx; -inf without links."""
    A = np.asarray(W, dtype=np.float64).copy()
    np.fill_diagonal(A, 0.0)
    k = A.sum(axis=1)
    linked = k > 0
    if not linked.any():
        return -math.inf
    A, k = A[np.ix_(linked, linked)], k[linked]
    two_m = k.sum()
    if k.size <= DENSE_EIGEN:
        top = float(np.linalg.eigvalsh(A - np.outer(k, k) / two_m)[-1])
    else:   # the top eigenvalue alone (Lanczos), raised by its residual's norm (|lambda - theta| <= |B x - theta x|)
        from scipy.sparse.linalg import LinearOperator, eigsh

        def times(x):
            x = np.asarray(x, dtype=np.float64).reshape(-1)
            return A @ x - k * ((k @ x) / two_m)

        B = LinearOperator((k.size, k.size), matvec=times, dtype=np.float64)
        theta, vec = eigsh(B, k=1, which="LA", tol=1e-10, v0=np.ones(k.size) / math.sqrt(k.size))
        x = vec[:, 0]
        top = float(theta[0]) + float(np.linalg.norm(times(x) - theta[0] * x))
    return top * k.size / two_m


def _louvain(W, active, profile=None):
    """``(communities, modularity)`` of Louvain's split (:data:`LOUVAIN_SEED`) of the rater network ``W``
    (its diagonal is no link) over the raters ``active``; ``([], nan)`` without links.  The raters and their
    links are handed to it in an order the labels do not set (:func:`_canonical_order`, by ``profile``: a row
    of numbers a rater from its own ratings): Louvain's moves follow the order of its nodes, and renaming the
    raters of a tester's file (papers routed to neighbouring raters by quality) split them otherwise and moved
    its papers by up to 0.29 points."""
    import networkx as nx

    active = np.asarray(active, dtype=np.int64)
    order = _canonical_order(W, active, profile)
    pos = np.full(W.shape[0], -1, dtype=np.int64)
    pos[order] = np.arange(order.size)
    G = nx.Graph()
    G.add_nodes_from(int(j) for j in order)
    a, b = np.nonzero(np.triu(W, 1))
    lo, hi = np.where(pos[a] <= pos[b], a, b), np.where(pos[a] <= pos[b], b, a)
    by = np.lexsort((pos[hi], pos[lo]))
    G.add_weighted_edges_from((int(x), int(y), float(W[x, y])) for x, y in zip(lo[by], hi[by]))
    if G.number_of_edges() == 0:
        return [], math.nan
    comms = nx.community.louvain_communities(G, weight="weight", seed=LOUVAIN_SEED)
    comms = sorted((sorted(c) for c in comms), key=lambda c: c[0])
    return comms, float(nx.community.modularity(G, comms, weight="weight"))


#: rounds of colour refinement in :func:`_canonical_order` at most (each a pass over the links)
REFINE_ROUNDS = 4


def _canonical_order(W, active, profile=None):
    """The raters ``active`` in an order their labels do not set: by colour refinement (Weisfeiler-Lehman) of
    the network ``W``, each rater's colour first its ``profile`` row (its ratings' count and sums: what it
    gave, not what it is called), then with the multiset of its neighbours' colours and link weights, for
    REFINE_ROUNDS rounds or until no colour splits; raters still alike (the network and their ratings cannot
    tell them apart) by label."""
    if profile is None:
        profile = np.zeros((W.shape[0], 1))
    rows = [tuple(np.asarray(profile[j], dtype=np.float64).tolist()) for j in active]
    colour = _ranks(rows)
    nbrs = [np.flatnonzero(W[j, active] * (active != j)) for j in active]
    for _ in range(REFINE_ROUNDS):
        sig = [(colour[i], tuple(sorted(zip(colour[nb].tolist(), W[active[i], active[nb]].tolist()))))
               for i, nb in enumerate(nbrs)]
        new = _ranks(sig)
        split = new.max(initial=-1) > colour.max(initial=-1)
        colour = new
        if not split:
            break
    return active[np.lexsort((active, colour))]


def _ranks(keys) -> np.ndarray:
    """Each key's rank among the distinct keys (sorted)."""
    distinct = {k: i for i, k in enumerate(sorted(set(keys)))}
    return np.array([distinct[k] for k in keys], dtype=np.int64)


def rater_profile(ratings: Ratings) -> np.ndarray:
    """(J, 3): each rater's number of ratings and the sum and sum of squares of its scores (:func:`_louvain`)."""
    J = ratings.n_raters
    x = np.asarray(ratings.score, dtype=np.float64)
    return np.column_stack([np.bincount(ratings.rater, minlength=J).astype(np.float64),
                            np.bincount(ratings.rater, weights=x, minlength=J),
                            np.bincount(ratings.rater, weights=x * x, minlength=J)])


def canonical_order(ratings: Ratings, rater_rank=None) -> tuple:
    """``(rating_rank, paper_rank)``: each rating's and each paper's place in an order of the ratings that the
    file's order of lines does not set (nor, but for raters whose ratings are alike, their labels): raters by
    what they gave (:func:`rater_profile`: count, sum and sum of squares of their scores; a tie by label), each
    rating by its rater's place and its score, each paper by its number of ratings and its ratings' keys
    sorted, the ratings paper by paper (papers alike in every key are interchangeable; a paper's ratings alike
    in rater and score too).  The draws made over
    ratings or papers (:func:`rewired`, :func:`rest_items`, :func:`quality_distribution`) are made in this
    order: made in the file's order, a researcher tester's file read as its lines came found two clusters,
    and with a paper's lines apart (the same ratings) none, and another recommendation (TMN where NO).
    ``rater_rank``: the raters' places where the caller has an order that breaks more ties than their
    profiles (:func:`refined_rank`)."""
    from ..methods.mml_engine import paper_patterns

    J, P, K = ratings.n_raters, ratings.n_papers, ratings.max_score + 1
    if rater_rank is None:
        prof = rater_profile(ratings)
        rater_rank = np.empty(J, dtype=np.int64)
        rater_rank[np.lexsort((np.arange(J), prof[:, 2], prof[:, 1], prof[:, 0]))] = np.arange(J)
    key = rater_rank[ratings.rater] * K + np.asarray(ratings.score, dtype=np.int64)
    # each paper's keys sorted, the papers by their number of ratings and then those keys (the engine's patterns,
    # numbered in that order: a radix sort, where np.lexsort of every key column took 0.4 s at 1M ratings); papers
    # alike by their number, the papers without ratings last
    papers, pattern, _ = paper_patterns(ratings.paper, key, J * K)
    by_pattern = np.full(P, int(pattern.max(initial=-1)) + 1, dtype=np.int64)
    by_pattern[papers] = pattern
    paper_rank = np.empty(P, dtype=np.int64)
    paper_rank[np.argsort(by_pattern, kind="stable")] = np.arange(P)
    rating_rank = np.empty(ratings.n_ratings, dtype=np.int64)
    rating_rank[np.argsort(paper_rank[ratings.paper] * (J * K) + key, kind="stable")] = np.arange(ratings.n_ratings)
    return rating_rank, paper_rank


def refined_rank(ratings: Ratings, W) -> np.ndarray:
    """Each rater's place in :func:`_canonical_order` of the network ``W`` (colour refinement from the raters'
    profiles: raters alike in what they gave told apart by their links, so that their labels decide fewer
    ties), the raters without ratings last."""
    active = np.flatnonzero(ratings.ratings_per_rater() > 0)
    order = _canonical_order(W, active, rater_profile(ratings))
    rest = np.setdiff1d(np.arange(ratings.n_raters), order)
    rank = np.empty(ratings.n_raters, dtype=np.int64)
    rank[np.r_[order, rest].astype(np.int64)] = np.arange(ratings.n_raters)
    return rank


def rewired(ratings: Ratings, rng, order=None) -> Ratings:
    """``ratings`` with the raters' codes shuffled among the ratings (in :func:`canonical_order`, or the
    ratings' ``order`` given): random assignment of the same design (each rater keeps its number of ratings,
    each paper its number of readers; a rater drawn twice for one paper, rare, shares it once)."""
    if order is None:
        order = np.argsort(canonical_order(ratings)[0])
    rater = np.empty_like(ratings.rater)
    rater[order] = rng.permutation(ratings.rater[order])
    return replace(ratings, rater=rater, first_readings=None)


def null_modularity(ratings: Ratings, q: float, W=None) -> dict:
    """What Louvain finds in random assignments of the same design (:func:`rewired`, drawn with
    :data:`NULL_SEED`): ``{"rewirings", "max", "mean", "bound"}``.  Louvain splits any sparse network: 2
    readers a paper among 150 raters, 10 ratings a rater, gives modularity 0.27-0.29 on random
    designs (16 files), their rewirings 0.28-0.31; six schools read by their own pairs 0.41, their
    rewirings at most 0.02.  The first rewiring's :func:`modularity_bound` (above every split of it)
    ends the search where ``q`` is beyond it by :data:`NULL_MARGIN` (no Louvain on rewirings: a
    clustered design of many raters pays one bound); else :data:`NULL_REWIRINGS` rewirings, fewer
    where their links are many (:data:`NULL_LINKS`, at least 2).  The rewirings are drawn in
    :func:`canonical_order` (the raters by :func:`refined_rank` of ``W``, ``ratings``' network where the
    caller has it): the same in any order of the file's lines and, but for raters its network cannot tell
    apart, of its labels."""
    from ..network import shared_papers

    W = shared_papers(ratings) if W is None else W
    order = np.argsort(canonical_order(ratings, refined_rank(ratings, W))[0])
    rng = np.random.default_rng(NULL_SEED)
    found, bound, n = [], math.nan, NULL_REWIRINGS
    for i in range(NULL_REWIRINGS):
        if i >= n:
            break
        other = rewired(ratings, rng, order)
        W = shared_papers(other)
        if i == 0:
            bound = modularity_bound(W)
            if q > bound + NULL_MARGIN:
                break
            links = int(np.count_nonzero(np.triu(W, 1)))
            n = max(2, min(NULL_REWIRINGS, NULL_LINKS // max(links, 1)))
        active = np.flatnonzero(other.ratings_per_rater() > 0)
        found.append(_louvain(W, active, rater_profile(other))[1])
        if found[-1] >= q - NULL_MARGIN:   # the split is not kept, whatever the other rewirings find
            break
    found = [x for x in found if np.isfinite(x)]
    return {"rewirings": len(found), "max": max(found) if found else math.nan,
            "mean": float(np.mean(found)) if found else math.nan, "bound": bound}


def network_clusters(ratings: Ratings, W=None):
    """``(paper cluster (P,), rater cluster (J,), modularity, within share)`` of the rater network
    (module docstring, 1); ``(None, None, modularity, nan)`` where it does not split clearly: under
    :data:`MIN_MODULARITY`, or not beyond random assignments of the same design by
    :data:`NULL_MARGIN` (:func:`null_modularity`); the modularity nan where :func:`modularity_bound` shows
    that no split reaches MIN_MODULARITY (Louvain not run).  ``W``: :func:`.network.shared_papers` of
    ``ratings`` where the caller has it."""
    from ..network import shared_papers

    W = shared_papers(ratings) if W is None else W
    active = np.flatnonzero(ratings.ratings_per_rater() > 0)
    if active.size < 4 or ratings.max_raters_per_paper() < 2:
        return None, None, math.nan, math.nan
    if modularity_bound(W) < MIN_MODULARITY - 1e-9:   # no split can be kept: no search (800 raters, 2 a paper, 1M
        return None, None, math.nan, math.nan        # ratings: Louvain took 4-9 s of check's CPU, to find 0.02)
    comms, q = _louvain(W, active, rater_profile(ratings))
    if not comms:
        return None, None, math.nan, math.nan
    if len(comms) < 2 or q < MIN_MODULARITY:
        return None, None, q, math.nan
    null = null_modularity(ratings, q, W)
    if null["rewirings"] and not q > null["max"] + NULL_MARGIN:
        return None, None, q, math.nan
    rc = np.full(ratings.n_raters, -1, dtype=np.int64)
    for k, c in enumerate(comms):
        rc[c] = k
    C = len(comms)
    votes = np.zeros((ratings.n_papers, C))
    np.add.at(votes, (ratings.paper, rc[ratings.rater]), 1.0)
    first = first_reading(ratings)   # a tie goes to the first reader's cluster
    votes[ratings.paper[first], rc[ratings.rater[first]]] += 0.5
    pc = np.where(votes.sum(axis=1) > 0, votes.argmax(axis=1), -1)
    within = float(np.mean(rc[ratings.rater] == pc[ratings.paper]))
    return pc, rc, q, within


def clusters_from_labels(labels) -> tuple:
    """``(codes, labels)`` of per-paper cluster labels (None: no cluster, code -1)."""
    from ..ratings import natural_key

    names = tuple(sorted({x for x in labels if x is not None}, key=natural_key))
    code = {x: k for k, x in enumerate(names)}
    return np.array([code.get(x, -1) if x is not None else -1 for x in labels], dtype=np.int64), names


def rest_items(ratings: Ratings):
    """``(chosen, rest, at)``: ratings (indices; at most REST_PAPERS of each rater's, drawn with
    REST_SEED, on papers of two or more ratings) and the rest of each one's paper, its paper's other
    ratings (``at``, in file order) as rows of ``rest`` (an index into ``chosen``)."""
    per_paper = ratings.ratings_per_paper()
    chosen = np.flatnonzero(per_paper[ratings.paper] >= 2)
    # (a random key each rating, drawn in :func:`canonical_order`: the same ratings chosen in any order of lines)
    key = np.random.default_rng(REST_SEED).permutation(ratings.n_ratings)[canonical_order(ratings)[0][chosen]]
    order = np.lexsort((key, ratings.rater[chosen]))   # each rater's in a random order
    r = ratings.rater[chosen][order]
    first = np.r_[0, np.flatnonzero(np.diff(r)) + 1]
    rank = np.arange(r.size) - np.repeat(first, np.diff(np.r_[first, r.size]))
    chosen = np.sort(chosen[order][rank < REST_PAPERS])
    # the rest of each chosen rating's paper: its paper's ratings (in file order), but that one
    by_paper = np.argsort(ratings.paper, kind="stable")
    start = np.r_[0, np.cumsum(per_paper)][ratings.paper[chosen]]
    size = per_paper[ratings.paper[chosen]]
    rest = np.repeat(np.arange(chosen.size), size)
    at = by_paper[np.repeat(start - np.r_[0, np.cumsum(size)[:-1]], size) + np.arange(size.sum())]
    other = at != chosen[rest]
    return chosen, rest[other], at[other]


def rest_measures(ratings: Ratings, tau):
    """``(rating, measure)``: the ratings of :func:`rest_items` and each one's paper's Warm measure
    (:func:`.quality.estimate_quality`, ``tau`` (J, K) the raters' cumulative parameters) from the
    paper's ratings but that one; a rest at an extreme score (or by raters ``tau`` cannot measure) is
    left out.  Each rest is solved once for its pattern of ratings (:func:`.quality.quality_by_pattern`)."""
    from ..methods.mml_engine import rating_patterns
    from ..methods.quality import quality_by_pattern

    chosen, rest, at = rest_items(ratings)
    theta, _, extreme = quality_by_pattern(rating_patterns(rest, ratings.rater[at], ratings.score[at]),
                                           chosen.size, tau)
    ok = np.isfinite(theta) & (extreme == 0)
    return chosen[ok], theta[ok]


def reading_sequence(ratings: Ratings) -> np.ndarray:
    """The ratings' indices paper by paper, each paper's in the order of reading: the file's ``order``
    column where it has one (``ratings.reading_order``, ties in file order), else the file's order."""
    if ratings.reading_order is None:
        return np.argsort(ratings.paper, kind="stable")
    return np.lexsort((ratings.reading_order, ratings.paper))


def first_reading(ratings: Ratings) -> np.ndarray:
    """Each rated paper's first reading (:func:`reading_sequence`), as rating indices."""
    seq = reading_sequence(ratings)
    p = ratings.paper[seq]
    return seq[np.r_[True, p[1:] != p[:-1]]] if seq.size else seq


#: the common distribution of quality of :func:`score_residuals`: weights on this grid of logits about the
#: papers' mean measure, found by EM (Laird's nonparametric ML) from at most NULL_PAPERS papers (drawn
#: with REST_SEED) in NULL_EM iterations
NULL_GRID = np.linspace(-6.0, 6.0, 49)
NULL_PAPERS = 20_000
NULL_EM = 200


def quality_distribution(ratings: Ratings, tau, centre: float = 0.0):
    """``(nodes, weights)``: one distribution of quality for every paper (the null hypothesis of
    random assignment), nonparametric, fitted to the papers' ratings given the raters' ``tau``."""
    from ..methods.quality import log_category_probabilities, score_range

    nodes = centre + NULL_GRID
    per_paper = ratings.ratings_per_paper()
    papers = np.flatnonzero(per_paper > 0)
    if papers.size > NULL_PAPERS:   # (drawn in :func:`canonical_order`: the same papers in any order of lines)
        papers = papers[np.argsort(canonical_order(ratings)[1][papers], kind="stable")]
        papers = np.sort(np.random.default_rng(REST_SEED).choice(papers, NULL_PAPERS, replace=False))
    keep = np.zeros(ratings.n_papers, dtype=bool)
    keep[papers] = True
    at = np.flatnonzero(keep[ratings.paper])
    lo, hi = score_range(tau)
    rater = ratings.rater[at]
    score = np.clip(ratings.score[at], lo[rater], hi[rater])
    # in logs throughout: the probability of a rating far from a rater's range underflowed to 0 at every
    # node, and the paper's likelihood became -inf - -inf = nan
    logp = log_category_probabilities(nodes[None, :], np.asarray(tau, float)[:, None, :])   # (J, Q, K)
    code = np.full(ratings.n_papers, -1, dtype=np.int64)
    code[papers] = np.arange(papers.size)
    ll = np.zeros((papers.size, nodes.size))
    np.add.at(ll, code[ratings.paper[at]], logp[rater, :, score])
    like = np.exp(ll - ll.max(axis=1, keepdims=True))
    w = np.full(nodes.size, 1.0 / nodes.size)
    for _ in range(NULL_EM):
        post = like * w
        post /= post.sum(axis=1, keepdims=True)
        w = post.mean(axis=0)
    return nodes, w


def score_residuals(item, rater, score, n_items, tau, nodes, weights):
    """Per item (a paper, or the rest of one of its ratings), ``(z, total)``: its ratings' total
    less its expectation over the common distribution of quality (``nodes``, ``weights``) given
    who gave them, over its standard deviation there; nan for an item without ratings.  Under
    random assignment each item's z has mean 0 whoever read it: a school read by its own pair is
    compared with what that pair gives papers of every school, not with the other schools (the
    papers' measures lean on their raters: six schools of equal means, each read by its own pair,
    differed by rater and by school in 100% and 83-100% of files)."""
    from scipy import sparse

    from ..methods.quality import category_probabilities, score_range

    tau = np.asarray(tau, float)
    lo, hi = score_range(tau)
    score = np.clip(score, lo[rater], hi[rater])
    p = category_probabilities(nodes[None, :], tau[:, None, :])   # (J, Q, K)
    k = np.arange(tau.shape[1], dtype=np.float64)
    m = p @ k                                                       # (J, Q): E[X | theta]
    v = p @ (k * k) - m * m                                         # Var[X | theta]
    S = sparse.csr_matrix((np.ones(item.size), (item, rater)), shape=(n_items, tau.shape[0]))
    M, V = S @ m, S @ v                                             # the items' sums over their raters
    mean = M @ weights
    var = (V + M * M) @ weights - mean * mean
    total = np.bincount(item, weights=score.astype(np.float64), minlength=n_items)
    n = np.bincount(item, minlength=n_items)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where((n > 0) & (var > 0), (total - mean) / np.sqrt(var), np.nan)
    return z, total


def design_readings(ratings: Ratings) -> Ratings:
    """The readings the assignment test looks at: a resolved file's first two readings of each paper
    (``first_readings``), else each paper's first ``r`` ratings in the order of reading (the file's
    ``order`` column, else its lines: :func:`reading_sequence`), ``r`` the number
    of ratings papers most often have (at least 2).  Readings beyond those (a third reading of a paper whose first
    two disagreed, an adjudication) go to a paper because of its scores, not at random, and bias the
    rest measures of its first readers: a severe reader's discrepant papers are those whose other
    reader gave them a high score (the README's example, grade 11, rest measures, all readings: p = .017; its
    first two: .071; the file was drawn with random first readers)."""
    first = getattr(ratings, "first_readings", None)
    if first is not None and first.n_papers == ratings.n_papers:
        if tuple(first.rater_ids) == tuple(ratings.rater_ids):
            return first
        # coded among the first readings' raters: recoded as ``ratings``' (whose model's tau it is read by); a
        # rater none of whose readings were kept, so without tau, left out (a reader of thirds alone is in
        # ``ratings`` only, and a count of raters alike is no sign the codes agree)
        code = {x: j for j, x in enumerate(ratings.rater_ids)}
        to = np.array([code.get(x, -1) for x in first.rater_ids], dtype=np.int64)[first.rater]
        return replace(first.subset(to >= 0), rater=to[to >= 0], n_raters=ratings.n_raters,
                       rater_ids=ratings.rater_ids)
    per_paper = ratings.ratings_per_paper()
    counts = np.bincount(per_paper[per_paper > 0])
    if counts.size == 0:
        return ratings
    r = max(2, int(np.argmax(counts)))   # (a sample of papers read twice, the rest once: both readings)
    if r >= per_paper.max():
        return ratings
    by_paper = reading_sequence(ratings)
    rank = np.empty(ratings.n_ratings, dtype=np.int64)
    rank[by_paper] = np.arange(ratings.n_ratings) - np.repeat(np.r_[0, np.cumsum(per_paper)][:-1], per_paper)
    return ratings.subset(rank < r)


def null_distribution(readings, model):
    """The common distribution of quality (:func:`quality_distribution`) about the papers' mean measure,
    from the design readings ``readings`` (:func:`design_readings`) and ``model``'s raters' tau."""
    measure = np.asarray(getattr(model, "measure", []), float)
    centre = float(np.nanmean(measure[np.isfinite(measure)])) if np.isfinite(measure).any() else 0.0
    return quality_distribution(readings, model.tau, centre)


def _by_rater(ratings, model, residuals="auto"):
    from scipy import stats   # here, not at the top: importing scipy.stats took 0.5-1.7 s of every adjust

    tau = getattr(model, "tau", None)
    J = ratings.n_raters
    if tau is not None and np.shape(tau)[0] == ratings.n_raters:   # (module docstring, 2)
        readings = design_readings(ratings)
        rated, rest, at = rest_items(readings)   # (the rests of papers read twice or more: both tests' rows)
        if residuals == "auto":   # (counted on the ratings the two-way model takes, not every rating)
            active = np.count_nonzero(np.bincount(readings.rater[at], minlength=J))
            residuals = "two-way" if J <= TWO_WAY_RATERS and at.size >= TWO_WAY_RATINGS * max(active, 1) \
                else "model"
        if residuals == "two-way":   # each rest rating's score, grouped by the rater whose paper it is on
            W, df, effects, _ = group_effects(readings.rater[at], readings.paper[at], readings.score[at],
                                              readings.rater[rated[rest]], J, J, readings.n_papers)
            if not (df > 0 and np.isfinite(W)):
                return {}
            use = np.bincount(readings.rater[rated], minlength=J) > 0
            return {"chi2": W, "df": df, "p": float(stats.chi2.sf(W, df)),
                    **_raw_correlation(ratings, use, effects[use])}
        if residuals:
            nodes, w = null_distribution(readings, model)
            x = score_residuals(rest, readings.rater[at], readings.score[at], rated.size, tau, nodes, w)[0]
            ok = np.isfinite(x)
            rated, x = rated[ok], x[ok]
        else:   # (the papers' rest measures, as before: tests/results/assignment_calibration.py)
            rated, x = rest_measures(readings, tau)
        r = readings.rater[rated]
        y = x
    else:   # (a model given without its raters' tau: the papers' own measures)
        measure, measured = np.asarray(model.measure, float), np.asarray(model.measured, bool)
        ok = measured[ratings.paper] & np.isfinite(measure[ratings.paper])
        r, p = ratings.rater[ok], ratings.paper[ok]
        x = measure[p]
        papers = np.flatnonzero(np.bincount(p, minlength=ratings.n_papers))   # np.unique(p), without its sort
        y = measure[papers]
    J = ratings.n_raters
    n = np.bincount(r, minlength=J)
    use = n > 0
    if use.sum() < 2:
        return {}
    m_j = np.bincount(r, weights=x, minlength=J)[use] / n[use]
    m, s2 = float(y.mean()), float(y.var(ddof=1)) if y.size > 1 else math.nan
    if not (s2 > 0):
        return {}
    chi2 = float((n[use] * (m_j - m) ** 2).sum() / s2)
    df = int(use.sum() - 1)
    return {"chi2": chi2, "df": df, "p": float(stats.chi2.sf(chi2, df)), **_raw_correlation(ratings, use, m_j)}


def _raw_correlation(ratings, use, m_j) -> dict:
    """``r``, ``r_p``: the raters' (``use``) raw means against their papers' quality ``m_j``."""
    from scipy import stats

    J = ratings.n_raters
    raw = np.bincount(ratings.rater, weights=ratings.score.astype(float), minlength=J)[use] / \
        np.maximum(np.bincount(ratings.rater, minlength=J)[use], 1)
    if np.std(raw) > 0 and np.std(m_j) > 0:
        import warnings

        with warnings.catch_warnings():   # nearly constant (scipy's relative test): r is nan, said as such
            warnings.simplefilter("ignore", stats.ConstantInputWarning)
            rr = stats.pearsonr(raw, m_j)
        return {"r": float(rr.statistic), "r_p": float(rr.pvalue)}
    return {"r": math.nan, "r_p": math.nan}


def group_effects(rater, paper, score, group, n_raters, n_groups, n_papers):
    """``(W, df, effects, n_links)``: the groups' effect on the scores (one row a rating: its ``rater``,
    ``paper``, ``score`` and ``group``), each rater's own mean taken out: a two-way model of score on
    rater and group, the rater's part removed by the within transformation; its Wald statistic with the
    covariance robust to the rows of one paper being alike (clustered by paper), on the rank of the
    effects' covariance (at most ``G - 1``, the groups read).  Under random assignment a rater's score
    has the same mean in every group, whatever the rater's severity, slope or use of the scale: no model
    of the ratings.  A group read by its own raters alone says nothing of its quality: the effects rest
    on the raters who read in more than one group (``n_links``: their rows).  ``effects``: (G,), 0 at
    the reference (the last group read) and at groups not read."""
    from scipy import sparse

    x = np.asarray(score, dtype=np.float64)
    rater, paper, group = (np.asarray(v, dtype=np.int64) for v in (rater, paper, group))
    J, G = n_raters, n_groups
    effects = np.zeros(G)
    n_k = np.bincount(rater, minlength=J).astype(np.float64)
    n_g = np.bincount(group, minlength=G).astype(np.float64)
    N = np.zeros((J, G))
    np.add.at(N, (rater, group), 1.0)
    links = int(((N > 0).sum(axis=1) > 1)[rater].sum())
    read = np.flatnonzero(n_g > 0)
    if read.size < 2:
        return math.nan, 0, effects, links
    keep = read[:-1]                                            # (the last group read: the reference)
    F = N / np.maximum(n_k, 1.0)[:, None]                       # each rater's share of rows in each group
    y = x - (np.bincount(rater, weights=x, minlength=J) / np.maximum(n_k, 1.0))[rater]
    A = (np.diag(n_g) - N.T @ F)[np.ix_(keep, keep)]            # D'D of the dummies less their raters' means
    b = np.bincount(group, weights=y, minlength=G)[keep]        # D'y (y sums to 0 within each rater)
    Ainv = np.linalg.pinv(A, hermitian=True)
    effects[keep] = Ainv @ b
    e = y - (effects[group] - (F @ effects)[rater])
    Ag = sparse.csr_matrix((e, (paper, group)), shape=(n_papers, G))
    Bk = sparse.csr_matrix((e, (paper, rater)), shape=(n_papers, J))
    AB = (Ag.T @ Bk).toarray()
    meat = (Ag.T @ Ag).toarray() - AB @ F - F.T @ AB.T + F.T @ (Bk.T @ Bk).toarray() @ F
    V = Ainv @ meat[np.ix_(keep, keep)] @ Ainv
    vals, vecs = np.linalg.eigh((V + V.T) / 2)
    good = vals > 1e-10 * max(float(vals.max(initial=0.0)), 1e-300)
    if not good.any():
        return math.nan, 0, effects, links
    t = vecs[:, good].T @ effects[keep]
    return float((t * t / vals[good]).sum()), int(good.sum()), effects, links


def cluster_effects(readings: Ratings, clusters):
    """:func:`group_effects` of the papers' clusters on the design readings (papers without a cluster
    left out)."""
    c = clusters[readings.paper]
    ok = c >= 0
    return group_effects(readings.rater[ok], readings.paper[ok], readings.score[ok], c[ok], readings.n_raters,
                         int(clusters.max(initial=-1)) + 1, readings.n_papers)


def _by_cluster(clusters, measure, measured, readings=None):
    """The papers' quality by cluster: with ``readings`` (the design readings) the two-way test of
    :func:`cluster_effects` (``F`` its Wald statistic over its df, ``p`` from chi-square; ``means`` the
    measures' by cluster, ``eta2`` theirs); without, the one-way ANOVA of the measures."""
    from scipy import stats

    ok = measured & np.isfinite(measure) & (clusters >= 0)
    groups = [measure[ok & (clusters == k)] for k in range(int(clusters.max(initial=-1)) + 1)]
    groups = [g for g in groups if g.size]
    if len(groups) < 2 or sum(g.size for g in groups) <= len(groups):
        return {}
    F, p = stats.f_oneway(*groups)
    allx = np.concatenate(groups)
    ssb = sum(g.size * (g.mean() - allx.mean()) ** 2 for g in groups)
    sst = ((allx - allx.mean()) ** 2).sum()
    out = {"F": float(F), "df": [len(groups) - 1, int(allx.size - len(groups))], "p": float(p),
           "eta2": float(ssb / sst) if sst > 0 else math.nan, "means": [float(g.mean()) for g in groups]}
    if readings is not None:
        W, df, _, links = cluster_effects(readings, clusters)
        if not (df > 0 and np.isfinite(W)):
            return {}
        out.update({"F": W / df, "df": [df, int(links)], "p": float(stats.chi2.sf(W, df)), "chi2": W,
                    "test": "two-way (rater, cluster), robust by paper; df[1]: ratings by raters of more than one cluster"})
    return out


def _severities(ratings, model, clusters=None):
    """CML (the report's model) against MML (MFRM) severities (module docstring, 3); with ``clusters`` the
    multi-group MML's (a mean quality per cluster)."""
    from scipy import stats

    from ..methods.mml import MarginalRaterModel

    try:
        mml = MarginalRaterModel(model="rsm", clusters=clusters).fit(ratings)
    except MethodError:
        return {}
    b1, s1 = np.asarray(model.severity, float), np.asarray(model.severity_se, float)
    b2, s2 = np.asarray(mml.severity_, float), np.asarray(mml.severity_se_, float)
    ok = np.isfinite(b1) & np.isfinite(b2) & np.isfinite(s1) & np.isfinite(s2) & ((s1 > 0) | (s2 > 0))
    if ok.sum() < 2:
        return {}
    d1, d2 = b1[ok] - b1[ok].mean(), b2[ok] - b2[ok].mean()
    z = (d2 - d1) / np.sqrt(s1[ok] ** 2 + s2[ok] ** 2)
    chi2, df = float((z * z).sum()), int(ok.sum() - 1)
    k = int(np.argmax(np.abs(z)))
    return {"chi2": chi2, "df": df, "p": float(stats.chi2.sf(chi2, df)), "max_z": float(abs(z[k])),
            "rater": str(ratings.rater_ids[np.flatnonzero(ok)[k]]) if ratings.rater_ids else int(np.flatnonzero(ok)[k]),
            "correlation": float(np.corrcoef(d1, d2)[0, 1]) if d1.std() > 0 and d2.std() > 0 else math.nan}


def assignment_evidence(ratings: Ratings, model=None, clusters=None, cluster_labels=(), cluster_source="",
                        alpha: float = ALPHA, severities: bool = True, network=None) -> Assignment:
    """The evidence of the module docstring for one group's ratings, as an :class:`Assignment` of
    ``given="auto"``.  ``model``: the check's fitted rater model (CML rating scale model; fitted here
    if None); ``clusters``: per-paper cluster codes from a column (else the network's; ``network``: :func:`network_clusters` of ``ratings`` where the caller found it already)."""
    from .rater_report import fit_rater_model

    out = Assignment(given="auto", assignment="random", confounded=None, alpha=alpha)
    if clusters is not None:
        out.clusters, out.cluster_labels, out.cluster_source = clusters, tuple(cluster_labels), cluster_source
        rc = _rater_majority(ratings, clusters)
        out.within = float(np.mean(rc[ratings.rater] == clusters[ratings.paper]))
    else:
        pc, _, q, within = network if network is not None else network_clusters(ratings)
        out.modularity, out.within = q, within
        if pc is not None:
            out.clusters, out.cluster_source = pc, "network"
            out.cluster_labels = tuple(f"C{k + 1}" for k in range(int(pc.max()) + 1))
    if ratings.max_raters_per_paper() < 2:
        out.reason = "one rating per paper: the file cannot show how papers were assigned (taken as random)"
        return out
    if model is None:
        try:
            model = fit_rater_model(ratings)
        except MethodError as exc:
            out.reason = f"the rater model could not be fitted ({str(exc).splitlines()[0]}): taken as random"
            return out
    measure, measured = np.asarray(model.measure, float), np.asarray(model.measured, bool)
    out.by_rater = _by_rater(ratings, model)
    if out.clusters is not None:
        out.by_cluster = _by_cluster(out.clusters, measure, measured, design_readings(ratings))
    if severities and "marginal" not in str(getattr(model, "name", "")):   # (a marginal fallback: MML against itself)
        out.severity = _severities(ratings, model)
    tests = [(t, name) for t, name in ((out.by_rater, "by rater"), (out.by_cluster, "by cluster")) if t]
    hits = [name for t, name in tests if t["p"] < alpha]
    out.confounded = bool(hits) if tests else None
    if out.clustered and "marginal" not in str(getattr(model, "name", "")):   # (does a mean per cluster meet it?)
        out.cluster_fit = _severities(ratings, model, out.clusters)
    if out.confounded:
        out.assignment = "nonrandom"
        what = " and ".join(f"{name} ({_stat(t)})" for t, name in tests if t["p"] < alpha)
        out.reason = (f"the papers' quality (their readers' scores against what each gives any paper) differs {what}, "
                      f"under the level {alpha:g}: who read a paper says how good it is")
        if out.clusters_miss:
            f = out.cluster_fit
            out.reason += (f"; a mean quality per cluster ({len(out.cluster_labels)} clusters, {out.cluster_source}) "
                           f"does not meet it: the multi-group MML's severities differ from the conditional model's "
                           f"(chi2({f['df']}) = {f['chi2']:.1f}, p {_p(f['p'])}, under {CLUSTER_FIT_ALPHA:g}), so it "
                           "is met as a confound without clusters"
                           + ("" if out.cluster_source != "network" else
                              " (where the file has a column of the papers' schools or classes, "
                              f"{mention('cluster', 'NAME')} gives the models those clusters)"))
        elif out.multigroup:
            out.reason += (f"; the marginal models (MML, MFRM) fit a mean quality per cluster "
                           f"({len(out.cluster_labels)} clusters, {out.cluster_source})")
    elif out.confounded is False:
        out.reason = "the papers each rater read do not differ in quality beyond chance (" + "; ".join(
            f"{name} {_stat(t)}" for t, name in tests) + f"; the level {alpha:g})"
    else:
        out.reason = "no test could be made: taken as random"
    return out


def _stat(t) -> str:
    if "F" in t and "chi2" not in t:
        return f"F = {t['F']:.1f}, p {_p(t['p'])}"
    if "F" in t:
        return f"chi2({t['df'][0]}) = {t['chi2']:.1f}, p {_p(t['p'])}"
    return f"chi2({t['df']}) = {t['chi2']:.1f}, p {_p(t['p'])}"


def _rater_majority(ratings, clusters):
    C = int(clusters.max(initial=-1)) + 1
    votes = np.zeros((ratings.n_raters, max(C, 1)))
    ok = clusters[ratings.paper] >= 0
    np.add.at(votes, (ratings.rater[ok], clusters[ratings.paper[ok]]), 1.0)
    return np.where(votes.sum(axis=1) > 0, votes.argmax(axis=1), -1)


def decide_assignment(ratings: Ratings, given: str = "auto", model=None, clusters=None, cluster_labels=(),
                      cluster_source="", alpha: float = ALPHA, severities: bool = True, network=None) -> Assignment:
    """The assignment the rule and the recommendation are given: the user's word (``random``,
    ``nonrandom``) with the evidence beside it, or with ``auto`` what the evidence says."""
    if given not in ASSIGNMENTS:
        raise ValueError(f"assignment must be one of {', '.join(ASSIGNMENTS)}, not {given!r}")
    ev = assignment_evidence(ratings, model, clusters, cluster_labels, cluster_source, alpha, severities, network)
    if given == "auto":
        return ev
    ev.given = given
    said = ev.assignment
    ev.assignment = given
    if given == "nonrandom":
        ev.confounded = True if ev.confounded is None else ev.confounded or True
        ev.reason = f"as given ({mention('assignment', 'nonrandom')})" + (
            "" if said == "nonrandom" else "; the file itself shows no confound: " + ev.reason)
    else:
        ev.reason = f"as given ({mention('assignment', 'random')})" + (
            "" if said == "random" else f"; but the file shows otherwise: {ev.reason}")
        ev.confounded = False
    return ev


def shared_verdict(founds: list, names: list, totals) -> list:
    """One verdict for cells read in one design (a rubric's criteria, each reader scoring every criterion of
    the papers it read): who read what is the same, so whether it says how good a paper is cannot differ
    between them, where each cell's test (:func:`assignment_evidence`, on its own criterion's scores) can: on
    a rubric of weakly confounded schools (tests/confounded.py's, school means -0.3..0.3) 12 of 30 files had
    criteria called non-random beside others called random, and their recommendations differed.
    ``founds``: each cell's :class:`Assignment` (``names``: the cells' labels).  Where all were decided by the
    evidence (``auto``) and disagree -- on the confound, or on whether a mean per cluster meets it
    (:attr:`Assignment.cluster_fit`: a researcher tester's rubric had one criterion of three given the PCM, its
    clusters missing at p = 0.02, the others the multi-group MML) -- the design's verdict is the test's on the
    papers' totals over the cells (``totals()``: the Assignment of :func:`assignment_evidence` on each reading's
    total, a measure of a paper's quality more reliable than any one criterion), and every cell takes it with a
    reason that says so; otherwise ``founds`` as they are."""
    if len(founds) < 2 or any(f.given != "auto" or f.confounded is None for f in founds):
        return list(founds)
    split = len({f.confounded for f in founds}) > 1
    if not split and len({f.clusters_miss for f in founds if f.clustered}) < 2:
        return list(founds)
    total = totals()
    if total.confounded is None:   # (no test on the totals: the cells' verdicts stand)
        return list(founds)
    joint = bool(total.confounded) if split else founds[0].confounded
    said = (f"one verdict for the {len(founds)} cells read by the same raters ({', '.join(map(str, names))}), whose "
            f"own tests disagree: on each reading's total over them, {total.reason}")
    out = []
    for f in founds:
        g = replace(f, confounded=joint, assignment="nonrandom" if joint else "random",
                    cluster_fit=dict(total.cluster_fit) if joint and total.clustered else {})
        g.reason = f"{said} (this cell's own tests: {f.reason})"
        if g.multigroup and not f.multigroup:
            g.reason += (f"; the marginal models (MML, MFRM) fit a mean quality per cluster "
                         f"({len(g.cluster_labels)} clusters, {g.cluster_source})")
        out.append(g)
    return out


def pop_cluster(ratings: Ratings, name: str):
    """``(ratings without the facet name, each rating's cluster code, cluster labels)``: a column read
    as a facet (``--cluster-col school``) taken back out, since a cluster is of the paper, not of
    the rating."""
    from dataclasses import replace

    facets = dict(ratings.facets)
    codes, labels = facets.pop(name)
    return replace(ratings, facets=facets), np.asarray(codes, dtype=np.int64), tuple(labels)


def paper_clusters(ratings: Ratings, rating_codes, column: str = "cluster") -> np.ndarray:
    """Each paper's cluster from its ratings' (-1: no ratings); an :class:`InputError` naming the
    paper when its ratings are in two clusters."""
    from ..errors import InputError

    rating_codes = np.asarray(rating_codes, dtype=np.int64)
    out = np.full(ratings.n_papers, -1, dtype=np.int64)
    out[ratings.paper] = rating_codes
    bad = np.flatnonzero(out[ratings.paper] != rating_codes)
    if bad.size:
        p = ratings.paper[bad[0]]
        label = ratings.paper_ids[p] if ratings.paper_ids else p
        raise InputError(f"paper {label} is in more than one {column}: a paper's cluster is one school (or class)",
                         field="--cluster-col")
    return out
