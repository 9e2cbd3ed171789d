"""A calibration as a file: the measures of a fitted many-facet model that a later fit may hold fixed
(Facets' ``Anchorfile=``, TAM's ``xsi.fixed``), so that a second administration is reported on the
first one's scale.

The file is a CSV (or JSON, by the name's suffix) a person can read and edit, one element a row::

    model,scale,facet,element,level,measure,se
    MFRM,1-6,rater,R1,,0.4123,0.0501
    MFRM,1-6,criterion,style,,-0.2010,0.0312
    MFRM,1-6,threshold,2,,-2.8800,0.0920
    MFRM,1-6,threshold,3,org,-1.1000,0.0700     (thresholds of one level of --steps-by criterion)

``facet`` is ``rater``, a facet's column name (``criterion``, ``task``...) or ``threshold``;
``element`` the rater's or level's label as in the ratings file, or for a threshold the category it
leads into, on the file's scale (``2``: the step from 1 to 2 on a 1-6 scale); ``level`` is blank
except for thresholds that belong to one level of the ``--steps-by`` facet.  ``measure`` in logits:
a rater's severity and a facet level's difficulty (+ = lower scores), a threshold's Rasch-Andrich
value; ``se`` its model standard error (blank allowed when anchoring by hand).  Every row repeats
the model and scale so that rows pasted from another file cannot change them silently.  Saved again
by a spreadsheet set up for decimal commas, the file comes back separated by ``;`` (or tabs) with
measures such as ``-0,039926``: it is read as it is.

JSON: ``{"model": "MFRM", "scale": "1-6", "elements": [{"facet": ..., "element": ..., "level": ...,
"measure": ..., "se": ...}, ...]}``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ArgumentError, InputError, arg
from ..guard import snippet
from ..io import atomic_write, read_table, read_text
from .ratings_file import Scale, parse_scale

#: The ``facet`` of threshold rows.
THRESHOLD = "threshold"
#: The ``facet`` of rater rows.
RATER = "rater"
COLUMNS = ["model", "scale", "facet", "element", "level", "measure", "se"]
MODELS = ("MFRM", "MML")


@dataclass(frozen=True)
class Anchor:
    """One element's measure (logits) and SE (nan: not given)."""

    facet: str
    element: str
    measure: float
    se: float = math.nan
    level: str = ""
    #: where the element was read (the CSV's line number, JSON's ``element N``); None if made in code
    line: object = field(default=None, compare=False)

    @property
    def key(self):
        return (self.facet, self.element, self.level)


