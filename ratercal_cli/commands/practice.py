"""``ratercal check | adjust | compare``: a practitioner's ratings file.

Each command reads a CSV/TSV of ratings (one per line: paper, rater, score; column
names configurable), optionally split by a grouping column (``--group-col grade``)
and analysed group by group.  Bad input is a one-line ``error: file:line: field:
message`` on stderr and exit code 2; problems a method can live with are
``warning:`` lines.  Outputs are written atomically: an error never leaves a
half-written file.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

import click

from ..errors import ArgumentError, InputError, MethodError, RatercalError
from . import command

# -- shared plumbing -----------------------------------------------------------------
def _one_line_errors(fn):
    """An OSError (unreadable file, full disk) becomes a one-line :class:`RatercalError` naming the file;
    a closed pipe on standard output ends the command quietly; a :class:`MethodError` that reaches the command
    unprefixed (a design the memory cannot take, refused where no method's error is prefixed: the raters' pairs
    table of 50,000 raters said no file) names the input file."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        src = kwargs.get("ratings_file", kwargs.get("source"))
        try:
            return fn(*args, **kwargs)
        except MethodError as exc:
            if not isinstance(src, (str, os.PathLike)) or exc.message.startswith(f"{src}:"):
                raise
            raise RatercalError(f"{src}: {exc.marked()}") from None
        except BrokenPipeError:   # `ratercal adjust ... -o - | head`: the reader left; stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)        # 128 + SIGPIPE, as a shell reports a command a pipe cut short
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            raise RatercalError(f"{where}{exc.strerror or exc}") from None
    return wrapper


