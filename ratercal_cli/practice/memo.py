"""The one-page decision memo (``adjust --memo memo.html``, and the app's): for the audit trail.

In plain words, from the top: the decision for each group (adjust, by which method, or not) and its
reasons (the tests that found the raters differing, Chapter 5's rule), what the adjustment changes
(how far the students' scores moved, the counts moved between performance levels or across the cut),
the students whose level is uncertain, then the date, ratercal's version, every setting the
adjustment was made with and the SHA-256 of the input file, so that anyone can make it again.

The page is self-contained (inline style, no script, no link); every label is HTML-escaped.  The date
is today's (UTC) unless ``SOURCE_DATE_EPOCH`` is set (the reproducible-builds convention), so a memo
can be made byte for byte again.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
import re

from .text import num_cell as _num

__all__ = ["METHOD_NAMES", "memo_html", "write_memo", "memo_date"]

#: Each method's name in plain words.
METHOD_NAMES = {
    "NO": "no adjustment (the mean of the given scores)",
    "MN": "mean equating", "TMN": "truncated mean equating",
    "LI": "linear equating", "TLI": "truncated linear equating",
    "EQP": "equipercentile equating", "OLS": "ordinary least squares", "TLS": "truncated least squares",
    "WLS": "weighted least squares", "RAS": "the Rasch extension (de Gruijter 1984)",
    "PCM": "the partial-credit model",
    "PWEQP": "equipercentile equating averaged with the raters' precision weights",
    "SEQP": "equipercentile equating after presmoothing",
    "MML": "the Rasch model by marginal maximum likelihood", "MFRM": "the many-facet Rasch model",
    "CML": "the Rasch model by conditional maximum likelihood", "RSM": "the rating scale model",
}

#: How many names of uncertain students the memo lists before "and N more".
LISTED = 20

_STYLE = ("body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:820px;margin:24px auto;"
          "padding:0 16px;color:#1b1b1b;line-height:1.45;overflow-wrap:anywhere}h1{font-size:1.45em}h2{font-size:1.1em;border-bottom:"
          "1px solid #ccd;margin-top:1.3em}table{border-collapse:collapse;font-size:.9em;margin:.4em 0}"
          "th,td{border:1px solid #ccd;padding:2px 7px;text-align:left}th{background:#eef}"
          ".meta{color:#444;font-size:.9em}.decision{font-size:1.05em}")


def _e(x) -> str:
    return html.escape(str(x), quote=True)


#: What "shrunk" means, where the memo's decision is at the shrunk level.
SHRUNK_WORDS = ("Shrunk: each student's adjusted score is pulled toward the group's mean, the more the fewer and less "
                "consistent the student's ratings (Kelley's formula, or the Rasch model's expected score given the "
                "ratings): on average nearer the score the student would get from every rater, at the cost of "
                "pulling the few extreme students toward the middle.")


def method_words(code) -> str:
    """``truncated linear equating (TLI)``; a recommendation's label by its method's words, its qualifiers
    beside the code (``MML (multi-group, shrunk)``: ``... marginal maximum likelihood (MML, multi-group,
    shrunk)``, where "(MML (multi-group, shrunk))" doubled the brackets)."""
    from ..vocabulary import label_tag

    base, tag = str(code).split(" (", 1)[0], label_tag(code)
    if base == "NO" and "shrunk" in str(code):   # (not "the mean of the given scores": shrinking moves them)
        return f"no rater adjustment, each mean of the given scores shrunk toward the mean of all by its reliability ({tag})"
    return f"{METHOD_NAMES[base]} ({tag})" if base in METHOD_NAMES else str(code)


def memo_date() -> str:
    """Today's date (UTC), or ``SOURCE_DATE_EPOCH``'s."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit()
            else _dt.datetime.now(_dt.timezone.utc))
    return when.strftime("%Y-%m-%d")


def _advice(rep):
    """The group's one recommendation to check (``recommendation`` of check's JSON, where it says
    more than the method's code), or None."""
    dec = getattr(rep, "decision", None)
    if dec is not None:   # check's one recommendation (practice/recommend.py)
        return (f"check recommends {method_words(dec.label)}: {dec.short}."
                + (f" Note: {dec.caveat}." if getattr(dec, "caveat", "") else ""))
    d = rep.to_dict() if hasattr(rep, "to_dict") else {}
    rec = d.get("recommendation")
    if isinstance(rec, dict):
        return rec.get("text") or rec.get("message") or rec.get("summary")
    if isinstance(rec, str) and rec != rep.recommendation:
        return rec
    return None


