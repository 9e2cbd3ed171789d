"""The design shapes of issue 32's table, as ratings arrays and CSV files: ``k`` of ``J`` raters a
paper (2 or 3 of 200, 21 of 200, a complete panel of 21) and the 84-ratings-a-paper rubric (21
raters x 4 domains).  Scores as :func:`bench_large_files.simulate`: rounded quality + the rater's
severity (+ the domain's difficulty) + noise, clipped to 0..top.

    from shapes import SHAPES, shape_arrays, write_shape
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: name -> (raters a paper, raters, domains)
SHAPES = {
    "2 of 200": (2, 200, 1),
    "3 of 200": (3, 200, 1),
    "complete 21": (21, 21, 1),
    "21 of 200": (21, 200, 1),
    "rubric 84": (21, 21, 4),
}
#: the rubric's domains and their difficulties (score points)
DOMAINS = {"ideas": -0.5, "organisation": 0.0, "style": 0.0, "conventions": 0.5}


def shape_arrays(name: str, n_ratings: int, seed: int = 1, top: int = 5):
    """(paper, rater, score, domain) int arrays of about ``n_ratings`` ratings of shape ``name``
    (a paper's ratings next to each other; ``domain`` all 0 but for the rubric)."""
    k, J, F = SHAPES[name]
    rng = np.random.default_rng([seed, k, J, F])
    n_papers = max(1, n_ratings // (k * F))
    severity = rng.normal(0.0, 0.5, J)
    difficulty = np.array(list(DOMAINS.values()))[:F] if F > 1 else np.zeros(1)
    out = []
    for start in range(0, n_papers, 50_000):
        p = np.arange(start, min(n_papers, start + 50_000))
        quality = rng.normal(2.5, 1.0, p.size)
        if k == J:
            raters = np.broadcast_to(np.arange(J), (p.size, J))
        else:   # k distinct raters a paper
            raters = np.argpartition(rng.random((p.size, J)), k - 1, axis=1)[:, :k]
        reading = quality[:, None] + severity[raters] + rng.normal(0.0, 0.7, raters.shape)   # (papers, k)
        score = reading[:, :, None] - difficulty[None, None, :] + (rng.normal(0.0, 0.5, raters.shape + (F,)) if F > 1
                                                                 else 0.0)
        score = np.clip(np.rint(score), 0, top).astype(np.int64)
        out.append((np.repeat(p, k * F), np.repeat(raters.ravel(), F), score.ravel(),
                    np.tile(np.arange(F), p.size * k)))
    return tuple(np.concatenate(x) for x in zip(*out))


def write_shape(path: Path, name: str, n_ratings: int, seed: int = 1, top: int = 5) -> None:
    """The ratings of :func:`shape_arrays` as a CSV file: ``paper,rater,score`` (labels P1.., R1..),
    the rubric with a ``criterion`` column (the long form ``--facet-col criterion`` reads)."""
    paper, rater, score, domain = shape_arrays(name, n_ratings, seed, top)
    rubric = SHAPES[name][2] > 1
    names = np.array(list(DOMAINS))
    with open(path, "w") as fh:
        fh.write("paper,rater,criterion,score\n" if rubric else "paper,rater,score\n")
        for a in range(0, paper.size, 400_000):
            cols = [paper[a:a + 400_000].tolist(), (rater[a:a + 400_000] + 1).tolist()]
            if rubric:
                cols.append(names[domain[a:a + 400_000]].tolist())
            cols.append(score[a:a + 400_000].tolist())
            row = "P{},R{},{},{}\n" if rubric else "P{},R{},{}\n"
            fh.write("".join(row.format(*x) for x in zip(*cols)))
