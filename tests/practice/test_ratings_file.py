"""ratings_file: scale parsing, validation errors, discrepancy resolution, adjusted output."""

import csv

import numpy as np
import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.ratings import Adjusted
from ratercal_cli.practice.ratings_file import (Columns, Scale, parse_scale, read_ratings_file,
                                       resolve_discrepancies, write_adjusted)


def write(tmp_path, text, name="r.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


# -- scale ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, low, high", [("0-5", 0, 5), ("1..6", 1, 6), (" 1 to 4 ", 1, 4),
                                             ("-2-2", -2, 2)])
def test_parse_scale(text, low, high):
    s = parse_scale(text)
    assert (s.low, s.high, s.max_score) == (low, high, high - low)


@pytest.mark.parametrize("text", ["5-1", "3-3", "abc", "0-5.5", "", "6"])
def test_parse_scale_rejects(text):
    with pytest.raises(InputError) as e:
        parse_scale(text)
    assert e.value.field == "scale"


def test_a_single_number_scale_is_refused_not_read_as_0_to_n(tmp_path):
    """Issue 28 item 4: --scale 6 was read as 0-6 with no word, so TLI put papers of a 1-6 file below
    1.  A single number is ambiguous: refused, naming the form to give."""
    from click.testing import CliRunner
    from support import CLI, run

    f = write(tmp_path, "paper,rater,score\n" + "".join(f"p{i},R{1 + i % 3},{1 + i % 6}\n" for i in range(30)))
    res = CliRunner().invoke(CLI, ["adjust", str(f), "--scale", "6", "-m", "TLI", "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 2 and "give LOW-HIGH, e.g. 1-6" in res.output
    assert not (tmp_path / "o.csv").exists()
    assert run("adjust", f, "--scale", "1-6", "-m", "TLI", "-o", tmp_path / "o.csv").exit_code == 0


# -- discrepancy resolution ----------------------------------------------------------
def resolve_loop(paper, score, threshold=1):
    """The rule as OBSGEN.BAS words it, one paper at a time (independent of the vectorised code)."""
    keep = [True] * len(paper)
    by_paper = {}
    for i, p in enumerate(paper):
        by_paper.setdefault(p, []).append(i)
    for idx in by_paper.values():
        if len(idx) != 3:
            continue
        a, b, c = idx
        s1, s2, s3 = score[a], score[b], score[c]
        if abs(s1 - s2) <= threshold:
            continue
        if abs(s3 - s1) < abs(s3 - s2):
            keep[b] = False          # s1 nearer: keep r3 with r1
        elif abs(s3 - s2) < abs(s3 - s1):
            keep[a] = False
        else:                        # midway: drop the lower
            keep[a if s1 < s2 else b] = False
    return np.array(keep)


def test_resolve_hand_cases():
    # ratings interleaved across papers: file order within a paper decides first/second/third
    paper = [0, 1, 0, 1, 2, 3, 2, 3, 4, 4, 0, 1, 2, 3, 4, 4, 5, 5]
    score = [1, 4, 4, 1, 1, 3, 3, 1, 2, 3, 5, 2, 2, 2, 5, 9, 0, 5]
    # paper 0: 1,4 then 5 -> nearer 4, drop the 1 (index 0)
    # paper 1: 4,1 then 2 -> nearer 1, drop the 4 (index 1)
    # paper 2: 1,3 then 2 -> midway, drop the lower 1 (index 4)
    # paper 3: 3,1 then 2 -> midway, drop the lower 1 (index 7)
    # paper 4: 2,3 within a point: four ratings anyway, nothing dropped
    # paper 5: two ratings 0,5: nothing to resolve
    keep, resolved = resolve_discrepancies(paper, score)
    assert list(np.flatnonzero(~keep)) == [0, 1, 4, 7]
    assert list(np.flatnonzero(resolved)) == [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13]


def test_resolve_matches_loop_on_random_papers():
    rng = np.random.default_rng(5)
    n = 600
    counts = rng.choice([1, 2, 3, 3, 3, 4], size=n)
    paper = np.repeat(np.arange(n), counts)
    rng.shuffle(paper)                      # any interleaving
    score = rng.integers(0, 6, size=paper.size)
    for threshold in (0, 1, 2):
        keep, _ = resolve_discrepancies(paper, score, threshold)
        np.testing.assert_array_equal(keep, resolve_loop(list(paper), list(score), threshold))
    assert (~resolve_discrepancies(paper, score)[0]).sum() > 100


# -- reading -------------------------------------------------------------------------
GOOD = """grade,paper,rater,score,note
5,a,2,3,x
5,a,10,4,
5,b,2,5,
5,b,10,2,
5,b,1,4,
5,c,1,NA,
8,a,2,1,
8,a,3,,
8,d,3,2,
8,d,2,2,
"""


def test_read_groups_scale_and_order(tmp_path):
    p = write(tmp_path, GOOD)
    t = read_ratings_file(p, "1-5", Columns(group="grade"))
    assert [g.name for g in t.groups] == ["5", "8"]
    g5 = t.groups[0].ratings
    assert g5.rater_ids == ("1", "2", "10")          # natural order, not "1" < "10" < "2"
    assert g5.paper_ids == ("a", "b")                 # c has no usable rating
    assert g5.max_score == 4
    np.testing.assert_array_equal(g5.score, [2, 3, 4, 1, 3])   # score - 1, file order
    np.testing.assert_array_equal(g5.rater, [1, 2, 1, 2, 0])
    np.testing.assert_array_equal(t.groups[0].rows, [0, 1, 2, 3, 4])
    g8 = t.groups[1].ratings
    assert g8.n_ratings == 3 and g8.paper_ids == ("a", "d")
    # the rater with one rating is flagged thin (every corrected method leaves it unadjusted)
    assert t.flags == ["", "", "unresolved", "unresolved", "unresolved", "missing", "", "missing", "thin", ""]
    text = "\n".join(t.warnings)
    assert "2 rating(s) without a usable score" in text
    assert "1 paper(s) (grade 5) with no usable rating (e.g. paper c)" in text
    assert "r.csv:7: score:" in text                  # first missing line, the field
    assert "rater 1 (grade 5) has only one rating" in text
    assert "rater 3 (grade 8) has only one rating" in text
    assert "have a third rating" in text


def test_read_resolves_within_group(tmp_path):
    p = write(tmp_path, GOOD)
    t = read_ratings_file(p, "1-5", Columns(group="grade"), resolve=True)
    # paper b: 5, 2 then 4 -> keep 5 and 4, drop the 2 (row 3)
    assert t.flags[2:5] == ["resolved", "dropped", "resolved"]
    g5 = t.groups[0]
    np.testing.assert_array_equal(g5.rows, [0, 1, 2, 4])
    np.testing.assert_array_equal(g5.ratings.score, [2, 3, 4, 3])


def test_inferred_scale_and_tsv(tmp_path):
    p = write(tmp_path, "paper\trater\tscore\n1\tA\t3\n1\tB\t4\n2\tA\t1\n", "r.tsv")
    t = read_ratings_file(p)
    # the lowest to the highest score found (not 0 up to it), loudly, naming --scale
    assert (t.scale.low, t.scale.high, t.delimiter) == (1, 4, "\t")
    assert t.scale_inferred and "NO --scale GIVEN: the scale is taken to be 1-4" in t.warnings[0]
    assert "give it with --scale" in t.warnings[0] and "the lowest to the highest score found" in t.warnings[0]
    # one score throughout (a researcher tester's file of 3s was "3-4, the lowest to the highest score found")
    t = read_ratings_file(write(tmp_path, "paper,rater,score\n1,A,3\n1,B,3\n2,A,3\n", "c.csv"))
    assert "the scale is taken to be 3-4, every score found is 3, and a scale needs two" in t.warnings[0]


@pytest.mark.parametrize("text, line, field, words", [
    ("paper,rater,score\n1,A,3\n1,B,x\n", 3, "score", "'x' is not a number"),
    ("paper,rater,score\n1,A,3\n1,B,7\n", 3, "score", "7 is outside the scale 0-5"),
    ("paper,rater,score\n1,A,-1\n", 2, "score", "outside the scale"),
    ("paper,rater,score\n1,A,3.5\n", 2, "score", "not a whole number"),
    ("paper,rater,score\n1,A,3\n2,A,3\n1,A,4\n", 4, "rater", "duplicate rating of paper 1 by rater A (first at line 2)"),
    ("paper,rater,score\n1,,3\n", 2, "rater", "blank"),
    ("paper,rater,score\n,A,3\n", 2, "paper", "blank"),
    ("paper,rater,score\n1,A,3\n1,B\n", 3, None, "expected 3 fields, found 2"),
    ("paper,judge,score\n1,A,3\n", 1, None, "missing column(s) rater"),
    ("paper,rater,score\n", 2, None, "no ratings"),
    ("paper,rater,score\n1,A,NA\n", None, "score", "no usable"),
])
def test_bad_input_names_line_and_field(tmp_path, text, line, field, words):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        read_ratings_file(p, "0-5")
    msg = str(e.value)
    assert e.value.line == line and e.value.field == field
    assert msg.startswith(f"{p}:{line}: " if line else f"{p}: ")
    assert words in msg and "\n" not in msg


def test_empty_file(tmp_path):
    p = write(tmp_path, "\n  \n")
    with pytest.raises(InputError, match="empty file"):
        read_ratings_file(p, "0-5")


def test_duplicate_allowed_across_groups(tmp_path):
    p = write(tmp_path, "g,paper,rater,score\n1,a,A,3\n2,a,A,3\n2,a,B,2\n")
    t = read_ratings_file(p, "0-5", Columns(group="g"))
    assert [g.ratings.n_ratings for g in t.groups] == [1, 2]
    with pytest.raises(InputError, match="duplicate"):
        read_ratings_file(p, "0-5")


# -- writing -------------------------------------------------------------------------
def test_write_adjusted(tmp_path):
    p = write(tmp_path, GOOD)
    t = read_ratings_file(p, "1-5", Columns(group="grade"), resolve=True)
    g5, g8 = t.groups
    res = {"5": {"MN": Adjusted(rating=np.array([0.25, 1.5, 2.0, 3.0]), paper=np.array([0.875, 2.5]))},
           "8": {"MN": Adjusted(rating=np.array([0.0, np.nan, 1.0]), paper=np.array([0.0, 0.5])),
                 "TLI": Adjusted(rating=np.array([0.1, 0.2, 0.3]), paper=np.array([0.1, 0.25]))}}
    out = tmp_path / "out" / "adj.csv"
    out.parent.mkdir()   # write_adjusted no longer creates folders (issue 13)
    write_adjusted(out, t, res, ["MN", "TLI"])
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["grade", "paper", "rater", "score", "note", "flag", "MN", "MN_paper", "TLI", "TLI_paper"]
    body = rows[1:]
    assert body[0] == ["5", "a", "2", "3", "x", "", "1.2500", "1.8750", "", ""]   # + low = 1
    assert body[3] == ["5", "b", "10", "2", "", "dropped", "", "3.5000", "", ""]  # paper score, no rating score
    assert body[5] == ["5", "c", "1", "NA", "", "missing", "", "", "", ""]       # paper without usable rating
    assert body[6][6:] == ["1.0000", "1.0000", "1.1000", "1.1000"]
    assert body[7][5:] == ["missing", "", "1.0000", "", "1.1000"]
    assert body[8][6:] == ["", "1.5000", "1.2000", "1.2500"]                      # NaN -> blank
    assert [f.name for f in out.parent.iterdir()] == ["adj.csv"]                  # no temporary left


def test_write_adjusted_refuses_clashing_columns(tmp_path):
    p = write(tmp_path, "paper,rater,score,TLI\n1,A,3,x\n")
    t = read_ratings_file(p, "0-5")
    with pytest.raises(InputError) as e:
        write_adjusted(tmp_path / "o.csv", t, {}, ["TLI"])
    assert e.value.field == "TLI"
    assert not (tmp_path / "o.csv").exists()


def test_scale_object_passthrough(tmp_path):
    p = write(tmp_path, "paper,rater,score\n1,A,3\n")
    assert read_ratings_file(p, Scale(0, 3)).scale == Scale(0, 3)


def test_repeated_column_name_is_refused(tmp_path):
    # before: the last "score" won and write_adjusted wrote it back into both columns
    p = write(tmp_path, "paper,rater,score,score\n1,a,3,4\n1,b,2,5\n")
    with pytest.raises(InputError) as e:
        read_ratings_file(p, scale="0-5")
    assert (e.value.line, e.value.field) == (1, "score") and "appears twice" in str(e.value)


def test_error_line_after_multiline_comment(tmp_path):
    p = write(tmp_path, 'paper,rater,score,note\n1,a,3,"two\nlines"\n1,b,x,\n')
    with pytest.raises(InputError) as e:
        read_ratings_file(p, scale="0-5")
    assert (e.value.line, e.value.field) == (4, "score")


RATER_LABELS = ["1.0", "b", "nan", "2", "01", "inf", "1", "a"]


def _rater_order_file(tmp_path):
    lines = ["paper,rater,score"] + [f"{p},{r},{(p + k) % 6}" for k, r in enumerate(RATER_LABELS)
                                     for p in range(3)]
    return write(tmp_path, "\n".join(lines) + "\n")


def test_rater_order_numbers_then_text_ties_by_label(tmp_path):
    table = read_ratings_file(_rater_order_file(tmp_path), scale="0-5")
    assert table.groups[0].ratings.rater_ids == ("01", "1", "1.0", "2", "a", "b", "inf", "nan")


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_rater_order_does_not_depend_on_the_hash_seed(tmp_path):
    import os
    import subprocess
    import sys

    path = _rater_order_file(tmp_path)
    code = ("import sys; from ratercal_cli.practice.ratings_file import read_ratings_file; "
            "print(','.join(read_ratings_file(sys.argv[1], scale='0-5').groups[0].ratings.rater_ids))")
    outs = {subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (0, 1, 2, 3)}
    assert outs == {"01,1,1.0,2,a,b,inf,nan\n"}


def test_a_scale_wider_than_every_score_is_warned_of(tmp_path):
    """``--scale 0-9`` typed for a 0-5 rubric: the truncated methods kept scores up to 9 and the models had
    four categories no rater used, with no word.  Two or more categories unused at an end are warned of,
    with the scale the scores suggest; one (no paper was a 0) is common and is not."""
    import warnings

    import ratercal_cli as rc

    src = tmp_path / "r.csv"
    src.write_text("paper,rater,score\n" + "".join(f"P{p},R{k},{(p + k) % 6}\n" for p in range(30) for k in (1, 2)))
    with pytest.warns(UserWarning, match=r"score: no rating is 6-9 on the scale 0-9 given \(the scores run 0-5\); "
                                         r"if the scale is narrower, give it with scale='0-5'"):
        rc.read_ratings(src, scale="0-9")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        rc.read_ratings(src, scale="0-6")   # (one unused: a 6 nobody gave)
        rc.read_ratings(src, scale="0-5")
    assert not [w for w in got if "no rating is" in str(w.message)]
    from support import run

    out = run("check", src, "--scale", "0-9")   # (on the command line, named as its flag)
    assert "no rating is 6-9 on the scale 0-9 given (the scores run 0-5); if the scale is narrower, give it " \
           "with --scale 0-5" in out.output
