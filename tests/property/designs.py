"""Designs of ratings files drawn by Hypothesis (issue 28): raters per paper 1-21 and mixed, the share
double-scored, third readings, groups, rubric criteria (long or wide), scales 0-k and 1-k, lookalike
labels; schools read by their own raters (no column says so), apart or linked by a few papers read
across.  A :class:`Design` is drawn by :func:`designs` (:func:`school_designs`) and made into rows by
:meth:`Design.rows`; the writers put the same rows in a CSV, an .xlsx workbook or a wide file."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from ratercal_cli.models.pcm import sample_scores

CYRILLIC = {"A": "\u0410", "B": "\u0412", "C": "\u0421", "E": "\u0415", "H": "\u041d", "K": "\u041a",
            "M": "\u041c", "O": "\u041e", "P": "\u0420", "T": "\u0422", "X": "\u0425"}


@dataclass
class Design:
    n_papers: int
    n_raters: int
    per_paper: int            # readings of a paper by the base design
    double_share: float       # with per_paper == 1: the share of papers read by a second rater
    third: bool               # a third reading where the first two differ by more than a point
    groups: int               # 1: no group column
    criteria: int             # 0: one score a reading; else a rubric of that many criteria
    low: int
    high: int
    seed: int
    severity_sd: float = 0.7
    lookalike: bool = False   # one rater's label typed, on some of its lines, with a Cyrillic letter
    rater_names: tuple = field(default=())
    schools: int = 1          # >1: paper p is school p % schools's and is read by that school's raters
    across: int = 0           # ... but for this many papers, each read by one rater of the next school too
    school_step: float = 0.0  # school s's papers' mean quality: s x this (logits)

    @property
    def scale(self) -> str:
        return f"{self.low}-{self.high}"

    def names(self):
        """Raters' labels: R1..Rn, or given ones."""
        return list(self.rater_names) or [f"R{j + 1}" for j in range(self.n_raters)]

    def rows(self):
        """``[{group, paper, rater, order, criterion, score}]`` in file order (criterion None without
        criteria); scores from the partial credit model with rater severities."""
        rng = np.random.default_rng(self.seed)
        m = self.high - self.low
        sev = rng.normal(0, self.severity_sd, self.n_raters)
        steps = np.linspace(-1.5, 1.5, m) + rng.normal(0, 0.2, m)
        crit = rng.normal(0, 0.4, max(self.criteria, 1))
        names = self.names()
        out = []
        for p in range(self.n_papers):
            k = self.per_paper
            if k == 1 and rng.random() < self.double_share:
                k = 2
            k = min(k, self.n_raters)
            if self.schools > 1:   # the school's own raters (raters j with j % schools == s)
                s_ = p % self.schools
                own = np.arange(s_, self.n_raters, self.schools)
                who = rng.choice(own, min(k + (1 if self.third else 0), own.size), replace=False)
                if p < self.across * self.schools and p % self.schools == 0 and who.size > 1:
                    who[-1] = (who[-1] + 1) % self.n_raters   # one reader from the next school
            else:   # (the draws in this order: a design's rows stay those its seed gave before schools)
                who = rng.choice(self.n_raters, min(k + (1 if self.third else 0), self.n_raters), replace=False)
            theta = rng.normal(0, 1.2) + (p % self.schools) * self.school_step
            group = f"G{p % self.groups + 1}" if self.groups > 1 else None
            for c in range(max(self.criteria, 1)):
                d = steps[None, :] + (sev[who] + crit[c])[:, None]
                s = sample_scores(rng, np.full(len(who), theta), d).astype(int)
                keep = k
                if self.third and k == 2 and len(who) > 2 and abs(int(s[0]) - int(s[1])) > 1:
                    keep = 3
                for i in range(keep):
                    out.append({"group": group, "paper": f"P{p + 1}", "rater": names[who[i]], "order": i + 1,
                                "criterion": f"c{c + 1}" if self.criteria else None,
                                "score": int(s[i]) + self.low})
        if self.lookalike:
            target = names[0]
            variant = "".join(CYRILLIC.get(ch, ch) for ch in target)
            if variant != target:
                mine = [r for r in out if r["rater"] == target]
                for r in mine[::3]:
                    r["rater"] = variant
        return out

    def columns(self):
        cols = (["group"] if self.groups > 1 else []) + ["paper", "rater", "order"]
        return cols + (["criterion"] if self.criteria else []) + ["score"]

    def options(self, fold=False):
        """The command-line options that read the long file."""
        opts = ["--scale", self.scale]
        if self.groups > 1:
            opts += ["--group-col", "group"]
        if self.criteria:
            opts += ["--facet-col", "criterion"]
        if fold:
            opts += ["--fold-labels"]
        return opts