@dataclass
class Anchors:
    """A calibration: the model (``MFRM``: shared or per-level thresholds; ``MML``: per-rater steps),
    the scale, and the elements' measures in file order.

    Attributes
    ----------
    model : str
        ``MFRM`` or ``MML``.
    scale : Scale
        The scale the measures are of (a calibration carries over only to the same scale).
    elements : list of Anchor
        Each anchored element (a rater, a facet level, a threshold) with its measure, S.E., level and line.
    path : Path or None
        The file read (:func:`read_anchors`), for messages.

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> a = rc.read_anchors("last_year.csv")   # doctest: +SKIP
    >>> sorted(a.of("rater"))                  # doctest: +SKIP
    ['R1', 'R2', 'R3']
    """

    model: str
    scale: Scale
    elements: list = field(default_factory=list)
    path: Path | None = None

    def of(self, facet: str) -> dict:
        """``{element: Anchor}`` of one facet (``rater``, a facet column or ``threshold`` with
        ``level`` blank)."""
        return {a.element: a for a in self.elements if a.facet == facet and (facet != THRESHOLD or not a.level)}

    def thresholds(self, level: str = "") -> dict:
        """``{category (int, on the file's scale): Anchor}`` of the shared thresholds (or one level's)."""
        return {int(a.element): a for a in self.elements if a.facet == THRESHOLD and a.level == level}

    @property
    def facets(self) -> list:
        """The facets named, in file order (``threshold`` excluded)."""
        return list(dict.fromkeys(a.facet for a in self.elements if a.facet != THRESHOLD))

    def _error(self, message, anchor=None, field=None):
        """InputError naming the anchor file, ``anchor``'s line (the first element's when None: model
        and scale are on every line) and ``field``."""
        anchor = anchor if anchor is not None else (self.elements[0] if self.elements else None)
        return InputError(message, self.path, None if anchor is None else anchor.line, field)

    def check(self, model: str, scale: Scale, elements: dict, steps_by: str | None = None) -> None:
        """InputError unless the anchors fit this analysis: the same model and scale, and every
        element found in the data (``elements``: ``{facet: collection of labels}``, ``rater`` and
        each facet column); thresholds need categories strictly inside the scale and, per level,
        a level of ``steps_by``.  The error names the anchor file's line and field of the first
        element at fault (and lists the others with their lines)."""
        if model.upper() != self.model:
            raise self._error(f"the anchors are of model {self.model}, this analysis is {model.upper()}",
                              field="model")
        if (scale.low, scale.high) != (self.scale.low, self.scale.high):
            raise self._error(f"the anchors are on the scale {self.scale}, this file is on {scale}: a calibration "
                              "carries over only to the same scale", field="scale")
        unknown = [a for a in self.elements if a.facet != THRESHOLD and a.facet not in elements]
        if unknown:
            names = list(dict.fromkeys(a.facet for a in unknown))
            raise self._error(f"anchored facet(s) {', '.join(names)} not in this analysis (its facets: "
                              f"{', '.join(elements)})", unknown[0], "facet")
        missing = self._absent(elements)
        raters = [a for a in self.elements if a.facet == RATER]
        if raters and all(a in missing for a in raters):   # (some absent: raters who left, said and unused)
            raise self._error(f"none of the anchored raters is in the data "
                              f"({_listed(raters, lambda a: f'{a.facet} {a.element}')}): nothing holds this file's "
                              "raters to the anchors' scale", raters[0], "element")
        thresholds = [a for a in self.elements if a.facet == THRESHOLD]
        shared = [a for a in thresholds if not a.level]
        if steps_by is not None and shared:
            raise self._error(f"the anchors have shared thresholds (no level), and {arg('steps_by', steps_by)} gives "
                              f"each {steps_by} its own: anchor each level's thresholds (a calibration written "
                              f"with {arg('steps_by')}), or leave {arg('steps_by')} out", shared[0], "level")
        per_level = [a for a in thresholds if a.level]
        if per_level:
            if steps_by is None:
                raise self._error(f"the anchors have thresholds per level of a facet; give {arg('steps_by')}", per_level[0],
                                  "level")
            known = set(map(str, elements.get(steps_by, ())))
            bad = [a for a in per_level if a.level not in known]
            if len(bad) == len(per_level):   # (some: a criterion this file has not, its thresholds unused and said)
                raise self._error(f"threshold level(s) {_listed(bad, lambda a: a.level)} are not levels of {steps_by} "
                                  "in the data", bad[0], "level")
        off = [a for a in thresholds if not scale.low < int(a.element) <= scale.high]
        if off:
            which = (f"threshold {off[0].element} is not a step" if len(off) == 1 else
                     f"thresholds {_listed(off, lambda a: a.element)} are not steps")
            raise self._error(f"{which} of the scale {scale} (the category a threshold leads into: {scale.low + 1} "
                              f"to {scale.high})", off[0], "element")

    def _absent(self, elements: dict) -> list:
        """The anchored elements of a facet of ``elements`` that are not among its labels, and the thresholds of a
        level (of a criterion) not in the data."""
        known = {f: set(map(str, labels)) for f, labels in elements.items()}
        levels = set().union(*known.values()) if known else set()
        return [a for a in self.elements if (a.facet != THRESHOLD and a.element not in known.get(a.facet, ()))
                or (a.facet == THRESHOLD and a.level and a.level not in levels)]

    def in_data(self, ratings) -> "Anchors":
        """These anchors without the elements that ``ratings`` do not hold (a rater who left since the
        calibration: Facets leaves an anchored element without data unused, and so does the fit here; a criterion
        this file has not, with its thresholds; :func:`absent_anchors_note` says which)."""
        absent = set(map(id, self._absent(analysis_elements(ratings))))
        return Anchors(self.model, self.scale, [a for a in self.elements if id(a) not in absent], self.path)

    def check_ratings(self, ratings, steps_by: str | None = None) -> None:
        """:meth:`check` against an analysis of ``ratings`` (MFRM), before anything is fitted."""
        from ..ratings import Scale as _Scale

        self.check("MFRM", _Scale(ratings.scale_low, ratings.scale_low + ratings.max_score),
                   analysis_elements(ratings), steps_by)


