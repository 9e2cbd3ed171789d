"""Rater effects, assignment and analytic rubrics beyond Table 3 (issue 23): a config's
``raters.effects``, ``assignment`` and ``criteria``, for the ``pcm`` and ``sequential`` generators.

Rater ``j`` (Table 3 or the config's steps ``delta_jk``, ``k = 1..M``) scores rating ``r`` (paper
``i``, quality ``theta_i``) with the model's category probabilities at

    quality  a_j * theta_i
    steps    a_j * delta*_jk(t_r),   delta*_jk(t) = mean_k(delta_j) + (1 + c_j) (delta_jk - mean_k(delta_j))
                                                    + s_j + d_j (t - 1/2)

so that for the PCM ``P(x) ~ exp(sum_{k<=x} a_j (theta_i - delta*_jk(t_r)))``.  The effects, each
one number for every rater or a list with one per rater (0, or 1 for the slope, when absent):

* ``severity`` ``s_j`` (logits): every step moves up by ``s_j``; a severe rater (``s_j > 0``)
  gives lower scores to the same paper;
* ``slope`` ``a_j`` (discrimination, the rater's *spread*): ``a_j > 1`` separates papers of
  different quality more sharply, ``a_j < 1`` less (scores depend less on quality);
* ``centrality`` ``c_j`` (restriction of range): the steps move apart about their centre by the
  factor ``1 + c_j``, so the middle categories gain and the extreme ones lose (``-1 < c_j``;
  ``c_j < 0`` widens the rater's range);
* ``drift`` ``d_j`` (logits over the session): the severity changes linearly with the rating's
  position ``t_r`` in the rater's session, ``t = 0`` for its first rating and ``1`` for its last
  (papers are scored in paper order: a rater's ``n`` ratings have ``t = 0, 1/(n-1), ..., 1``;
  with one rating ``t = 1/2``);
* ``rater_task_sd`` with ``tasks`` (rater x task interaction): paper ``i`` belongs to task
  ``c = i mod tasks`` and rater ``j`` is ``gamma_jc ~ N(0, rater_task_sd^2)`` more severe on task
  ``c`` than elsewhere (``s_j + gamma_jc``), drawn afresh for each data set
  (:meth:`RaterEffects.task_interaction`); the true score leaves it out (its mean is 0);
* ``halo`` ``h_j`` (``0 <= h_j <= 1``, with ``criteria``): below.

``criteria`` makes every reading an analytic rubric's: the rater scores the paper on each of ``C``
criteria (``count``).  Paper ``i``'s quality on criterion ``c`` is the cell's shape (3z + 2,
5|z| - 3, -5|z| + 7: :func:`ratercal_cli.design.shape_quality`) of

    z_ic = sqrt(rho) z_i + sqrt(1 - rho) e_ic,      e_ic ~ N(0, 1) independent,

``z_i`` the paper's normal deviate of the design without criteria, so each criterion's qualities
have the cell's distribution and ``rho`` (``correlation``) is the correlation of the criteria's
deviates (of their qualities, for the normal shape).  Criterion ``c`` has a difficulty ``b_c``
(``difficulty``, logits, default 0), added to every step: ``delta*_jk(t) + b_c``.

*Halo* follows the general-impression model of halo error (Cooper 1981, Psychological Bulletin
90; Fisicaro & Lance 1990, Applied Psychological Measurement 14), the effect Myford & Wolfe (2003,
2004, Journal of Applied Measurement 4, 5) define for many-facet data as a rater who does not
distinguish conceptually distinct criteria: rater ``j``'s overall impression of the paper,
``theta_i. = mean_c theta_ic``, leaks into its rating of every criterion, which it scores at

    theta*_ijc = (1 - h_j) theta_ic + h_j theta_i.

(then ``a_j theta*_ijc`` against ``a_j (delta*_jk(t) + b_c)`` as above).  ``h_j = 0`` scores each
criterion on its own merit; ``h_j = 1`` gives every criterion the same quality, the paper's
overall, so the rater's profile across a paper's criteria carries only the criteria's
difficulties: its scores of one paper's criteria correlate more than the criteria do (Cooper's
illusory halo), and its ratings fit a many-facet model too well (Myford & Wolfe's muted
infit).

``halo_error`` ``sigma_j`` (logits, with ``halo``) gives the impression a rater-specific error
(issue 29): rater ``j``'s impression of paper ``i`` is ``theta_i. + e_ij``, ``e_ij ~ N(0,
sigma_j^2)`` drawn afresh for each reading (:meth:`RaterEffects.impression_error`), so

    theta*_ijc = (1 - h_j) theta_ic + h_j (theta_i. + e_ij).

A rater x paper effect shared by the criteria, ``h_j e_ij`` on every criterion, as the other
common formulation has it (Fisicaro & Lance 1990's general-impression model with an error in the
impression; Engelhard 1994, Journal of Educational Measurement 31).  Without it (``sigma_j = 0``)
the rubric mean of a reading's qualities is the paper's overall quality whatever ``h_j``: halo
then moves a paper's criteria but not its rubric mean, by construction; with it the rubric mean
is off by ``h_j e_ij``, an error of the reading no rater-level calibration removes.

The 2+ design with criteria takes the third reading when the first two readings' means over
the criteria differ by more than a point, and keeps it with the nearer of the two by that mean.
The papers' order and ``by_quality`` use the overall quality ``theta_i.``.

``assignment`` decides which raters score which paper (``raters_per_paper`` of them, distinct):

* ``random`` (the 1990 design): uniformly, as before;
* ``by_quality``: raters see papers from different parts of the quality distribution: paper
  ``i``, at quantile ``q_i = rank_i / (n - 1)`` of the qualities, draws the raters with the
  smallest ``u_ij + |q_i - j / (J - 1)|`` (``u_ij`` the same uniforms the random design uses), so
  rater 1 sees mostly the weakest papers and rater ``J`` the strongest.  With Table 3's raters,
  ordered lenient to stringent, lenient raters get weak papers: the non-random assignment under
  which Chapter 5's rule says not to equate.

The true score stays the study's: the mean over the raters of their expected score at the
paper's quality, with each rater's severity, slope and centrality and its mid-session drift
(``t = 1/2``); with criteria a paper has one on each criterion (at ``theta_ic``, with ``b_c``,
without halo, which is the rater's error) and its score is the *rubric mean*, the mean over the
criteria of its criterion scores (the rubric total over ``C``, on the 0..M scale the cut is on):
the Monte Carlo study and ``score`` rank the methods by it, each method applied to each
criterion's ratings on their own (``ratercal_cli.methods.apply.apply_within_cells``); ``score``
also writes each criterion's criteria.  Kelley's shrinkage of the rubric mean takes the
reliability of a reading's mean over the criteria (not each criterion's, which is lower and
would shrink the mean too far).  ``criteria: {score: each}`` makes the Monte Carlo study's unit
a paper's score on one criterion instead (every paper x criterion against its criterion true
score, each criterion shrunk by its own reliability): where halo does its harm, since the
rubric mean of the halo's qualities is the paper's overall quality, the mean of the
``theta_ic``, whatever ``h_j``.  Without effects and with random assignment the generators draw exactly the
numbers they drew before (a config without these keys makes the same data sets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the effects' names and their value for a rater without the effect
NEUTRAL = {"severity": 0.0, "slope": 1.0, "centrality": 0.0, "drift": 0.0}
#: halo's value for a rater without it (an effect only with criteria: not in :data:`NEUTRAL`)
NO_HALO = 0.0
ASSIGNMENTS = ("random", "by_quality")
#: what the Monte Carlo study scores with criteria: each paper's rubric mean, or each paper's criteria
RUBRIC_SCORES = ("mean", "each")


@dataclass(frozen=True)
class RaterEffects:
    """Per-rater effects (tuples, one value per rater) and the assignment (module docstring)."""

    severity: tuple
    slope: tuple
    centrality: tuple
    drift: tuple
    assignment: str = "random"
    tasks: int = 1             # papers belong to tasks (prompts) 0..tasks-1 in turn: paper i to i mod tasks
    rater_task_sd: float = 0.0 # SD of the rater x task interaction gamma_jc (logits)
    halo: tuple = ()           # h_j per rater (with criteria); (): none
    halo_error: tuple = ()     # sigma_j per rater: SD of the error in the rater's impression (logits); (): none

    def halo_weights(self, n_raters) -> np.ndarray:
        """``h_j`` of every rater (zeros without halo)."""
        return np.asarray(self.halo, dtype=np.float64) if self.halo else np.zeros(n_raters)

    @classmethod
    def none(cls, n_raters: int) -> "RaterEffects":
        return cls(**{k: (v,) * n_raters for k, v in NEUTRAL.items()})

    @property
    def neutral(self) -> bool:
        """No effect and random assignment: the generators' own numbers."""
        return self.assignment == "random" and self.rater_task_sd == 0 and not any(self.halo) and all(
            all(x == NEUTRAL[k] for x in getattr(self, k)) for k in NEUTRAL)

    def to_dict(self) -> dict:
        out = {**{k: list(getattr(self, k)) for k in NEUTRAL}, "assignment": self.assignment}
        if self.rater_task_sd:
            out.update(tasks=self.tasks, rater_task_sd=self.rater_task_sd)
        if any(self.halo):
            out["halo"] = list(self.halo)
        if any(self.halo_error):
            out["halo_error"] = list(self.halo_error)
        return out

    def impression_error(self, seed_seq, raters):
        """``e_ij`` (papers, k) of the readings ``raters`` (papers, k): the error in each rater's
        overall impression of the paper, ``N(0, sigma_j^2)``, from its own stream (the ratings'
        SeedSequence with a further spawn key 3), so that the other draws are those of a design
        without it; zeros without the effect."""
        raters = np.asarray(raters)
        if not any(self.halo_error):
            return np.zeros(raters.shape)
        rng = np.random.default_rng(np.random.SeedSequence(seed_seq.entropy, spawn_key=tuple(seed_seq.spawn_key) + (3,)))
        return np.asarray(self.halo_error, dtype=np.float64)[raters] * rng.standard_normal(raters.shape)

    def task_interaction(self, seed_seq, n_raters):
        """``gamma`` (J, tasks), the rater x task interaction of one data set: ``N(0, rater_task_sd^2)``
        from its own stream (the ratings' SeedSequence with a further spawn key 2), so that the
        other draws are those of a design without it; zeros without the effect."""
        if not self.rater_task_sd:
            return np.zeros((n_raters, self.tasks))
        rng = np.random.default_rng(np.random.SeedSequence(seed_seq.entropy, spawn_key=tuple(seed_seq.spawn_key) + (2,)))
        return self.rater_task_sd * rng.standard_normal((n_raters, self.tasks))

    def _arr(self, name):
        return np.asarray(getattr(self, name), dtype=np.float64)

    def rater_steps(self, steps, t=0.5):
        """``delta*_jk(t)`` for every rater (``steps`` (J, M); ``t`` a scalar or an array broadcasting
        against ``(J,)`` after indexing): centrality about the centre, severity and drift."""
        steps = np.asarray(steps, dtype=np.float64)
        centre = steps.mean(axis=-1, keepdims=True)
        c, s, d = self._arr("centrality"), self._arr("severity"), self._arr("drift")
        return centre + (1.0 + c)[:, None] * (steps - centre) + (s + d * (np.asarray(t) - 0.5))[..., None]

    def rating_model(self, quality, raters, steps, t, shift=0.0):
        """``(quality', steps')`` of ratings by ``raters`` (any shape) of papers of ``quality``
        (broadcasting against ``raters``) at session positions ``t`` (same shape as ``raters``),
        every step moved by ``shift`` (the rater x task interaction of each rating): the arguments
        of the model's probabilities (module docstring)."""
        steps = np.asarray(steps, dtype=np.float64)
        centre = steps.mean(axis=-1, keepdims=True)
        c, s, d, a = self._arr("centrality"), self._arr("severity"), self._arr("drift"), self._arr("slope")
        base = centre + (1.0 + c)[:, None] * (steps - centre) + s[:, None]          # (J, M)
        delta = base[raters] + (d[raters] * (np.asarray(t) - 0.5) + shift)[..., None]
        a_r = a[raters]
        return a_r * np.asarray(quality, dtype=np.float64), a_r[..., None] * delta

    def mid_session(self, steps):
        """``(slope (J,), steps' (J, M))`` of every rater at ``t = 1/2``, for the true score:
        quality ``a_j theta`` against steps ``a_j delta*_jk(1/2)``."""
        a = self._arr("slope")
        return a, a[:, None] * self.rater_steps(steps)

    def draw_raters(self, u, quality, k):
        """``k`` distinct raters per paper from the uniforms ``u`` (papers, J): the ``k`` smallest
        ``u`` (random) or ``u + |q_i - j/(J-1)|`` (by_quality)."""
        if self.assignment == "random":
            return np.argsort(u, axis=1)[:, :k]
        n, J = u.shape
        rank = np.empty(n)
        rank[np.argsort(quality, kind="stable")] = np.arange(n)
        q = rank / max(n - 1, 1)
        pos = np.arange(J) / max(J - 1, 1)
        return np.argsort(u + np.abs(q[:, None] - pos[None, :]), axis=1)[:, :k]


