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
from . import work
from .jobs import Job
from .work import Source
from .security import DEFAULT_MAX_UPLOAD, Security, UploadTooLarge

__all__ = ["create_app", "AppState"]

TEMPLATES = Path(__file__).with_name("templates")
#: Rows of the preview.
PREVIEW_ROWS = 8
#: The most files one upload takes (several years of one rubric or task).
MAX_YEARS = 10
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
    encoding_guessed: bool = False  # not UTF-8: read as Windows-1252 (or Latin-1), and the page says so
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
    years: list = field(default_factory=list)   # several years: every year's upload, earliest first
    series: "Upload | None" = None              # a later year: the upload of the first file
    anchors: object = None                      # a later year: the calibration it was held to
    link: dict | None = None                    # a later year: its anchored raters (:func:`.work.link_rows`)
    hold_drifted: bool = False

    @property
    def title(self) -> str:
        """The file's name, or the years' names."""
        return " · ".join(y.name for y in self.years) + f" ({len(self.years)} years)" if self.years else self.name

    def source(self) -> Source:
        """What the worker process needs of this upload (a copy of the settings)."""
        return Source(self.name, self.path, self.workbook, dict(self.settings))

    @property
    def files_version(self) -> str:
        """Which adjustment's files ``files`` holds: the name of the scratch folder they were written to (each
        adjustment's its own: ``out-...``), "" without files.  The files page's links carry it, so a page left
        open in another tab does not download a later adjustment's files under its own method's name."""
        for path, _ in self.files.values():
            return Path(path).parent.name
        return ""

    def keep(self, result: dict) -> None:
        """A job's results (:mod:`.work`) kept on the upload."""
        for k, v in result.items():
            setattr(self, k, v)


class AppState:
    """The server's uploads, in a private folder (``mkdtemp``: readable by its owner only) that
    :meth:`close` removes."""

    def __init__(self, folder: Path | None = None):
        self.own = folder is None
        self.folder = Path(tempfile.mkdtemp(prefix="ratercal-app-")) if folder is None else Path(folder)
        self.uploads: dict[str, Upload] = {}

    def close(self):
        jobs = [u.job for u in self.uploads.values() if u.job is not None]
        for job in jobs:
            job.cancel()
        for job in jobs:   # their worker processes ended before the folder goes
            job.wait(5)
        if self.own:
            shutil.rmtree(self.folder, ignore_errors=True)


def _env():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals["version"] = __version__
    env.filters["num"] = _num
    env.filters["short"] = _short
    env.filters["method_words"] = _method_words   # (the method list showed bare codes: MN, TMN, PWEQP, ...)
    return env


def _method_words(code) -> str:
    from ..practice.memo import method_words

    return method_words(code)


#: The most characters of a label the pages show (a longer one is cut, with an ellipsis; the files keep it whole).
SHORT = 60