def write_csv(rows, columns, path):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([r[c] for c in columns])
    return path


def write_spreadsheet_csv(rows, columns, path, delimiter=";", decimal_comma=True):
    """The rows as a spreadsheet set up for decimal commas saves CSV: ``;`` (or tabs), CRLF, a byte-order mark,
    scores written ``3,0`` (with ``decimal_comma``), no ``--sep`` or ``--decimal`` needed to read them."""
    with open(path, "w", newline="", encoding="utf-8-sig") as fh:
        w = csv.writer(fh, delimiter=delimiter, lineterminator="\r\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([f"{r[c]},0" if c == "score" and decimal_comma else r[c] for c in columns])
    return path


def write_xlsx(rows, columns, path):
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.append(columns)
    for r in rows:
        ws.append([r[c] for c in columns])
    wb.save(path)
    return path


def write_wide_criteria(rows, columns, path, criteria):
    """A row per reading (group, paper, rater, order) with a column per criterion."""
    key_cols = [c for c in columns if c not in ("criterion", "score")]
    table = {}
    for r in rows:
        table.setdefault(tuple(r[c] for c in key_cols), {})[r["criterion"]] = r["score"]
    crit = [f"c{c + 1}" for c in range(criteria)]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(key_cols + crit)
        for key, scores in table.items():
            w.writerow(list(key) + [scores.get(c, "") for c in crit])
    return path


@st.composite
def designs(draw, max_papers=40, rubric=True, lookalike=True, third=True, groups=True):
    """A :class:`Design` (see the module); small, so that a few hundred run in CI's time."""
    n_raters = draw(st.integers(2, 12))
    per_paper = draw(st.sampled_from([1, 1, 2, 2, 3, min(21, n_raters), n_raters]))
    per_paper = max(1, min(per_paper, n_raters))
    low = draw(st.sampled_from([0, 1]))
    return Design(
        n_papers=draw(st.integers(4, max_papers)),
        n_raters=n_raters,
        per_paper=per_paper,
        double_share=draw(st.sampled_from([0.0, 0.05, 0.2, 0.5, 1.0])) if per_paper == 1 else 0.0,
        third=draw(st.booleans()) if third and per_paper == 2 else False,
        groups=draw(st.sampled_from([1, 1, 2, 3])) if groups else 1,
        criteria=draw(st.sampled_from([0, 0, 0, 2, 4])) if rubric else 0,
        low=low,
        high=low + draw(st.integers(1, 9)),
        seed=draw(st.integers(0, 2**31)),
        severity_sd=draw(st.sampled_from([0.0, 0.5, 1.5])),
        lookalike=draw(st.booleans()) if lookalike else False,
    )


@st.composite
def school_designs(draw, max_papers=60):
    """A :class:`Design` whose papers are 2-3 schools' (no school column), each read by 2 or 3 of that
    school's own raters, the schools of different mean quality, apart (``across`` 0) or linked by a few
    papers each read by one rater of another school; one score a reading, no groups."""
    schools = draw(st.integers(2, 3))
    per_school = draw(st.integers(2, 4))
    per_paper = draw(st.integers(2, min(3, per_school)))
    low = draw(st.sampled_from([0, 1]))
    return Design(
        n_papers=draw(st.integers(6 * schools, max_papers)),
        n_raters=schools * per_school,
        per_paper=per_paper,
        double_share=0.0,
        third=False,
        groups=1,
        criteria=0,
        low=low,
        high=low + draw(st.integers(3, 6)),
        seed=draw(st.integers(0, 2**31)),
        severity_sd=draw(st.sampled_from([0.3, 0.8])),
        schools=schools,
        across=draw(st.sampled_from([0, 0, 1, 3])),
        school_step=draw(st.sampled_from([0.0, 1.0, -1.5])),
    )