def session_positions(raters, n_raters):
    """``t`` of every drawn rating ``raters`` (papers, k): its rank among its rater's ratings in paper
    order (then column order) over the rater's count less one; ``1/2`` for a rater with one."""
    flat = np.asarray(raters).ravel()
    order = np.argsort(flat, kind="stable")          # paper-major order within each rater
    counts = np.bincount(flat, minlength=n_raters)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(flat.size)
    rank[order] = np.arange(flat.size) - np.repeat(starts, counts)
    n = counts[flat]
    t = np.where(n > 1, rank / np.maximum(n - 1, 1), 0.5)
    return t.reshape(np.shape(raters))


#: The largest size of an effect a config may give (logits, or a factor): 100 is far beyond any
#: rater, and a value of 1e308 made the model's logits infinite and every method's RMSE 0.
MAX_EFFECT = 100.0


def parse_effects(where, data, n_raters) -> RaterEffects:
    """``raters.effects`` and ``assignment`` of a config (``where`` gives its errors line numbers)."""
    raw = (data.get("raters") or {}).get("effects") or {}
    if not isinstance(raw, dict):
        raise where.error(("raters", "effects"), "expected a mapping of severity, slope, centrality, drift")
    out = {}
    known = tuple(NEUTRAL) + ("rater_task_sd", "tasks", "halo", "halo_error")
    for name in raw:
        if name not in known:
            raise where.error(("raters", "effects", name), f"unknown effect (known: {', '.join(known)})")
    for name, neutral in NEUTRAL.items():
        v = raw.get(name, neutral)
        path = ("raters", "effects", name)
        values = _per_rater(where, v, path, n_raters, -np.inf, np.inf)
        for i, x in enumerate(values):
            p, given = (path + (i,), v[i]) if isinstance(v, list) else (path, v)
            if abs(x) > MAX_EFFECT:   # far past any rater, and past what the model's exp can carry
                raise where.error(p, f"{name} {x:g}: at most {MAX_EFFECT:g} in size (logits)")
            if name == "slope" and x <= 0:
                raise where.error(p, f"a slope must be > 0, got {given}")
            if name == "centrality" and x <= -1:
                raise where.error(p, f"a centrality must be > -1, got {given}")
        out[name] = values
    extra = {}
    if "rater_task_sd" in raw or "tasks" in raw:
        sd, tasks = raw.get("rater_task_sd", 0.0), raw.get("tasks", 1)
        if isinstance(sd, bool) or not isinstance(sd, (int, float)) or not np.isfinite(sd) or sd < 0:
            raise where.error(("raters", "effects", "rater_task_sd"), f"expected a number >= 0, got {sd!r}")
        if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
            raise where.error(("raters", "effects", "tasks"), f"expected a count >= 1, got {tasks!r}")
        extra = {"tasks": int(tasks), "rater_task_sd": float(sd)}
    if "halo" in raw:
        if not data.get("criteria"):
            raise where.error(("raters", "effects", "halo"), "halo leaks a rater's overall impression across "
                              "criteria: give the rubric's criteria (criteria: {count: 4})")
        extra["halo"] = _per_rater(where, raw["halo"], ("raters", "effects", "halo"), n_raters, 0.0, 1.0)
    if "halo_error" in raw:
        if "halo" not in raw:
            raise where.error(("raters", "effects", "halo_error"), "halo_error is the error in the impression "
                              "halo leaks across criteria: give the raters' halo too")
        extra["halo_error"] = _per_rater(where, raw["halo_error"], ("raters", "effects", "halo_error"), n_raters,
                                         0.0, MAX_EFFECT)
    assignment = data.get("assignment", "random")
    if assignment not in ASSIGNMENTS:
        raise where.error(("assignment",), f"must be one of {', '.join(ASSIGNMENTS)}, not {assignment!r}")
    return RaterEffects(**out, assignment=assignment, **extra)


