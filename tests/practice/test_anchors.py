"""The anchor file: a calibration written, read back, edited by hand, and refused where it does not fit."""

import json
import math

import numpy as np
import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.practice.anchors import Anchor, Anchors, read_anchors, write_anchors
from ratercal_cli.practice.ratings_file import Scale

CAL = Anchors("MFRM", Scale(1, 6), [
    Anchor("rater", "R1", 0.4123456, 0.0501), Anchor("rater", "R10", -0.25, 0.06),
    Anchor("criterion", "style", -0.2, 0.03), Anchor("criterion", "org", 0.2, math.nan),
    Anchor("threshold", "2", -2.88, 0.09), Anchor("threshold", "3", -1.0, 0.07),
])


@pytest.mark.parametrize("name", ["a.csv", "a.json"])
def test_round_trip(tmp_path, name):
    write_anchors(tmp_path / name, CAL)
    back = read_anchors(tmp_path / name)
    assert back.model == "MFRM" and back.scale == Scale(1, 6)
    assert [(a.facet, a.element, a.level) for a in back.elements] == [a.key for a in CAL.elements]
    assert [a.measure for a in back.elements] == pytest.approx([a.measure for a in CAL.elements], abs=1e-6)
    assert math.isnan(back.of("criterion")["org"].se)
    assert sorted(back.thresholds()) == [2, 3] and back.facets == ["rater", "criterion"]


def test_csv_is_readable_and_editable(tmp_path):
    write_anchors(tmp_path / "a.csv", CAL)
    lines = (tmp_path / "a.csv").read_text().splitlines()
    assert lines[0] == "model,scale,facet,element,level,measure,se"
    assert lines[1] == "MFRM,1-6,rater,R1,,0.412346,0.050100"
    # a hand-edited file: another column order, no se column, spaces
    (tmp_path / "b.csv").write_text("facet,element,measure,model,scale\nrater, R3 ,0.5,mfrm,1-6\n")
    b = read_anchors(tmp_path / "b.csv")
    assert b.of("rater")["R3"].measure == 0.5 and math.isnan(b.of("rater")["R3"].se)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_file_saved_by_a_decimal_comma_spreadsheet_is_read_as_written(tmp_path, sep):
    """Edited in a spreadsheet set up for decimal commas (most of Europe), the anchor file comes back
    separated by ';' with measures written -0,25: it was refused with a hint, "give --sep semicolon",
    that no option for the anchor file takes (the ratings file's --sep)."""
    (tmp_path / "b.csv").write_text(sep.join(["model", "scale", "facet", "element", "level", "measure", "se"]) + "\r\n"
                                    + sep.join(["MFRM", "1-6", "rater", "Brown, Sam", "", "-0,250000", "0,060000"])
                                    + "\r\n" + sep.join(["MFRM", "1-6", "threshold", "2", "", "-2,88", ""]) + "\r\n")
    b = read_anchors(tmp_path / "b.csv")
    assert b.of("rater")["Brown, Sam"].measure == -0.25 and b.of("rater")["Brown, Sam"].se == 0.06
    assert b.thresholds()[2].measure == -2.88 and math.isnan(b.thresholds()[2].se)
    # in a file separated by commas a comma is a separator, never a decimal mark
    (tmp_path / "c.csv").write_text('model,scale,facet,element,level,measure,se\nMFRM,1-6,rater,R1,,"-0,25",\n')
    with pytest.raises(InputError, match="c.csv:2: measure: '-0,25' is not a number"):
        read_anchors(tmp_path / "c.csv")