def _listed(anchors, name, most=5) -> str:
    """``anchors`` named by ``name`` (a name once, at its first line), each with its line where there are
    several (at most ``most``)."""
    first = {}
    for a in anchors:
        first.setdefault(name(a), a)
    anchors = list(first.values())
    if len(anchors) == 1:
        return name(anchors[0])
    shown = ", ".join(f"{name(a)} ({_at(a.line)})" if a.line is not None else name(a) for a in anchors[:most])
    return shown + (f" and {len(anchors) - most} more" if len(anchors) > most else "")


#: The largest |measure| or SE (logits) an anchor may have: Facets' measures lie within a few
#: logits of 0; beyond this a value is a typing error (1e300 overflowed the fit).
MAX_LOGITS = 100.0


def _at(line) -> str:
    return f"line {line}" if isinstance(line, int) else str(line)


def _number(text, path, line, column, blank_ok=False, decimal_comma=False):
    text = shown = str(text).strip()
    if not text and blank_ok:
        return math.nan
    if decimal_comma and text.count(",") == 1 and "." not in text:   # -0,039926 as a spreadsheet saves it
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{snippet(shown)} is not a number", path, line, column) from None
    if not math.isfinite(value):
        raise InputError(f"{snippet(shown)} is not a finite number", path, line, column)
    return value


def _anchor(fields: dict, path, line, model_scale, decimal_comma=False) -> tuple:
    model = str(fields.get("model", "")).strip().upper()
    if model not in MODELS:
        raise InputError(f"{snippet(model)}: expected one of {', '.join(MODELS)}", path, line, "model")
    try:
        scale = parse_scale(str(fields.get("scale", "")).strip())
    except InputError as exc:   # parse_scale speaks of the argument scale; here it is a field of the file
        raise InputError(exc.message, path, line, "scale") from None
    if model_scale is not None and (model, str(scale)) != model_scale:
        raise InputError(f"{model} {scale} differs from the first row's {model_scale[0]} {model_scale[1]}: one "
                         "calibration a file", path, line, "model")
    facet = str(fields.get("facet", "")).strip()
    element = str(fields.get("element", "")).strip()
    level = str(fields.get("level", "") or "").strip()
    if not facet:
        raise InputError("blank", path, line, "facet")
    if not element:
        raise InputError("blank", path, line, "element")
    if facet == THRESHOLD:
        try:
            int(element)
        except ValueError:
            raise InputError(f"{snippet(element)}: a threshold's element is the category it leads into, a whole "
                             "number", path, line, "element") from None
    elif level:
        raise InputError("only thresholds belong to a level", path, line, "level")
    measure = _number(fields.get("measure", ""), path, line, "measure", decimal_comma=decimal_comma)
    se = _number(fields.get("se", "") if fields.get("se") is not None else "", path, line, "se", blank_ok=True,
                 decimal_comma=decimal_comma)
    if abs(measure) > MAX_LOGITS:   # 1e300 overflowed the fit with 20 warnings, then an error naming no line
        raise InputError(f"{measure:g} logits is not a measure (at most {MAX_LOGITS:g} either side of 0)", path,
                         line, "measure")
    if se < 0 or se > MAX_LOGITS:   # nan (blank) passes both
        raise InputError(f"{se:g} is not a standard error (0 to {MAX_LOGITS:g} logits)", path, line, "se")
    return (model, str(scale)), scale, Anchor(facet, element, measure, se, level, line)


