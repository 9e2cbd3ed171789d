"""The report's figures, as deterministic PNGs.

Figures are drawn on ``matplotlib.figure.Figure`` with the Agg canvas (no pyplot state), under
fixed rcParams (matplotlib's defaults, DejaVu Sans, 100 dpi) and saved without the "Software"
metadata, so the same inputs and matplotlib give byte-identical files.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ..design import table3_steps
from ..io import atomic_write
from ..models import pcm, sequential
from ..parallel import ForkedMap, default_jobs, ordered_map, start_method

DPI = 100
METHOD_KEY = {"NO": "1", "MN": "2", "TMN": "3", "LI": "4", "TLI": "5", "EQP": "6", "OLS": "7",
              "TLS": "8", "RAS": "9", "PCM": "0"}  # the digits of Figures 7-10


def _rc():
    import matplotlib

    rc = dict(matplotlib.rcParamsDefault)
    rc.update({"font.family": "DejaVu Sans", "font.size": 9, "figure.dpi": DPI, "savefig.dpi": DPI,
               "axes.grid": True, "grid.alpha": 0.3, "svg.hashsalt": "ratercal",
               # labels drawn as written: a rater "Frank $\\frac{a$ Jr" (two dollar signs) was read as TeX and
               # stopped check --png / --html and the app's check with mathtext's parse error
               "text.parse_math": False,
               "axes.prop_cycle": matplotlib.cycler(color=[
                   "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf"])})
    rc.pop("backend", None)
    return rc


def _figure(w, h):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def save_png(fig, path):
    """Render to bytes, then write atomically; returns the path.

    ``fig.tight_layout()`` leaves a placeholder layout engine behind, and savefig draws a
    figure that has one twice (a dry run for the engine, then the pixels); the placeholder
    lays nothing out, so it is dropped first: the same bytes, one draw instead of two.
    """
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        fig.set_layout_engine(None)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    with atomic_write(path, mode="wb") as fh:
        fh.write(buf.getvalue())
    return Path(path)


class FigureBatch:
    """Figures to draw together, several at a time, instead of one after another.

    :meth:`add` notes a figure (a function of this module and its arguments) and returns the
    path it will write; :meth:`start` starts drawing the figures noted so far in forked
    processes while this one goes on (the report's tables); :meth:`draw` draws the rest and
    waits for all; :meth:`close` (or leaving a ``with`` block) stops workers still drawing, for a
    report that failed half-way.  Every figure is drawn under the same fixed rcParams whichever
    process draws it: the same bytes.
    """

    def __init__(self):
        self.notes = []          # [(figure, path, args, kwargs)] not yet given to a process
        self.background = None   # the ForkedMap drawing the figures given to :meth:`start`

    def add(self, figure, path, *args, **kwargs) -> Path:
        """Note ``figure(path, *args, **kwargs)``; returns ``Path(path)``."""
        self.notes.append((figure, path, args, kwargs))
        return Path(path)

    def start(self, jobs=None) -> None:
        """Start drawing the figures noted so far in ``jobs - 1`` forked processes (default
        ``jobs``: one per core, at most 2); figures noted later are drawn by :meth:`draw`.
        Figures that need nothing the report computes (the models' Figures 4 and 5) are noted
        first, so two cores draw from the start.  Without fork (or one job) nothing starts."""
        jobs = default_jobs(len(self.notes), 1) if jobs is None else jobs
        if jobs < 2 or not self.notes or self.background is not None or start_method() != "fork":
            return
        notes, self.notes = self.notes, []
        self.background = ForkedMap(_draw_note, notes, min(jobs - 1, len(notes)))

    def draw(self, jobs=None) -> None:
        """Draw every figure noted and not yet started, in ``jobs`` processes (default: one per
        core, at most 2; :mod:`ratercal_cli.parallel`), or here while the figures given to
        :meth:`start` are drawn in the background; returns when all are written."""
        notes, self.notes = self.notes, []
        background, self.background = self.background, None
        if background is not None:
            with background:
                for note in notes:
                    _draw_note(note)
                for _ in background:
                    pass
            return
        jobs = default_jobs(len(notes), 2) if jobs is None else jobs
        if jobs > 1 and len(notes) > 1:
            import matplotlib.backends.backend_agg  # noqa: F401  once, before the workers fork
            import matplotlib.figure  # noqa: F401
        ordered_map(_draw_note, notes, jobs)

    def close(self) -> None:
        """Forget the figures not drawn and stop (and reap) the workers still drawing."""
        background, self.notes, self.background = self.background, [], None
        if background is not None:
            background.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _draw_note(note):
    figure, path, args, kwargs = note
    return figure(path, *args, **kwargs)


def _draw(path, w, h, painter):
    import matplotlib

    with matplotlib.rc_context(_rc()):
        fig = _figure(w, h)
        painter(fig)
        return save_png(fig, path)


RATER_NAMES = {1: "lenient wide", 2: "lenient medium", 3: "lenient narrow", 4: "average wide",
               5: "average medium", 6: "average narrow", 7: "stringent wide", 8: "stringent medium",
               9: "stringent narrow"}


# ----------------------------------------------------------------------------- model figures

def rasch_expected_score(beta, delta, max_score):
    """The Rasch extension (Choppin 1982; de Gruijter 1984), p. 15: ``R = M exp(b - d) / (1 + exp(b - d))``."""
    return max_score / (1.0 + np.exp(np.asarray(delta, float) - np.asarray(beta, float)))


def rasch_extension_figure(path, max_score=5, deltas=(-1.0, 0.0, 1.0)):
    """Figure 3: Rasch extension expected scores for raters of stringency ``d``."""
    beta = np.linspace(-3, 3, 241)

    def paint(fig):
        ax = fig.add_subplot(1, 1, 1)
        for k, d in enumerate(deltas, start=1):
            r = rasch_expected_score(beta, d, max_score)
            ax.plot(beta, r, label=f"rater {k}: stringency {d:+.1f}")
        ax.set_xlabel("paper quality")
        ax.set_ylabel("expected score")
        ax.set_ylim(0, max_score)
        ax.set_title(f"Figure 3. Rasch extension expected scores (M = {max_score})")
        ax.legend(loc="upper left")
        fig.tight_layout()

    return _draw(path, 6, 4, paint)


def pcm_probability_figure(path, max_score=5):
    """Figure 4 for the nine raters of Table 3: PCM category probabilities against quality."""
    delta = table3_steps(max_score)
    theta = np.linspace(-9, 9, 361)

    def paint(fig):
        axes = fig.subplots(3, 3, sharex=True, sharey=True)
        for rater in range(1, 10):
            ax = axes[(rater - 1) // 3, (rater - 1) % 3]
            p = pcm.category_probabilities(theta[:, None], delta[rater - 1][None, :])[:, 0, :]
            for x in range(max_score + 1):
                ax.plot(theta, p[:, x], lw=1, label=str(x))
            ax.set_title(f"rater {rater} ({RATER_NAMES[rater]})", fontsize=8)
            ax.set_ylim(0, 1)
        for ax in axes[-1]:
            ax.set_xlabel("paper quality")
        for ax in axes[:, 0]:
            ax.set_ylabel("probability")
        axes[0, 2].legend(title="score", fontsize=6, title_fontsize=6, ncol=2, loc="center right")
        fig.suptitle(f"Figure 4. PCM category probabilities, the nine raters of Table 3 (scores 0-{max_score})")
        fig.tight_layout()

    return _draw(path, 9, 7, paint)


def expected_score_figure(path, max_scores=(5, 9)):
    """Figure 5 for the nine raters: PCM expected score (solid, what TRUEGEN averages into the true
    score) and the sequential process OBSGEN samples from (dashed)."""
    theta = np.linspace(-9, 9, 361)

    def paint(fig):
        axes = fig.subplots(1, len(max_scores), squeeze=False)[0]
        for ax, m in zip(axes, max_scores):
            delta = table3_steps(m)
            for rater in range(1, 10):
                e_pcm = pcm.expected_score(theta[:, None], delta[rater - 1][None, :])[:, 0]
                e_seq = sequential.expected_score(theta[:, None], delta[rater - 1][None, :])[:, 0]
                line, = ax.plot(theta, e_pcm, lw=1.2, label=f"{rater}")
                ax.plot(theta, e_seq, lw=1, ls="--", color=line.get_color())
            ax.set_xlabel("paper quality")
            ax.set_ylabel("expected score")
            ax.set_ylim(0, m)
            ax.set_title(f"scores 0-{m}")
        axes[0].legend(title="rater", fontsize=7, ncol=3, loc="upper left")
        fig.suptitle("Figure 5. Expected scores of the nine raters: PCM (solid), sequential process "
                     "OBSGEN samples (dashed)")
        fig.tight_layout()

    return _draw(path, 10, 4.2, paint)


# ----------------------------------------------------------------------------- result figures

def facet_figure(path, table, title):
    """One panel per facet: the facet-averaged criterion (``table`` as from ``facet_table``) by
    method, one line per level."""
    facets = [f for f in ("raters", "papers", "scale", "quality") if any(k[0] == f for k in table.index)]
    methods = list(table.columns)
    x = np.arange(len(methods))

    def paint(fig):
        axes = fig.subplots(1, max(1, len(facets)), sharey=True, squeeze=False)[0]
        all_row = table.index.index(("all", "all")) if ("all", "all") in table.index else None
        for ax, f in zip(axes, facets):
            for i, key in enumerate(table.index):
                if key[0] == f:
                    ax.plot(x, table.values[i], marker="o", ms=3, lw=1, label=key[1])
            if all_row is not None:
                ax.plot(x, table.values[all_row], color="black", lw=1, ls=":", label="all")
            ax.set_xticks(x)
            ax.set_xticklabels(methods, rotation=90, fontsize=7)
            ax.set_title({"raters": "raters per paper", "papers": "papers", "scale": "scale",
                          "quality": "paper quality"}[f])
            ax.legend(fontsize=7)
        axes[0].set_ylabel(title.split(" averaged")[0])
        fig.suptitle(title)
        fig.tight_layout()

    return _draw(path, 3 * max(1, len(facets)), 3.8, paint)


#: What the digits beside the methods' codes on a map mean (``mds_figure(..., explain=True)``).
METHOD_KEY_NOTE = ("(0)-(9): the symbol of each of the study's ten methods in Denny's Figures 7-10; "
                   "methods closer than 3% of the map share a label")


def mds_figure(path, labels, coords, title, eigenvalues=None, explain=False):
    """A two-dimensional map of the methods (classical MDS of RMSDs), as Figures 7-10.

    Used by ``ratercal report`` and ``ratercal compare --png``.  Points closer than 3% of the
    map's span share one label ("MN (2)/TMN (3)") so coincident methods stay legible.
    ``explain``: a line under the map says what the digits are (:data:`METHOD_KEY_NOTE`; the
    report's committed figure is drawn without it).
    """
    coords = np.asarray(coords, dtype=np.float64)
    if coords.ndim != 2 or coords.shape[1] < 2:
        coords = np.column_stack([coords.reshape(len(labels), -1), np.zeros(len(labels))])[:, :2]
    span = max(np.ptp(coords[:, 0]), np.ptp(coords[:, 1]), 1e-12)

    def name(lab):
        key = METHOD_KEY.get(lab)
        return f"{lab}" + (f" ({key})" if key else "")

    def paint(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.scatter(coords[:, 0], coords[:, 1], s=18, color="#1f77b4", zorder=3)
        for members in _coincident(coords[:, :2], 0.03 * span):
            cx, cy = coords[members[0], :2]
            ax.annotate("/".join(name(labels[i]) for i in members), (cx, cy), xytext=(4, 3),
                        textcoords="offset points", fontsize=8)
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_aspect("equal", adjustable="datalim")
        if eigenvalues is not None:
            pos = np.clip(eigenvalues, 0, None)
            share = pos[:2] / pos.sum() if pos.sum() > 0 else np.zeros(2)
            ax.set_xlabel(f"dimension 1 ({100 * share[0]:.0f}% of the centred squared distances)")
            ax.set_ylabel(f"dimension 2 ({100 * share[1]:.0f}%)")
        ax.set_title(title, fontsize=9)
        if explain:
            fig.text(0.01, 0.01, METHOD_KEY_NOTE, fontsize=6.5, color="#444444")
        fig.tight_layout(rect=(0, 0.03 if explain else 0, 1, 1))

    return _draw(path, 6.5, 5.5, paint)


def _coincident(xy, tol):
    """Groups of point indices closer than ``tol`` to a group's first point (greedy, in order)."""
    groups, taken = [], np.zeros(len(xy), dtype=bool)
    for i in range(len(xy)):
        if taken[i]:
            continue
        near = np.flatnonzero(~taken & (np.hypot(*(xy - xy[i]).T) < tol))
        taken[near] = True
        groups.append([int(k) for k in near])
    return groups


def published_vs_regenerated_figure(path, comparisons):
    """Scatter of every published value against the regenerated one (Tables 7, 12, ...)."""

    def paint(fig):
        ax = fig.add_subplot(1, 1, 1)
        lo, hi = np.inf, -np.inf
        for c in comparisons:
            m = c.present & np.isfinite(c.regenerated.values)
            if not m.any():
                continue
            p, r = c.published.values[m], c.regenerated.values[m]
            ax.scatter(p, r, s=8, label=f"{c.name}: {c.n_reproduced}/{c.n_published}", alpha=0.8)
            lo, hi = min(lo, p.min(), r.min()), max(hi, p.max(), r.max())
        if np.isfinite(lo):
            ax.plot([lo, hi], [lo, hi], color="black", lw=0.6)
        ax.set_xlabel("published")
        ax.set_ylabel("regenerated")
        ax.set_title("Published against regenerated values (reproduced / published)")
        ax.legend(fontsize=7)
        fig.tight_layout()

    return _draw(path, 6, 5.5, paint)
