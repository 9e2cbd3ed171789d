"""Guess which column of an export is which, for the app's preview (every guess is shown and can be
changed there; nothing here decides anything for the user).

By name first (``Student ID`` is the paper, ``Reader`` the rater, ``Score`` the score, ``Grade`` the
group, ``Reading`` the order of reading), then by content: when no column is named as a score, the
columns holding only whole numbers that no other role took are the scores: one is the score column,
several are a wide rubric (a column per criterion).  ``grade`` is a mark in some exports and a school
grade in others: it is read as the score when no other column is, else as the group.  A pair of columns per
reading (``Reader 1, Score 1, Reader 2, Score 2``) is found by their numbered names.  The scale is the
lowest to the highest whole number found in the score columns; an end given almost never and apart from
the other scores (a typed 9 among 1-6) is noted as a likely typing error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..practice.ratings_file import MISSING_TOKENS

__all__ = ["Guess", "guess_columns"]

# (with the words of German, French, Spanish, Dutch and Portuguese exports, accents set aside: a German
# file's Schule, Kennung, Bewerter and Punkte were guessed as rater, criterion, student and school)
_PAPER = ("paper", "student", "essay", "candidate", "examinee", "script", "pupil", "learner", "response", "id",
          "schuler", "kennung", "prufling", "kandidat", "eleve", "etudiant", "copie", "candidat", "identifiant",
          "alumno", "estudiante", "candidato", "leerling", "kandidaat", "aluno")
_RATER = ("rater", "reader", "judge", "scorer", "marker", "grader", "assessor", "examiner",
          "bewerter", "beurteiler", "korrektor", "prufer", "correcteur", "correctrice", "evaluateur", "lecteur",
          "evaluador", "corrector", "calificador", "beoordelaar", "corrector", "avaliador", "corretor")
_SCORE = ("score", "rating", "mark", "points", "result",
          "punkte", "punktzahl", "bewertung", "note", "puntuacion", "puntaje", "nota", "calificacion", "cijfer",
          "punten", "pontuacao")
_ORDER = ("order", "reading", "reading order", "read no", "sequence", "seq", "attempt",
          "reihenfolge", "ordre", "orden", "lectura", "volgorde", "ordem")
_GROUP = ("grade", "group", "class", "cohort", "year", "form", "school", "site", "prompt", "administration",
          "schule", "klasse", "jahrgang", "ecole", "etablissement", "classe", "niveau", "nivel", "escuela", "clase", "curso", "colegio", "school",
          "klas", "escola", "turma")
#: the group words that name a place (a school, a site): where raters read across its levels it is a cluster of the
#: papers, not a part to adjust alone (a staff tester's 'school' guessed as the group: each school adjusted apart, by
#: three different methods, though its raters read in every school; and the years' page then refused the guess)
_PLACES = frozenset({"school", "site", "schule", "ecole", "etablissement", "escuela", "colegio", "escola"})
_RATER_WIDE = re.compile(r"^(rater|reader|judge|scorer|marker|r)[ _-]?\d+$", re.I)
#: ... or named after the person (``rater_Adams``, ``Reader: Hill``), where the column holds whole numbers (scores):
#: a staff tester's wide export was taken for a long file with rater_Adams as the rater and seven criteria
_RATER_NAMED = re.compile(r"^(rater|reader|judge|scorer|marker)\s*[ _:-]\s*(?!(id|name|code|no|number|label|type)$)\S.*$",
                          re.I)
_WHOLE = re.compile(r"^[+-]?\d+([.,]0+)?$")   # (2.0 and 2,0 are read as 2, the latter with a decimal comma)
#: A scale's end given to at most this share of the scores (or once), two or more unused scores away from
#: the next one, is noted as a likely stray (a typing error), not taken silently.
STRAY = 0.005


def _norm(name: str) -> str:
    import unicodedata

    name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return re.sub(r"[\s_\-.]+", " ", name.strip().lower())


def _named(header, words, taken, exact_only=False):
    """The first column whose normalised name is one of ``words``, else (unless ``exact_only``) whose
    name contains one of them as a word; None."""
    free = [h for h in header if h not in taken]
    for h in free:
        if _norm(h) in words:
            return h
    if exact_only:
        return None
    for w in words:
        for h in free:
            if re.search(rf"\b{re.escape(w)}\b", _norm(h)):
                return h
    return None


#: numeric columns filled on fewer than this share of the lines, and together on every line, are a column per rater
SPARSE = 0.8


def _filled(rows, col) -> float:
    """The share of ``rows`` whose ``col`` holds a value (not blank or a missing-value code)."""
    return sum(str(r.get(col, "")).strip().lower() not in MISSING_TOKENS for r in rows) / max(len(rows), 1)


def _whole_numbers(rows, col) -> list | None:
    """The column's whole numbers, or None when a filled cell is anything else (or none is filled)."""
    out = []
    for r in rows:
        t = str(r.get(col, "")).strip()
        if t.lower() in MISSING_TOKENS:
            continue
        if not _WHOLE.match(t):
            return None
        out.append(int(re.split(r"[.,]", t)[0]))
    return out or None