@pytest.mark.parametrize("body, message", [
    ("MFRM,1-6,rater,R1,,abc,0.1", "b.csv:2: measure: 'abc' is not a number"),
    ("MFRM,1-6,rater,R1,,0.1,0.1\nMFRM,1-6,rater,R1,,0.2,0.1", "b.csv:3: element: rater R1 is anchored twice (first at line 2)"),
    ("MFRM,1-6,rater,R1,,0.1,\nMFRM,0-5,rater,R2,,0.1,", "b.csv:3: model: MFRM 0-5 differs from the first row's MFRM 1-6"),
    ("PCM,1-6,rater,R1,,0.1,", "b.csv:2: model: 'PCM': expected one of MFRM, MML"),
    ("MFRM,1-6,threshold,two,,0.1,", "b.csv:2: element: 'two': a threshold's element is the category"),
    ("MFRM,1-6,rater,R1,org,0.1,", "b.csv:2: level: only thresholds belong to a level"),
    ("MFRM,1-6,,R1,,0.1,", "b.csv:2: facet: blank"),
    ("MFRM,1-6,rater,R1,,0.1,\nMFRM,six,rater,R2,,0.1,", "b.csv:3: scale: expected LOW-HIGH such as 0-5, not 'six'"),
])
def test_bad_rows_name_line_and_field(tmp_path, body, message):
    (tmp_path / "b.csv").write_text("model,scale,facet,element,level,measure,se\n" + body + "\n")
    with pytest.raises(InputError) as exc:
        read_anchors(tmp_path / "b.csv")
    assert message in str(exc.value)


def test_json_errors(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"model": "MFRM", "scale": "1-6",
                                                 "elements": [{"facet": "rater", "element": "R1", "measure": "x"}]}))
    with pytest.raises(InputError, match=r"a.json:element 1: measure: 'x' is not a number"):
        read_anchors(tmp_path / "a.json")
    (tmp_path / "a.json").write_text(json.dumps({"model": "MFRM", "scale": "1-6", "elements": [
        {"facet": "rater", "element": "R1", "measure": 0.1}, ["rater", "R2", 0.2]]}))
    with pytest.raises(InputError, match=r"a.json:element 2: every element must be an object, not \['rater'"):
        read_anchors(tmp_path / "a.json")
    (tmp_path / "a.json").write_text("{\n  nope")
    with pytest.raises(InputError, match=r"a.json:2: not JSON"):
        read_anchors(tmp_path / "a.json")


DATA = {"rater": ["R1", "R2", "R10"], "criterion": ["style", "org", "conv"]}


def test_check_against_the_data():
    CAL.check("MFRM", Scale(1, 6), DATA)   # fits
    with pytest.raises(InputError, match="on the scale 1-6, this file is on 0-5"):
        CAL.check("MFRM", Scale(0, 5), DATA)
    with pytest.raises(InputError, match="of model MFRM, this analysis is MML"):
        CAL.check("mml", Scale(1, 6), DATA)
    CAL.check("MFRM", Scale(1, 6), {"rater": ["R1", "R2"], "criterion": ["style", "org"]})   # R10 left: unused
    with pytest.raises(InputError, match=r"none of the anchored raters is in the data \(rater R1, rater R10\)"):
        CAL.check("MFRM", Scale(1, 6), {"rater": ["R3"], "criterion": ["style", "org", "conv"]})
    with pytest.raises(InputError, match=r"anchored facet\(s\) criterion not in this analysis"):
        CAL.check("MFRM", Scale(1, 6), {"rater": ["R1", "R10"]})
    bad = Anchors("MFRM", Scale(1, 6), [Anchor("threshold", "1", 0.0)])
    with pytest.raises(InputError, match="threshold 1 is not a step of the scale 1-6"):
        bad.check("MFRM", Scale(1, 6), DATA)
    per = Anchors("MFRM", Scale(1, 6), [Anchor("threshold", "2", 0.0, level="voice")])
    with pytest.raises(InputError, match="give steps_by"):
        per.check("MFRM", Scale(1, 6), DATA)
    with pytest.raises(InputError, match="threshold level\\(s\\) voice are not levels of criterion"):
        per.check("MFRM", Scale(1, 6), DATA, steps_by="criterion")
    # shared thresholds (no level) in a model with a criterion's own thresholds: they used to be held on
    # the first criterion's thresholds only, the others left free, and displaced against that one
    with pytest.raises(InputError, match="shared thresholds .* steps_by='criterion' gives each criterion its own"):
        CAL.check("MFRM", Scale(1, 6), DATA, steps_by="criterion")