def read_anchors(path, encoding=None) -> Anchors:
    """Read an anchor file (CSV, or JSON when the name ends in ``.json``); InputError names the line
    (JSON: the element's number) and field of anything wrong, and an element given twice.

    Parameters
    ----------
    path : str or path
        The file, as ``check --write-anchors`` writes it (``model, scale, facet, element, level, measure, se``
        a line) or Facets' anchors converted by ``import-facets``.
    encoding : str, optional
        The text's encoding (default: UTF-8, with or without a byte-order mark).

    Returns
    -------
    Anchors
        The calibration, for ``check``, ``adjust`` and ``compare``'s ``anchors`` (which also take the path).

    Examples
    --------
    >>> import ratercal_cli as rc
    >>> a = rc.read_anchors("last_year.csv")                              # doctest: +SKIP
    >>> rc.adjust(rc.read_ratings("this_year.csv", scale="1-6"), "MFRM", anchors=a).warnings   # doctest: +SKIP
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "is not a file", path)
    decimal_comma = False
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(read_text(path, encoding))
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg})", path, exc.lineno) from None
        except RecursionError:   # brackets nested 200,000 deep: the parser's stack, not a traceback
            raise InputError("not an anchor file: JSON nested too deep", path) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("elements"), list):
            raise InputError('expected {"model": ..., "scale": ..., "elements": [...]}', path)
        not_object = next((k for k, e in enumerate(doc["elements"]) if not isinstance(e, dict)), None)
        if not_object is not None:
            raise InputError(f"every element must be an object, not {snippet(doc['elements'][not_object])}", path,
                             f"element {not_object + 1}")
        records = [(f"element {k + 1}", {"model": doc.get("model"), "scale": doc.get("scale"), **e})
                   for k, e in enumerate(doc["elements"])]
    else:
        from ..guard import restore

        # a file edited in a spreadsheet set up for decimal commas comes back separated by ';' with
        # measures such as -0,039926: read as it is (the ratings file's --sep and --decimal are not its)
        text = read_text(path, encoding)
        _, rows, sep = read_table(path, required=["model", "scale", "facet", "element", "measure"], text=text,
                                  delimiter=None)   # (sniffed: ';' where the header has more of them)
        decimal_comma = sep != ","
        # labels as write_anchors neutralised them for spreadsheets ('=x -> =x)
        records = [(line, {k: restore(v) if k in ("facet", "element", "level") else v for k, v in fields.items()})
                   for line, fields in rows]
    if not records:
        raise InputError("no anchored elements", path)
    model_scale, scale, out, seen = None, None, [], {}
    for line, fields in records:
        model_scale, scale, a = _anchor(fields, path, line, model_scale,
                                        decimal_comma=decimal_comma)
        if a.key in seen:
            raise InputError(f"{a.facet} {a.element}{' ' + a.level if a.level else ''} is anchored twice (first at "
                             f"{_at(seen[a.key])})", path, line, "element")
        seen[a.key] = line
        out.append(a)
    return Anchors(model=model_scale[0], scale=scale, elements=out, path=path)


def _fmt(x):
    return "" if not math.isfinite(x) else f"{x:.6f}"


def write_anchors(path, anchors: Anchors) -> None:
    """Write ``anchors`` atomically as CSV, or JSON when ``path`` ends in ``.json``."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        doc = {"model": anchors.model, "scale": str(anchors.scale),
               "elements": [{"facet": a.facet, "element": a.element, "level": a.level,
                             "measure": round(a.measure, 6),
                             "se": round(a.se, 6) if math.isfinite(a.se) else None} for a in anchors.elements]}
        text = json.dumps(doc, indent=2) + "\n"
    else:
        from ..guard import neutralise
        from ..io import csv_text

        # labels a spreadsheet would run as formulas get a leading ' (read_anchors takes it off)
        text = csv_text(COLUMNS, [[anchors.model, str(anchors.scale), neutralise(a.facet), neutralise(a.element),
                                   neutralise(a.level), _fmt(a.measure), _fmt(a.se)] for a in anchors.elements])
    with atomic_write(path, make_dirs=False, stage=True) as fh:   # (a user's output: with the others of its run)
        fh.write(text)


# -- a calibration from a fit, and a fit on a calibration ------------------------------------------
#: |displacement| (logits) beyond which a significant one is flagged as drift (Facets' manual suggests
#: 0.5 logits as a displacement worth attention).
DRIFT_LOGITS = 0.5
#: the significance level (Holm over the anchored elements) at which a displaced element is freed
DRIFT_ALPHA = 0.05


def calibration(est, ratings, model: str = "MFRM", steps_by: str | None = None) -> Anchors:
    """The :class:`Anchors` of a fitted :class:`~ratercal_cli.methods.mml.MarginalRaterModel` (MFRM):
    every rater's severity, every facet level's difficulty and the thresholds, with their SEs, as
    reported (raters centred, facets and thresholds summing to zero: the scale of the fit)."""
    from ..ratings import Scale

    low = ratings.scale_low
    out = []
    n = ratings.ratings_per_rater()
    for j in np.flatnonzero(n > 0):
        out.append(Anchor(RATER, str(ratings.rater_ids[j]), float(est.severity_[j]), float(est.severity_se_[j])))
    effects = est.result_.effects or {}
    for k, (name, (_, labels)) in enumerate(ratings.facets.items()):
        d, se = effects[f"facet{k}"]
        out += [Anchor(name, str(lab), float(d[i]), float(se[i])) for i, lab in enumerate(labels)]
    thr = np.atleast_2d(est.thresholds_)
    thr_se = np.atleast_2d(est.thresholds_se_)
    levels = [""] if steps_by is None else [str(x) for x in ratings.facets[steps_by][1]]
    for g, lev in enumerate(levels):
        out += [Anchor(THRESHOLD, str(low + k + 1), float(thr[g, k]), float(thr_se[g, k]), lev)
                for k in range(thr.shape[1])]
    return Anchors(model=model, scale=Scale(low, low + ratings.max_score), elements=out)