def _short(x) -> str:
    """A label as the pages show it: at most :data:`SHORT` characters (a 20,000-character student ID, an
    essay pasted into the column, made the page 219,263 pixels wide)."""
    s = str(x)
    return s if len(s) <= SHORT else s[:SHORT - 1] + "…"


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
        return page("index.html", uploads=_listed(state), max_mb=max_upload // 2**20)

    async def upload(request):
        try:
            form = await request.form(max_files=MAX_YEARS, max_fields=10)
        except UploadTooLarge:
            raise
        except Exception as exc:   # a broken multipart body (python-multipart's or Starlette's errors)
            return page("error.html", 400, message=f"the upload could not be read ({type(exc).__name__})")
        given = [f for f in form.getlist("file") if hasattr(f, "read") and getattr(f, "filename", None)]
        if not given:
            return page("index.html", 400, uploads=_listed(state), max_mb=max_upload // 2**20,
                        message="choose a file (CSV, TSV or .xlsx) first")
        made = []
        for f in given:
            uid = secrets.token_hex(8)
            folder = state.folder / uid
            folder.mkdir(mode=0o700)
            head = await f.read(4)
            await f.seek(0)
            # (a file named .xlsx is a workbook, as the command line reads it: one that is not a zip was read as text,
            # "missing column(s) rater, score (found: this is not a workbook)", a staff tester's)
            workbook = head == b"PK\x03\x04" or Path(f.filename or "").suffix.lower() in (".xlsx", ".xlsm")
            target = folder / ("input.xlsx" if workbook else "input" + _text_suffix(f.filename))
            with open(target, "wb") as out:
                while chunk := await f.read(1 << 20):
                    out.write(chunk)
            made.append(Upload(uid, Path(f.filename.replace("\\", "/")).name or "ratings", folder, target, workbook))
        await form.close()
        # several files: years of one rubric or task, earliest first by their names (changeable on the page)
        made.sort(key=lambda x: _natural(x.name))
        u = made[0]
        for y in made:
            state.uploads[y.id] = y
            _preview(y)
        if len(made) > 1:
            u.years = made
            for y in made[1:]:
                y.series = u
        return go(f"/d/{u.id}/columns")

    # -- columns -----------------------------------------------------------------------------
    async def columns(request):
        u = find(request)
        return page("columns.html", u=u, s=_settings(u), methods=_methods())

    async def columns_post(request):
        u = find(request)
        form = await request.form(max_fields=200)
        settings = _form_settings(form)
        if _running(u):   # (another tab's work): these settings are not taken silently, nor dropped unsaid
            return page("columns.html", 409, u=u, s={**u.settings, **settings}, methods=_methods(),
                        message=_busy(u), job_link=True)
        shown = (u.settings.get("sheet"), u.settings.get("sep"))
        if (settings.get("sheet") if u.workbook else None, settings.get("sep") if not u.workbook else None) != \
                (shown[0] if u.workbook else None, shown[1] if not u.workbook else None):
            # another sheet or separator: its preview and guesses first
            _preview(u, settings.get("sheet"), None if u.workbook else settings.get("sep"))
            return go(f"/d/{u.id}/columns")
        # a scale left as the lowest and highest scores found (the page's guess), unlike a rubric's, is said on the
        # decision page
        # (unless confirmed: a scale typed as it was guessed was still called "not a scale given", a staff tester's)
        settings["scale_confirmed"] = bool(form.get("scale_confirmed"))
        settings["scale_doubtful"] = _doubtful_scale(u.guess, settings["scale"]) and not settings["scale_confirmed"]
        u.settings = settings
        if u.years:
            order = _year_order(u, form)
            if order is None:
                return page("columns.html", 400, u=u, s=u.settings, methods=_methods(),
                            message="give each year its own place (1, 2, ...) in the order")
            u.years = order
            for y in u.years:
                y.settings = _year_settings(u, y)
                y.files.clear()
                y.checked = y.adjusted = y.report = None
            u.job = Job(work.check_years, "check", ([y.source() for y in u.years],),
                        on_done=lambda res: _keep_years(u, res))
            u.next_page = "decision"
            return go(f"/d/{u.id}/job")
        u.files.clear()
        u.checked = u.adjusted = u.report = None
        u.job = Job(work.check_file, "check", (u.source(),), on_done=lambda res: _keep_check(u, res))
        u.next_page = "decision"
        return go(f"/d/{u.id}/job")

    # -- jobs --------------------------------------------------------------------------------
    async def job_page(request):
        u = find(request)
        job = u.job
        if job is None:
            return go(f"/d/{u.id}/columns")
        if job.state == "done":
            return go(f"/d/{u.id}/{u.next_page}")
        return page("job.html", u=u, job=job, reps=_replications(u, job))

    async def cancel(request):
        u = find(request)
        if u.job is not None:
            from starlette.concurrency import run_in_threadpool

            u.job.cancel()   # the worker process is ended; the page then says so (not "still working")
            await run_in_threadpool(u.job.wait, 5)
        return go(f"/d/{u.id}/job")

    # -- the decision ----------------------------------------------------------------------------
    async def decision(request):
        u = find(request)
        if u.checked is None:
            return go(f"/d/{u.id}/columns")
        if u.years:
            return page("years.html", u=u, years=_years(u), s=u.settings, files=False)
        return page("decision.html", u=u, groups=_decision(u), methods=_methods(), s=u.settings)

    async def adjust_post(request):
        u = find(request)
        if u.checked is None:
            return go(f"/d/{u.id}/columns")
        form = await request.form()
        if _running(u):   # (a second click, another tab): the running work's files are not named after this one
            return page("error.html", 409, message=_busy(u), u=u, job_link=True)
        if u.years:   # the many-facet model on the earlier years' scale
            _forget_files(u)
            u.settings["method"] = "MFRM"
            u.hold_drifted = form.get("hold_drifted") == "on"
            scratch = u.folder / f"out-{secrets.token_hex(4)}"
            u.job = Job(work.adjust_years, "adjust", ([y.source() for y in u.years], [y.table for y in u.years],
                                                      [y.checked for y in u.years], u.hold_drifted, scratch),
                        on_done=lambda res: _keep_year_files(u, res), scratch=scratch)
            u.next_page = "files"
            return go(f"/d/{u.id}/job")
        method = str(form.get("method") or "recommended")
        if method not in ["recommended", *_methods()]:
            return page("error.html", 400, message=f"unknown method {method}", u=u)
        _forget_files(u)   # (an adjustment that fails leaves no files of the one before under its name)
        u.settings["method"] = method
        scratch = u.folder / f"out-{secrets.token_hex(4)}"
        u.job = Job(work.adjust_file, "adjust", (u.source(), u.table, u.checked, method, scratch),
                    on_done=u.keep, scratch=scratch)   # (the earlier files went: _forget_files)
        u.next_page = "files"
        return go(f"/d/{u.id}/job")

    async def files(request):
        u = find(request)
        if not u.files:
            return go(f"/d/{u.id}/decision")
        if u.years:
            return page("years.html", u=u, years=_years(u), s=u.settings, files=True)
        return page("files.html", u=u, groups=_decision(u), s=u.settings,
                    warnings=[work.app_words(w) for w in u.adjusted.warnings])

    async def download(request):
        u = find(request)
        kind = request.path_params["kind"]
        asked = request.query_params.get("v")
        if asked is not None and (kind not in u.files or asked != u.files_version):   # a page of earlier files
            now = (f"the files of {u.settings.get('method', 'another method')} are there now" if u.files else
                   "there are no files now")
            return page("error.html", 409, u=u, message=(
                f"The files this page named were replaced: another adjustment or check of this file (in another tab, "
                f"or after this page was opened) took their place, and {now}. Open the files page again to see "
                "them."), files_link=bool(u.files))
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


def _replications(u: Upload, job) -> tuple | None:
    """Simulate the methods' progress as ``(replications done, asked for)``: the library reports its
    chunks (:data:`~ratercal_cli.practice.simulate.CHUNK` replications each; the page said '1 of 4' for 40
    replications); None in any other stage."""
    from ..practice.simulate import CHUNK

    asked = int(u.settings.get("simulate") or 0)
    if not asked or not job.total or not str(job.stage_text).startswith("simulate"):
        return None
    return min(job.done * CHUNK, asked), asked


def _running(u: Upload) -> bool:
    return u.job is not None and u.job.state == "running"


def _busy(u: Upload) -> str:
    """Why a check or an adjustment cannot start: this file's earlier one still runs (in another tab)."""
    what = "check" if u.job.title == "check" else "adjustment"
    return (f"The {what} of {u.title} started earlier is still running (in another tab or window?): "
            "nothing was changed. Wait for it to end, or cancel it, then submit again.")


def _keep_check(u: Upload, result: dict) -> None:
    method = result.pop("method")
    u.keep(result)
    u.settings["method"] = method


def _doubtful_scale(guess, scale: str) -> bool:
    """Whether ``scale`` is the page's guess, the lowest and highest scores found, and unlike a rubric's: its
    lowest not 0 or 1 (no one gave the rubric's bottom score?), or a stray score at an end (the guess's notes,
    :func:`.guess._stray_ends`).  A scale typed as it was guessed (1-6, every score given) is not doubted."""
    if guess is None or not guess.scale or scale != guess.scale:
        return False
    return bool(guess.notes) or scale.split("-", 1)[0].strip() not in ("0", "1")


def _forget_files(u: Upload) -> None:
    """The upload's (and its years') files of an earlier adjustment removed, their scratch folder with them,
    before another starts: one that then failed (CML on a file it cannot fit) left the files page saying
    "adjusted by CML" over the earlier method's adjusted file and memo (a staff tester's)."""
    for x in [u, *u.years]:
        for p, _ in x.files.values():   # (the folder of the upload's that the adjustment made: ``out-...``)
            shutil.rmtree(u.folder / p.relative_to(u.folder).parts[0], ignore_errors=True)
        x.files.clear()


def _keep_years(u: Upload, results: list) -> None:
    for y, res in zip(u.years, results):
        _keep_check(y, res)


def _keep_year_files(u: Upload, results: list) -> None:
    """Each year's new files (the previous ones went when the adjustment started: :func:`_forget_files`)."""
    for y, res in zip(u.years, results):
        y.keep(res)


def _listed(state: AppState) -> list:
    """The uploads the first page lists: a file, or the first of several years (the later ones with it)."""
    return [u for u in state.uploads.values() if u.series is None]


def _natural(name: str) -> list:
    """A name's sort key with its numbers as numbers (year2 before year10)."""
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", name)]


def _year_order(u: Upload, form) -> list | None:
    """The years in the order the page gives (``year_ID``: 1, 2, ...), or None where two share a place."""
    places = {}
    for k, y in enumerate(u.years):
        try:
            places[y.id] = int(str(form.get(f"year_{y.id}") or k + 1))
        except ValueError:
            return None
    if sorted(places.values()) != list(range(1, len(u.years) + 1)):
        return None
    return sorted(u.years, key=lambda y: places[y.id])


def _year_settings(u: Upload, y: Upload) -> dict:
    """The first file's settings for another year; its own sheet where it has no sheet of that name."""
    s = dict(u.settings)
    if y.workbook:
        s["sheet"] = s.get("sheet") if s.get("sheet") in y.sheets else (y.sheets[0] if y.sheets else None)
    else:
        s["sheet"] = None
        s["sep"] = u.settings.get("sep") if not u.workbook else "auto"
    return s


def _years(u: Upload) -> list:
    """Per year (earliest first): its upload, its findings (:func:`_decision`) and its link to the year
    before (dicts for the template)."""
    return [{"k": k + 1, "u": y, "groups": _decision(y), "link": y.link,
             "warnings": [work.app_words(w) for w in y.adjusted.warnings] if y.adjusted is not None else []}
            for k, y in enumerate(u.years)]


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
    from ..practice.ratings_file import SEPARATORS, read_source, resolve_decimal
    from .guess import guess_columns

    asked = sheet   # (None: the first look at the file, whose sheet the page has not chosen yet)
    try:
        if u.workbook:
            import openpyxl

            try:
                with open(u.path, "rb") as fh:   # (by its bytes, as the reader: a workbook under another name)
                    wb = openpyxl.load_workbook(fh, read_only=True)
                    u.sheets = list(wb.sheetnames)
                    wb.close()
            except Exception as exc:
                raise RatercalError(f"{u.name}: not readable as an .xlsx workbook ({type(exc).__name__})") from None
            sheet = sheet or (u.sheets[0] if u.sheets else None)
        sep = None if u.workbook or sep not in SEPARATORS or sep == "auto" else sep   # (None: the reader's sniff)
        encoding = None if u.workbook else (u.settings or {}).get("encoding") or None
        first_error = None
        try:
            src = read_source(u.path, (), SEPARATORS[sep] if sep else None, encoding,
                              sheet=sheet if u.workbook else None)
            u.encoding_guessed = False
        except RatercalError as exc:   # Excel's "CSV" on Windows is Windows-1252: taken, and said, rather than a
            if u.workbook and asked is None and len(u.sheets) > 1:   # (an empty first sheet: the others looked at)
                src, first_error = None, exc
            elif u.workbook or encoding is not None or "not UTF-8 text" not in str(exc):   # dead end (the page had
                raise                                                                     # no field for it)
            else:
                encoding = next(e for e in ("cp1252", "latin-1") if _decodes(u.path, e))
                src = read_source(u.path, (), SEPARATORS[sep] if sep else None, encoding)
                u.encoding_guessed = True
    except RatercalError as exc:
        u.error = str(exc).replace(str(u.path), u.name)
        return
    if sep is None and not u.workbook:   # the separator the reader found, named as the page's select names it
        sep = {";": "semicolon", "\t": "tab"}.get(src.delimiter)
    rows = [r for _, r in src.rows] if src is not None else []
    g = guess_columns(list(src.header), rows) if src is not None else None
    if u.workbook and asked is None and len(u.sheets) > 1 and (g is None or not _looks_like_ratings(g)):
        # (a staff helper's workbook opened on its "Read me" sheet: a paragraph guessed for the paper column, then
        # "missing column(s) rater, score", no word of the sheet "Scores" beside it; Excel's empty "Sheet1" before
        # the data's "Sheet2" was "empty sheet" and a dead end)
        readable = None
        for other in u.sheets[1:]:
            try:
                o_src = read_source(u.path, (), None, None, sheet=other)
            except RatercalError:
                continue
            o_rows = [r for _, r in o_src.rows]
            o_guess = guess_columns(list(o_src.header), o_rows)
            readable = readable or (other, o_src, o_rows, o_guess)
            if _looks_like_ratings(o_guess):
                o_guess.notes.insert(0, f"the workbook has {len(u.sheets)} sheets ({', '.join(u.sheets)}); the first "
                                        f"whose columns look like ratings, {other}, is shown (choose another sheet "
                                        "above)")
                sheet, src, rows, g = other, o_src, o_rows, o_guess
                break
        if (src is None or g is None) and readable is not None:   # (the first sheet unreadable: the next that reads)
            sheet, src, rows, g = readable
            g.notes.insert(0, f"the workbook has {len(u.sheets)} sheets ({', '.join(u.sheets)}); {u.sheets[0]} "
                              f"cannot be read ({str(first_error).replace(str(u.path), u.name)}), so {sheet} is shown "
                              "(choose another sheet above)")
        if src is None or g is None:   # no sheet reads: the first's error, and the sheets there are
            u.error = (f"{str(first_error).replace(str(u.path), u.name)} (the workbook's sheets: "
                       f"{', '.join(u.sheets)}; none holds ratings this page can read)")
            return
    u.error = None
    u.header = list(src.header)
    u.preview = [[r.get(h, "") for h in u.header] for r in rows[:PREVIEW_ROWS]]
    u.guess = g
    u.settings = {"paper": g.paper, "rater": g.rater, "score": g.score, "order": g.order, "group": g.group,
                  "facets": [], "score_cols": list(g.score_cols), "rater_cols": list(g.rater_cols),
                  "scale": g.scale or "", "cut": "", "levels": "", "resolve": False, "discrepancy": 1,
                  "sheet": sheet, "simulate": 0, "sep": sep or "auto", "confidence": 90,
                  "decimal": resolve_decimal(u.path, sep or "auto", "auto", encoding), "encoding": encoding or "",
                  "leave_out": "", "fold_labels": False}


def _looks_like_ratings(g) -> bool:
    """Whether a sheet's guessed columns make ratings: a paper column and a score (or a column per reading)."""
    return bool(g.paper and (g.score or g.score_cols or g.rater_cols))


def _decodes(path, encoding) -> bool:
    """Whether the file's bytes are text in ``encoding`` (Windows-1252 leaves five bytes undefined: Latin-1 none)."""
    try:
        Path(path).read_bytes().decode(encoding)
        return True
    except UnicodeDecodeError:
        return False


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
            "rater_cols": [str(x) for x in form.getlist("rater_cols")] + [   # (a pair of columns per reading: a text;
                x.strip() if ":" in x else f"{x.strip()}:"                  # an entry not a pair is read as one with
                for x in str(form.get("reading_cols") or "").split(",") if x.strip()],   # no score column: an error)
            "scale": one("scale") or "", "cut": one("cut") or "", "levels": one("levels") or "",
            "resolve": form.get("resolve") == "on", "discrepancy": number("discrepancy", 1, 0, 100),
            "sheet": one("sheet"), "simulate": number("simulate", 0, 0, 1000),
            "confidence": number("confidence", 90, 50, 99),
            "sep": one("sep") if one("sep") in ("auto", "comma", "semicolon", "tab") else "auto",
            "decimal": "comma" if one("decimal") == "comma" else "point",
            "encoding": one("encoding") if one("encoding") in ("cp1252", "latin-1", "utf-16-le", "utf-16-be") else "",
            "leave_out": one("leave_out") or "", "fold_labels": form.get("fold_labels") == "on"}


