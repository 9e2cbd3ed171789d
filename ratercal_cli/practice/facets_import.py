"""Read a Facets specification file (Linacre's Facets program) and its data into ratercal's long
ratings table: one row per observation, one column per facet, then ``score``.

What is read (the format of the Facets manual's examples, e.g. ``Essays.txt``, ``Guilford.txt``):

* ``keyword = value`` lines, keywords in any case, ``;`` starting a comment;
* ``Facets = N``; ``Title =``;
* ``Labels =`` followed by one block per facet: a heading ``number, name[, anchoring code]`` and
  element lines ``number[, label[, value ...]]`` (or ``number = label``) or an anonymous range ``1-32``, each block ended
  by ``*``;
* ``Models =`` (one model on the line or several on the lines below, ended by ``*``): the scale
  (``R`` or ``Rn`` for a rating scale with top category n, ``D`` for a dichotomy, or the name of a
  ``Rating scale =`` whose first field after the name is ``Rn``) and a facet marked ``#`` (Facets'
  partial credit: each element of that facet its own rating scale), which becomes ``--steps-by``
  in the printed command.  A model weight other than 1 (``?,?,?,R4,2``) is refused: ratercal weighs
  every rating alike;
* anchoring codes of a facet heading (``2,Raters,A`` with a value after an element's label,
  ``1,Smith,0.5``; ``D``, a dummy facet, anchors every element at 0): the anchored elements become an
  anchor file (:mod:`.anchors`) the printed command reads with ``--anchors``; group anchoring
  (``G``), anchored papers and anchor values in user units (``Umean=``/``Uscale=``) are refused;
* ``Delements =`` of element numbers only (``N``, ``1N``: Facets' default); element labels in the
  data (``L``) are refused;
* ``Data =`` with the data on the lines below it (to the end of the file), or ``Data = FILE`` naming
  a text file of data lines (relative to the specification's folder);
* data lines ``e1, e2, ..., eF, x1[, x2 ...]``: an element number per facet, then the observations;
  one facet may be a range ``a-b`` with one observation per element of the range (``1,1,1-5,5,5,3,5,3``:
  person 1, judge 1, items 1 to 5).  A missing observation (``.`` or blank) is skipped.  Fields are
  separated by commas or tabs (or spaces when a line has neither).

Keywords that change only Facets' estimation or its reports (``Noncenter``, ``Positive``,
``Convergence``, ``Arrange``, ...) are ignored; ``Noncenter =`` and ``Inter-rater =`` name the facets
that are the papers and the raters, ``Positive =`` the examinees (:meth:`FacetsData.paper_and_rater`).
British spellings (``Non-centred =``, ``Centre =``) are read as the American ones.  An observation
above the top category of ``Models=`` (``R6``: 0 to 6) is an error naming its line, and element labels
that would write two elements alike are replaced by the element numbers, with a warning.  Anything that would change which observations there are or what
they mean (``Dvalues``, ``Delements``, ``Entered``, element 0, weighted ``R2`` data lines, an
Excel or SPSS data file, Poisson or binomial counts, ...) is an :class:`InputError` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import open_output, read_text

#: Specifications that change only how Facets estimates or reports: safe to ignore when reading data.
IGNORED = frozenset("""
arrange asciioutput barchart batch beep bias biasdirection center centre convergence csv
delements-display fairaverage fair graphfile hardware heading iterations juxtapose left-hand
maxidentical newton noncenter omit-unobserved output positive pt-biserial ptbiserial query
qcfile residualfile scorefile show simul simulated subsets subsetdetection t3onscreen t4maximum
t8negative totalscore udecimals umean unexpected uscale usort vertical whexact write xtreme
yardstick zscore inter-rater interrater anchorfile replacement replication seed title facets
labels models model data rating scale ratingscale rating-scale arrangement
""".split())

_JUDGES = re.compile(r"judge|rater|reader|marker|grader|scorer|examiner|assessor|evaluator", re.IGNORECASE)
#: The most elements a facet's Labels= may list (ranges expanded): a range such as 1-1000000000
#: would be held element by element.
MAX_ELEMENTS = 1_000_000

_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_INT = re.compile(r"^\s*[+-]?\d+\s*$")


@dataclass
class Facet:
    """One facet of the specification: its number, name and elements {number: label}."""

    number: int
    name: str
    elements: dict = field(default_factory=dict)
    #: the heading's anchoring code (``A``, ``D``, ...; blank: none) and the line it is on
    code: str = ""
    line: int = 0
    #: ``{element number: anchor value (logits)}`` of an anchored facet
    anchors: dict = field(default_factory=dict)

    def label(self, number: int) -> str:
        text = self.elements.get(number, "")
        return text if text else str(number)


@dataclass
class FacetsData:
    """A read specification: facets in their numbers' order, the observations (one tuple of element
    numbers per facet and a score each, with the line each came from), the scale's top from
    ``Models=`` (None: not stated), and the paper and rater facets where the specification names them."""

    path: Path
    title: str
    facets: list
    rows: list            # (file, line, (element numbers...), score)
    top: int | None = None
    paper_facet: int | None = None
    rater_facet: int | None = None
    positive_facet: int | None = None
    notes: list = field(default_factory=list)   # what the reader changed, for a warning line each
    #: the facet (number) ``Models=`` marks ``#``: its elements' own thresholds (``--steps-by``)
    steps_facet: int | None = None

    @property
    def files(self) -> list:
        """The files read: the specification and the file ``Data=`` names, if any."""
        return list(dict.fromkeys([self.path] + [r[0] for r in self.rows]))

    @property
    def scores(self):
        return [r[3] for r in self.rows]

    def columns(self) -> list:
        """Column names of the long table: the facets' names, then ``score``."""
        names = [f.name for f in self.facets]
        return names + ["score"]

    def scale(self) -> str:
        """LOW-HIGH: the lowest score observed (0 for a dichotomy) to ``Models=``' top (or the highest observed)."""
        low = min(self.scores)
        high = self.top if self.top is not None else max(self.scores)
        return f"{min(low, high - 1)}-{max(high, max(self.scores))}"

    def table(self) -> list:
        """Rows of the long table (element labels where the specification gives them, else numbers)."""
        return [[f.label(e) for f, e in zip(self.facets, elems)] + [str(score)] for _, _, elems, score in self.rows]

    def paper_and_rater(self):
        """The facets holding the papers and the raters (None where unknown): :meth:`roles` without
        the reasons."""
        (paper, _), (rater, _) = self.roles()
        return paper, rater

    def roles(self):
        """``((paper facet, why), (rater facet or None, why))``.  The papers: the one facet ``Positive=``
        names (the examinees, whose measure rises with the score), else the facet ``Noncenter=`` names,
        else the first facet (Facets' examples put the examinees first).  The raters: the facet
        ``Inter-rater=`` names, else the one facet named like judges (judge, rater, reader, marker,
        grader, scorer, examiner, assessor), else the facet ``Noncenter=`` lets float when it is not the
        papers' (the Facets manual's Guilford.txt floats its judges, ``Non-centered = 1``, beside
        ``Positive = 2``, the examinees).  ``why`` is the specification that said so (None: a guess)."""
        by_number = {f.number: f for f in self.facets}
        if self.positive_facet in by_number:
            paper, why = by_number[self.positive_facet], "Positive="
        elif self.paper_facet in by_number:
            paper, why = by_number[self.paper_facet], "Noncenter="
        else:
            paper, why = self.facets[0], None
        judges = [f for f in self.facets if f is not paper and _JUDGES.search(f.name)]
        floating = by_number.get(self.paper_facet)
        if self.rater_facet in by_number and by_number[self.rater_facet] is not paper:
            rater = (by_number[self.rater_facet], "Inter-rater=")
        elif len(judges) == 1:
            rater = (judges[0], None)
        elif floating is not None and floating is not paper:
            rater = (floating, "Noncenter=")
        else:
            rater = (None, None)
        return (paper, why), rater

    def command(self, out, anchors=None) -> str:
        """The ``ratercal check`` command that reads the written table (``anchors``: the anchor file
        written beside it, :meth:`anchor_table`)."""
        cols = []
        paper, rater = self.paper_and_rater()
        cols += ["--paper-col", _quote(paper.name) if paper is not None else "PAPERS_FACET"]
        cols += ["--rater-col", _quote(rater.name) if rater is not None else "RATERS_FACET"]
        for f in self.facets:
            if f is not paper and f is not rater:
                cols += ["--facet-col", _quote(f.name)]
        steps = self.steps_by()
        if steps is not None:
            cols += ["--steps-by", _quote(steps.name)]
        if anchors is not None:
            cols += ["--anchors", _quote(str(anchors))]
        return " ".join(["ratercal check", _quote(str(out)), *cols, "--scale", self.scale()])

    def steps_by(self):
        """The facet ``Models=`` marks ``#`` (its elements' own thresholds), or None.  InputError where
        ratercal has no such model: ``#`` on the papers, or on the raters (each rater its own rating
        scale: ratercal's MML, ``-m MML``, not the many-facet model's ``--steps-by``)."""
        if self.steps_facet is None:
            return None
        facet = next(f for f in self.facets if f.number == self.steps_facet)
        paper, rater = self.paper_and_rater()
        if facet is paper or facet is rater:
            which = "papers" if facet is paper else "raters"
            raise InputError(f"Models= gives the {which}' facet {facet.name} '#' (each element its own rating scale): "
                             + ("ratercal's many-facet model has no such model" if facet is paper else
                                "ratercal fits each rater's own scale as MML (-m MML), not with --steps-by; replace "
                                "'#' by '?' and use -m MML"), self.path)
        return facet

    def anchor_table(self):
        """The anchored elements (facet headings coded ``A`` with values, or ``D``) as an
        :class:`~.anchors.Anchors` of the MFRM on :meth:`scale`, each named as the written table names
        it (the raters' facet as ``rater``); None where nothing is anchored.  InputError for anchored
        papers (ratercal anchors raters, facets and thresholds, not papers)."""
        from .anchors import RATER, Anchor, Anchors
        from .ratings_file import parse_scale

        anchored = [f for f in self.facets if f.anchors]
        if not anchored:
            return None
        paper, rater = self.paper_and_rater()
        out = []
        for f in anchored:
            if f is paper:
                raise InputError(f"Labels= anchors the papers' facet {f.name} ({f.code}): ratercal anchors raters, "
                                 "facets and thresholds, not papers", self.path, f.line)
            name = RATER if f is rater else f.name
            out += [Anchor(name, f.label(e), v, line=f.line) for e, v in f.anchors.items()]
        return Anchors("MFRM", parse_scale(self.scale()), out)