def _basis(rep):
    """What decided the group's one recommendation, in a clause (``short`` of check's decision, with its caveat),
    or None: said where the decision line above already names the method.  A study's ``(0.5295 +- 0.0011)`` is
    named: its error against the true scores (a principal read a bare pair of numbers, a tester)."""
    dec = getattr(rep, "decision", None)
    if dec is None or not getattr(dec, "short", ""):
        return None
    short = re.sub(r"\(([0-9]+\.[0-9]+) \+- ([0-9]+\.[0-9]+)",
                   r"(its error against the true scores, RMSE, \1 ± \2 points", dec.short)
    return f"{short}." + (f" Note: {dec.caveat}." if getattr(dec, "caveat", "") else "")


def _rule_reason(rep) -> str:
    """Chapter 5's reason without the method's name again at its end (``...: truncated linear equating``), which the
    memo's sentence has just named (a tester)."""
    words = METHOD_NAMES.get(rep.recommendation)
    reason = str(rep.reason)
    if words:
        reason = reason.replace(f": {words} (", " (").removesuffix(f": {words}")
    return reason


def _arrows(text: str) -> str:
    """``fail->pass`` (the summary's words, escaped) with the memo's arrows (``fail &rarr; pass``)."""
    return text.replace("-&gt;", " &rarr; ")


def _why_not_the_rule(rep):
    """Why check's recommendation is not Chapter 5's rule's method, where it is not: its deciding source's reason
    (``decided by the study: ...``), or None.  (The memo named the rule's method beside check's other one and did
    not say why; the command line's warning did: a staff tester.)"""
    dec = getattr(rep, "decision", None)
    if dec is None or dec.method == rep.recommendation or not dec.reasons:
        return None
    last = str(dec.reasons[-1])
    if not last.startswith("decided by "):
        return None
    source, _, why = last.removeprefix("decided by ").partition(": ")
    return _e(f"Check follows {source} rather than the rule: {why}.") if why else None


def _reports(check, ratings, name) -> list:
    """The check reports of group ``name``: its one report, or with facets those of its cells."""
    if not ratings.facets:
        return [rep for rep in check.reports if ratings.group is None or str(rep.group) == str(name)][:1]
    if ratings.group is None:
        return list(check.reports)
    head = ratings.group_tag(name) + ", "
    return [rep for rep in check.reports if str(rep.group).startswith(head)]


def _warnings_of(adjusted, method: str) -> list:
    """The adjustment's warnings but those of the other methods applied beside ``method`` (a memo of TLI made
    with ``-m TLI,MN`` listed "MN: 35 adjusted rating(s) ... fall outside the scale", a verifying helper)."""
    from .adjust import RECOMMENDED, where

    # (the recommendation's own fit is its method's: "MML: raters ... never gave a 1" is the memo's of recommended
    # MML, though MML is named beside it, a helper's)
    behind = {str(g.recommended).split(" ")[0] for g in adjusted.groups if g.recommended} if method == RECOMMENDED \
        else set()
    others = [c for c in adjusted.methods if c != method and c not in behind]
    if not others:
        return list(adjusted.warnings)
    # a warning of another method begins, after its file's and group's words, with that method's code (or
    # "recommended X" where it is the recommendation): matched there alone, not in the file's name (a file named MN
    # lost the memo's own warnings, a helper's)
    codes = "|".join(rf"{RECOMMENDED}\b[^:]*" if c == RECOMMENDED else re.escape(c) for c in others)
    theirs = re.compile(rf"(?:{codes})(?:: | skipped| \(multi-group\)| left at| at shrinkage| \()")
    heads = sorted({where(adjusted.ratings, g.name) for g in adjusted.groups}, key=len, reverse=True)

    def own(w):
        head = next((h for h in heads if h and w.startswith(h)), "")
        return theirs.match(w[len(head):]) is None

    return [w for w in adjusted.warnings if own(w)]


