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
the model and scale so that rows pasted from another file cannot change them silently.

JSON: ``{"model": "MFRM", "scale": "1-6", "elements": [{"facet": ..., "element": ..., "level": ...,
"measure": ..., "se": ...}, ...]}``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
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

    @property
    def key(self):
        return (self.facet, self.element, self.level)


@dataclass
class Anchors:
    """A calibration: the model (``MFRM``: shared or per-level thresholds; ``MML``: per-rater steps),
    the scale, and the elements' measures in file order."""

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

    def check(self, model: str, scale: Scale, elements: dict, steps_by: str | None = None) -> None:
        """InputError unless the anchors fit this analysis: the same model and scale, and every
        element found in the data (``elements``: ``{facet: collection of labels}``, ``rater`` and
        each facet column); thresholds need categories strictly inside the scale and, per level,
        a level of ``steps_by``."""
        where = self.path
        if model.upper() != self.model:
            raise InputError(f"the anchors are of model {self.model}, this analysis is {model.upper()}", where)
        if (scale.low, scale.high) != (self.scale.low, self.scale.high):
            raise InputError(f"the anchors are on the scale {self.scale}, this file is on {scale}: a calibration "
                             "carries over only to the same scale", where)
        unknown_facets = [f for f in self.facets if f not in elements]
        if unknown_facets:
            raise InputError(f"anchored facet(s) {', '.join(unknown_facets)} not in this analysis (its facets: "
                             f"{', '.join(elements)})", where)
        missing = [f"{a.facet} {a.element}" for a in self.elements
                   if a.facet != THRESHOLD and a.element not in set(map(str, elements[a.facet]))]
        if missing:
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise InputError(f"anchored element(s) not in the data: {', '.join(missing[:5])}{more}", where)
        levels = {a.level for a in self.elements if a.facet == THRESHOLD}
        if levels - {""}:
            if steps_by is None:
                raise InputError("the anchors have thresholds per level of a facet; give --steps-by", where)
            bad = sorted(levels - {""} - set(map(str, elements.get(steps_by, ()))))
            if bad:
                raise InputError(f"threshold level(s) {', '.join(bad)} are not levels of {steps_by} in the data", where)
        for a in self.elements:
            if a.facet == THRESHOLD and not scale.low < int(a.element) <= scale.high:
                raise InputError(f"threshold {a.element} is not a step of the scale {scale} (the category it "
                                 f"leads into: {scale.low + 1} to {scale.high})", where)


def _number(text, path, line, column, blank_ok=False):
    text = str(text).strip()
    if not text and blank_ok:
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{text!r} is not a number", path, line, column) from None
    if not math.isfinite(value):
        raise InputError(f"{text!r} is not a finite number", path, line, column)
    return value


def _anchor(fields: dict, path, line, model_scale) -> tuple:
    model = str(fields.get("model", "")).strip().upper()
    if model not in MODELS:
        raise InputError(f"{model!r}: expected one of {', '.join(MODELS)}", path, line, "model")
    scale = parse_scale(str(fields.get("scale", "")).strip())
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
            raise InputError(f"{element!r}: a threshold's element is the category it leads into, a whole "
                             "number", path, line, "element") from None
    elif level:
        raise InputError("only thresholds belong to a level", path, line, "level")
    measure = _number(fields.get("measure", ""), path, line, "measure")
    se = _number(fields.get("se", "") if fields.get("se") is not None else "", path, line, "se", blank_ok=True)
    return (model, str(scale)), scale, Anchor(facet, element, measure, se, level)


def read_anchors(path, encoding=None) -> Anchors:
    """Read an anchor file (CSV, or JSON when the name ends in ``.json``); InputError names the line
    (JSON: the element's number) and field of anything wrong, and an element given twice."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "is not a file", path)
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(read_text(path, encoding))
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg})", path, exc.lineno) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("elements"), list):
            raise InputError('expected {"model": ..., "scale": ..., "elements": [...]}', path)
        records = [(f"element {k + 1}", {"model": doc.get("model"), "scale": doc.get("scale"), **e})
                   for k, e in enumerate(doc["elements"]) if isinstance(e, dict)]
        if len(records) != len(doc["elements"]):
            raise InputError("every element must be an object", path)
    else:
        _, rows, _ = read_table(path, required=["model", "scale", "facet", "element", "measure"], encoding=encoding)
        records = rows
    if not records:
        raise InputError("no anchored elements", path)
    model_scale, scale, out, seen = None, None, [], {}
    for line, fields in records:
        model_scale, scale, a = _anchor(fields, path, line, model_scale)
        if a.key in seen:
            raise InputError(f"{a.facet} {a.element}{' ' + a.level if a.level else ''} is anchored twice (first at "
                             f"{seen[a.key]})", path, line, "element")
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
        from ..io import csv_text

        text = csv_text(COLUMNS, [[anchors.model, str(anchors.scale), a.facet, a.element, a.level, _fmt(a.measure),
                                   _fmt(a.se)] for a in anchors.elements])
    with atomic_write(path, make_dirs=False) as fh:
        fh.write(text)