def _q(text) -> str:
    """A bounded, printable quote of what a file holds, for an error message: never a whole line of
    an arbitrary file (``Data = /proc/self/environ`` quoted 1.4 KB of environment variables)."""
    from ..guard import snippet

    return snippet(text)


def _quote(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_.,/+-]+", text) else "'" + text.replace("'", "'\\''") + "'"


def _strip_comment(line: str) -> str:
    return line.split(";", 1)[0].rstrip()


def _fields(text: str) -> list:
    if "," in text or "\t" in text:
        return [f.strip() for f in re.split(r"[,\t]", text)]
    return text.split()


class _Lines:
    """The specification's lines without comments, numbered from 1, blank ones skipped."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.items = [(k + 1, _strip_comment(line)) for k, line in enumerate(text.splitlines())]
        self.items = [(k, s) for k, s in self.items if s.strip()]
        self.pos = 0

    def next(self):
        if self.pos >= len(self.items):
            return None, None
        item = self.items[self.pos]
        self.pos += 1
        return item

    def peek_is_keyword(self) -> bool:
        return self.pos < len(self.items) and _keyword(self.items[self.pos][1]) is not None


_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 _()-]*?)\s*=(.*)$")


#: The specifications read_facets acts on, and those it ignores, as :func:`_keyword` spells them.
KNOWN = frozenset({"title", "facets", "labels", "models", "model", "ratingscale", "data", "noncenter",
                   "positive", "interrater", "delements"} | {re.sub(r"[^a-z0-9]", "", k) for k in IGNORED})


def _keyword(line: str):
    """(key, value) of a ``key = value`` line, or None.  The key is lower case, letters and digits
    only, and named by the known specification it starts with (the longest): Facets reads only a
    specification's first letters, so its manual's own files write ``Non-centered =`` for
    ``Noncenter =``, ``Facets in data =`` for ``Facets =`` and ``Inter-rater Agreement =`` for
    ``Inter-rater =``."""
    m = _KEY.match(line)
    if not m:
        return None
    key = re.sub(r"[^a-z0-9]", "", m.group(1).lower()).replace("centre", "center")   # Non-centred, Centre
    if key.startswith("rating") and key.endswith("scale"):   # Rating (or partial credit) scale =
        key = "ratingscale"
    elif key not in KNOWN:
        key = max((k for k in KNOWN if key.startswith(k)), key=len, default=key)
    return key, m.group(2).strip()


def read_facets(path, encoding=None) -> FacetsData:
    """Read a Facets specification file and its data (module docstring); InputError names the line
    of anything not supported."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory, not a Facets specification", path)
    lines = _Lines(path, read_text(path, encoding))
    title, n_facets, facets = "", None, None
    models, scales = [], {}
    data_rows, data_line = None, None
    paper_facet = rater_facet = positive_facet = None
    notes = []
    units = None   # the line of Umean=/Uscale=, which put anchor values in user units
    while True:
        ln, text = lines.next()
        if ln is None:
            break
        kv = _keyword(text)
        if kv is None:
            raise InputError(f"expected a 'keyword = value' specification, not {_q(text.strip())}", path, ln)
        key, value = kv
        if key == "title":
            title = value
        elif key == "facets":
            n_facets = _int(value, path, ln, "Facets")
        elif key == "labels":
            if value and value.lower() != "nobuild":
                raise InputError(f"Labels = {value} is not supported (the element lists go on the lines below)",
                                 path, ln)
            facets = _read_labels(lines, path, ln, notes)
        elif key in ("models", "model"):
            models += _read_block(lines, value) if not value else [(ln, value)]
            if value and lines.pos < len(lines.items) and not lines.peek_is_keyword():
                models += _read_block(lines, "")
        elif key == "ratingscale":
            name, top = _rating_scale(value, path, ln)
            scales[name.lower()] = top
            _read_block(lines, "")   # its category lines, to '*'
        elif key == "data":
            data_line = ln
            if value:
                data_rows = _data_file(path, value, ln, encoding)
            else:
                data_rows = [(path, k, s) for k, s in lines.items[lines.pos:]]
                lines.pos = len(lines.items)
        elif key == "noncenter":
            paper_facet = _int(value, path, ln, "Noncenter")
        elif key == "positive" and _INT.match(value):   # one facet oriented as ability: the examinees
            positive_facet = int(value)
        elif key == "interrater":
            rater_facet = _int(value, path, ln, "Inter-rater")
        elif key == "delements":
            if not re.fullmatch(r"\s*\d*\s*N(\s*[,\s]\s*\d*\s*N)*\s*", value.upper()):
                raise InputError(f"Delements = {value}: element labels in the data (L) are not supported by "
                                 "import-facets; give element numbers (Delements = N, Facets' default)", path, ln)
        elif key in ("umean", "uscale"):
            units = units or ln
        elif key not in IGNORED:
            raise InputError(f"the Facets specification {text.split('=', 1)[0].strip()}= is not supported by "
                             "import-facets (it changes which observations there are or what they mean)", path, ln)
    if facets is None:
        raise InputError("no Labels= (the facets and their elements)", path)
    if data_rows is None:
        raise InputError("no Data= (the observations, on the lines after it or in a file it names)", path)
    if n_facets is not None and n_facets != len(facets):
        raise InputError(f"Facets = {n_facets} but Labels= lists {len(facets)} facet(s)", path)
    facets.sort(key=lambda f: f.number)
    if [f.number for f in facets] != list(range(1, len(facets) + 1)):
        raise InputError(f"facets numbered {[f.number for f in facets]}; expected 1 to {len(facets)}", path)
    names = [f.name.lower() for f in facets]
    for f in facets:
        if f.name.lower() == "score" or names.count(f.name.lower()) > 1:
            raise InputError(f"facet name {_q(f.name)} is used twice (or is 'score'): rename it in Labels=", path)
    top, top_line = _model_top(models, scales, len(facets), path)
    steps_facet = _partial_credit(models, facets, path)
    if units is not None and any(f.anchors for f in facets):
        raise InputError("Umean=/Uscale= put the anchor values of Labels= in user units: import-facets takes "
                         "them in logits only (remove Umean=/Uscale= or give the anchors in logits)", path, units)
    rows = _parse_data(data_rows, facets, path, data_line, top, top_line)
    if not rows:
        raise InputError("no observations in the data", path, data_line)
    return FacetsData(path=path, title=title, facets=facets, rows=rows, top=top,
                      paper_facet=paper_facet, rater_facet=rater_facet, positive_facet=positive_facet, notes=notes,
                      steps_facet=steps_facet)