def _per_rater(where, v, path, n_raters, lo, hi) -> tuple:
    """One number for every rater or a list with one per rater, each in ``[lo, hi]``."""
    values = v if isinstance(v, list) else [v] * n_raters
    if len(values) != n_raters:
        raise where.error(path, f"{len(values)} values for {n_raters} raters (give one number or one per rater)")
    out = []
    for i, x in enumerate(values):
        p = path + ((i,) if isinstance(v, list) else ())
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not np.isfinite(x) or not lo <= x <= hi:
            bounds = "a finite number" if np.isinf(lo) else f"a number from {lo:g} to {hi:g}"
            raise where.error(p, f"expected {bounds}, got {x!r}")
        out.append(float(x))
    return tuple(out)


def criterion_labels(count) -> tuple:
    """The criteria's names: ``c1, c2, ...`` (the stage files number them 1, 2, ...)."""
    return tuple(f"c{c + 1}" for c in range(int(count)))


@dataclass(frozen=True)
class RubricDesign:
    """An analytic rubric's criteria (module docstring): their number, the correlation ``rho`` of
    their normal deviates and their difficulties ``b_c`` (logits, + = lower scores)."""

    count: int
    correlation: float
    difficulty: tuple
    score: str = "mean"        # the study's unit: the rubric mean of a paper, or each paper's criteria

    @property
    def labels(self) -> tuple:
        return criterion_labels(self.count)

    def to_dict(self) -> dict:
        return {"count": self.count, "correlation": self.correlation, "difficulty": list(self.difficulty),
                **({"score": self.score} if self.score != "mean" else {})}

    def qualities(self, z, e, quality: str) -> np.ndarray:
        """``theta_ic`` (papers, C): the cell's shape of ``sqrt(rho) z_i + sqrt(1 - rho) e_ic``."""
        from .design import shape_quality

        rho = self.correlation
        return shape_quality(np.sqrt(rho) * np.asarray(z)[:, None] + np.sqrt(1.0 - rho) * np.asarray(e), quality)


