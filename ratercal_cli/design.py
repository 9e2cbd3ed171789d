"""Cells of the factorial, set codes, and the nine raters of Table 3.

A set code is the BASIC programs' ``F$``: four digits ``w x y z`` —
w raters per paper (0 means "2+": two raters, a third when they differ by more
than one point), x hundreds of papers, y the scale maximum M (scores 0..M),
z the paper-quality shape (1 normal, 2 positive skew, 3 negative skew).
The tables write the same set ``2+551`` where the programs write ``0551``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .vocabulary import QUALITY_CODES, QUALITY_SHAPES


@dataclass(frozen=True, order=True)
class Cell:
    """One simulated data set of the factorial.

    raters_per_paper: "1", "2", "3" or "2+".
    """

    raters_per_paper: str
    papers: int
    max_score: int
    quality: str

    @property
    def code(self) -> str:
        """The programs' name, e.g. ``0551``."""
        w = "0" if self.raters_per_paper == "2+" else self.raters_per_paper
        if (self.raters_per_paper not in ("1", "2", "3", "2+") or self.papers % 100
                or not 0 < self.papers < 1000 or not 0 < self.max_score < 10):
            return f"{w}-{self.papers}-{self.max_score}-{QUALITY_CODES[self.quality]}"
        return f"{w}{self.papers // 100}{self.max_score}{QUALITY_CODES[self.quality]}"

    @property
    def label(self) -> str:
        """The tables' name, e.g. ``2+551``."""
        code = self.code
        return "2+" + code[1:] if self.raters_per_paper == "2+" and len(code) == 4 else code

    @property
    def raters_drawn(self) -> int:
        """Raters drawn for each paper: the 2+ design draws a third one (scored only when the
        first two differ by more than a point)."""
        return 3 if self.raters_per_paper == "2+" else int(self.raters_per_paper)

    @property
    def basic_mj(self) -> int:
        """MJ of the BASIC programs: 0 for 2+."""
        return 0 if self.raters_per_paper == "2+" else int(self.raters_per_paper)


def shape_quality(z, quality: str):
    """The programs' paper qualities from standard normal draws ``z``: ``3z + 2`` (normal),
    ``5|z| - 3`` (positive skew), ``-5|z| + 7`` (negative skew), in the precision of ``z``
    (PARGEN.BAS's singles in the faithful generator, doubles in the seeded ones), any shape."""
    c = np.asarray(z).dtype.type
    if quality == "normal":
        return z * c(3) + c(2)
    if quality == "positive":
        return np.abs(z) * c(5) - c(3)
    return c(-5) * np.abs(z) + c(7)


#: The 2+ design's third reading: drawn when the first two scores differ by more than this.
THIRD_READING_GAP = 1


def needs_third(s1, s2, gap=THIRD_READING_GAP):
    """Whether a paper scored ``s1`` and ``s2`` gets a third rating (scalars or arrays)."""
    return abs(s1 - s2) > gap


def keep_first(s1, s2, s3):
    """Which of the first two ratings the third is kept with (True: the first): the nearer to
    ``s3``; on a tie (the third midway) the lower is dropped -- OBSGEN.BAS's rule and the
    district's (Denny 1990, p. 50).  Scalars or arrays; where ``s1 == s2`` (never on a paper
    that needs a third) the second is kept."""
    d1, d2 = abs(s3 - s1), abs(s3 - s2)
    return (d1 < d2) | ((d1 == d2) & (s1 > s2))


_CODE = re.compile(r"^(?:2\+|[0-3])(\d)(\d)([1-3])$")


def parse_code(code: str) -> Cell:
    """``"0551"`` or ``"2+551"`` -> Cell("2+", 500, 5, "normal")."""
    code = str(code).strip()
    m = _CODE.match(code)
    if not m:
        raise ValueError(f"not a set code: {code!r} (expected e.g. 0551, 2+551, 3193)")
    w = code[:2] if code.startswith("2+") else code[0]
    rpp = "2+" if w in ("0", "2+") else w
    return Cell(rpp, int(m.group(1)) * 100, int(m.group(2)), QUALITY_SHAPES[int(m.group(3))])


def table3_steps(max_score: int, dtype=np.float64) -> np.ndarray:
    """Step parameters of the nine raters (Table 3; TRUEGEN.BAS).

    ``FOR I = -1 TO 1: FOR J = -1 TO 1: FOR k = 1 TO mp: L = 3*I + J + 5:
    J(L, k) = ((-6 + (k - 1) * 12 / (mp - 1)) * 2 ^ J + 2 * I) / 1.5``

    I shifts the rater (-1 lenient .. +1 stringent); J scales the spacing of the
    steps (J = -1: steps close together, so the rater's scores spread wide;
    J = +1: steps far apart, scores bunched in the middle: a narrow rater).
    Returns shape (9, M); row L-1 is rater L, column k-1 is step k.
    """
    m = int(max_score)
    out = np.empty((9, m), dtype=dtype)
    k = np.arange(1, m + 1, dtype=dtype)
    for i in (-1, 0, 1):
        for j in (-1, 0, 1):
            lr = 3 * i + j + 5
            val = ((dtype(-6) + (k - 1) * dtype(12) / dtype(m - 1)) * dtype(2.0 ** j) + dtype(2 * i)) / dtype(1.5)
            out[lr - 1] = val.astype(dtype)
    return out