def _int(value, path, ln, what):
    if not _INT.match(value):
        raise InputError(f"{what} = {_q(value)}: expected a whole number", path, ln)
    return int(value)


def _read_block(lines: _Lines, first: str) -> list:
    """Lines up to a ``*`` line (or the next keyword): [(line, text)]."""
    out = []
    while lines.pos < len(lines.items):
        ln, text = lines.items[lines.pos]
        if text.strip() == "*":
            lines.pos += 1
            break
        if _keyword(text) is not None:
            break
        out.append((ln, text))
        lines.pos += 1
    return out


def _read_labels(lines: _Lines, path, at, notes) -> list:
    """The facet blocks after ``Labels=``: heading ``n, name[, code]`` then elements, each ended by ``*``."""
    facets = []
    while lines.pos < len(lines.items):
        ln, text = lines.items[lines.pos]
        if _keyword(text) is not None:
            break
        lines.pos += 1
        if text.strip() == "*":
            continue
        head = _fields(text)
        if not head or not _INT.match(head[0]) or len(head) < 2:
            raise InputError(f"expected a facet heading 'number, name' in Labels=, not {_q(text.strip())}", path, ln)
        code = head[2].strip().upper() if len(head) > 2 else ""
        if code and code not in ("A", "D", "X", "N"):
            why = (" (group anchoring: ratercal anchors elements one by one; give each element its value with "
                   "code A)" if code.startswith("G") else "")
            raise InputError(f"facet anchoring code {_q(head[2].strip())} is not supported{why}", path, ln)
        facet = Facet(int(head[0]), head[1].strip() or f"facet{head[0]}", code=code, line=ln)
        if any(f.number == facet.number for f in facets):
            raise InputError(f"facet {facet.number} is listed twice in Labels=", path, ln)
        starting_said = False   # (Facets' starting values: said once a facet)
        for eln, etext in _read_block(lines, ""):
            if etext.strip() == "*":
                break
            parts = _fields(re.sub(r"^(\s*\d+)\s*=", r"\1,", etext))   # '1=Avogadro' or '1,A'
            m = _RANGE.match(parts[0])
            if m:
                a, b = int(m.group(1)), int(m.group(2))
                if b < a:
                    raise InputError(f"element range {parts[0].strip()} runs backwards", path, eln)
                if b - a + 1 + len(facet.elements) > MAX_ELEMENTS:   # 1-1000000000 exhausted the memory
                    raise InputError(f"element range {parts[0].strip()} gives facet {facet.name} more than "
                                     f"{MAX_ELEMENTS:,} elements", path, eln)
                for e in range(a, b + 1):
                    facet.elements.setdefault(e, "")
                continue
            if not _INT.match(parts[0]):
                raise InputError(f"expected an element 'number[, label]' of facet {facet.name}, not "
                                 f"{_q(etext.strip())}", path, eln)
            e = int(parts[0])
            if e == 0:
                raise InputError("element number 0 (Facets: the facet does not apply) is not supported", path, eln)
            if e in facet.elements:
                raise InputError(f"element {e} of facet {facet.name} is listed twice", path, eln)
            facet.elements[e] = parts[1].strip() if len(parts) > 1 else ""
            if len(parts) > 2 and parts[2].strip():   # (Facets: the anchor value, or a starting value where not anchored)
                try:
                    value = float(parts[2])
                except ValueError:
                    # (a staff tester's '5,R05,abc' was taken without a word, and a label with a comma,
                    # '1,=HYPERLINK("http://x","R01")', cut at it: Facets' fields are separated by commas)
                    what = "anchor value" if code == "A" else "value after the label (Facets: a starting value)"
                    raise InputError(f"{what} {_q(parts[2].strip())} of element {e} of facet {facet.name} is not "
                                     "a number (a label holding a comma is cut there: Facets' fields are separated by "
                                     "commas)", path, eln) from None
                if code == "A":
                    facet.anchors[e] = value
                elif not starting_said:
                    starting_said = True
                    notes.append(f"{path}:{eln}: {facet.name}: starting values after the elements' labels are not "
                                 "used (the facet is not anchored; ratercal's fits need none)")
        # labels that do not tell the elements apart (two alike, or one that is another element's
        # number, as element 1 labelled '3' beside an unlabelled element 3): the numbers are written
        if code == "D":   # a dummy facet: every element anchored at 0
            facet.anchors = {e: 0.0 for e in facet.elements}
        written = [facet.label(e) for e in facet.elements]
        if len(set(written)) != len(written):
            same = sorted({w for w in written if written.count(w) > 1}, key=str)
            notes.append(f"{path}:{ln}: {facet.name}: the labels do not tell the elements apart ({', '.join(same)} "
                         "name two elements each); the elements are written by their element numbers")
            facet.elements = {e: "" for e in facet.elements}
        facets.append(facet)
    if not facets:
        raise InputError("Labels= lists no facets", path, at)
    return facets


