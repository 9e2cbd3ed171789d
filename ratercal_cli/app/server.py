"""The app's pages (Starlette, Jinja2 templates rendered on the server; no script on any page).

The flow: ``/`` upload a CSV/xlsx -> ``/d/ID/columns`` a preview with each column's guessed role,
every guess changeable -> (a job: read, check, adjust by the recommended method, the report) ->
``/d/ID/decision`` check's findings in plain words, the full report a click away, the method to
choose -> (a job: adjust, write the files) -> ``/d/ID/files`` the adjusted file in the input's format
and layout, the change list, the report and the memo.  A job's page refreshes itself each second
(``<meta http-equiv=refresh>``) and has a Cancel button.

Built on the library (:func:`~ratercal_cli.practice.ratings_file.read_ratings_table`,
:func:`~ratercal_cli.practice.check.check`, :func:`~ratercal_cli.practice.adjust.adjust` and their
results objects), never on the commands' text.  The security of a local server (token, Host header,
upload size, private folder) is :mod:`.security`'s.
"""

from __future__ import annotations

import contextlib
import html
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import RatercalError
from .jobs import Job
from .security import DEFAULT_MAX_UPLOAD, Security, UploadTooLarge

__all__ = ["create_app", "AppState"]

TEMPLATES = Path(__file__).with_name("templates")
#: Rows of the preview.
PREVIEW_ROWS = 8
#: The app's bootstrap draws (each student's standard error, so the uncertain ones can be named).
BOOTSTRAP = 200
#: What the files are called and served as: kind -> (suffix, media type)
MEDIA = {".csv": "text/csv; charset=utf-8", ".tsv": "text/tab-separated-values; charset=utf-8",
         ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         ".html": "text/html; charset=utf-8"}


@dataclass
class Upload:
    """One uploaded file and what was made of it (all in the private folder ``folder``)."""

    id: str
    name: str                       # the file's name as the browser sent it: shown, never opened
    folder: Path
    path: Path                      # our copy: input.csv or input.xlsx
    workbook: bool
    sheets: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    error: str | None = None        # why the file could not be previewed
    header: list = field(default_factory=list)
    preview: list = field(default_factory=list)
    guess: object = None
    job: Job | None = None
    next_page: str = "decision"
    table: object = None
    checked: object = None
    adjusted: object = None
    levels: object = None
    change_list: object = None
    report: str | None = None
    files: dict = field(default_factory=dict)   # kind -> (path, download name)

    @property
    def stem(self) -> str:
        s = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(self.name).stem)[:60].strip("._")
        return s or "ratings"


class AppState:
    """The server's uploads, in a private folder (``mkdtemp``: readable by its owner only) that
    :meth:`close` removes."""

    def __init__(self, folder: Path | None = None):
        self.own = folder is None
        self.folder = Path(tempfile.mkdtemp(prefix="ratercal-app-")) if folder is None else Path(folder)
        self.uploads: dict[str, Upload] = {}

    def close(self):
        for u in self.uploads.values():
            if u.job is not None:
                u.job.cancel()
        if self.own:
            shutil.rmtree(self.folder, ignore_errors=True)


def _env():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals["version"] = __version__
    env.filters["num"] = _num
    return env


def _num(x, nd=2):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if x != x or x in (float("inf"), float("-inf")) else f"{x:.{nd}f}"