def _file_options(fn):
    opts = [
        click.option("--scale", default=None, metavar="LOW-HIGH",
                     help="Rating scale, e.g. 0-5 (default: the lowest to the highest score found, "
                          "with a warning: give it)."),
        click.option("--paper-col", default="paper", show_default=True, help="Column naming the paper."),
        click.option("--rater-col", default="rater", show_default=True, help="Column naming the rater."),
        click.option("--score-col", default="score", show_default=True, help="Column holding the score."),
        click.option("--group-col", default=None,
                     help="Column (e.g. grade) whose groups are analysed separately."),
        click.option("--facet-col", "facet_cols", multiple=True, metavar="NAME",
                     help="A further facet of each rating (criterion, task, session...; repeatable): one rating "
                          "per paper, rater and combination of facet levels.  MFRM/MML take the facets as "
                          "effects; the other methods apply within each combination."),
        click.option("--score-cols", default=None, metavar="A,B,...",
                     help="A wide file with a column per criterion (e.g. style,org,conv): each cell is a "
                          "rating, its column the facet 'criterion'."),
        click.option("--rater-cols", default=None, metavar="A,B,...|PATTERN|RATER:SCORE,...",
                     help="A wide file with a column per rater (e.g. rater_1,rater_2 or 'rater_*'): each "
                          "filled cell a rating by that column's rater.  Or a pair of columns per reading, "
                          "who read it and the score (e.g. 'Reader 1:Score 1,Reader 2:Score 2' or "
                          "'Reader *:Score *'): each reading a rating, read in the pairs' order."),
        click.option("--sep", type=click.Choice(["auto", "comma", "tab", "semicolon", ",", ";"]),
                     default="auto", show_default=True,
                     help="Field separator of the input (auto: tab, semicolon or comma, from the header line)."),
        click.option("--encoding", default=None, metavar="NAME",
                     help="Text encoding of the input, e.g. latin-1 or cp1252 (default: UTF-8)."),
        click.option("--decimal", type=click.Choice(["auto", "point", "comma"]), default="auto", show_default=True,
                     help="Decimal mark of the scores and of the numbers written back (comma: 2,0 in a file separated "
                          "by ';' or tabs; auto: comma in a ';' file without decimal points, or in a ';' or tab file "
                          "with decimal commas)."),
        click.option("--sheet", default=None, metavar="NAME",
                     help="The sheet of an .xlsx workbook to read (default: its only sheet)."),
        click.option("--fold-labels", "fold_labels", is_flag=True,
                     help="Merge paper, rater and group labels that differ only in case, spacing or "
                          "Unicode form (without it they are warned of and kept apart)."),
        click.option("--order-col", default=None,
                     help="Column giving the order in which a paper's ratings were read (1, 2, 3...), "
                          "for --resolve-discrepancies (default: a column named 'order' if there "
                          "is one, else the order of the lines)."),
        click.option("--resolve-discrepancies", "resolve", is_flag=True,
                     help="Where a paper has a third rating because the first two differ by more "
                          "than --discrepancy, keep the third and the nearer of the first two "
                          "(on a tie drop the lower)."),
        click.option("--discrepancy", default=1, show_default=True, type=click.IntRange(0),
                     help="Largest difference between the first two ratings that needs no third."),
        click.option("--leave-out", "leave_out", multiple=True, metavar="RATER[,RATER]",
                     help="Read these raters' ratings as not given (repeatable, or comma-separated): their papers "
                          "are scored from their other ratings (check names it where a rater of few papers, every "
                          "one read by another rater too, stops the adjustment of the rest)."),
        click.option("--quiet", "-q", is_flag=True, help="No warnings or progress lines."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _calibration_options(fn):
    opts = [
        click.option("--anchors", "anchors_in", type=click.Path(path_type=Path), default=None, metavar="FILE",
                     help="A calibration (from --write-anchors, CSV or JSON): the many-facet model (MFRM) holds "
                          "every element named there at its value, estimates the rest on that scale, and reports "
                          "each anchored element's displacement and drift."),
        click.option("--write-anchors", "anchors_out", type=click.Path(path_type=Path), default=None, metavar="FILE",
                     help="Write this file's calibration (MFRM: rater severities, facet levels, thresholds, with "
                          "SEs) here, as CSV (or JSON if FILE ends in .json), for --anchors next time."),
        click.option("--steps-by", "steps_by", default=None, metavar="FACET",
                     help="MFRM thresholds per level of this facet (a partial-credit-by-criterion model)."),
        click.option("--hold-drifted", "hold_drifted", is_flag=True,
                     help="With --anchors: hold an anchored element that drifted at its anchor (by default it is "
                          "freed and measured on the scale of the anchors that did not drift)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _anchors(path, hold_drifted=False):
    if path is None:
        if hold_drifted:
            raise InputError("--hold-drifted goes with --anchors", field="--hold-drifted")
        return None
    from ..practice.anchors import read_anchors

    return read_anchors(path)


def _write_calibration(path, ratings, steps_by, result=None):
    """``--write-anchors``: the free MFRM's calibration of ``ratings`` (``result``: one made already)."""
    if path is None:
        return
    from ..io import output_target
    from ..practice.anchors import calibration, fit_mfrm, write_anchors
    from ..practice.check import one_group

    output_target(path)
    if result is None:
        one_group(ratings, "--write-anchors")
        result = calibration(fit_mfrm(ratings, steps_by=steps_by)[0], ratings, steps_by=steps_by)
    write_anchors(path, result)


def _refuse_clashes(source, table, anchors_in=None, **outputs):
    """Every output of the command (``outputs``: option -> path; ``--png``'s one file per group as
    drawn) differs from the inputs and from each other (:func:`ratercal_cli.guard.refuse_clashing_paths`),
    checked before any work."""
    from ..guard import refuse_clashing_paths
    from ..practice.text import group_paths

    outs = []
    for option, path in outputs.items():
        if path is None:
            continue
        if option == "--png" and table is not None:   # (two groups on one file: refused here, naming them)
            names = [g.name for g in table.groups] if table.ratings.group is not None else [None]
            outs += [(option, f) for f in group_paths(Path(path), names, table.ratings.group_name)]
        else:
            outs.append((option, path))
    refuse_clashing_paths([("RATINGS_FILE", source), ("--anchors", anchors_in)], outs)


def _read(path, scale, paper_col, rater_col, score_col, group_col, sep, resolve, discrepancy, quiet,
          encoding=None, order_col=None, decimal="auto", sheet=None, fold_labels=False, facet_cols=(),
          score_cols=None, rater_cols=None, leave_out=()):
    from ..practice.ratings_file import read_ratings_table

    table = read_ratings_table(path, scale, paper_col, rater_col, score_col, group_col, sep, encoding, order_col,
                               resolve, discrepancy, decimal=decimal, sheet=sheet, fold_labels=fold_labels,
                               facet_cols=facet_cols, score_cols=score_cols, rater_cols=rater_cols,
                               leave_out=leave_out)
    _warn(table.warnings, quiet)
    return table


def _warn(messages, quiet):
    if not quiet:
        for m in messages:
            click.echo(f"warning: {m}", err=True)


def _method_help(what):
    from ..methods import method_codes

    return f"{what}: {' '.join(method_codes())}; all (the study's ten)"


def _decimal(path, sep, decimal, encoding):
    """``--decimal`` as point or comma (auto: the file's, :func:`.ratings_file.resolve_decimal`), before the
    cuts are read in it."""
    from ..practice.ratings_file import resolve_decimal

    return resolve_decimal(path, sep, decimal, encoding)


def _one_cut(cut, decimal):
    """``--cut`` of check and compare (one cut) as a float, read as adjust reads its cuts (:func:`.levels.parse_cuts`:
    with ``--decimal comma``, ``2,5`` is 2.5; a staff tester's ``compare --cut 2,5`` was "not a valid float" where
    adjust took it), or None."""
    from ..practice.levels import parse_cuts

    cuts = parse_cuts(cut, decimal)
    if len(cuts) > 1:
        raise ArgumentError("cut", f"one cut here ({len(cuts)} given: {cut}); several cuts (levels) are adjust's")
    return cuts[0] if cuts else None


def _parse_methods(values, default, allow_recommended=False):
    from ..practice.adjust import parse_methods

    return parse_methods(values, default, allow_recommended)


#: ``adjust`` options that describe a ratings file and mean nothing for a run folder.
FILE_ONLY = ("output", "layout", "level_names", "changes_out", "memo_out", "scale", "paper_col", "rater_col", "score_col", "group_col", "sep", "resolve",
             "discrepancy", "encoding", "order_col", "assignment", "decimal", "sheet", "fold_labels", "cut",
             "bootstrap", "seed", "as_json", "shrinkage", "cluster_col", "simulate", "html_out", "facet_cols", "score_cols", "rater_cols", "total", "anchors_in",
             "anchors_out", "steps_by", "shared_raters", "leave_out")


def _refuse_file_options(ctx, source):
    """``adjust RUN_DIR``: a file-only option given on the command line is an error, not ignored."""
    from click.core import ParameterSource

    for param in ctx.command.params:
        if param.name in FILE_ONLY and ctx.get_parameter_source(param.name) not in (
                None, ParameterSource.DEFAULT):
            what = "a run folder" if (Path(source) / "config.yaml").is_file() else "a folder (not a ratings file)"
            raise InputError(f"{'/'.join(param.opts)} applies only to a ratings file, and {source} is {what}")


def _variant_option(default_help):
    return click.option("--variant", type=click.Choice(["faithful", "corrected"]), default=None,
                        help=default_help)


#: ``--html FILE`` of check, adjust and compare (:func:`_write_html`).
_html_option = click.option(
    "--html", "html_out", type=click.Path(path_type=Path), default=None, metavar="FILE",
    help="Also write one self-contained HTML report here (summary, rater report with Wright map, "
         "agreement, methods compared with MDS map, per-rater shifts, uncertain decisions).")

_shared_raters_option = click.option(
    "--shared-raters", "shared_raters", is_flag=True,
    help="With facets: each classical method (MN, TLI, EQP, OLS, ...) once over all the criteria with one "
         "parameter set per rater, instead of within each criterion on its own (MFRM/MML share a rater's "
         "severity across criteria always).")


# -- check ---------------------------------------------------------------------------
@command("check")
@click.argument("ratings_file", type=click.Path(path_type=Path))
@_file_options
@click.option("--assignment", type=click.Choice(["auto", "random", "nonrandom"]), default="auto",
              show_default=True, help="How papers were assigned to raters (Chapter 5's rule); auto: what the "
                                      "file shows (clusters in the rater network, the quality of each rater's papers).")
@click.option("--cluster-col", "cluster_col", default=None, metavar="NAME",
              help="Column giving each paper's cluster (school, class): the marginal models fit a mean quality "
                   "per cluster where assignment is confounded (default: clusters found in the rater network).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level of the tests (the assignment's at most 0.01: a false "
                                      "alarm changes the recommendation).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--png", type=click.Path(path_type=Path), default=None,
              help="Write the Wright map (papers' measures, raters' severities, thresholds) here "
                   "(one file per group: NAME_GROUP.png).")
@click.option("--no-rasch", "no_rasch", is_flag=True,
              help="Skip the Rasch fits (the per-rater PCM fit table, the rater report and the bias "
                   "table): the slowest part on large files.")
@_html_option
@_calibration_options
@click.option("--simulate", "simulate", type=click.IntRange(min=2), default=None, metavar="R",
              help="Rank the methods for this file's own design: fit the rater model, simulate R replications "
                   "of the design and score the methods (RMSE ± MCSE, conditional bias, accuracy at --cut).")
@click.option("--cut", default=None, metavar="CUT",
              help="With --simulate: the pass/fail cut on the file's scale (with --decimal comma: 2,5).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="With --simulate: the seed (default 19900601).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --simulate: worker processes (the same numbers for any number).")
@click.option("--scheduler", metavar="ADDR", default=None,
              help="With --simulate: run the replications on an existing Dask cluster, e.g. tcp://HOST:8786 "
                   "(needs 'distributed'; the same numbers).")
@click.option("--method", "-m", "methods", multiple=True, metavar="CODE[,CODE]",
              help="With --simulate: the methods to rank (default: the study's ten, MML and MFRM; 'all' is "
                   "the ten, faster).")
@_one_line_errors
def check(ratings_file, scale, paper_col, rater_col, score_col, group_col, facet_cols, score_cols, rater_cols, sep,
          encoding, decimal, sheet, fold_labels, order_col, resolve, discrepancy, quiet, assignment, cluster_col, alpha,
          as_json, png, no_rasch, html_out, anchors_in, anchors_out, steps_by, hold_drifted,
          simulate, cut, seed, jobs, scheduler, methods, leave_out=()):
    """Is adjustment warranted?  Tests of rater differences, the rater report, agreement, and
    which adjustment Chapter 5's rule and the corrected study support.

    Per rater: papers, mean, SD, score counts, chi-square and Kolmogorov-Smirnov tests
    against the pooled other raters.  Overall: ANOVA F of the rater means, Levene /
    Brown-Forsythe / Bartlett tests of the spreads, chi-square of rater x score, whether
    raters are linked through shared papers.  The rater report (as Facets prints it, from the
    rating scale model by conditional ML, or by marginal ML (MFRM) where CML cannot be fitted):
    severity and S.E., infit/outfit with ZSTD, observed and fair averages, separation, strata and
    reliability of raters and papers, the fixed (all same) chi-square; with --group-col, the
    rater x group bias.  Agreement per rater pair and overall: exact and adjacent %,
    quadratic-weighted kappa, Krippendorff's alpha, ICC.
    The recommendation by Chapter 5's rule: NO when every rater scored every paper, when
    assignment is non-random, when a rater scored fewer than 8 papers (named; a rater with a
    single rating, kept raw by every method, is not counted), or when no test
    finds the raters differing; else TMN when the fewest papers a rater scored is 8-20, TLI
    above 20.  Then the corrected study's best method for this design, with its RMSE, and the
    one RECOMMENDATION (raters of fewer than 8 papers each of which a rater of 8 or more
    read too do not stop it: it follows the rule on the other raters).
    """
    from ..practice.assignment import pop_cluster
    from ..practice.check import check as check_ratings

    _check_html(html_out)
    decimal = _decimal(ratings_file, sep, decimal, encoding)
    cut = _one_cut(cut, decimal)
    table = _read(ratings_file, scale, paper_col, rater_col, score_col, group_col, sep, resolve,
                  discrepancy, quiet or as_json, encoding, order_col, decimal, sheet, fold_labels,
                  tuple(facet_cols) + ((cluster_col,) if cluster_col else ()), score_cols, rater_cols,
                  leave_out=leave_out)
    _refuse_clashes(ratings_file, table, anchors_in, **{"--html": html_out, "--png": png,
                                                        "--write-anchors": anchors_out})
    _check_suffixes(html=html_out, png=png)
    given = [name for name, v in (("--cut", cut), ("--seed", seed), ("--scheduler", scheduler),
                                  ("--method", methods or None)) if v is not None]
    if simulate is None and given:
        raise InputError(f"{given[0]} goes with --simulate", field=given[0])
    codes = _parse_methods(methods, ())[0] if methods else None
    result = check_ratings(table.ratings, assignment=assignment, alpha=alpha, rasch=not no_rasch,
                           anchors=_anchors(anchors_in, hold_drifted), steps_by=steps_by,
                           calibrate=anchors_out is not None, hold_drifted=hold_drifted,
                           simulate=simulate, cut=cut, seed=seed, jobs=jobs, methods=codes, scheduler=scheduler,
                           cluster=cluster_col, discrepancy=discrepancy)
    _write_calibration(anchors_out, table.ratings, steps_by, result.calibration)
    maps = result.wright_maps(png) if png is not None else []
    # (the page's ratings without the cluster column, which was read as a facet for check to take back out: with
    # it the page took the file for a rubric, an empty heading and MFRM's moves under the recommendation's name)
    maps += _write_html(html_out, pop_cluster(table.ratings, cluster_col)[0] if cluster_col else table.ratings,
                        check=result)
    if as_json:
        click.echo(json.dumps({**result.to_dict(), "png": [str(p) for p in maps]}, indent=2))
        return
    click.echo(result.summary())
    if not quiet:
        for p in maps + ([anchors_out] if anchors_out is not None else []):   # (the anchors too: unsaid, a helper's)
            click.echo(f"wrote {p}")


# -- adjust --------------------------------------------------------------------------
@command("adjust")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--method", "-m", "methods", multiple=True, metavar="CODE[,CODE]",
              help=_method_help("Method(s)") + "; recommended (each group's recommendation from "
                   "`check`, column `recommended`) (file default: TLI).")
@_variant_option("faithful: as the 1990 programs computed; corrected: as the methods should "
                 "(default: corrected for a ratings file, the run's configured variants for a run folder).")
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="Output file, or - for standard output (default: SOURCE's name + .adjusted.csv, "
                   ".adjusted.tsv for a tab-separated SOURCE or .adjusted.xlsx for a workbook, beside it); "
                   "separated by tabs where it is named .tsv or .tab, or where SOURCE is and it is not named "
                   ".csv.  A link is written through; the folder must exist.")
@click.option("--assignment", type=click.Choice(["auto", "random", "nonrandom"]), default="auto",
              show_default=True, help="For --method recommended, MML and MFRM: how papers were assigned to raters "
                                      "(auto: what the file shows, as check says it); where it is confounded with "
                                      "clusters, MML and MFRM fit a mean quality per cluster.")
@click.option("--cluster-col", "cluster_col", default=None, metavar="NAME",
              help="For --method recommended, MML and MFRM: the column giving each paper's cluster (school), the multi-group "
                   "model's clusters where assignment is confounded (default: the rater network's), as in check.")
@click.option("--simulate", "simulate", type=click.IntRange(min=2), default=None, metavar="R",
              help="With --method recommended: decide as check --simulate R does (R replications of this file's "
                   "own design, check's seed), so the scores are those of the recommendation it printed.")
@click.option("--shrinkage", type=click.Choice(["none", "kelley", "linear_eb"]), default=None,
              help="The named methods' paper scores at a shrinkage level of the study: none (unshrunk; MML/MFRM at "
                   "Warm's WLE), kelley (Kelley's formula; MML/MFRM at their EAP) or linear_eb (the study's "
                   "like-for-like level: one empirical-Bayes linear operator on every method's unshrunk scores).  "
                   "Default: each method's own (MML/MFRM at the EAP, the others unshrunk); --method recommended "
                   "has its own level.")
@click.option("--cut", default=None, metavar="CUT[,CUT...]",
              help="Cut score (a paper passes with a score >= cut): the summary names the papers whose "
                   "pass/fail the adjustment changed; with paper SEs, columns X_paper_pass.  Several cuts "
                   "(2.5,3.5,4.5) make performance levels, and the summary counts the papers moving between "
                   "them; with facets the cuts are on the rubric total (e.g. 14 on four criteria of 1-6).")
@click.option("--layout", type=click.Choice(["input", "long"]), default="input", show_default=True,
              help="input: the output keeps the input's layout (a wide file stays wide, adjusted columns beside "
                   "each criterion or rater column); long: a line per rating.")
@click.option("--levels", "level_names", default=None, metavar="NAME,NAME,...",
              help="Names of the levels the cuts make, lowest first (one more than the cuts), e.g. "
                   "\"Below,Basic,Proficient,Advanced\".")
@click.option("--confidence", type=float, default=0.9, show_default=True, metavar="C",
              help="With cuts and SEs: a student is uncertain when the interval of the adjusted score at this "
                   "confidence crosses a cut (0.9: ± 1.645 SE; one cut: a pass probability between 0.05 and 0.95).")
@click.option("--changes", "changes_out", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Write the per-student change list here (CSV, or .xlsx): given and adjusted score, the change, "
                   "with cuts both levels, with SEs the probability of the adjusted level.")
@click.option("--memo", "memo_out", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Write a one-page decision memo (HTML) here: the decision and its reasons in plain words, the "
                   "students moved between levels, the uncertain ones, date, version, every setting, the input's "
                   "SHA-256.")
@click.option("--bootstrap", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Each paper's standard error (columns X_paper_se) by N draws of a bootstrap over papers "
                   "(equating and least-squares methods; MML/MFRM always get their posterior SD, CML/RSM "
                   "their WLE's; not yet with facets, where a warning says so).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--total", type=click.Choice(["sum", "mean"]), default="sum", show_default=True,
              help="With facets: a paper's rubric total (column X_total) over its criteria.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the summary (per rater shifts, papers moved, pass/fail changes) as JSON.")
@_html_option
@_shared_raters_option
@_file_options
@_calibration_options
@_one_line_errors
def adjust(source, methods, variant, output, assignment, cluster_col, simulate, shrinkage, cut, layout, level_names, confidence,
           changes_out, memo_out, bootstrap, seed, total,
           as_json, html_out, shared_raters,
           scale, paper_col, rater_col, score_col, group_col, facet_cols, score_cols, rater_cols, sep, encoding,
           decimal, sheet, fold_labels, order_col, resolve, discrepancy, quiet, anchors_in, anchors_out, steps_by,
           hold_drifted, leave_out=()):
    """Adjust the scores of a ratings file (or every data set of a run folder).

    The output holds the input's columns, then `flag` (resolved / dropped /
    unresolved / many / missing / thin, blank otherwise) and, per method X, `X` (the rating's
    adjusted score) and `X_paper` (the paper's adjusted score, the same on each of
    its lines).  With --bootstrap (and for MML/MFRM always; not yet with facets), `X_paper_se`, and with --cut
    `X_paper_pass`, the probability that the paper passes; with --method recommended,
    `recommended_method`, the method each line's group got.  A summary (per rater the mean
    shift; papers moved; with --cut the papers that went fail->pass and pass->fail) goes to
    standard error, or with --json to standard output.  For a run folder only --method,
    --variant and --quiet apply; the file options are refused.
    """
    if source.is_dir():
        _refuse_file_options(click.get_current_context(), source)
        codes, _ = _parse_methods(methods, ()) if methods else (None, False)
        from ..study import Run
        from ..study.equate import run_equate

        with Run.writing(source, "adjust") as run:   # one writer at a time
            run_equate(run, methods=codes, variants=(variant,) if variant else None, quiet=quiet)
        return
    if not source.exists():
        raise InputError("no such file", source)

    codes, is_all = _parse_methods(methods, ("TLI",), allow_recommended=True)
    to_stdout = output is not None and str(output) == "-"
    if to_stdout and as_json:
        raise InputError("--json prints to standard output, and so does -o -; give -o a file name", field="--json")
    if output is not None and not to_stdout:   # refuse a bad -o before the work
        _check_output(output, source)
    if changes_out is not None:   # (refused after the work, -o written, it left a half-done set of outputs)
        from ..practice.output import is_workbook

        is_workbook(changes_out, "changes")
    for extra in (html_out, changes_out, memo_out):
        _check_html(extra)
    from ..practice.levels import check_confidence, check_levels, parse_levels

    decimal = _decimal(source, sep, decimal, encoding)
    levels = parse_levels(cut, level_names, decimal)
    check_confidence(confidence)   # before anything is read or written
    if cut is None and click.get_current_context().get_parameter_source("confidence") \
            is click.core.ParameterSource.COMMANDLINE:   # (it was ignored: uncertain is of a cut)
        raise InputError("goes with --cut: a decision is uncertain at a cut", field="--confidence")
    table = _read(source, scale, paper_col, rater_col, score_col, group_col, sep, resolve,
                  discrepancy, quiet, encoding, order_col, decimal, sheet, fold_labels, facet_cols, score_cols,
                  rater_cols, leave_out=leave_out)
    if output is None:
        output = source.with_name(source.stem + ".adjusted" + (".xlsx" if table.sheet is not None else ".tsv"
                                                               if table.delimiter == "\t" else ".csv"))
        _check_output(output, source)
    _refuse_clashes(source, table, anchors_in, **{"-o": output, "--html": html_out, "--write-anchors": anchors_out,
                                                  "--changes": changes_out, "--memo": memo_out})
    _check_suffixes(html=html_out, changes=changes_out, memo=memo_out)
    from ..practice.adjust import adjust as adjust_ratings

    check_levels(levels, table.ratings, total)
    # one cut on a paper's score is the pass/fail cut of the summary and the pass probabilities; several
    # cuts, or cuts on a rubric's totals, are levels (counted below)
    one_cut = levels.cuts[0] if levels is not None and len(levels.cuts) == 1 and not table.ratings.facets else None
    ratings = table.ratings
    if cluster_col:   # the cluster column read as a facet, which adjust takes back out (the output is table's)
        ratings = _read(source, scale, paper_col, rater_col, score_col, group_col, sep, resolve, discrepancy, True,
                        encoding, order_col, decimal, sheet, fold_labels, tuple(facet_cols) + (cluster_col,),
                        score_cols, rater_cols, leave_out=leave_out).ratings
    result = adjust_ratings(ratings, codes, variant or "corrected", assignment, strict=None, cut=one_cut,
                            bootstrap=bootstrap, seed=seed, anchors=_anchors(anchors_in, hold_drifted),
                            steps_by=steps_by, shared_raters=shared_raters, hold_drifted=hold_drifted,
                            shrinkage=shrinkage, cluster=cluster_col, simulate=simulate,
                            discrepancy=discrepancy if simulate is not None else None)
    from ..io import output_set

    with output_set():   # the outputs all of this run, or all as they were (a failure or ^C between two)
        _write_calibration(anchors_out, table.ratings, steps_by)
        _warn(result.warnings, quiet)
        n_lines = _write_adjusted_output(output, table, result, total, layout)
        from ..practice.levels import changes

        show_levels = levels is not None and (len(levels.cuts) > 1 or level_names or table.ratings.facets)
        # only where something shows it: a list of every paper, 0.9-2 s of adjust --cut at 1M ratings (issue 32)
        change_list = (changes(result, levels=levels, total=total, confidence=confidence)
                       if changes_out is not None or memo_out is not None or (html_out is not None and levels is not None)
                       or (levels is not None and (as_json or (show_levels and not quiet))) else None)
        # (an error building the page, a rubric's unlinked raters, leaves every output as it was: output_set)
        page = _html_page(html_out, table.ratings, adjust=result, cut=one_cut, variant=result.variant, confidence=confidence,
                          model=dict(steps_by=steps_by, anchors=_anchors(anchors_in, hold_drifted) if html_out else None,
                                     hold_drifted=hold_drifted), changes=change_list)
        listed = [o for o, p in (("--changes", changes_out), ("--memo", memo_out)) if p is not None]
        if listed and len(result.methods) > 1:   # (each is of one method: said, where it was silent)
            _warn([f"{' and '.join(listed)}: of {result.methods[0]}, the first of the methods named "
                   f"({', '.join(result.methods)}); to have {'it' if len(listed) == 1 else 'them'} of another "
                   "method, name that method first"], quiet)
        if changes_out is not None:
            from ..practice.output import like_input, write_table

            header, rows, labels = change_list.written(table.columns.paper)
            write_table(changes_out, header, rows, bom=True, sheet="changes", labels=labels, **like_input(table))
        if memo_out is not None:
            _write_memo(memo_out, source, table, result, levels, change_list, assignment, dict(
                methods=",".join(codes), variant=result.variant, shrinkage=shrinkage, cluster_col=cluster_col,
                simulate=simulate, scale=scale, paper_col=paper_col, rater_col=rater_col,
                score_col=score_col, group_col=group_col, facet_cols=",".join(facet_cols) or None, score_cols=score_cols,
                rater_cols=rater_cols, order_col=order_col, resolve_discrepancies=resolve, discrepancy=discrepancy,
                cut=cut, levels=level_names, confidence=confidence if levels is not None and confidence != 0.9 else None,
                total=total if table.ratings.facets else None, bootstrap=bootstrap,
                seed=seed, assignment=assignment, sheet=sheet, encoding=encoding, decimal=decimal,
                fold_labels=fold_labels, shared_raters=shared_raters, steps_by=steps_by,
                anchors=anchors_in, output=output, leave_out=",".join(leave_out) or None))
        written = _write_page(html_out, page)
        written += [p for p in (changes_out, memo_out) if p is not None]
    if as_json:
        from ..practice.text import json_clean

        extra = {"levels": [c.to_dict() for c in change_list.changes]} if levels is not None else {}
        click.echo(json.dumps(json_clean({**result.to_dict(confidence), **extra, "output": str(output)}), indent=2))
    elif not quiet:
        click.echo(result.summary_text(confidence), err=True)
        if show_levels:
            r = result.ratings
            for c in change_list.changes:
                click.echo(c.format_text(f"{r.source}, {r.group_tag(c.group) if r.group is not None else 'all papers'}"),
                           err=True)
        for p in written + ([anchors_out] if anchors_out is not None else []):
            click.echo(f"wrote {p}", err=True)
    if not quiet and not as_json:
        n_pap = result.ratings.n_papers
        click.echo(f"wrote {'standard output' if to_stdout else output}: {n_lines} lines, {n_pap} "
                   f"papers, {len(table.groups)} group(s); methods {' '.join(result.methods)} ({result.variant})",
                   err=to_stdout)


def _write_adjusted_output(output, table, result, total, layout="input"):
    """The adjusted file: a long CSV by :func:`write_adjusted` (a chunk at a time); a workbook, a wide
    input's layout or a workbook input's CSV (with a byte-order mark) by :mod:`.practice.output`."""
    from ..practice.output import is_workbook, write_adjusted_file
    from ..practice.ratings_file import write_adjusted

    wide = table.wide is not None and layout == "input"
    if wide or str(output) != "-" and (is_workbook(output) or table.sheet is not None):   # (a wide input stays wide
        # on standard output too: it came back long, a tester; a workbook input is CSV there, as write_adjusted writes)
        return write_adjusted_file(output, table, result, total, layout)
    write_adjusted(output, table, result.by_group(), result.methods, uncertainty=result.uncertainty_by_group(),
                   applied=result.recommended_lines() or None, cells=result.cells_by_group(total))
    return len(table.rows)


def _write_memo(path, source, table, result, levels, change_list, assignment, settings):
    """``--memo FILE``: the decision memo (:mod:`.practice.memo`), with check's reasons."""
    from ..io import sha256_file
    from ..practice.check import check as check_ratings
    from ..practice.memo import write_memo

    # (the Rasch fits too, whatever the method: without them the study had no say, and the memo named
    # Chapter 5's rule as check's recommendation where ratercal check recommends another method)
    reasons = check_ratings(table.ratings, assignment=assignment)
    shown = {k: str(v) for k, v in settings.items() if v not in (None, False, "", ())}
    for wide, unused in (("rater_cols", ("rater_col", "score_col")), ("score_cols", ("score_col",))):
        if settings.get(wide):   # (a wide file has no such column: the memo listed rater_col rater, a tester)
            for k in unused:
                shown.pop(k, None)
    if settings.get("anchors"):   # (a later year's memo: which anchors, and which raters drifted from them)
        shown.update(_anchor_lines(settings["anchors"], getattr(result, "anchored", None) or []))
    write_memo(path, result, reasons, {"input": Path(source).name, **shown}, sha256_file(source), levels=levels,
               change_list=change_list)


def _anchor_lines(anchors, rows) -> dict:
    """The memo's lines of an anchored adjustment: the anchor file's digest and the raters that drifted from their
    anchors, freed or held (a staff tester's year-2 memo named neither)."""
    from ..io import sha256_file
    from ..practice.anchors import RATER

    drifted = [r for r in rows if r.get("facet") == RATER and (r.get("freed") or r.get("drifted"))]
    said = ", ".join(f"{r['element']} ({r['displacement']:+.2f} logits, "
                     f"{'freed: measured afresh' if r.get('freed') else 'held at its anchor'})" for r in drifted)
    return {"anchors SHA-256": sha256_file(anchors), "drifted raters": said or "none"}


#: what each output option writes, and the suffixes that say so (a name without a suffix is taken as given)
_OUTPUT_KINDS = {"html": ("an HTML page", (".html", ".htm")), "memo": ("an HTML page", (".html", ".htm")),
                 "changes": ("a CSV table or an .xlsx workbook", (".csv", ".txt", ".xlsx")),
                 "png": ("PNG images", (".png",))}


def _check_html(html_out):
    """Refuse a bad --html before the work."""
    if html_out is not None:
        from ..io import output_target

        output_target(html_out)


def _check_suffixes(**outputs):
    """Refuse an output (``outputs``: option -> path, of :data:`_OUTPUT_KINDS`) whose suffix names another
    format (``--html report.xlsx`` wrote a page Excel would not open); after :func:`_refuse_clashes`, whose
    error (an output naming an input) says more."""
    from ..errors import ArgumentError

    for option, path in outputs.items():
        if path is None:
            continue
        what, suffixes = _OUTPUT_KINDS[option]
        suffix = Path(str(path)).suffix.lower()
        if suffix and suffix not in suffixes:
            raise ArgumentError(option, f"writes {what}, not {suffix}; name it {' or '.join(suffixes)}", path)


def _write_html(html_out, ratings, **results) -> list:
    """``--html FILE``: the report (:func:`ratercal_cli.practice.html_report.write_html_report`)."""
    if html_out is None:
        return []
    from ..practice.html_report import write_html_report

    return [write_html_report(html_out, ratings, **results)]


def _html_page(html_out, ratings, **results):
    """``--html FILE``'s page as text (None without it), to write after the other outputs."""
    if html_out is None:
        return None
    from ..practice.html_report import html_report

    return html_report(ratings, **results)


def _write_page(html_out, page) -> list:
    """Write :func:`_html_page`'s page atomically to ``html_out``."""
    if html_out is None:
        return []
    from ..io import open_output

    with open_output(html_out) as fh:
        fh.write(page)
    return [html_out]


def _check_output(output, source):
    """Refuse an output that is a directory, a device, in a missing folder, the input, or named as
    a workbook ratercal cannot write (.xls, .xlsm, .ods)."""
    from ..guard import refuse_clashing_paths
    from ..io import output_target
    from ..practice.output import is_workbook

    is_workbook(output)

    output_target(output)
    refuse_clashing_paths([("RATINGS_FILE", source)], [("-o", output)])
    suffix = Path(str(output)).suffix.lower()
    if suffix in _NOT_A_TABLE:   # (-o page.html wrote a CSV under a page's name)
        from ..errors import ArgumentError

        raise ArgumentError("output", f"writes the adjusted ratings as a CSV table or an .xlsx workbook, not "
                            f"{suffix}; name it .csv or .xlsx", output)


#: suffixes of formats that are no table: an adjusted file named so is a slip (the page's name given to -o)
_NOT_A_TABLE = frozenset({".html", ".htm", ".json", ".pdf", ".png", ".jpg", ".jpeg", ".svg", ".doc", ".docx", ".md"})


# -- compare -------------------------------------------------------------------------
@command("compare")
@click.argument("ratings_file", type=click.Path(path_type=Path))
@click.option("--method", "-m", "methods", multiple=True, metavar="CODE[,CODE]",
              help=_method_help("Methods to compare") + " (default: all).")
@_variant_option("faithful or corrected methods (default: corrected).")
@click.option("--cut", default=None, metavar="CUT",
              help="Cut score: count papers passing (paper score >= cut), and those helped or hurt "
                   "relative to no equating (Denny used 3.25); with facets on the rubric total, as adjust's "
                   "(with --decimal comma: 3,25).")
@click.option("--total", type=click.Choice(["sum", "mean"]), default="sum", show_default=True,
              help="With facets: the papers' scores compared (and cut) are their rubric totals over the criteria, "
                   "or the mean criterion score.")
@click.option("--png", type=click.Path(path_type=Path), default=None,
              help="Write the MDS map of the methods here (one file per group: NAME_GROUP.png), "
                   "only once every group has been compared.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@_html_option
@_shared_raters_option
@_file_options
@_calibration_options
@_one_line_errors
def compare(ratings_file, methods, variant, cut, total, png, as_json, html_out, shared_raters, scale, paper_col, rater_col,
            score_col, group_col, facet_cols, score_cols, rater_cols, sep, encoding, decimal, sheet, fold_labels, order_col,
            resolve, discrepancy, quiet, anchors_in, anchors_out, steps_by, hold_drifted, leave_out=()):
    """How far apart do the methods put these papers?  Denny's Tables 4 and 5, Figures 7-10.

    Between every pair of methods: RMSD, maximum difference and correlation of the
    papers' adjusted scores; with --cut, pass/fail counts and papers helped / hurt
    relative to unadjusted (NO) scores; with --png, a classical MDS map of the methods
    from their RMSDs.
    """
    from ..practice.compare import compare as compare_ratings

    if not ratings_file.exists() or ratings_file.is_dir():
        raise InputError("no such file" if not ratings_file.exists() else "is a directory", ratings_file)
    codes, is_all = _parse_methods(methods, ("all",))
    if png is not None:   # refuse a bad --png before the work (each group's map goes beside it)
        from ..io import output_target

        output_target(png)
    _check_html(html_out)
    decimal = _decimal(ratings_file, sep, decimal, encoding)
    cut = _one_cut(cut, decimal)
    table = _read(ratings_file, scale, paper_col, rater_col, score_col, group_col, sep, resolve,
                  discrepancy, quiet or as_json, encoding, order_col, decimal, sheet, fold_labels, facet_cols,
                  score_cols, rater_cols, leave_out=leave_out)
    _refuse_clashes(ratings_file, table, anchors_in, **{"--html": html_out, "--png": png,
                                                        "--write-anchors": anchors_out})
    _check_suffixes(html=html_out, png=png)
    result = compare_ratings(table.ratings, codes, variant or "corrected", cut, strict=None, total=total,
                             anchors=_anchors(anchors_in, hold_drifted), steps_by=steps_by,
                             shared_raters=shared_raters, hold_drifted=hold_drifted)
    _write_calibration(anchors_out, table.ratings, steps_by)
    _warn(result.warnings, quiet or as_json)
    pngs = result.draw_maps(png) if png is not None else []   # drawn only once every group has succeeded
    maps = pngs + _write_html(html_out, table.ratings, compare=result, cut=cut, variant=result.variant,
                              model=dict(steps_by=steps_by, anchors=_anchors(anchors_in, hold_drifted) if html_out
                                         else None, hold_drifted=hold_drifted))
    if as_json:
        d = result.to_dict()
        for entry, target in zip(d["groups"], pngs):   # each group's map, not the HTML report
            entry["png"] = str(target)
        click.echo(json.dumps(d, indent=2))
    else:
        click.echo(result.summary())
        if not quiet:
            for p in maps + ([anchors_out] if anchors_out is not None else []):
                click.echo(f"wrote {p}")