# -- check's findings in plain words -------------------------------------------------------------
def _decision(u: Upload) -> list:
    """Per group: warranted?, the recommended method and why, what the adjustment changes, who is
    uncertain (dicts for the template)."""
    from ..practice.diagnostics import not_warranted_why
    from ..practice.memo import _advice, _reports, method_words
    from ..practice.summary import shrinkage_words

    r = u.adjusted.ratings
    summaries = {s.group: s for s in u.adjusted.adjustment_summaries()}
    moves = {c.group: c for c in (u.change_list.changes if u.change_list is not None else [])}
    out = []
    for g in u.adjusted.groups:
        reps = _reports(u.checked, r, g.name)
        s = summaries.get(g.name)
        code = u.adjusted.methods[0]
        m = None if s is None else next((m for m in s.methods if m.method == code), None)
        unc = [row["paper"] for row in sorted(u.change_list.rows, key=lambda row: row.get("se_to_cut", 0.0))
               if row.get("uncertain") == "yes" and (r.group is None or row.get(r.group_name or "group") == g.name)]
        out.append({
            "tag": r.group_tag(g.name) if r.group is not None else "All students",
            "warranted": any(rep.warranted for rep in reps),
            "why": [(str(rep.group) + ": " if r.facets else "") + ("; ".join(rep.warranted_by) if rep.warranted else
                                                                  not_warranted_why(rep)) for rep in reps],
            # check's one recommendation (practice/recommend.py) where it made one, else Chapter 5's rule
            "recommended": None if not reps else _one(reps[0]).label if _one(reps[0]) else reps[0].recommendation,
            "recommended_words": None if not reps else method_words(_one(reps[0]).label if _one(reps[0]) else
                                                                    reps[0].recommendation),
            "reason": None if not reps else _one(reps[0]).short if _one(reps[0]) else reps[0].reason,
            "extrapolated": _extrapolated(reps[0]) if reps else None,
            "rule": None if r.facets or not reps or not _one(reps[0]) else
            f"{method_words(reps[0].recommendation)} — {reps[0].reason}",
            "advice": [] if reps and _one(reps[0]) else list(dict.fromkeys(a for a in (_advice(rep) for rep in reps)
                                                                            if a)),
            "applied": g.recommended or code, "applied_words": method_words(g.recommended or code),
            "summary": m, "levels": moves.get(g.name), "cut": u.adjusted.cut,
            "criteria": [(str(rep.group).rsplit("=", 1)[-1], _one(rep).label if _one(rep) else rep.recommendation)
                         for rep in reps] if r.facets else None,
            "total": _total_moves(u.change_list, r, g.name, len(reps)) if r.facets else None,
            "uncertain": unc, "has_se": bool(g.uncertainty),
            "shrinkage": None if m is None or m.unshrunk_moves is None else
            shrinkage_words(m.unshrunk_moves, len(m.fail_to_pass), len(m.pass_to_fail)),
        })
    return out