# -- fits on a calibration ---------------------------------------------------------------------------
def _rubric(seed, n_papers=200, severity=None, prefix="P"):
    from ratercal_cli.generators.rubric import simulate_rubric

    rub = simulate_rubric(seed=seed, n_papers=n_papers, n_raters=8, criteria=("style", "org", "conv"),
                          severity=severity, paper_prefix=prefix)
    return rub


def _write(path, rub):
    import csv

    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(rub.header)
        w.writerows(rub.rows)
    return path


@pytest.mark.slow
def test_anchored_on_its_own_calibration_moves_nothing(tmp_path):
    """Anchors equal to the free fit's own estimates: the anchored fit is the free fit (same
    likelihood maximum), so every measure and fair score stays where it was."""
    import numpy as np

    from ratercal_cli.practice.anchors import calibration, fit_mfrm
    from ratercal_cli.practice.ratings_file import read_ratings

    r = read_ratings(_write(tmp_path / "y1.csv", _rubric(1)), scale="1-6", score_cols="style,org,conv")
    free, _ = fit_mfrm(r)
    cal = calibration(free, r)
    anch, rows = fit_mfrm(r, cal)
    np.testing.assert_allclose(anch.severity_, free.severity_, atol=1e-4)
    np.testing.assert_allclose(anch.result_.effects["facet0"][0], free.result_.effects["facet0"][0], atol=1e-4)
    np.testing.assert_allclose(anch.thresholds_, free.thresholds_, atol=1e-4)
    assert anch.theta_mean_ == pytest.approx(free.theta_mean_, abs=1e-4)
    # the anchored fair score (the anchored raters' mean expected score) is the free fit's, as the
    # command gives it (the free fit's default definition, untouched)
    assert free.fair == "mean-rater" and anch.fair_raters == list(range(r.n_raters))
    np.testing.assert_allclose(anch.fair_scores(anch.quality_), free.fair_scores(free.quality_), atol=1e-4)
    assert max(abs(x["displacement"]) for x in rows) < 1e-4 and not any(x["drift"] for x in rows)


