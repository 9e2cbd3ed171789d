"""The report's figures, as deterministic PNGs.

Figures are drawn on ``matplotlib.figure.Figure`` with the Agg canvas (no pyplot state), under
fixed rcParams (matplotlib's defaults, DejaVu Sans, 100 dpi) and saved without the "Software"
metadata, so the same inputs and matplotlib give byte-identical files.
"""

from __future__ import annotations

import functools
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


_noted = None  # while deferring: the figure calls to make, [(name, path, args, kwargs)]
_background = None  # the figures noted before start_drawing, being drawn by forked workers


def _deferrable(figure):
    """``figure`` draws at once, or, between :func:`defer` and :func:`draw_deferred`, notes
    the call and returns the path it will write."""
    @functools.wraps(figure)
    def call(path, *args, **kwargs):
        if _noted is None:
            return figure(path, *args, **kwargs)
        _noted.append((figure.__name__, path, args, kwargs))
        return Path(path)

    return call


def defer() -> None:
    """Note the figures asked for from now on instead of drawing them one after another."""
    global _noted
    _noted = []


def start_drawing(jobs=None) -> None:
    """Start drawing the figures noted so far in ``jobs - 1`` forked processes (default ``jobs``:
    one per core, at most 2) while this one goes on (the report's tables) and draws the figures
    noted after, in :func:`draw_deferred`.  Figures that need nothing the report computes (the
    models' Figures 4 and 5) are noted first, so two cores draw from the start: the workers
    import matplotlib and draw while this process builds the tables."""
    global _noted, _background
    jobs = default_jobs(len(_noted or ()), 1) if jobs is None else jobs
    if jobs < 2 or not _noted or _background is not None or start_method() != "fork":
        return
    notes, _noted = _noted, []
    _background = ForkedMap(_draw_noted, notes, min(jobs - 1, len(notes)))


def draw_deferred(jobs=None) -> None:
    """Draw the figures noted since :func:`defer`, in ``jobs`` processes (default: one per
    core, at most 2; :mod:`ratercal_cli.parallel`), and draw at once again; with figures
    started by :func:`start_drawing`, this process draws the later ones meanwhile.  Every
    figure is drawn under the same fixed rcParams whichever process draws it: the same bytes."""
    global _noted, _background
    noted, _noted = _noted or [], None
    background, _background = _background, None
    if background is not None:
        with background:
            for note in noted:
                _draw_noted(note)
            for _ in background:
                pass
        return
    jobs = default_jobs(len(noted), 2) if jobs is None else jobs
    if jobs > 1 and len(noted) > 1:
        import matplotlib.backends.backend_agg  # noqa: F401  once, before the workers fork
        import matplotlib.figure  # noqa: F401
    ordered_map(_draw_noted, noted, jobs)


def stop_deferring() -> None:
    """Forget the noted figures (a report that failed half-way), stop the workers drawing
    any, and draw at once again."""
    global _noted, _background
    background, _noted, _background = _background, None, None
    if background is not None:
        background.close()


def _draw_noted(note):
    name, path, args, kwargs = note
    return globals()[name].__wrapped__(path, *args, **kwargs)


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


@_deferrable
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


@_deferrable
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


@_deferrable
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

@_deferrable
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


@_deferrable
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


@_deferrable
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