def _total_moves(change_list, r, group, criteria: int) -> dict | None:
    """A rubric's students' totals (on which its cuts are): how far the adjustment moved them, from the
    change list's rows of ``group`` -- the mean and the largest move, and whose."""
    rows = [row for row in (change_list.rows if change_list is not None else [])
            if r.group is None or row.get(r.group_name or "group") == group]
    moves = [(abs(float(row["change"])), row["paper"]) for row in rows
             if isinstance(row.get("change"), (int, float)) and row["change"] == row["change"]]
    if not moves:
        return None
    largest = max(moves, key=lambda x: x[0])
    return {"criteria": criteria, "mean": sum(x for x, _ in moves) / len(moves), "largest": largest[0],
            "paper": largest[1]}


def _extrapolated(rep) -> str | None:
    """Where the study decided on a design none of its cells has (most papers read once and a sample
    twice): check's note that its advice is an extrapolation (:func:`.study_rule.design_levels`), its
    pointer to the simulation in the page's words; else None."""
    one = _one(rep)
    if one is None or not one.caveat:
        return None
    return work.app_words(one.caveat)


def _one(rep):
    """The group's one recommendation of check (``rep.decision``), or None."""
    return getattr(rep, "decision", None)


def escape(x) -> str:
    return html.escape(str(x), quote=True)