def _positions(anchors: Anchors, ratings, steps_by=None) -> list:
    """``[(Anchor, block, index)]``: where each anchored element sits in the MML layout."""
    seen = np.flatnonzero(ratings.ratings_per_rater() > 0)
    rater_at = {str(ratings.rater_ids[j]): k for k, j in enumerate(seen)}
    names = list(ratings.facets)
    out = []
    low = ratings.scale_low
    for a in anchors.elements:
        if a.facet == RATER:
            out.append((a, "severity", rater_at[a.element]))
        elif a.facet == THRESHOLD:
            g = 0 if not a.level else [str(x) for x in ratings.facets[steps_by][1]].index(a.level)
            out.append((a, "thresholds", (g, int(a.element) - low - 1)))
        else:
            labels = [str(x) for x in ratings.facets[a.facet][1]]
            out.append((a, f"facet{names.index(a.facet)}", labels.index(a.element)))
    return out


def anchor_function(anchors: Anchors, ratings, steps_by=None):
    """A function of the MML layout (``fit_mml(..., anchor=f)``) holding every anchored element at its
    value; the papers' mean is then free (the anchors set the scale's origin).  Where facet levels are
    anchored and no rater is, the raters are centred (mean severity 0, as Facets centres a facet it does
    not anchor): with the papers' mean free, nothing else would set their origin (a Facets dummy facet
    anchored at 0, Essays' Session, left the raters' mean to the weak prior, its S.E. over 3 logits)."""
    pos = _positions(anchors, ratings, steps_by)
    return _Hold(pos, any(a.facet == RATER for a, _, _ in pos), any(b.startswith("facet") for _, b, _ in pos))


class _Hold:
    """:func:`anchor_function`'s function: a class, not a closure, so that an anchored estimator can be
    pickled (the app's worker process sends its results back)."""

    def __init__(self, pos, raters: bool, facets: bool):
        self.pos, self.raters, self.facets = pos, raters, facets

    def __call__(self, layout):
        for a, block, index in self.pos:
            layout.fix(block, index, a.measure)
        if self.raters or self.facets:
            layout.free("theta_mean")
        if self.facets and not self.raters and "severity" not in layout.centred:
            layout.centred.append("severity")
        return layout


def _reported(est, block, index):
    """(estimate, SE) of one element as the fit reports it."""
    d, se = est.result_.effects[block]
    d, se = np.asarray(d), np.asarray(se)
    return float(d[index]), float(se[index])


def _free_estimates(anchors: Anchors, free_est, ratings, steps_by=None) -> list:
    """``[(Anchor, free estimate, its SE)]``: each anchored element as the free fit reports it."""
    seen = np.flatnonzero(ratings.ratings_per_rater() > 0)
    out = []
    for a, block, index in _positions(anchors, ratings, steps_by):
        if block == "severity":   # the reported (centred) severity, not the layout's natural one
            est, se = float(free_est.severity_[seen[index]]), float(free_est.severity_se_[seen[index]])
        elif block == "thresholds":
            thr, thr_se = np.atleast_2d(free_est.thresholds_), np.atleast_2d(free_est.thresholds_se_)
            est, se = float(thr[index]), float(thr_se[index])
        else:
            est, se = _reported(free_est, block, index)
        out.append((a, est, se))
    return out