def _rating_scale(value, path, ln):
    parts = _fields(value)
    if len(parts) < 2 or not re.fullmatch(r"[Rr]\d*", parts[1].strip()):
        raise InputError(f"Rating scale = {value}: only 'name, Rn' rating scales are supported", path, ln)
    digits = parts[1].strip()[1:]
    return parts[0].strip(), int(digits) if digits else None


def _model_top(models, scales, n_facets, path):
    """The top category of the models' scale (all models must share it); None where not stated."""
    tops, line = set(), None
    for ln, text in models:
        parts = _fields(text)
        if len(parts) < n_facets + 1:
            raise InputError(f"model {_q(text.strip())} has fewer than {n_facets} facets and a scale", path, ln)
        scale = parts[n_facets].strip()
        if re.fullmatch(r"[Rr]\d*[Kk]?", scale):
            digits = re.sub(r"\D", "", scale)
            tops.add(int(digits) if digits else None)
            line = line or (ln if digits else None)
        elif scale.upper() == "D":
            tops.add(1)
            line = line or ln
        elif scale.lower() in scales:
            tops.add(scales[scale.lower()])
            line = line or ln
        else:
            raise InputError(f"model scale {_q(scale)} is not supported (rating scales R, Rn or a named "
                             "'Rating scale = name, Rn'; dichotomies D)", path, ln)
    tops.discard(None)
    if len(tops) > 1:
        raise InputError(f"the models use scales with different tops ({sorted(tops)}); one scale is supported", path)
    return (tops.pop(), line) if tops else (None, None)