def memo_html(adjusted, check, settings: dict, sha256: str, levels=None, change_list=None,
              method: str | None = None, title: str | None = None, linked: bool = False) -> str:
    """The memo's page.  ``adjusted``: the :class:`~.adjust.AdjustResults` signed off; ``check``: the
    :class:`~.check.CheckResults` of the same ratings (the decision's reasons); ``settings``: every
    setting as ``{name: value}``; ``sha256``: the input's; ``levels`` and ``change_list``
    (:func:`.levels.changes`) for the counts moved and the uncertain students; ``method``: the
    method whose scores are signed off (default: the first applied); ``linked``: the first of years linked through
    their raters (the app's), whose scale the later years are held to."""
    from .. import __version__
    from .summary import shrinkage_words

    r = adjusted.ratings
    method = method or adjusted.methods[0]
    source = os.path.basename(r.source) if r.source else "ratings"
    summaries = {s.group: s for s in adjusted.adjustment_summaries()}
    moves = {c.group: c for c in (change_list.changes if change_list is not None else [])}
    parts = [f"<h1>{_e(title or f'Decision memo: adjusting the scores of {source}')}</h1>",
             f'<p class="meta">{_e(memo_date())} &middot; ratercal {_e(__version__)} &middot; input SHA-256 '
             f"<code>{_e(sha256)}</code></p>", "<h2>Decision</h2>"]
    shrunk = False
    # (anchored: the memo told a staff tester "To check: check recommends ... TLI (shrunk)", a method that cannot
    # keep the earlier year's scale)
    anchored = getattr(adjusted, "anchored", None) is not None
    for g in adjusted.groups:
        tag = r.group_tag(g.name) if r.group is not None else "All students"
        reps = _reports(check, r, g.name)
        applied = g.recommended or method
        if not g.recommended and getattr(adjusted, "shrinkage", None) is not None:   # (--shrinkage: the memo said
            from .recommend import LEVEL_WORDS                                     # "TLI" of TLI shrunk)

            applied = f"{method} ({LEVEL_WORDS[adjusted.shrinkage]})"
        warranted = any(rep.warranted for rep in reps)
        if applied == "NO":
            decision = "leave the scores as given (no adjustment)"
        elif str(applied).startswith("NO ("):   # (NO shrunk: no rater adjusted, the scores moved all the same)
            decision = method_words(applied)
        else:
            decision = f"adjust the scores by {method_words(applied)}"
        items = []
        # the many-facet model imposed to keep a scale across years: held at anchors (this file), or setting the scale
        # the later years are held to (the app's first year); the memo told a staff tester "To check: check
        # recommends ... TLI (shrunk)", a method that keeps no scale, and of a rubric said nothing of the anchors
        words = method_words(applied)
        kept = (None if not (anchored or linked) or str(applied).split(" ")[0] != "MFRM" else _e(
            f"{words[:1].upper()}{words[1:]} " + ("holds the scores on the anchors' scale (the earlier calibration's)"
                                                  if anchored else "sets the scale the later years are held to")
            + "; the methods compared for this file alone cannot" + (" use anchors." if anchored else " carry it.")))
        alone = "without the anchors" if anchored else "without the years linked to it"
        for rep in reps:
            where = f"{rep.group}: " if r.facets else ""
            if rep.warranted:   # (in plain words first, the tests after: a staff tester's principal read jargon)
                items.append(_e(f"{where or 'T'}{'t' if where else ''}he raters differ by more than chance would make "
                                f"them (the tests that say so: {'; '.join(rep.warranted_by)}"
                                + (f"; the others found no difference: {'; '.join(rep.found_none)}"
                                   if rep.found_none else "") + ")."))
            else:
                items.append(_e(f"{where}no test found the raters differing." if where else
                                "No test found the raters differing."))
            same = False
            if not r.facets:
                items.append(f"Denny's 1990 rule (its Chapter 5) would use {_e(method_words(rep.recommendation))}: "
                             f"{_e(_rule_reason(rep))}.")
                dec = getattr(rep, "decision", None)
                same = method == "recommended" or (dec.given_by(applied) if dec is not None
                                                   else applied == rep.recommendation)
                if not same and not kept:
                    items.append(f"{_e(method_words(applied))} was chosen instead of the recommended method.")
            if kept and kept not in items:   # (once; before the rubric's criteria, of them all)
                items.insert(0 if r.facets else len(items), kept)
            advice = _advice(rep)
            basis = _basis(rep) if same else None   # (the decision above names the method: its basis alone)
            said = (None if not advice else
                    _e(f"{where}{'f' if where else 'F'}or this file alone, {alone}: {advice}") if not same and kept else
                    f"To check: {_e(advice)}" if not same else
                    f"It is check's recommendation; its basis: {_e(basis)}" if basis else
                    f"It is check's recommendation: {_e(advice.removeprefix('check recommends '))}")
            if said and said not in items:   # once, where the criteria share it
                items.append(said)
            why = _why_not_the_rule(rep) if same and not r.facets else None
            if why and why not in items:
                items.append(why)
        if r.facets:
            items.append(f"A rubric: {_e(method_words(applied))} adjusts each criterion and the students' totals.")
        if not warranted and applied != "NO":
            items.append("The adjustment was made although no test found the raters differing: it moves scores by "
                         "chance differences between raters.")
        parts.append(f'<p class="decision"><b>{_e(tag)}</b>: {_e(decision)}.</p><ul>'
                     + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
        shrunk = shrunk or "shrunk" in str(applied)
    if shrunk:   # (a staff tester's committee memo said "shrunk" and never what it means)
        parts.append(f"<p>{_e(SHRUNK_WORDS)}</p>")
    parts.append("<h2>What it changes</h2>")
    rows, level_cols = [], []
    for g in adjusted.groups:
        tag = r.group_tag(g.name) if r.group is not None else "all students"
        s = summaries.get(g.name)
        m = None if s is None else next((m for m in s.methods if m.method == method), None)
        lc = moves.get(g.name)
        if m is None:
            continue
        change = (f"{lc.moved} ({lc.up} up, {lc.down} down)" if lc is not None else
                  f"{len(m.fail_to_pass) + len(m.pass_to_fail)} ({len(m.fail_to_pass)} fail &rarr; pass, "
                  f"{len(m.pass_to_fail)} pass &rarr; fail)" if m.passing is not None else "-")
        rows.append(f"<tr><td>{_e(tag)}</td><td>{m.papers}</td><td>{_num(m.mean_move)}</td>"
                    f"<td>{_num(m.largest_move)}{f' ({_e(m.largest_paper)})' if m.largest_move else ''}</td>"
                    f"<td>{m.moved}</td><td>{change}</td></tr>")
        if lc is not None:
            level_cols.append((tag, lc))
    parts.append("<table><tr><th>group</th><th>students</th><th>mean move</th><th>largest move</th>"
                 "<th>moved 0.5 or more</th><th>changed level</th></tr>" + "".join(rows) + "</table>")
    if r.facets:   # the moves are summarise's, of the paper's score on one criterion; the levels of the totals
        parts.append("<p>A rubric: the moves are of a student's score on a criterion (the mean over the criteria); "
                     "the levels, and the change list, are of the totals.</p>")
    for g in adjusted.groups:   # (a shrunk method's moves at the cut: which are the shrinkage's)
        s = summaries.get(g.name)
        m = None if s is None else next((m for m in s.methods if m.method == method), None)
        if m is not None and m.unshrunk_moves is not None:
            tag = r.group_tag(g.name) if r.group is not None else "All students"
            parts.append(f"<p><b>{_e(tag)}</b>: {_e(method_words(g.recommended or method))} at the cut "
                         f"{_e(f'{adjusted.cut:g}')}: "
                         f"{_arrows(_e(shrinkage_words(m.unshrunk_moves, len(m.fail_to_pass), len(m.pass_to_fail))))}.</p>")
    if level_cols:
        parts.append(levels_html(level_cols))
    parts.append("<h2>Uncertain students</h2>")
    unc = ([row["paper"] for row in change_list.rows if row.get("uncertain") == "yes"]
           if change_list is not None and "uncertain" in change_list.header else None)
    if unc is None and r.facets:   # "use MFRM" below would be no advice: a rubric's totals have none yet
        parts.append("<p>No standard errors are computed for a rubric's totals yet, so no student is named as "
                     "uncertain.</p>")
    elif unc is None:
        from .uncertainty import no_se_reason

        labels = sorted({str(g.recommended or method) for g in adjusted.groups})
        parts.append("<p>No standard errors were computed for this method, so no student is named as uncertain ("
                     + _e("; ".join(no_se_reason(lab, getattr(adjusted, "bootstrap", 0)) for lab in labels)) + ").</p>"
                     if change_list is None or "se" not in change_list.header else
                     "<p>Give cut scores to see whose level is uncertain.</p>")
    else:
        for tag, lc in level_cols:
            if lc.uncertain is not None or lc.without_se:
                parts.append(f"<p><b>{_e(tag)}</b>: {_e(lc.uncertain_text('student'))}.</p>")
        if unc:
            # closest to a cut (in standard errors) first: the nearest to a coin toss
            rows = sorted((row for row in change_list.rows if row.get("uncertain") == "yes"),
                          key=lambda row: row.get("se_to_cut", 0.0))
            more = f" and {len(unc) - LISTED} more" if len(unc) > LISTED else ""
            gcol = r.group_name or "group"   # (with groups, each student's: one list mixed the schools unnamed)
            named = [str(row["paper"]) + (f" ({row[gcol]})" if r.group is not None and gcol in row else "")
                     for row in rows[:LISTED]]
            parts.append(f"<p>Closest to a cut first: {_e(', '.join(named))}{more}. "
                         "A second look (another reading) is worth its cost where a student's level matters most.</p>")
    warned = _warnings_of(adjusted, method)
    if warned:   # (what the command line prints and the report lists: a staff tester's memo of random
        # scores, signed off in the app, said nothing of "the file's papers do not differ detectably")
        parts.append("<h2>What the adjustment warned</h2><ul>" + "".join(f"<li>{_e(w)}</li>" for w in warned)
                     + "</ul>")
    if r.notes:   # (what reading the file said: readings resolved, left out or skipped, labels merged, a scale taken
        # from the data; a staff tester's memo, the page signed off, said none of it)
        parts.append("<h2>What reading the file said</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in r.notes)
                     + "</ul>")
    items = [*settings.items(), ("ratercal version", __version__), ("date", memo_date())]
    cells = [f"<th>{_e(k)}</th><td>{_e(v)}</td>" for k, v in items]   # two settings a row: one page
    rows = "".join("<tr>" + "".join(cells[i:i + 2]) + "</tr>" for i in range(0, len(cells), 2))
    parts.append(f"<h2>Settings</h2><table>{rows}<tr><th>input SHA-256</th><td colspan=3><code>{_e(sha256)}"
                 "</code></td></tr></table>")
    head = _e(title or f"Decision memo: {source}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{head}</title><style>{_STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def levels_html(level_cols, noun: str = "student") -> str:
    """The students in each level, given and adjusted, per group (``level_cols``: ``[(tag, LevelChanges)]``),
    and the moves between levels: the memo's table, and the HTML report's where there are several cuts."""
    head = "".join(f"<th colspan=2>{_e(tag)}</th>" for tag, _ in level_cols)
    sub = "".join("<th>given</th><th>adjusted</th>" for _ in level_cols)
    body = "".join("<tr><td>" + _e(name) + "</td>" + "".join(f"<td>{lc.before[k]}</td><td>{lc.after[k]}</td>"
                                                              for _, lc in level_cols) + "</tr>"
                   for k, name in enumerate(level_cols[0][1].levels.names))
    out = f"<table><tr><th rowspan=2>level</th>{head}</tr><tr>{sub}</tr>{body}</table>"
    # (two levels, one cut: the table's "changed level (2 up, 40 down)" says the moves; said again here, a tester)
    flows = [f"<b>{_e(tag)}</b>: " + "; ".join(f"{_e(a)} &rarr; {_e(b)} {c}" for a, b, c in lc.flows())
             for tag, lc in level_cols if lc.flows() and len(lc.levels.names) > 2]
    if flows:
        out += "<p>Moves between levels: " + "<br>".join(flows) + ".</p>"
    # (many changes of a shrunk method can be its pull toward the mean; one cut's, the pass/fail account says)
    out += "".join(f"<p><b>{_e(tag)}</b>: {_e(lc.shrinkage_note(noun))}.</p>" for tag, lc in level_cols
                   if lc.shrinkage_note())
    # (every cut's: the memo does not carry the summary's warning of one cut on the grid of raw averages, which
    # the command line prints beside the levels; a staff tester's memo said "9 change level (0 up, 9 down)" alone)
    out += "".join(f"<p><b>{_e(tag)}</b>: {_e(lc.ties_text(noun))}.</p>" for tag, lc in level_cols if lc.ties_text())
    return out


def write_memo(path, *args, **kwargs) -> None:
    """:func:`memo_html` written atomically to ``path`` (a user's output: :func:`~ratercal_cli.io.open_output`)."""
    from ..io import open_output

    text = memo_html(*args, **kwargs)
    with open_output(path, newline="\n") as fh:
        fh.write(text)