@pytest.mark.slow
def test_year_two_rater_moved_by_one_logit_is_the_one_flagged(tmp_path):
    import click
    from click.testing import CliRunner

    from ratercal_cli.commands.practice import adjust, check

    cli = click.Group("ratercal", commands={"check": check, "adjust": adjust})
    y1 = _write(tmp_path / "y1.csv", _rubric(1))
    sev = np.linspace(-0.6, 0.6, 8)
    sev[3] += 1.0
    y2 = _write(tmp_path / "y2.csv", _rubric(2, severity=sev, prefix="Q"))
    opts = ["--scale", "1-6", "--score-cols", "style,org,conv", "-q"]
    res = CliRunner().invoke(cli, ["check", str(y1), *opts, "--no-rasch", "--write-anchors", str(tmp_path / "a.csv")])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["adjust", str(y2), *opts, "-m", "MFRM", "--anchors", str(tmp_path / "a.csv"),
                                   "-o", str(tmp_path / "y2.adj.csv"), "--json"])
    assert res.exit_code == 0, res.output
    import json

    rows = json.loads(res.output)["anchors"]
    assert [r["element"] for r in rows if r["drift"]] == ["R4"]
    r4 = next(r for r in rows if r["element"] == "R4")
    assert r4["displacement"] == pytest.approx(1.0, abs=0.35)   # the link leaves R4 out (test_drift.py)
    # errors: another scale
    res = CliRunner().invoke(cli, ["adjust", str(y2), "--scale", "0-6", "--score-cols", "style,org,conv", "-m", "MFRM",
                                   "--anchors", str(tmp_path / "a.csv"), "-o", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "on the scale 1-6, this file is on 0-6" in res.output
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.slow
def test_check_shows_displacement_in_the_measurement_reports(tmp_path):
    """With --anchors, check's measurement reports carry each anchored element's displacement beside its
    measure (Facets' Displacement column): the many-facet report's raters and criteria, and without facets
    the rater report; the numbers are those of the anchored-elements table."""
    from ratercal_cli.practice.anchors import calibration, fit_mfrm
    from ratercal_cli.practice.check import check
    from ratercal_cli.practice.ratings_file import read_ratings

    y1 = read_ratings(_write(tmp_path / "y1.csv", _rubric(1)), scale="1-6", score_cols="style,org,conv")
    cal = calibration(fit_mfrm(y1)[0], y1)
    sev = np.linspace(-0.6, 0.6, 8)
    sev[3] += 1.0
    y2 = read_ratings(_write(tmp_path / "y2.csv", _rubric(2, severity=sev, prefix="Q")), scale="1-6",
                      score_cols="style,org,conv")
    res = check(y2, anchors=cal)
    table = {(a["facet"], a["element"]): a for a in res.anchored}
    (_, rep), = res.rubric
    assert len(rep.raters) == 8 and all("displacement" in r for r in rep.raters)
    for r in rep.raters:
        a = table[("rater", str(r["rater"]))]
        assert (r["displacement"], r["displacement_se"], r["drift"]) == (a["displacement"], a["se"], a["drift"])
    assert [str(r["rater"]) for r in rep.raters if r["drift"]] == ["R4"]
    for r in rep.facets["criterion"]:
        assert r["displacement"] == table[("criterion", r["level"])]["displacement"]
    text = res.summary()
    head = next(line for line in text.splitlines() if line.startswith("rater  count  obs avg  severity"))
    assert head.split()[-6:] == ["displ", "displ", "S.E.", "displ", "t", "drift"]
    r4 = next(line for line in text.splitlines() if line.startswith("R4 ") and "DRIFT" in line)
    assert f"{table[('rater', 'R4')]['displacement']:.2f}" in r4
    assert "rater" in res.to_dict()["rubric"][0]["raters"][0] and "displacement" in res.to_dict()["rubric"][0]["raters"][0]
    # without facets: the rater report (one criterion of year 2 against a calibration of year 1's)
    flat1 = read_ratings(_write(tmp_path / "f1.csv", _rubric(1)), scale="1-6", score_col="style")
    flat2 = read_ratings(_write(tmp_path / "f2.csv", _rubric(2, severity=sev, prefix="Q")), scale="1-6",
                         score_col="style")
    res = check(flat2, anchors=calibration(fit_mfrm(flat1)[0], flat1))
    rr = res.reports[0].rater_report
    assert rr.fitted and all("displacement" in r for r in rr.raters)
    want = {a["element"]: a["displacement"] for a in res.anchored if a["facet"] == "rater"}
    assert {str(r["rater"]): r["displacement"] for r in rr.raters} == want
    assert "displ S.E." in res.summary()


@pytest.mark.slow
def test_adjust_anchored_on_its_own_calibration_gives_the_free_fair_scores(tmp_path):
    """The command line as a user meets it: `check --write-anchors` then `adjust --anchors` on the same
    file gives every paper the fair score of a free `adjust -m MFRM` (before, the anchored fit scored a
    rater of severity 0 and the free fit the raters' mean expected score: up to 0.03 points apart)."""
    import csv

    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    y1 = _write(tmp_path / "y1.csv", _rubric(1))
    opts = ["--scale", "1-6", "--score-cols", "style,org,conv", "-q"]
    a = str(tmp_path / "a.csv")
    for args in (["check", str(y1), *opts, "--no-rasch", "--write-anchors", a],
                 ["adjust", str(y1), *opts, "-m", "MFRM", "-o", str(tmp_path / "free.csv")],
                 ["adjust", str(y1), *opts, "-m", "MFRM", "--anchors", a, "-o", str(tmp_path / "anch.csv")]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, res.output

    def column(name):
        with open(tmp_path / name, newline="") as f:
            # a wide file stays wide (721a9c9): each criterion's adjusted score, then the total
            return np.array([float(v) for row in csv.DictReader(f) for k, v in row.items()
                             if k.endswith("_MFRM") or k == "MFRM_total"])

    free, anch = column("free.csv"), column("anch.csv")
    assert free.size > 100 and np.ptp(free) > 1
    np.testing.assert_allclose(anch, free, atol=2e-4)


# -- every complaint about an anchor file through the commands: file, line, field, one line, exit 2 ----
ANCHOR_ROWS = """model,scale,facet,element,level,measure,se
MFRM,1-6,rater,R1,,-0.5,0.2
MFRM,1-6,rater,R2,,0.1,0.2
MFRM,1-6,rater,R3,,0.4,0.2
MFRM,1-6,criterion,style,,-0.3,0.1
MFRM,1-6,criterion,org,,0.3,0.1
MFRM,1-6,threshold,2,,-2.0,0.3
MFRM,1-6,threshold,3,,-0.5,0.3
MFRM,1-6,threshold,4,,0.5,0.3
MFRM,1-6,threshold,5,,1.0,0.3
MFRM,1-6,threshold,6,,1.0,0.3
"""


def _edit(text, line, old, new):
    """``text`` with ``old`` replaced by ``new`` on (1-based) ``line`` only."""
    lines = text.splitlines(keepends=True)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    return "".join(lines)


@pytest.mark.parametrize("command, edit, extra, error", [
    # no anchored rater in the data (some absent: a warning, test_absent_anchored_raters_are_left_unused)
    ("adjust", [(2, ",R1,", ",X1,"), (3, ",R2,", ",X2,"), (4, ",R3,", ",X3,")], [],
     "b.csv:2: element: none of the anchored raters is in the data (rater X1 (line 2), rater X2 (line 3), "
     "rater X3 (line 4)): nothing holds this file's raters to the anchors' scale"),
    ("check", [(2, ",R1,", ",X1,"), (3, ",R2,", ",X2,"), (4, ",R3,", ",X3,")], [],
     "b.csv:2: element: none of the anchored raters is in the data"),
    ("compare", [(2, ",R1,", ",X1,"), (3, ",R2,", ",X2,"), (4, ",R3,", ",X3,")], [],
     "b.csv:2: element: none of the anchored raters is in the data"),
    # another scale (other top, other bottom): the scale field of the first row, as every row carries it
    ("adjust", [(k, "1-6", "1-7") for k in range(2, 12)], [],
     "b.csv:2: scale: the anchors are on the scale 1-7, this file is on 1-6"),
    ("check", [(k, "1-6", "0-6") for k in range(2, 12)], [],
     "b.csv:2: scale: the anchors are on the scale 0-6, this file is on 1-6"),
    ("adjust", [(k, "MFRM", "MML") for k in range(2, 12)], [],
     "b.csv:2: model: the anchors are of model MML, this analysis is MFRM"),
    ("adjust", [(5, ",criterion,", ",task,")], [],
     "b.csv:5: facet: anchored facet(s) task not in this analysis (its facets: rater, criterion)"),
    ("adjust", [(7, "threshold,2,", "threshold,1,")], [],
     "b.csv:7: element: threshold 1 is not a step of the scale 1-6 (the category a threshold leads into: 2 to 6)"),
    ("adjust", [(9, "threshold,4,,", "threshold,4,org,")], [],
     "b.csv:9: level: the anchors have thresholds per level of a facet; give --steps-by"),
    ("adjust", [(7, "threshold,2,,", "threshold,2,org,")], ["--steps-by", "criterion"],
     "b.csv:8: level: the anchors have shared thresholds (no level), and --steps-by criterion"),
    ("adjust", [(k, ",,", ",voice,") for k in range(7, 12)],
     ["--steps-by", "criterion"], "b.csv:7: level: threshold level(s) voice are not levels of criterion in the data"),
    ("adjust", [(k, ",,", ",voice,") for k in range(7, 12)] + [(6, ",org,", ",bad,")],
     [], "b.csv:7: level: the anchors have thresholds per level of a facet; give --steps-by"),
    ("adjust", [(4, "1-6", "one to six")], [], "b.csv:4: scale: expected LOW-HIGH such as 0-5, not 'one to six'"),
    ("adjust", [(4, ",0.4,", ",high,")], [], "b.csv:4: measure: 'high' is not a number"),
])
def test_anchor_file_errors_name_line_and_field_through_the_commands(tmp_path, command, edit, extra, error):
    """Each complaint about an anchor file names the file, the line of the element at fault and its field
    (they named the file only: issue 22's 'a clear error naming them'), on one line, exit 2, and no
    output is written; the file is refused before anything is fitted."""
    import csv

    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    rub = _rubric(3, n_papers=40)
    with open(tmp_path / "y.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([row[:4] for row in [rub.header, *rub.rows]])   # paper, rater, style, org
    text = ANCHOR_ROWS
    for line, old, new in edit:
        text = _edit(text, line, old, new)
    (tmp_path / "b.csv").write_text(text)
    args = [command, str(tmp_path / "y.csv"), "--scale", "1-6", "--score-cols", "style,org", "-q",
            "--anchors", str(tmp_path / "b.csv"), *extra]
    if command != "check":
        args += ["-m", "MFRM" if command == "adjust" else "TLI,MFRM"]
    if command == "adjust":
        args += ["-o", str(tmp_path / "out.csv")]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert lines[0].replace(str(tmp_path) + "/", "").startswith("error: " + error), lines[0]
    assert not (tmp_path / "out.csv").exists()


def test_compare_refuses_anchors_it_would_not_use(tmp_path):
    """compare --anchors without MFRM among the methods ignored the anchors (the table read as an anchored
    comparison); adjust refused it already."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    (tmp_path / "y.csv").write_text("paper,rater,score\nP1,R1,3\nP1,R2,4\nP2,R1,2\nP2,R2,2\n")
    (tmp_path / "a.csv").write_text(ANCHOR_ROWS)
    res = CliRunner().invoke(cli, ["compare", str(tmp_path / "y.csv"), "--scale", "1-6", "-m", "TLI", "-q",
                                   "--anchors", str(tmp_path / "a.csv")])
    assert res.exit_code == 2 and "--anchors: applies to the many-facet model only: give -m MFRM" in res.output


def test_steps_by_not_a_facet_is_an_input_error(tmp_path):
    """--steps-by naming no facet of the file stopped with a ValueError traceback (the facet's position
    was looked up before the check that refuses it)."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    (tmp_path / "y.csv").write_text("paper,rater,style,org\nP1,R1,3,4\nP1,R2,4,4\nP2,R1,2,3\nP2,R2,2,2\n")
    res = CliRunner().invoke(cli, ["adjust", str(tmp_path / "y.csv"), "--scale", "1-6", "--score-cols", "style,org",
                                   "-m", "MFRM", "--steps-by", "task", "-q", "-o", str(tmp_path / "out.csv")])
    assert res.exit_code == 2, res.output
    assert res.output.strip() == ("error: --steps-by: 'task' is not a facet of this analysis (give it with --facet-col; "
                                  "facets: criterion)")


def test_steps_by_without_the_many_facet_model_is_refused(tmp_path):
    """``adjust -m TLI --steps-by criterion`` (and compare's) ignored the option and wrote TLI's scores, as
    if stepped by criterion; refused now as --anchors is, before anything is written."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    src = tmp_path / "r.csv"
    src.write_text("paper,rater,criterion,score\n" + "".join(
        f"P{p},R{(p + k) % 4 + 1},{c},{(p + k + len(c)) % 5 + 1}\n" for p in range(12) for k in (0, 1)
        for c in ("style", "org")))
    for command in (["adjust", "-o", str(tmp_path / "o.csv")], ["compare"]):
        res = CliRunner().invoke(cli, [command[0], str(src), "--scale", "1-6", "--facet-col", "criterion", "-m",
                                       "TLI", "--steps-by", "criterion", "-q", *command[1:]])
        assert res.exit_code == 2, res.output
        assert "--steps-by: applies to the many-facet model only: give -m MFRM" in res.output
    assert not (tmp_path / "o.csv").exists()
    import ratercal_cli as rc
    from ratercal_cli.errors import ArgumentError

    r = rc.read_ratings(src, scale="1-6", facet_cols=["criterion"])
    with pytest.raises(ArgumentError, match="steps_by"):
        rc.adjust(r, "MML", steps_by="criterion")
    assert rc.adjust(r, "MFRM", steps_by="criterion").groups[0].adjusted["MFRM"] is not None


def _adjusted_alike(tmp_path, common, *names) -> dict:
    """``adjust -m MFRM --anchors NAME.csv`` of each name: ``{name: its output}``, the adjusted files byte-identical."""
    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    outs = {}
    for name in names:
        res = CliRunner().invoke(cli, ["adjust", *common, "-m", "MFRM", "--anchors", str(tmp_path / f"{name}.csv"),
                                       "-o", str(tmp_path / f"{name}.out.csv")])
        assert res.exit_code == 0, res.output
        outs[name] = res.output
    first = (tmp_path / f"{names[0]}.out.csv").read_bytes()
    assert all((tmp_path / f"{n}.out.csv").read_bytes() == first for n in names[1:])
    return outs


def test_absent_anchored_raters_are_left_unused_and_named(tmp_path):
    """An anchored rater not in this year's file (a rater who left since the calibration) was an error, the
    anchor file to be edited by hand; Facets leaves an anchored element without data unused.  The fit equals
    the fit on the anchor file without that row, and adjust, check and compare name it (beside the rater it
    may be a misspelling of, which has no anchor)."""
    import csv

    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    rub = _rubric(3, n_papers=40)
    with open(tmp_path / "y.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([row[:4] for row in [rub.header, *rub.rows]])   # paper, rater, style, org
    (tmp_path / "b.csv").write_text(_edit(ANCHOR_ROWS, 3, ",R2,", ",X9,"))   # X9 left; R2 new
    (tmp_path / "c.csv").write_text("".join(line for k, line in enumerate(ANCHOR_ROWS.splitlines(keepends=True))
                                            if k != 2))   # the same without X9's row
    common = [str(tmp_path / "y.csv"), "--scale", "1-6", "--score-cols", "style,org"]
    outs = _adjusted_alike(tmp_path, common, "b", "c")
    said = "anchored element(s) of b.csv not in the data, their anchors unused (raters who left?): rater X9\n"
    assert said in outs["b"] and "rater(s) R2, R4, R5, R6, R7, R8 have no anchor in b.csv" in outs["b"]
    assert "not in the data" not in outs["c"] and "rater(s) R2, R4, R5, R6, R7, R8 have no anchor in c.csv" in outs["c"]
    res = CliRunner().invoke(cli, ["check", *common, "--anchors", str(tmp_path / "b.csv")])
    assert res.exit_code == 0 and said in res.output
    elements = [r["element"] for r in
                __import__("json").loads(CliRunner().invoke(cli, ["check", *common, "--json", "-q", "--anchors",
                                                                  str(tmp_path / "b.csv")]).output)["anchors"]]
    assert "X9" not in elements and "R1" in elements
    res = CliRunner().invoke(cli, ["compare", *common, "-m", "TLI,MFRM", "--anchors", str(tmp_path / "b.csv")])
    assert res.exit_code == 0 and said in res.output


def test_a_criterion_absent_with_its_thresholds_is_left_unused_and_the_library_takes_a_path(tmp_path):
    """A verifying helper's finds: with --steps-by, the thresholds of a criterion this year has not stopped the run
    ("threshold level(s) conv are not levels of criterion in the data") though the criterion's own anchor was left
    unused; check and compare named the absent rater but not the raters without an anchor, nor did their HTML
    pages; rc.read_anchors did not exist and rc.adjust(anchors="a.csv") was an AttributeError."""
    import csv

    from click.testing import CliRunner

    import ratercal_cli as rc
    from ratercal_cli.cli import cli

    rub = _rubric(3, n_papers=40)
    with open(tmp_path / "y.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([row[:4] for row in [rub.header, *rub.rows]])   # paper, rater, style, org
    common = [str(tmp_path / "y.csv"), "--scale", "1-6", "--score-cols", "style,org", "--steps-by", "criterion"]
    assert CliRunner().invoke(cli, ["check", *common, "-q", "--write-anchors", str(tmp_path / "a.csv")]).exit_code == 0
    text = (tmp_path / "a.csv").read_text()
    extra = [line.replace(",style,", ",voice,") for line in text.splitlines(keepends=True)
             if ",style," in line and (",criterion," in line or ",threshold," in line)]
    assert len(extra) >= 3   # voice's criterion anchor and its thresholds
    (tmp_path / "b.csv").write_text(text + "".join(extra))
    outs = _adjusted_alike(tmp_path, common, "a", "b")
    assert ("MFRM: anchored element(s) of b.csv not in the data, their anchors unused (left since the calibration?): "
            "criterion voice") in outs["b"]
    # check and compare name the raters without an anchor too, and so do their pages
    (tmp_path / "c.csv").write_text(_edit(ANCHOR_ROWS, 3, ",R2,", ",X9,"))
    plain = [str(tmp_path / "y.csv"), "--scale", "1-6", "--score-cols", "style,org"]
    for command, extra_args in (("check", []), ("compare", ["-m", "TLI,MFRM"])):
        html = tmp_path / f"{command}.html"
        res = CliRunner().invoke(cli, [command, *plain, *extra_args, "--anchors", str(tmp_path / "c.csv"),
                                       "--html", str(html)])
        assert res.exit_code == 0, res.output
        page = html.read_text()
        for words in ("rater X9", "R2, R4, R5, R6, R7, R8 have no anchor in c.csv"):
            assert words in res.output and words in page, (command, words)
    # the library: read_anchors exported, a path taken as the anchor file
    ratings = rc.read_ratings(tmp_path / "y.csv", scale="1-6", score_cols=["style", "org"])
    by_path = rc.adjust(ratings, "MFRM", anchors=tmp_path / "c.csv")
    by_object = rc.adjust(ratings, "MFRM", anchors=rc.read_anchors(tmp_path / "c.csv"))
    assert np.array_equal(by_path.paper_scores("MFRM"), by_object.paper_scores("MFRM"))
    with pytest.raises(rc.ArgumentError, match="anchors: must be a calibration"):
        rc.adjust(ratings, "MFRM", anchors=3)


def test_a_criterion_named_otherwise_this_year_is_said_on_both_sides(tmp_path):
    """A staff helper's "Org" of year 1 was "Organization" in year 2: the anchor was unused (said) and the new name
    measured free without a word, the raters alone being named as without an anchor."""
    import csv

    from click.testing import CliRunner

    from ratercal_cli.cli import cli

    rub = _rubric(3, n_papers=40)
    with open(tmp_path / "y.csv", "w", newline="") as fh:
        csv.writer(fh).writerows([row[:4] for row in [rub.header, *rub.rows]])   # paper, rater, style, org
    common = ["--scale", "1-6"]
    res = CliRunner().invoke(cli, ["check", str(tmp_path / "y.csv"), *common, "--score-cols", "style,org", "-q",
                                   "--write-anchors", str(tmp_path / "a.csv")])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "y.csv").read_text().splitlines()
    (tmp_path / "y2.csv").write_text("\n".join([lines[0].replace("org", "Organization")] + lines[1:]) + "\n")
    res = CliRunner().invoke(cli, ["adjust", str(tmp_path / "y2.csv"), *common, "--score-cols", "style,Organization",
                                   "-m", "MFRM", "--anchors", str(tmp_path / "a.csv"), "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 0, res.output
    assert "not in the data, their anchors unused (left since the calibration?): criterion org" in res.output
    assert ("criterion level(s) Organization have no anchor in a.csv: measured on the anchors' scale, not held "
            "(new, or named otherwise than in the calibration?)") in res.output