def _partial_credit(models, facets, path):
    """The facet number that ``Models=`` marks ``#`` (partial credit: each element its own rating scale),
    or None; InputError for a model weight other than 1, or ``#`` on two facets."""
    n = len(facets)
    marked = set()
    for ln, text in models:
        parts = _fields(text)
        for k, ctl in enumerate(parts[:n]):
            if "#" in ctl:
                marked.add(facets[k].number if k < len(facets) else k + 1)
        weight = parts[n + 1].strip() if len(parts) > n + 1 else ""
        if weight:
            try:
                w = float(weight)
            except ValueError:
                raise InputError(f"model {_q(text.strip())}: weight {_q(weight)} is not a number", path, ln) from None
            if w != 1:
                raise InputError(f"model {_q(text.strip())} weighs its ratings {weight}: ratercal weighs every rating "
                                 "alike (remove the weight to analyse them unweighted)", path, ln)
    if len(marked) > 1:
        raise InputError(f"Models= marks facets {sorted(marked)} '#': one facet with its own rating scales "
                         "(--steps-by) is supported", path)
    return marked.pop() if marked else None


def _data_file(spec: Path, name: str, ln, encoding):
    target = (spec.parent / name.strip().strip('"')).resolve()
    if target.suffix.lower() in (".xls", ".xlsx", ".sav", ".dta", ".sas7bdat", ".rda"):
        raise InputError(f"Data = {name}: only a text file of data lines is supported (save it as text or CSV)",
                         spec, ln)
    if not target.is_file():
        raise InputError(f"Data = {name}: no such file {target}", spec, ln)
    lines = [(k + 1, _strip_comment(s)) for k, s in enumerate(read_text(target, encoding).splitlines())]
    return [(target, k, s) for k, s in lines if s.strip()]


