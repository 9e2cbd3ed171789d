"""The anchor file: a calibration written, read back, edited by hand, and refused where it does not fit."""

import json
import math

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


@pytest.mark.parametrize("body, message", [
    ("MFRM,1-6,rater,R1,,abc,0.1", "b.csv:2: measure: 'abc' is not a number"),
    ("MFRM,1-6,rater,R1,,0.1,0.1\nMFRM,1-6,rater,R1,,0.2,0.1", "b.csv:3: element: rater R1 is anchored twice (first at 2)"),
    ("MFRM,1-6,rater,R1,,0.1,\nMFRM,0-5,rater,R2,,0.1,", "b.csv:3: model: MFRM 0-5 differs from the first row's MFRM 1-6"),
    ("PCM,1-6,rater,R1,,0.1,", "b.csv:2: model: 'PCM': expected one of MFRM, MML"),
    ("MFRM,1-6,threshold,two,,0.1,", "b.csv:2: element: 'two': a threshold's element is the category"),
    ("MFRM,1-6,rater,R1,org,0.1,", "b.csv:2: level: only thresholds belong to a level"),
    ("MFRM,1-6,,R1,,0.1,", "b.csv:2: facet: blank"),
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
    with pytest.raises(InputError, match=r"not in the data: rater R10$"):
        CAL.check("MFRM", Scale(1, 6), {"rater": ["R1", "R2"], "criterion": ["style", "org"]})
    with pytest.raises(InputError, match=r"anchored facet\(s\) criterion not in this analysis"):
        CAL.check("MFRM", Scale(1, 6), {"rater": ["R1", "R10"]})
    bad = Anchors("MFRM", Scale(1, 6), [Anchor("threshold", "1", 0.0)])
    with pytest.raises(InputError, match="threshold 1 is not a step of the scale 1-6"):
        bad.check("MFRM", Scale(1, 6), DATA)
    per = Anchors("MFRM", Scale(1, 6), [Anchor("threshold", "2", 0.0, level="voice")])
    with pytest.raises(InputError, match="give --steps-by"):
        per.check("MFRM", Scale(1, 6), DATA)
    with pytest.raises(InputError, match="threshold level\\(s\\) voice are not levels of criterion"):
        per.check("MFRM", Scale(1, 6), DATA, steps_by="criterion")