@dataclass
class Guess:
    """The guessed roles of the columns (None: no such column) and the scale ``"low-high"``."""

    paper: str | None = None
    rater: str | None = None
    score: str | None = None
    order: str | None = None
    group: str | None = None
    score_cols: list = field(default_factory=list)
    rater_cols: list = field(default_factory=list)
    scale: str | None = None
    notes: list = field(default_factory=list)


def _crossed(rows, readers, group) -> bool:
    """Whether some rater of the ``rows`` reads in two or more of ``group``'s levels; ``readers(row)``: the row's
    raters (one row a rating: its rater column; a paper's row: its readers' columns, or its raters' columns holding
    a score)."""
    seen: dict = {}
    for r in rows:
        where = str(r.get(group, "")).strip()
        for who in readers(r):
            if who and where and seen.setdefault(who, where) != where:
                return True
    return False


def _readers(g: "Guess", pairs):
    """The raters of a row as :func:`_crossed` takes them, for the layout guessed (None: no rater found)."""
    if g.rater is not None:
        return lambda r: [str(r.get(g.rater, "")).strip()]
    if pairs:   # a pair of columns a reading: the reader's column names the rater
        return lambda r: [str(r.get(a, "")).strip() for a, _ in pairs]
    if g.rater_cols:   # a column a rater: the rater is the column, where it holds a score
        return lambda r: [c for c in g.rater_cols if str(r.get(c, "")).strip()]
    return None


def guess_columns(header, rows) -> Guess:
    """The :class:`Guess` for a table's ``header`` and ``rows`` (dicts of text)."""
    g = Guess()
    taken = set()

    def take(col):
        if col is not None:
            taken.add(col)
        return col

    g.paper = take(_named(header, _PAPER, taken))
    pairs = _reading_pairs(header, rows, taken)
    if pairs:   # a pair of columns per reading: the rater's and the score's
        g.rater_cols = [f"{a}:{b}" for a, b in pairs]
        taken.update(c for pr in pairs for c in pr)
    wide_raters = [] if pairs else [h for h in header if h not in taken and (_RATER_WIDE.match(h.strip()) or (
        _RATER_NAMED.match(h.strip()) and _whole_numbers(rows, h) is not None))]
    g.rater = take(_named(header, _RATER, taken))
    if pairs:
        g.rater = None
    if g.rater is not None and g.rater in wide_raters and len(wide_raters) >= 2:
        taken.discard(g.rater)
        g.rater = None
    if g.rater is None and len(wide_raters) >= 2:
        g.rater_cols = wide_raters
        taken.update(wide_raters)
    g.order = None if pairs else take(_named(header, _ORDER, taken, exact_only=True))   # (pairs: read in their order)
    g.score = None if pairs else take(_named(header, _SCORE, taken))
    numeric = {h: v for h in header if h not in taken and (v := _whole_numbers(rows, h)) is not None}
    if g.score is None and not g.rater_cols:
        grade = _named(header, ("grade",), taken, exact_only=True)
        if grade is not None and grade in numeric:   # grade, a mark: the score when nothing else is
            g.score = take(grade)
            g.notes.append(f"{grade!r} read as the score (a mark); if it is a school grade, make it the group")
    g.group = take(_named(header, _GROUP, taken, exact_only=True))
    if g.score is None and not g.rater_cols:
        rest = [h for h in header if h not in taken and h in numeric]
        # a column per rater named after the person (``Kim``, ``Baker``): blank where that rater did not read the
        # line's paper, where a rubric's criteria are filled on every line (a staff tester's sheet of eight raters
        # named so was taken for a rubric of eight criteria and a school grade)
        sparse = [h for h in rest if _filled(rows, h) < SPARSE]
        if len(sparse) >= 2 and all(any(str(r.get(h, "")).strip().lower() not in MISSING_TOKENS for h in sparse) for r in rows):
            g.rater_cols = sparse
            taken.update(sparse)
            rest = []
        if len(rest) == 1:
            g.score = take(rest[0])
        elif len(rest) >= 2:
            g.score_cols = rest
            taken.update(rest)
    if g.paper is None:   # the column with the most distinct values
        free = [h for h in header if h not in taken]
        if free:
            g.paper = take(max(free, key=lambda h: len({r.get(h) for r in rows})))
    if g.rater is None and not g.rater_cols:
        free = [h for h in header if h not in taken and h not in numeric]
        if free:
            g.rater = take(min(free, key=lambda h: len({r.get(h) for r in rows})))
    # once every layout's raters are found (a column a rater named after the person is found by its blanks, above)
    readers = _readers(g, pairs)   # (the wide layouts' too: a file a paper a row took School as the group, a staff tester)
    if g.group is not None and readers is not None and _norm(g.group) in _PLACES and _crossed(rows, readers, g.group):
        g.notes.append(f"{g.group!r} not taken as the group: raters read in more than one of them, and each group is "
                       f"adjusted on its own (each {g.group} alone, the readings across them unused); make it the "
                       "group if each should be")
        g.group = None
    cols = g.score_cols or ([b for _, b in pairs] if pairs else g.rater_cols) or ([g.score] if g.score else [])
    values = [v for c in cols for v in (_whole_numbers(rows, c) or [])]
    if values:
        g.scale = f"{min(values)}-{max(values)}"
        g.notes += _stray_ends(values)
    return g