def create_app(token: str | None = None, port: int | None = None, folder: Path | None = None,
               max_upload: int = DEFAULT_MAX_UPLOAD):
    """The ASGI app: ``token`` (default: a new random one) required on every request, Hosts
    ``127.0.0.1:port`` and ``localhost:port`` only, uploads up to ``max_upload`` bytes kept in
    ``folder`` (default: a new private temporary folder, removed at shutdown).  The app's
    ``state.ratercal`` is the :class:`AppState`, ``state.token`` the token."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    state = AppState(folder)
    env = _env()
    token = token or secrets.token_urlsafe(32)

    def page(name, status=200, **ctx):
        return HTMLResponse(env.get_template(name).render(**ctx), status_code=status)

    def find(request) -> Upload:
        u = state.uploads.get(request.path_params["id"])
        if u is None:
            raise _NotFound()
        return u

    def go(path):
        return RedirectResponse(path, status_code=303)

    # -- upload ------------------------------------------------------------------------------
    async def index(request):
        return page("index.html", uploads=list(state.uploads.values()), max_mb=max_upload // 2**20)

    async def upload(request):
        try:
            form = await request.form(max_files=1, max_fields=10)
        except UploadTooLarge:
            raise
        except Exception as exc:   # a broken multipart body (python-multipart's or Starlette's errors)
            return page("error.html", 400, message=f"the upload could not be read ({type(exc).__name__})")
        f = form.get("file")
        if f is None or not hasattr(f, "read") or not f.filename:
            return page("index.html", 400, uploads=list(state.uploads.values()), max_mb=max_upload // 2**20,
                        message="choose a file (CSV, TSV or .xlsx) first")
        uid = secrets.token_hex(8)
        folder = state.folder / uid
        folder.mkdir(mode=0o700)
        head = await f.read(4)
        await f.seek(0)
        workbook = head == b"PK\x03\x04"
        target = folder / ("input.xlsx" if workbook else "input" + _text_suffix(f.filename))
        with open(target, "wb") as out:
            while chunk := await f.read(1 << 20):
                out.write(chunk)
        await form.close()
        u = Upload(uid, Path(f.filename.replace("\\", "/")).name or "ratings", folder, target, workbook)
        state.uploads[uid] = u
        _preview(u)
        return go(f"/d/{uid}/columns")

    # -- columns -----------------------------------------------------------------------------
    async def columns(request):
        u = find(request)
        return page("columns.html", u=u, s=_settings(u), methods=_methods())

    async def columns_post(request):
        u = find(request)
        form = await request.form()
        settings = _form_settings(form)
        shown = (u.settings.get("sheet"), u.settings.get("sep"))
        if (settings.get("sheet") if u.workbook else None, settings.get("sep") if not u.workbook else None) != \
                (shown[0] if u.workbook else None, shown[1] if not u.workbook else None):
            # another sheet or separator: its preview and guesses first
            _preview(u, settings.get("sheet"), None if u.workbook else settings.get("sep"))
            return go(f"/d/{u.id}/columns")
        u.settings = settings
        if u.job is not None and u.job.state == "running":
            return go(f"/d/{u.id}/job")
        u.files.clear()
        u.job, u.next_page = Job(lambda job: _check_job(u, job), "check"), "decision"
        return go(f"/d/{u.id}/job")

    # -- jobs --------------------------------------------------------------------------------
    async def job_page(request):
        u = find(request)
        job = u.job
        if job is None:
            return go(f"/d/{u.id}/columns")
        if job.state == "done":
            return go(f"/d/{u.id}/{u.next_page}")
        return page("job.html", u=u, job=job)

    async def cancel(request):
        u = find(request)
        if u.job is not None:
            u.job.cancel()
        return go(f"/d/{u.id}/job")

    # -- the decision ----------------------------------------------------------------------------
    async def decision(request):
        u = find(request)
        if u.checked is None:
            return go(f"/d/{u.id}/columns")
        return page("decision.html", u=u, groups=_decision(u), methods=_methods(), s=u.settings)

    async def adjust_post(request):
        u = find(request)
        if u.checked is None:
            return go(f"/d/{u.id}/columns")
        form = await request.form()
        method = str(form.get("method") or "recommended")
        if method not in ["recommended", *_methods()]:
            return page("error.html", 400, message=f"unknown method {method}", u=u)
        u.settings["method"] = method
        if u.job is None or u.job.state != "running":
            u.job, u.next_page = Job(lambda job: _adjust_job(u, job, method), "adjust"), "files"
        return go(f"/d/{u.id}/job")

    async def files(request):
        u = find(request)
        if not u.files:
            return go(f"/d/{u.id}/decision")
        return page("files.html", u=u, groups=_decision(u), s=u.settings)

    async def download(request):
        u = find(request)
        kind = request.path_params["kind"]
        if kind not in u.files:   # a fixed set of names; nothing from the browser is a path
            raise _NotFound()
        path, name = u.files[kind]
        media = MEDIA.get(Path(name).suffix, "application/octet-stream")
        inline = request.query_params.get("view") == "1" and name.endswith(".html")
        return Response(path.read_bytes(), media_type=media, headers={
            "Content-Disposition": f'{"inline" if inline else "attachment"}; filename="{name}"'})

    async def report(request):
        u = find(request)
        if u.report is None:
            return go(f"/d/{u.id}/columns")
        return HTMLResponse(u.report)

    routes = [Route("/", index), Route("/upload", upload, methods=["POST"]),
              Route("/d/{id}/columns", columns), Route("/d/{id}/columns", columns_post, methods=["POST"]),
              Route("/d/{id}/job", job_page), Route("/d/{id}/cancel", cancel, methods=["POST"]),
              Route("/d/{id}/decision", decision), Route("/d/{id}/adjust", adjust_post, methods=["POST"]),
              Route("/d/{id}/files", files), Route("/d/{id}/file/{kind}", download),
              Route("/d/{id}/report", report)]

    async def not_found(request, exc):
        return page("error.html", 404, message="no such page (the server keeps uploads only while it runs)")

    async def too_large(request, exc):   # a body without Content-Length that passed the limit as it streamed
        return page("error.html", 413, message=f"The file is larger than this server takes ({max_upload // 2**20} "
                                               "MB; start it with --max-upload MB for more).")

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:   # the uploads' folder goes with the server
            state.close()

    app = Starlette(routes=routes, exception_handlers={_NotFound: not_found, 404: not_found,
                                                        UploadTooLarge: too_large}, lifespan=lifespan)
    app.state.ratercal = state
    app.state.token = token
    guarded = Security(app, token=token, port=port, max_upload=max_upload,
                       denied=lambda status, message: env.get_template("error.html").render(message=message))
    guarded.state = app.state
    return guarded


class _NotFound(Exception):
    pass


def _text_suffix(name: str) -> str:
    s = Path(name or "").suffix.lower()
    return s if s in (".csv", ".tsv", ".txt", ".tab") else ".csv"


def _methods() -> list:
    from ..methods import method_codes

    return [c for c in method_codes() if c != "USER"]


# -- preview and settings ----------------------------------------------------------------------
def _preview(u: Upload, sheet=None, sep=None) -> None:
    """The first rows and the guesses (:mod:`.guess`); a file that cannot be read keeps its one-line error."""
    from ..practice.ratings_file import SEPARATORS, read_source
    from .guess import guess_columns

    try:
        if u.workbook:
            import openpyxl

            try:
                wb = openpyxl.load_workbook(u.path, read_only=True)
                u.sheets = list(wb.sheetnames)
                wb.close()
            except Exception as exc:
                raise RatercalError(f"{u.name}: not readable as an .xlsx workbook ({type(exc).__name__})") from None
            sheet = sheet or (u.sheets[0] if u.sheets else None)
        sep = None if u.workbook else (sep if sep in SEPARATORS and sep != "auto" else _sniff_separator(u.path))
        src = read_source(u.path, (), SEPARATORS[sep] if sep else None, sheet=sheet if u.workbook else None)
    except RatercalError as exc:
        u.error = str(exc).replace(str(u.path), u.name)
        return
    u.error = None
    u.header = list(src.header)
    rows = [r for _, r in src.rows]
    u.preview = [[r.get(h, "") for h in u.header] for r in rows[:PREVIEW_ROWS]]
    u.guess = guess_columns(u.header, rows)
    g = u.guess
    u.settings = {"paper": g.paper, "rater": g.rater, "score": g.score, "order": g.order, "group": g.group,
                  "facets": [], "score_cols": list(g.score_cols), "rater_cols": list(g.rater_cols),
                  "scale": g.scale or "", "cut": "", "levels": "", "resolve": False, "discrepancy": 1,
                  "sheet": sheet, "simulate": 0, "sep": sep or "auto"}


def _sniff_separator(path) -> str | None:
    """``semicolon`` or ``tab`` when the header line has more of them than commas (a spreadsheet's CSV
    where the decimal mark is a comma), else None (the reader's own choice: tab or comma)."""
    with open(path, "rb") as fh:
        line = fh.read(1 << 16).decode("utf-8", "replace").lstrip("\ufeff").splitlines()[:1]
    line = line[0] if line else ""
    counts = {"comma": line.count(","), "semicolon": line.count(";"), "tab": line.count("\t")}
    best = max(counts, key=counts.get)
    return best if best != "comma" and counts[best] > counts["comma"] else None


def _settings(u: Upload) -> dict:
    return u.settings


def _form_settings(form) -> dict:
    def one(name):
        v = form.get(name)
        return str(v).strip() if v not in (None, "") else None

    def number(name, default, low, high):
        try:
            return max(low, min(high, int(str(form.get(name) or default))))
        except ValueError:
            return default

    return {"paper": one("paper"), "rater": one("rater"), "score": one("score"), "order": one("order"),
            "group": one("group"), "facets": [str(x) for x in form.getlist("facets")],
            "score_cols": [str(x) for x in form.getlist("score_cols")],
            "rater_cols": [str(x) for x in form.getlist("rater_cols")],
            "scale": one("scale") or "", "cut": one("cut") or "", "levels": one("levels") or "",
            "resolve": form.get("resolve") == "on", "discrepancy": number("discrepancy", 1, 0, 100),
            "sheet": one("sheet"), "simulate": number("simulate", 0, 0, 1000),
            "sep": one("sep") if one("sep") in ("auto", "comma", "semicolon", "tab") else "auto"}


def _read(u: Upload):
    from ..practice.ratings_file import read_ratings_table

    s = u.settings
    try:
        table = read_ratings_table(u.path, s["scale"] or None, s["paper"] or "paper",
                                  s["rater"] or "rater", (s["score"] if not s["score_cols"] else None) or "score",
                                  s["group"], s.get("sep") or "auto", None, s["order"], s["resolve"],
                                  s["discrepancy"],
                                  sheet=s["sheet"] if u.workbook else None, facet_cols=tuple(s["facets"]),
                                  score_cols=s["score_cols"] or None, rater_cols=s["rater_cols"] or None)
    except RatercalError as exc:   # name the file as the user knows it, not our copy
        raise RatercalError(_user_message(u, exc)) from None
    # the results, the report and the memo name the file as the user knows it, not our copy
    table.warnings = [w.replace(str(u.path), u.name) for w in table.warnings]
    table.path = Path(u.name)
    return table


#: The library's arguments as the columns page names them (an error says which setting to change).
SETTING_NAMES = {"paper_col": "Student (paper)", "rater_col": "Rater", "score_col": "Score", "group_col": "Group",
                 "order_col": "Order of reading", "scale": "Scale", "cut": "Cut scores", "levels": "Level names",
                 "score_cols": "Criterion columns", "rater_cols": "Rater columns", "facet_cols": "Facet columns",
                 "sheet": "Sheet", "sep": "Separator", "resolve": "Resolve third readings",
                 "discrepancy": "Resolve third readings", "method": "Adjust by", "methods": "Adjust by"}


def _user_message(u: Upload, exc) -> str:
    """The one line of a library error as the page says it: the settings by their labels on the page,
    the file by the name the user gave it (never our copy's path)."""
    render = getattr(exc, "render", None)
    text = render(lambda name: SETTING_NAMES.get(name, name)) if render else str(exc)
    return text.replace(str(u.path), u.name)


def _cuts(u: Upload, ratings):
    from ..practice.levels import check_levels, parse_levels

    levels = parse_levels(u.settings["cut"] or None, u.settings["levels"] or None)
    check_levels(levels, ratings)
    one_cut = levels.cuts[0] if levels is not None and len(levels.cuts) == 1 and not ratings.facets else None
    return levels, one_cut


def _check_job(u: Upload, job: Job):
    """Read, check, adjust by the recommended method (the many-facet model for a rubric), the report."""
    from ..practice.adjust import adjust
    from ..practice.check import check
    from ..practice.html_report import html_report
    from ..practice.levels import changes

    u.checked = u.adjusted = u.report = None
    job.stage("Reading the file")
    try:
        table = _read(u)
        levels, one_cut = _cuts(u, table.ratings)
        ratings = table.ratings
        job.stage("Checking the raters: tests, rater report, agreement")
        sim = u.settings.get("simulate") or None
        checked = check(ratings, simulate=sim, cut=one_cut if sim else None)
        method = "MFRM" if ratings.facets else "recommended"
        job.stage(f"Adjusting by {'the many-facet model' if ratings.facets else 'the recommended method'}")
        adjusted = adjust(ratings, method, cut=one_cut, bootstrap=0 if ratings.facets else BOOTSTRAP)
        change_list = changes(adjusted, levels=levels)
        job.stage("Writing the report")
        report = html_report(ratings, check=checked, adjust=adjusted, cut=one_cut)
    except RatercalError as exc:
        raise RatercalError(_user_message(u, exc)) from None
    u.table, u.checked, u.adjusted, u.levels, u.change_list, u.report = (table, checked, adjusted, levels,
                                                                         change_list, report)
    u.settings["method"] = method


def _adjust_job(u: Upload, job: Job, method: str):
    """Adjust by ``method``; write the adjusted file (the input's format and layout), the change list,
    the report and the memo into the upload's folder."""
    from ..io import sha256_file
    from ..practice.adjust import adjust
    from ..practice.html_report import html_report
    from ..practice.levels import changes
    from ..practice.memo import memo_html
    from ..practice.output import write_adjusted_file, write_table

    table = u.table
    ratings = table.ratings
    try:
        levels, one_cut = _cuts(u, ratings)
        job.stage(f"Adjusting by {method}")
        adjusted = adjust(ratings, method, cut=one_cut, bootstrap=0 if ratings.facets else BOOTSTRAP)
        change_list = changes(adjusted, levels=levels)
        out = u.folder / "out"
        out.mkdir(exist_ok=True)
        suffix = ".xlsx" if u.workbook else (".tsv" if table.delimiter == "\t" else ".csv")
        job.stage("Writing the adjusted file")
        files = {"adjusted": (out / f"adjusted{suffix}", f"{u.stem}.adjusted{suffix}")}
        write_adjusted_file(files["adjusted"][0], table, adjusted)
        ch_suffix = ".xlsx" if u.workbook else ".csv"
        files["changes"] = (out / f"changes{ch_suffix}", f"{u.stem}.changes{ch_suffix}")
        write_table(files["changes"][0], change_list.header,
                    [[row[h] for h in change_list.header] for row in change_list.rows], bom=True, sheet="changes", labels=change_list.labels)
        job.stage("Writing the report and the memo")
        report = html_report(ratings, check=u.checked, adjust=adjusted, cut=one_cut)
        files["report"] = (out / "report.html", f"{u.stem}.report.html")
        files["report"][0].write_text(report, encoding="utf-8")
        s = u.settings
        shown = {"input": u.name, "sheet": s.get("sheet"), "paper column": s["paper"],
                 "rater column": s["rater"] if not s["rater_cols"] else None,
                 "score column": s["score"] if not s["score_cols"] else None,
                 "criterion columns": ", ".join(s["score_cols"]), "rater columns": ", ".join(s["rater_cols"]),
                 "facet columns": ", ".join(s["facets"]), "group column": s["group"], "order column": s["order"],
                 "scale": f"{ratings.scale_low}-{ratings.scale_low + ratings.max_score}",
                 "third readings resolved": f"yes (discrepancy above {s['discrepancy']})" if s["resolve"] else "no",
                 "cuts": s["cut"], "levels": ", ".join(levels.names) if levels is not None else None,
                 "method": method, "variant": adjusted.variant,
                 "bootstrap draws": BOOTSTRAP if not ratings.facets else None, "bootstrap seed": 0}
        memo = memo_html(adjusted, u.checked, {k: v for k, v in shown.items() if v not in (None, "")},
                         sha256_file(u.path), levels=levels, change_list=change_list)
        files["memo"] = (out / "memo.html", f"{u.stem}.memo.html")
        files["memo"][0].write_text(memo, encoding="utf-8")
    except RatercalError as exc:
        raise RatercalError(_user_message(u, exc)) from None
    u.adjusted, u.change_list, u.report, u.files = adjusted, change_list, report, files


# -- check's findings in plain words -------------------------------------------------------------
def _decision(u: Upload) -> list:
    """Per group: warranted?, the recommended method and why, what the adjustment changes, who is
    uncertain (dicts for the template)."""
    from ..practice.memo import _advice, _reports, method_words
    from ..practice.summary import SURE

    r = u.adjusted.ratings
    summaries = {s.group: s for s in u.adjusted.adjustment_summaries()}
    moves = {c.group: c for c in (u.change_list.changes if u.change_list is not None else [])}
    out = []
    for g in u.adjusted.groups:
        reps = _reports(u.checked, r, g.name)
        s = summaries.get(g.name)
        code = u.adjusted.methods[0]
        m = None if s is None else next((m for m in s.methods if m.method == code), None)
        unc = [row["paper"] for row in u.change_list.rows
               if row.get("uncertain") == "yes" and (r.group is None or row.get(r.group_name or "group") == g.name)]
        out.append({
            "tag": r.group_tag(g.name) if r.group is not None else "All students",
            "warranted": any(rep.warranted for rep in reps),
            "why": [(str(rep.group) + ": " if r.facets else "") + ("; ".join(rep.warranted_by) if rep.warranted else
                                                                  "no test found the raters differing") for rep in reps],
            # check's one recommendation (practice/recommend.py) where it made one, else Chapter 5's rule
            "recommended": None if not reps else _one(reps[0]).label if _one(reps[0]) else reps[0].recommendation,
            "recommended_words": None if not reps else method_words(_one(reps[0]).label if _one(reps[0]) else
                                                                    reps[0].recommendation),
            "reason": None if not reps else _one(reps[0]).short if _one(reps[0]) else reps[0].reason,
            "rule": None if r.facets or not reps or not _one(reps[0]) else
            f"{method_words(reps[0].recommendation)} — {reps[0].reason}",
            "advice": [] if reps and _one(reps[0]) else list(dict.fromkeys(a for a in (_advice(rep) for rep in reps)
                                                                            if a)),
            "applied": g.recommended or code, "applied_words": method_words(g.recommended or code),
            "summary": m, "levels": moves.get(g.name), "cut": u.adjusted.cut,
            "uncertain": unc, "sure": SURE, "has_se": bool(g.uncertainty),
        })
    return out


def _one(rep):
    """The group's one recommendation of check (``rep.decision``), or None."""
    return getattr(rep, "decision", None)


def escape(x) -> str:
    return html.escape(str(x), quote=True)