def _parse_data(items, facets, spec, data_line, top=None, top_line=None) -> list:
    F = len(facets)
    rows = []
    for where, ln, text in items:
        parts = _fields(text)
        if parts and parts[0][:1] in ("R", "r", "$") and not _INT.match(parts[0]):
            raise InputError(f"data line {_q(text.strip())}: weighted or replicated data lines ('R2, ...') and "
                             "Dvalues are not supported", where, ln)
        if len(parts) < F + 1:
            raise InputError(f"data line {_q(text.strip())}: expected {F} element numbers then the observation(s)",
                             where, ln)
        elems, span = [], None
        for k, (facet, ref) in enumerate(zip(facets, parts[:F])):
            m = _RANGE.match(ref)
            if m:
                if span is not None:
                    raise InputError("data line with element ranges in two facets: one range per line is "
                                     "supported", where, ln)
                a, b = int(m.group(1)), int(m.group(2))
                if b < a:
                    raise InputError(f"element range {ref} runs backwards", where, ln)
                if b - a + 1 > len(parts):   # one observation per element: never more than the line holds
                    raise InputError(f"element range {ref} needs {b - a + 1:,} observations; the line has "
                                     f"{len(parts) - F}", where, ln)
                span = (k, list(range(a, b + 1)))
                elems.append(None)
                continue
            if not _INT.match(ref):
                raise InputError(f"{facet.name}: element {_q(ref)} is not an element number (element labels in "
                                 "the data, Delements=, are not supported)", where, ln)
            elems.append(int(ref))
        obs = parts[F:]
        if obs and obs[-1] == "" and len(obs) > (len(span[1]) if span else 1):
            obs = obs[:-1]   # a trailing comma
        want = len(span[1]) if span else 1
        if len(obs) != want:
            raise InputError(f"data line has {len(obs)} observation(s) where its elements need {want}", where, ln)
        for j, x in enumerate(obs):
            x = x.strip()
            if x in ("", "."):
                continue
            if not _INT.match(x):
                raise InputError(f"observation {_q(x)} is not a whole number", where, ln)
            e = list(elems)
            if span:
                e[span[0]] = span[1][j]
            for facet, en in zip(facets, e):
                if en == 0:
                    raise InputError(f"{facet.name}: element 0 (Facets: the facet does not apply) is not "
                                     "supported", where, ln)
                if en not in facet.elements:
                    raise InputError(f"{facet.name}: element {en} is not in Labels=", where, ln)
            score = int(x)
            if score < 0:
                raise InputError(f"observation {score} is negative", where, ln)
            if top is not None and score > top:
                raise InputError(f"observation {score} is above the top category {top} of Models= (line "
                                 f"{top_line})", where, ln)
            rows.append((where, ln, tuple(e), score))
    return rows


def write_long(data: FacetsData, out) -> None:
    """Write the long CSV (columns :meth:`FacetsData.columns`) atomically (``-``: standard output), or
    a workbook where ``out`` ends ``.xlsx`` (CSV text under that name was unreadable as the workbook the
    printed ``check`` command then opened)."""
    import csv

    from ..guard import neutralise_row
    from .output import is_workbook, write_table

    if str(out) != "-" and is_workbook(out):   # .xls, .ods: refused, naming -o
        write_table(out, data.columns(), [list(row) for row in data.table()], sheet="ratings",
                    labels=data.columns()[:-1])
        return
    with open_output(out) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(neutralise_row(data.columns()))
        w.writerows(neutralise_row(row) for row in data.table())   # a label as =x is not run by a spreadsheet
