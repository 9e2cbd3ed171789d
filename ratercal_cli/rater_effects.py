"""Rater effects and assignment beyond Table 3 (issue 23): a config's ``raters.effects`` and
``assignment``, for the ``pcm`` and ``sequential`` generators.

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
  (:meth:`RaterEffects.task_interaction`); the true score leaves it out (its mean is 0).

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
(``t = 1/2``).  Without effects and with random assignment the generators draw exactly the
numbers they drew before (a config without these keys makes the same data sets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the effects' names and their value for a rater without the effect
NEUTRAL = {"severity": 0.0, "slope": 1.0, "centrality": 0.0, "drift": 0.0}
ASSIGNMENTS = ("random", "by_quality")


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

    @classmethod
    def none(cls, n_raters: int) -> "RaterEffects":
        return cls(**{k: (v,) * n_raters for k, v in NEUTRAL.items()})

    @property
    def neutral(self) -> bool:
        """No effect and random assignment: the generators' own numbers."""
        return self.assignment == "random" and self.rater_task_sd == 0 and all(
            all(x == NEUTRAL[k] for x in getattr(self, k)) for k in NEUTRAL)

    def to_dict(self) -> dict:
        out = {**{k: list(getattr(self, k)) for k in NEUTRAL}, "assignment": self.assignment}
        if self.rater_task_sd:
            out.update(tasks=self.tasks, rater_task_sd=self.rater_task_sd)
        return out

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


def parse_effects(where, data, n_raters) -> RaterEffects:
    """``raters.effects`` and ``assignment`` of a config (``where`` gives its errors line numbers)."""
    raw = (data.get("raters") or {}).get("effects") or {}
    if not isinstance(raw, dict):
        raise where.error(("raters", "effects"), "expected a mapping of severity, slope, centrality, drift")
    out = {}
    known = tuple(NEUTRAL) + ("rater_task_sd", "tasks")
    for name in raw:
        if name not in known:
            raise where.error(("raters", "effects", name), f"unknown effect (known: {', '.join(known)})")
    for name, neutral in NEUTRAL.items():
        v = raw.get(name, neutral)
        path = ("raters", "effects", name)
        values = v if isinstance(v, list) else [v] * n_raters
        if len(values) != n_raters:
            raise where.error(path, f"{len(values)} values for {n_raters} raters (give one number or one per rater)")
        nums = []
        for i, x in enumerate(values):
            p = path + ((i,) if isinstance(v, list) else ())
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not np.isfinite(x):
                raise where.error(p, f"expected a finite number, got {x!r}")
            if name == "slope" and x <= 0:
                raise where.error(p, f"a slope must be > 0, got {x}")
            if name == "centrality" and x <= -1:
                raise where.error(p, f"a centrality must be > -1, got {x}")
            nums.append(float(x))
        out[name] = tuple(nums)
    extra = {}
    if "rater_task_sd" in raw or "tasks" in raw:
        sd, tasks = raw.get("rater_task_sd", 0.0), raw.get("tasks", 1)
        if isinstance(sd, bool) or not isinstance(sd, (int, float)) or not np.isfinite(sd) or sd < 0:
            raise where.error(("raters", "effects", "rater_task_sd"), f"expected a number >= 0, got {sd!r}")
        if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
            raise where.error(("raters", "effects", "tasks"), f"expected a count >= 1, got {tasks!r}")
        extra = {"tasks": int(tasks), "rater_task_sd": float(sd)}
    assignment = data.get("assignment", "random")
    if assignment not in ASSIGNMENTS:
        raise where.error(("assignment",), f"must be one of {', '.join(ASSIGNMENTS)}, not {assignment!r}")
    return RaterEffects(**out, assignment=assignment, **extra)