#: a column name ending in a number (``Reader 2``, ``score_2``, ``Note 2``): its stem and the number
_NUMBERED = re.compile(r"^(.*?\D)[\s_#-]*(\d+)$")


def _reading_pairs(header, rows, taken) -> list:
    """``[(rater column, score column)]`` of an export with a pair of columns per reading (``Reader 1, Score 1,
    Reader 2, Score 2``, ``Correcteur 1, Note 1, ...``): a rater's stem and a score's stem numbered alike, two
    readings or more, the scores' columns whole numbers; else []. (A staff tester's file of three readings was
    taken for a long file of its first: Correcteur 1 the rater, Note 1 the score, the other readings unread.)"""
    stems: dict = {}
    for h in header:
        m = _NUMBERED.match(h.strip())
        if m and h not in taken:
            stems.setdefault(_norm(m.group(1)), {})[int(m.group(2))] = h

    def named(stem, words):
        return any(re.search(rf"\b{re.escape(w)}\b", stem) for w in words)
    for rs in (st for st in stems if named(st, _RATER)):
        for ss in (st for st in stems if st != rs and named(st, _SCORE)):
            ks = sorted(set(stems[rs]) & set(stems[ss]))
            if len(ks) >= 2 and all(_whole_numbers(rows, stems[ss][k]) is not None or
                                    not any(str(r.get(stems[ss][k], "")).strip() for r in rows) for k in ks):
                return [(stems[rs][k], stems[ss][k]) for k in ks]
    return []


def _stray_ends(values) -> list:
    """Notes on a scale's end taken from a stray score: the lowest or the highest found in no more than
    :data:`STRAY` of the scores, with a gap of two or more unused scores next to it (a typed 9 among
    scores of 1-6 made the guessed scale 1-9, and the check ran on it)."""
    from collections import Counter

    count = Counter(values)
    used = sorted(count)
    notes = []
    for end, nxt in ((used[-1], used[-2] if len(used) > 1 else None), (used[0], used[1] if len(used) > 1 else None)):
        if nxt is None or abs(end - nxt) < 3 or count[end] > max(1, STRAY * len(values)):
            continue
        low, high = (used[0], nxt) if end == used[-1] else (nxt, used[-1])
        notes.append(f"the scale {used[0]}-{used[-1]} was taken from the lowest and highest scores, but {end} is "
                     f"given {'once' if count[end] == 1 else f'{count[end]} times'} and no score lies between it and {nxt}: if the scale is "
                     f"{low}-{high}, set it so (the check then names the line of each score outside it)")
    return notes