def _linked(items, stable, alpha: float, drift: float) -> list:
    """The displacement rows of ``items`` (:func:`_free_estimates`) linked on the elements ``stable``
    (bool per item): each (facet, level)'s free estimates shifted by the mean difference between the
    anchors and the free estimates over its stable elements (all of its elements where none is)."""
    from scipy import stats

    from .multiplicity import holm

    groups = {}
    for k, (a, _, _) in enumerate(items):
        groups.setdefault((a.facet, a.level), []).append(k)
    shift = {}
    for key, ks in groups.items():
        use = [k for k in ks if stable[k]] or ks
        shift[key] = float(np.mean([items[k][0].measure - items[k][1] for k in use]))
    rows = []
    for k, (a, est, se) in enumerate(items):
        d = est + shift[(a.facet, a.level)] - a.measure
        se = math.hypot(se, a.se) if math.isfinite(a.se) else se   # this year's and the calibration's
        t = d / se if se > 0 else float("nan")
        rows.append(dict(facet=a.facet, element=a.element, level=a.level, anchor=a.measure,
                         free=est + shift[(a.facet, a.level)], displacement=d, se=se, t=t,
                         p=float(2 * stats.norm.sf(abs(t))) if math.isfinite(t) else float("nan"),
                         drift=bool(abs(d) > drift and abs(t) >= 2), linked=bool(stable[k])))
    for r, q in zip(rows, holm([r["p"] for r in rows])):
        r["p_holm"] = float(q)
        r["drifted"] = bool(abs(r["displacement"]) > drift and math.isfinite(q) and q < alpha)
    return rows


def displacement(anchors: Anchors, free_est, ratings, steps_by=None, drift: float = DRIFT_LOGITS,
                 alpha: float = DRIFT_ALPHA, purify: bool = True) -> list:
    """Each anchored element's displacement: its estimate in the free fit of these data, moved onto the
    anchors' scale, minus its anchor; with its SE (the free estimate's and the anchor's, where the file
    gives one), t, two-sided p, Holm's p over the anchored elements, ``drift`` (|displacement| >
    ``drift`` logits and |t| >= 2: worth a look) and ``drifted`` (|displacement| > ``drift`` logits and
    Holm's p < ``alpha``: the element has moved, and :func:`fit_mfrm` frees it).

    The link (each facet's, and each level's thresholds', free estimates shifted by the mean
    difference between the anchors and those estimates) is purified as the bias table's reference
    cells are (:mod:`.bias`): start with every anchored element in it; while an element of the link
    has drifted, take the one with the largest |t| out (``linked`` False) and link again on the rest;
    an element leaves only while its facet (threshold level) keeps two elements in the link.  A drifter
    left in would pull the link toward itself: a planted 0.8-logit drift of one of eight raters came
    out at 0.73 on average, at 0.8 with the link purified.  ``purify=False``: the link over every anchored
    element.  ``free_est``: the unanchored MFRM fit of the same ratings."""
    items = _free_estimates(anchors, free_est, ratings, steps_by)
    stable = np.ones(len(items), dtype=bool)
    while True:
        rows = _linked(items, stable, alpha, drift)
        if not purify:
            return rows
        order = sorted((k for k, r in enumerate(rows) if stable[k] and r["drifted"]),
                       key=lambda k: -abs(rows[k]["t"]))
        group = [(a.facet, a.level) for a, _, _ in items]
        leaving = next((k for k in order
                        if sum(stable[i] for i in range(len(items)) if group[i] == group[k]) > 2), None)
        if leaving is None:
            return rows
        stable[leaving] = False


def _label(r) -> str:
    return f"{r['facet']} {r['element']}" + (f" ({r['level']})" if r["level"] else "")