def halo_qualities(theta_c, raters, halo, impression=None) -> np.ndarray:
    """``theta*_ijc = (1 - h_j) theta_ic + h_j (theta_i. + e_ij)`` (papers, k, C) of the readings
    ``raters`` (papers, k) of papers with criterion qualities ``theta_c`` (papers, C); ``halo``
    ``h_j`` (J,); ``impression`` ``e_ij`` (papers, k), the error in the rater's impression (None: 0)."""
    theta_c = np.asarray(theta_c, dtype=np.float64)
    h = np.asarray(halo, dtype=np.float64)[raters][..., None]                  # (papers, k, 1)
    overall = theta_c.mean(axis=1)[:, None, None]
    if impression is not None and np.any(impression):
        overall = overall + np.asarray(impression, dtype=np.float64)[..., None]
    return (1.0 - h) * theta_c[:, None, :] + h * overall


def parse_criteria(where, data):
    """``criteria`` of a config: ``{count: C >= 2, correlation: rho in [0, 1] (default 0.7),
    difficulty: one number or one per criterion (default 0), score: mean | each}``, or None when
    absent."""
    raw = data.get("criteria")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise where.error(("criteria",), "expected a mapping with count (and correlation, difficulty)")
    for k in raw:
        if k not in ("count", "correlation", "difficulty", "score"):
            raise where.error(("criteria", k), "unknown key (known: count, correlation, difficulty, score)")
    score = raw.get("score", "mean")
    if score not in RUBRIC_SCORES:
        raise where.error(("criteria", "score"), f"must be one of {', '.join(RUBRIC_SCORES)}, not {score!r}")
    count = raw.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise where.error(("criteria", "count"), f"expected the number of criteria, 2 or more, got {count!r}")
    rho = raw.get("correlation", 0.7)
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0 <= rho <= 1:
        raise where.error(("criteria", "correlation"), f"expected a number from 0 to 1, got {rho!r}")
    diff = _per_rater(where, raw.get("difficulty", 0.0), ("criteria", "difficulty"), count, -np.inf, np.inf) \
        if not isinstance(raw.get("difficulty", 0.0), list) or len(raw["difficulty"]) == count else None
    if diff is None:
        raise where.error(("criteria", "difficulty"), f"{len(raw['difficulty'])} values for {count} criteria "
                          "(give one number or one per criterion)")
    return RubricDesign(count=count, correlation=float(rho), difficulty=diff, score=score)