def format_displacement(rows, drift: float = DRIFT_LOGITS) -> list:
    from .text import num, text_table

    held = not any(r.get("freed") for r in rows)
    L = [f"Anchored elements (displacement = estimate free of the anchors, moved onto the scale of the anchors "
         f"that did not drift, minus the anchor; logits; drift: |displacement| > {drift:g} and |t| >= 2; "
         f"freed: |displacement| > {drift:g} and Holm's p < {DRIFT_ALPHA:g}, measured afresh instead of held; "
         f"used: the value the fit used):"]
    L += text_table(["facet", "element", "anchor", "free", "displacement", "S.E.", "t", "Holm p", "drift", "used",
                     "status"],
                    [[r["facet"] + (f" ({r['level']})" if r["level"] else ""), str(r["element"]), num(r["anchor"], 2),
                      num(r["free"], 2), num(r["displacement"], 2), num(r["se"], 2), num(r["t"], 2),
                      num(r.get("p_holm", float("nan")), 3), "DRIFT" if r["drift"] else "",
                      num(r.get("used", r["anchor"]), 2),
                      "freed" if r.get("freed") else ("held" if r.get("drifted") else "")] for r in rows])
    # (flagged, |displacement| > drift and |t| >= 2, is not drifted: a staff tester's summary said "2 of 17 anchored
    # element(s) drifted" of a rater whose Holm p was 0.48, held, beside the one that had and was freed)
    n = sum(r["drift"] for r in rows)
    sure = [r for r in rows if r.get("drifted")]
    L.append(f"  {n} of {len(rows)} anchored element(s) flagged for drift" + (": " + ", ".join(
        _label(r) for r in rows if r["drift"]) if n else "") + f"; {len(sure)} drifted beyond chance (Holm's p < "
             f"{DRIFT_ALPHA:g})" + (": " + ", ".join(_label(r) for r in sure) if sure else ""))
    freed = [r for r in rows if r.get("freed")]
    if freed:
        L.append("  freed (measured afresh on the scale of the anchors that did not drift, and left out of the link): "
                 + "; ".join(f"{_label(r)} anchored at {r['anchor']:.2f}, measured {r['used']:.2f} (moved "
                             f"{r['used'] - r['anchor']:+.2f} logits)" for r in freed))
    drifted = [r for r in rows if r.get("drifted") and not r.get("freed")]
    if drifted and held and any("freed" in r for r in rows):
        L.append("  held at their anchors although they drifted (--hold-drifted): "
                 + ", ".join(_label(r) for r in drifted))
    elif drifted:
        L.append("  drifted but held: its facet keeps too few anchors to free it (two must stay): "
                 + ", ".join(_label(r) for r in drifted))
    flagged = [r for r in rows if r["drift"] and not r.get("drifted")]
    if flagged:
        L.append(f"  flagged but held (not significant after Holm over the {len(rows)} anchored elements): "
                 + ", ".join(_label(r) for r in flagged))
    return L


def as_anchors(anchors):
    """``anchors`` as :class:`Anchors`: one already, or the path of an anchor file (:func:`read_anchors`); None stays
    None.  (``rc.adjust(r, "MFRM", anchors="a.csv")`` was an AttributeError deep in the fit, a researcher's helper.)"""
    if anchors is None or isinstance(anchors, Anchors):
        return anchors
    if isinstance(anchors, (str, os.PathLike)):
        return read_anchors(anchors)
    raise ArgumentError("anchors", f"must be a calibration (read_anchors(path)) or the path of an anchor file, not "
                                   f"{type(anchors).__name__}")


def unanchored_raters_note(ratings, anchors: Anchors) -> str:
    """The raters of ``ratings`` the anchor file ``anchors`` does not hold, as a warning ("" where none): they are
    measured on the anchors' scale, as Facets measures an element it has no anchor for, and a reader of the
    summary had nothing to tell a new rater from one held at last year's value (a staff tester's new rater R13)."""
    def listed(names):
        return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")

    here = analysis_elements(ratings)
    parts = []
    for facet, labels in here.items():   # (a criterion too, where the file anchors the facet: a staff helper's
        held = {str(e) for e in anchors.of(facet)}   # "Org" renamed "Organization" was measured free, unsaid)
        new = [str(x) for x in labels if str(x) not in held]
        if held and new:
            parts.append((facet, new))
    if not parts:
        return ""
    words = "; ".join(f"rater(s) {listed(new)}" if facet == RATER else f"{facet} level(s) {listed(new)}"
                      for facet, new in parts)
    why = "new raters?" if [f for f, _ in parts] == [RATER] else "new, or named otherwise than in the calibration?"
    return (f"{words} have no anchor in {anchors.path.name if anchors.path else 'the calibration'}: "
            f"measured on the anchors' scale, not held ({why}); --write-anchors writes this run's measures, "
            "theirs with them, for the next")


def absent_anchors_note(ratings, anchors: Anchors) -> str:
    """The anchored elements that ``ratings`` do not hold, as a warning ("" where none): their anchors are
    unused (:meth:`Anchors.in_data`).  An anchored rater absent from this year's file was an error, where a rater
    who left since the calibration is common (a staff tester); beside the raters without an anchor
    (:func:`unanchored_raters_note`) it also shows a label spelt two ways in the two years."""
    absent = anchors._absent(analysis_elements(ratings))
    if not absent:
        return ""
    gone = [a for a in absent if a.facet != THRESHOLD]
    levels = sorted({a.level for a in absent if a.facet == THRESHOLD} - {a.element for a in gone})
    why = "raters who left?" if all(a.facet == RATER for a in gone) else "left since the calibration?"
    return (f"anchored element(s) of {anchors.path.name if anchors.path else 'the calibration'} not in the data, "
            f"their anchors unused ({why}): {_listed(gone, lambda a: f'{a.facet} {a.element}', most=8)}"
            + (f"{', ' if gone else ''}the thresholds of {', '.join(levels)}" if levels else ""))


def analysis_elements(ratings) -> dict:
    """``{facet: labels}`` of an analysis (``rater`` and each facet) for :meth:`Anchors.check`."""
    out = {RATER: [str(ratings.rater_ids[j]) for j in np.flatnonzero(ratings.ratings_per_rater() > 0)]}
    out.update({f: [str(x) for x in labels] for f, (_, labels) in ratings.facets.items()})
    return out


def require_mfrm(codes, **options) -> None:
    """An :class:`ArgumentError` for each of the many-facet model's ``options`` (``anchors``, ``steps_by``)
    given where ``codes`` has no MFRM to use it: ignored, a comparison or an adjustment read as anchored or
    stepped by a facet when it was not."""
    if "MFRM" in codes:
        return
    for name, given in options.items():
        if given is not None:
            raise ArgumentError(name, f"applies to the many-facet model only: give "
                                f"{arg('methods', 'MFRM', cli='-m MFRM')}")


def check_steps_by(ratings, steps_by) -> None:
    """An :class:`ArgumentError` naming ``steps_by`` where it is given and not a facet of ``ratings`` (it was
    ignored: no thresholds per level, no word); check and the MFRM's fit share it."""
    if steps_by is not None and steps_by not in ratings.facets:
        raise ArgumentError("steps_by", f"{steps_by!r} is not a facet of this analysis (give it with "
                            f"{arg('facet_cols')}; facets: {', '.join(ratings.facets) or 'none'})")


def fit_mfrm(ratings, anchors: Anchors | None = None, steps_by: str | None = None, hold_drifted: bool = False):
    """The MFRM of ``ratings`` (the facets as main effects; thresholds per level of ``steps_by``), free or
    held at ``anchors`` (checked against the data first).  Returns ``(estimator, displacement rows)``.

    An anchored element that drifted (:func:`displacement`: |displacement| > 0.5 logit, significant
    after Holm) is freed, as Facets' users unanchor a drifted element: it is estimated afresh on the
    scale the other anchors set (row ``freed``; ``used``: the value the fit used, its anchor where held);
    ``hold_drifted=True`` holds every element at its anchor (the rows still say which drifted).  An
    anchored estimator's fair score is the mean of the anchored raters' expected scores, a freed one's
    at its anchor (last year's average rater, as the free fit's is this year's; all raters where the
    file anchors none), so
    anchors equal to the free fit's estimates leave every fair score where the free fit put it."""
    from ..methods import make_method

    facet = ratings.facet_levels()
    check_steps_by(ratings, steps_by)
    tf = None if steps_by is None else list(ratings.facets).index(steps_by)
    if anchors is not None:   # before the free fit: a file that does not fit is refused at once
        anchors.check_ratings(ratings, steps_by)
        anchors = anchors.in_data(ratings)
    free = make_method("MFRM", threshold_facet=tf).fit(ratings, facet=facet)
    if anchors is None:
        return free, []
    rows = displacement(anchors, free, ratings, steps_by)
    for r in rows:
        r["freed"] = bool(not hold_drifted and not r["linked"])
    freed = {(r["facet"], str(r["element"]), r["level"]) for r in rows if r["freed"]}
    held = Anchors(anchors.model, anchors.scale, [a for a in anchors.elements if a.key not in freed], anchors.path)
    index = {str(label): j for j, label in enumerate(ratings.rater_ids)}
    anchored = sorted(index[a] for a in held.of(RATER)) or None
    est = make_method("MFRM", fair_raters=anchored, threshold_facet=tf,
                      anchor=anchor_function(held, ratings, steps_by)).fit(ratings, facet=facet)
    used = {a.key: value for a, value, _ in _free_estimates(anchors, est, ratings, steps_by)}
    for r in rows:
        r["used"] = used[(r["facet"], str(r["element"]), r["level"])]
    # a freed rater was one of last year's raters: it stays in last year's average rater at its anchor.
    # Left out, the average moved by its anchor over the raters' number, every student's fair score with
    # it (a drifter anchored at +0.9 of ten raters put every student 0.36 points above its truth)
    back = {index[str(a.element)]: a.measure - used[a.key] for a in anchors.of(RATER).values()
            if a.key in freed and str(a.element) in index} if anchored is not None else {}
    if back:
        est.set_params(fair_raters=sorted([*anchored, *back]), fair_shift=back)
    return est, rows
