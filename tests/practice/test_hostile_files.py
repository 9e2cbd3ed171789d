"""Issue 13: practitioners' files as a new user and a hostile one give them.

Output paths (links, devices, folders, ``-``), stale temporary files, huge fields, huge
scales, the third-reading rule's order and 4+ ratings, and the smaller reading fixes.
"""

import csv
import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.io import _TMP_RE, atomic_write, read_csv, remove_stale_temporaries
from ratercal_cli.practice.ratings_file import (FLAG_MANY, FLAG_RESOLVED, MAX_SCALE_POINTS, Columns,
                                       _natural_key, parse_scale, read_ratings_file)

from support import run

#: 12 papers, 4 raters, two ratings each: enough for TLI/MN
GOOD = "paper,rater,score\n" + "".join(
    f"P{p},R{(p + k) % 4 + 1},{(p * 7 + k * 3) % 6}\n" for p in range(12) for k in range(2))


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "good.csv"
    p.write_text(GOOD)
    return p


# -- 1. output paths -------------------------------------------------------------------
def test_output_through_a_link_writes_the_target_and_keeps_the_link(tmp_path, good):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    res = run("adjust", good, "--scale", "0-5", "-o", link, "-q")
    assert res.exit_code == 0, res.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    rows = list(csv.reader(real.open()))
    assert rows[0] == ["paper", "rater", "score", "flag", "TLI", "TLI_paper"] and len(rows) == 25
    assert sorted(f.name for f in tmp_path.iterdir()) == ["good.csv", "link.csv", "real.csv"]


def test_dangling_link_is_written_through(tmp_path, good):
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "new.csv")
    assert run("adjust", good, "--scale", "0-5", "-o", link, "-q").exit_code == 0
    assert link.is_symlink() and (tmp_path / "new.csv").read_text().startswith("paper,rater,score,flag")


def test_dash_is_standard_output(good):
    res = run("adjust", good, "--scale", "0-5", "-o", "-")
    assert res.exit_code == 0
    rows = list(csv.reader(res.stdout.splitlines()))
    assert rows[0][-2:] == ["TLI", "TLI_paper"] and len(rows) == 25
    assert "wrote standard output" in res.stderr
    assert not (good.parent / "-").exists()


@pytest.mark.parametrize("target, words", [("/dev/null", "not a regular file"), ("DIR", "is a directory"),
                                           ("missing/out.csv", "does not exist")])
def test_bad_outputs_are_refused_naming_the_users_path(tmp_path, good, target, words):
    if target == "DIR":
        target = str(tmp_path)
    elif not target.startswith("/"):
        target = str(tmp_path / target)
    res = run("adjust", good, "--scale", "0-5", "-o", target)
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {target}: ") and words in err
    assert ".tmp" not in err
    assert not (tmp_path / "missing").exists()
    assert sorted(f.name for f in tmp_path.iterdir()) == ["good.csv"]


def test_devices_through_links_are_refused(tmp_path, good):
    link = tmp_path / "out.csv"
    link.symlink_to("/dev/null")
    res = run("adjust", good, "--scale", "0-5", "-o", link)
    assert res.exit_code == 2 and f"{link}: is not a regular file" in res.stderr
    assert link.is_symlink()


def test_compare_png_refuses_a_missing_folder(tmp_path, good):
    res = run("compare", good, "--scale", "0-5", "-m", "MN", "--png", tmp_path / "no" / "m.png")
    assert res.exit_code == 2 and "does not exist" in res.stderr and not (tmp_path / "no").exists()


# -- 6. stale temporary files ----------------------------------------------------------
def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = tmp_path / f".out.csv.{dead}.abcd1234.tmp"
    live = tmp_path / f".out.csv.{os.getppid()}.abcd1234.tmp"     # a running process: kept
    other = tmp_path / f".other.csv.{dead}.abcd1234.tmp"         # another target: kept here
    foreign = tmp_path / ".out.csv.notours.tmp"                  # not our pattern: kept
    for f in (stale, live, other, foreign):
        f.write_text("x")
    with atomic_write(tmp_path / "out.csv") as fh:
        fh.write("new\n")
    assert (tmp_path / "out.csv").read_text() == "new\n"
    assert not stale.exists() and live.exists() and other.exists() and foreign.exists()
    assert remove_stale_temporaries(tmp_path) == [other]


def test_written_files_get_the_usual_permissions_and_missing_folders(tmp_path):
    """A new file gets 0666 less the umask (as ``open`` gives), a replaced one too; the folders a
    run's file needs are created; while writing, the temporary beside it has our pattern."""
    old = os.umask(0o027)
    try:
        target = tmp_path / "a" / "b" / "out.csv"
        with atomic_write(target) as fh:
            (tmp,) = [p.name for p in target.parent.iterdir()]
            fh.write("x\n")
        assert _TMP_RE.match(tmp) and tmp.startswith(f".out.csv.{os.getpid()}.")
        assert target.stat().st_mode & 0o777 == 0o640
        os.chmod(target, 0o600)
        with atomic_write(target) as fh:
            fh.write("y\n")
        assert target.read_text() == "y\n" and target.stat().st_mode & 0o777 == 0o640
        assert [p.name for p in target.parent.iterdir()] == ["out.csv"]
    finally:
        os.umask(old)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_write_leaves_no_temporary(tmp_path, sig):
    # SIGINT as a terminal's Ctrl-C delivers it: a child started from a background job of a
    # non-interactive shell (as CI may run us) inherits SIGINT ignored, and would sleep through it
    script = textwrap.dedent(f"""
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from ratercal_cli.io import atomic_write
        with atomic_write({str(tmp_path / 'out.csv')!r}) as fh:
            fh.write("partial")
            print("writing", flush=True)
            time.sleep(30)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "writing"
    assert len(list(tmp_path.glob(".out.csv.*.tmp"))) == 1
    proc.send_signal(sig)
    proc.wait(timeout=20)
    assert proc.returncode != 0
    assert list(tmp_path.iterdir()) == []


# -- 2. huge fields --------------------------------------------------------------------
@pytest.mark.parametrize("body", ['P1,R1,"' + "x" * 140_000 + '"\n', 'P1,R1,"3\n' + "y" * 140_000 + "\n"])
def test_a_field_over_128_kib_is_a_one_line_error(tmp_path, body):
    p = tmp_path / "big.csv"
    p.write_text("paper,rater,score\nP0,R1,3\n" + body)
    with pytest.raises(InputError) as e:
        read_csv(p)
    assert e.value.line == 3 and "128 KiB" in str(e.value)
    for cmd in ("check", "adjust", "compare"):
        res = run(cmd, p, "--scale", "0-5")
        assert res.exit_code == 2, (cmd, res.stderr)
        assert res.stderr.strip() == f"error: {p}:3: a field longer than the 128 KiB a field may hold (an unterminated quote?)"


# -- 3. huge scales --------------------------------------------------------------------
def test_huge_scales_are_refused(tmp_path, good):
    with pytest.raises(InputError) as e:
        parse_scale("0-100000000")
    assert e.value.field == "scale" and "at most 100 points" in str(e.value)
    assert parse_scale(f"1-{MAX_SCALE_POINTS + 1}").max_score == MAX_SCALE_POINTS
    res = run("adjust", good, "--scale", "0-100000000")
    assert res.exit_code == 2 and "--scale: scales of at most 100 points" in res.stderr
    p = tmp_path / "wide.csv"   # inferred from the scores: the same bound
    p.write_text("paper,rater,score\n1,a,0\n1,b,100000000\n")
    res = run("check", p)
    assert res.exit_code == 2 and "from the scores found; give --scale" in res.stderr


# -- 7. third readings: order column, 4+ ratings ---------------------------------------
THIRD = ("paper,rater,score,order\n"
         "A,r1,5,3\n"      # read third
         "A,r2,1,1\n"
         "A,r3,2,2\n"      # first two: 1 and 2 -> within a point: nothing to resolve
         "B,r1,1,1\n"
         "B,r2,4,2\n"
         "B,r3,3,3\n")     # first two 1 and 4: third 3 -> drop 1


def test_the_order_column_decides_the_first_two(tmp_path):
    p = tmp_path / "o.csv"
    p.write_text(THIRD)
    t = read_ratings_file(p, "0-5", resolve=True)
    assert t.order_column == "order"
    # r1 keeps one rating once its 1 on B is dropped: thin
    assert t.flags == ["thin", "", "", "dropped", FLAG_RESOLVED, FLAG_RESOLVED]
    assert not any("file" in w and "order" in w for w in t.warnings)
    # the same lines without the column: file order (A's first two are 5 and 1), with a warning
    q = tmp_path / "n.csv"
    q.write_text("\n".join(",".join(line.split(",")[:3]) for line in THIRD.splitlines()) + "\n")
    t = read_ratings_file(q, "0-5", resolve=True)
    assert t.flags[:3] == ["dropped", FLAG_RESOLVED, FLAG_RESOLVED]
    assert any("no order column" in w and "(give order_col for" in w for w in t.warnings)
    # a named column: required, and used
    r = tmp_path / "w.csv"
    r.write_text(THIRD.replace("order", "when"))
    with pytest.raises(InputError):
        read_ratings_file(r, "0-5", Columns(order="seq"))
    assert read_ratings_file(r, "0-5", Columns(order="when"), resolve=True).flags[3] == "dropped"


def test_two_ratings_of_a_paper_at_one_place_in_the_order_are_warned_of(tmp_path):
    p = tmp_path / "o.csv"
    p.write_text(THIRD.replace("B,r2,4,2", "B,r2,4,1").replace("A,r3,2,2", "A,r3,2,1"))
    t = read_ratings_file(p, "0-5", resolve=True)
    ties = [w for w in t.warnings if "one place in the order" in w]
    # A: r2 (line 3) and r3 (line 4) both 1; B: r1 (line 5) and r2 (line 6) both 1
    assert ties == [f"{p}:4: order: 2 paper(s) with two ratings at one place in the order of reading (e.g. paper A, "
                    "lines 3 and 4); the file's order decides which was read first"]
    # B's first two in file order (1 then 4: a gap of 3), its third (3) drops the 1, as without ties
    assert t.flags[3:] == ["dropped", FLAG_RESOLVED, FLAG_RESOLVED]
    assert not [w for w in read_ratings_file(_write(tmp_path, THIRD), "0-5",
                                            resolve=True).warnings if "one place" in w]
    # in groups, the same paper label in two groups is two papers: no tie
    g = tmp_path / "g.csv"
    g.write_text("paper,rater,score,order,school\nA,r1,2,1,s1\nA,r2,3,2,s1\nA,r1,2,1,s2\nA,r2,3,2,s2\n")
    assert not [w for w in read_ratings_file(g, "0-5", Columns(group="school")).warnings if "one place" in w]


def test_a_rubric_raters_criteria_at_one_place_are_no_tie(tmp_path):
    # a rater reads a paper once and gives every criterion at that place: 3 papers, none tied; the
    # third-reading rule's cells are (paper, criterion), and only B's content is read twice at place 1
    # (B's style by r3 is blank: no tie there)
    rub = ("paper,rater,criterion,score,order\n"
           "A,r1,content,2,1\nA,r1,style,3,1\nA,r2,content,3,2\nA,r2,style,3,2\n"    # lines 2-5
           "B,r1,content,4,1\nB,r1,style,4,1\nB,r3,content,4,1\nB,r3,style,,1\n"     # lines 6-9
           "C,r2,content,4,1\nC,r2,style,4,1\nC,r3,content,4,2\nC,r3,style,4,2\n")   # lines 10-13
    p = _write(tmp_path, rub, "rub.csv")
    ties = [w for w in read_ratings_file(p, "0-5", Columns(facets=("criterion",))).warnings if "one place" in w]
    assert ties == [f"{p}:8: order: 1 paper(s) with two ratings at one place in the order of reading (e.g. paper B, "
                    "lines 6 and 8); the file's order decides which was read first"]
    untied = rub.replace("B,r3,content,4,1", "B,r3,content,4,2")
    p = _write(tmp_path, untied, "rub2.csv")
    assert not [w for w in read_ratings_file(p, "0-5", Columns(facets=("criterion",))).warnings if "one place" in w]
    # wide: a line's criteria share its place (no tie); two lines of paper B at place 1 are one
    wide = "paper,rater,content,style,order\nA,r1,2,3,1\nA,r2,3,3,2\nB,r1,4,4,1\nB,r3,4,4,1\n"
    p = _write(tmp_path, wide, "wide.csv")
    ties = [w for w in read_ratings_file(p, "0-5", score_cols="content,style").warnings if "one place" in w]
    assert ties == [f"{p}:5: order: 1 paper(s) with two ratings at one place in the order of reading (e.g. paper B, "
                    "lines 4 and 5); the file's order decides which was read first"]
    p = _write(tmp_path, "paper,order,r1,r2,r3\nA,1,2,3,\nB,1,4,,4\n", "raters.csv")   # a column per rater
    assert not [w for w in read_ratings_file(p, "0-5", rater_cols="r1,r2,r3").warnings if "one place" in w]


def test_one_number_spelt_two_ways_in_the_order_column_is_one_place(tmp_path):
    # "1.0" and "1" (a spreadsheet's export) are place 1 both: A's first two readings tie (lines 2 and 3);
    # B's "01" is place 1, before its 2: no tie
    p = _write(tmp_path, "paper,rater,score,order\nA,r2,4,1.0\nA,r1,1,1\nA,r3,3,2\nB,r1,2,01\nB,r2,2,2\n", "f.csv")
    t = read_ratings_file(p, "0-5", resolve=True)
    assert [w for w in t.warnings if "one place" in w] == [
        f"{p}:3: order: 1 paper(s) with two ratings at one place in the order of reading (e.g. paper A, lines 2 "
        "and 3); the file's order decides which was read first"]
    assert t.flags[:3] == [FLAG_RESOLVED, "dropped", FLAG_RESOLVED]   # A: 4 and 1 read first, its third 3 keeps the 4


def _write(tmp_path, text, name="plain.csv"):
    q = tmp_path / name
    q.write_text(text)
    return q


def test_four_or_more_ratings_are_flagged(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("paper,rater,score\nA,1,0\nA,2,5\nA,3,4\nA,4,1\nB,1,2\nB,2,3\n")
    t = read_ratings_file(p, "0-5", resolve=True)
    assert t.flags == [FLAG_MANY] * 4 + ["", ""]
    assert any(":2: 1 paper(s) have four or more ratings" in w for w in t.warnings)
    assert t.groups[0].ratings.n_ratings == 6


# -- 8. smaller reading fixes ----------------------------------------------------------
@pytest.mark.parametrize("score", ["0_3", "1_0", "0x3", "3 4", "٣"])
def test_scores_python_would_accept_are_refused(tmp_path, score):
    p = tmp_path / "s.csv"
    p.write_text(f"paper,rater,score\n1,a,2\n1,b,{score}\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_ratings_file(p, "0-5")
    assert (e.value.line, e.value.field) == (3, "score") and "not a number" in str(e.value)


def test_latin1_error_names_line_and_offset_and_encoding_reads_it(tmp_path):
    p = tmp_path / "l.csv"
    p.write_bytes("paper,rater,score\n1,Jos\u00e9,2\n1,b,3\n".encode("latin-1"))
    with pytest.raises(InputError) as e:
        read_ratings_file(p, "0-5")
    assert e.value.line == 2 and "byte offset 23" in str(e.value) and "give encoding " in str(e.value)
    t = read_ratings_file(p, "0-5", encoding="latin-1")
    assert t.groups[0].ratings.rater_ids == ("Jos\u00e9", "b")
    res = run("check", p, "--scale", "0-5", "--encoding", "latin-1", "--no-rasch")
    assert res.exit_code == 0 and "Jos\u00e9" in res.stdout
    res = run("check", p, "--scale", "0-5", "--encoding", "klingon")
    assert res.exit_code == 2 and "--encoding: unknown encoding" in res.stderr


def test_a_latin1_file_is_adjusted_into_utf8_with_a_byte_order_mark(tmp_path):
    """The output is UTF-8 whatever the input's encoding; from a latin-1 file it had no byte-order mark,
    so Excel (which takes a CSV without one in the system's code page) showed "JosÃ©".  An ASCII file
    read with --encoding latin-1 stays without one."""
    p = tmp_path / "l.csv"
    p.write_bytes("paper;rater;score\r\n1;Jos\u00e9;2\r\n1;b;3\r\n2;Jos\u00e9;4\r\n2;b;4\r\n".encode("latin-1"))
    res = run("adjust", p, "--scale", "0-5", "--encoding", "latin-1", "--sep", "semicolon", "-m", "MN", "-o",
              tmp_path / "o.csv", "-q")
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "o.csv").read_bytes().decode("utf-8").splitlines() == [
        # MN: each rating moved by the mean of all (3.25) minus its rater's (José 3, b 3.5)
        # (a ';' file of whole scores: decimal commas, as the spreadsheet that wrote it reads them)
        "\ufeffpaper;rater;score;flag;MN;MN_paper", "1;Jos\u00e9;2;;2,2500;2,5000", "1;b;3;;2,7500;2,5000",
        "2;Jos\u00e9;4;;4,2500;4,0000", "2;b;4;;3,7500;4,0000"]
    q = tmp_path / "a.csv"
    q.write_bytes(b"paper,rater,score\n1,a,2\n1,b,3\n2,a,4\n2,b,4\n")
    res = run("adjust", q, "--scale", "0-5", "--encoding", "latin-1", "-m", "MN", "-o", tmp_path / "a_out.csv", "-q")
    assert res.exit_code == 0 and (tmp_path / "a_out.csv").read_bytes().startswith(b"paper,rater,score,flag,MN")


def test_semicolons(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("paper;rater;score\n1;a;2\n1;b;3\n2;a;4\n2;b;4\n")
    res = run("check", p, "--scale", "0-5", "--no-rasch", "--sep", "comma")
    assert res.exit_code == 2 and "give --sep semicolon" in res.stderr
    for sep in ("semicolon", ";", "auto"):   # (auto: the header's semicolons, as the app and the anchor reader read them)
        res = run("adjust", p, "--scale", "0-5", "--sep", sep, "-m", "MN", "-o", "-", "-q")
        assert res.exit_code == 0 and res.stdout.splitlines()[0] == "paper;rater;score;flag;MN;MN_paper"


def test_extra_columns_keep_their_whitespace(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text('paper,rater,score,comment\n 1 , a ,2,"  two spaces "\n1,b, 3 ,\tx\n')
    out = tmp_path / "o.csv"
    assert run("adjust", p, "--scale", "0-5", "-m", "NO", "-o", out, "-q").exit_code == 0
    rows = list(csv.reader(out.open()))
    # a tab-leading cell gets a leading ' (issue 30: a spreadsheet would take it for a formula)
    assert [r[3] for r in rows[1:]] == ["  two spaces ", "'\tx"]
    assert [r[:3] for r in rows[1:]] == [["1", "a", "2"], ["1", "b", "3"]]   # the key columns, stripped


def test_raters_sort_naturally():
    labels = ["R10", "R3", "R1", "r2", "R01", "7", "10", "B", "R2b", "R2a"]
    assert sorted(labels, key=_natural_key) == ["7", "10", "B", "R01", "R1", "R2a", "R2b", "R3", "R10", "r2"]


def test_check_lists_raters_in_natural_order(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text("paper,rater,score\n" + "".join(f"P{p},R{r},{(p + r) % 6}\n" for p in range(6)
                                                 for r in (1, 3, 10)))
    out = run("check", p, "--scale", "0-5", "--no-rasch").stdout
    order = [line.split()[0] for line in out.splitlines() if re.match(r"R[0-9]+ ", line)]
    assert order[:3] == ["R1", "R3", "R10"]   # the per-rater table first (the agreement table follows)


def test_help_lists_every_method():
    from ratercal_cli.methods import method_codes

    for cmd in ("adjust", "compare"):
        text = " ".join(run(cmd, "--help").stdout.split())
        assert all(f" {code}" in text for code in method_codes()), cmd
        assert "SEQP" in text and "PWEQP" in text


def test_method_recommended_follows_check(tmp_path):
    import json

    p = tmp_path / "g.csv"   # grade 1: 3 papers per rater (NO); grade 2: 30 per rater (TLI)
    lines = ["grade,paper,rater,score"]
    lines += [f"1,A{p},R{(p + k) % 4 + 1},{(p * 5 + 3 * k) % 6}" for p in range(6) for k in range(2)]
    lines += [f"2,B{p},R{(p + k) % 4 + 1},{min(5, p % 3 + 2 * (((p + k) % 4) // 2))}"   # R3, R4 two points up
              for p in range(60) for k in range(2)]
    p.write_text("\n".join(lines) + "\n")
    rep = json.loads(run("check", p, "--scale", "0-5", "--group-col", "grade", "--json").stdout)
    recs = [g["recommendation_label"] for g in rep["groups"]]
    how = [(g["recommendation"], g["recommendation_shrinkage"]) for g in rep["groups"]]
    out = tmp_path / "o.csv"
    res = run("adjust", p, "--scale", "0-5", "--group-col", "grade", "-m", "recommended,MN", "-o", out)
    assert res.exit_code == 0, res.stderr
    assert f"grade=1: recommended {recs[0]}" in res.stderr and f"grade=2: recommended {recs[1]}" in res.stderr
    rows = list(csv.DictReader(out.open()))
    # grade 2: the study's best at two raters a paper is MML (shrunk), but the file's scores are a formula
    # (every rater misfits the rater model), so the fit's say takes the study's best of the other methods
    assert recs == ["NO", "TLI (shrunk)"]
    assert rep["groups"][1]["sources"]["fit"]["changed"] == {"from": "MML (shrunk)", "to": "TLI (shrunk)"}
    assert list(rows[0])[-5:] == ["recommended", "recommended_paper", "MN", "MN_paper", "recommended_method"]
    assert [r["recommended_method"] for r in rows if r["grade"] in "12"] == \
        [recs[int(r["grade"]) - 1] for r in rows if r["grade"] in "12"]   # the method each line got
    for grade, (rec, shrinkage) in zip("12", how):
        ref = tmp_path / f"ref{grade}.csv"
        run("adjust", p, "--scale", "0-5", "--group-col", "grade", "-m", rec, "--shrinkage", shrinkage, "-o", ref,
            "-q")
        want = [r[rec] for r in csv.DictReader(ref.open()) if r["grade"] == grade]
        assert [r["recommended"] for r in rows if r["grade"] == grade] == want
    assert recs[0] == "NO" and recs[1] != "NO"


# -- 5. check at many raters and many groups -------------------------------------------
def test_ks_from_counts_is_scipys_ks_2samp():
    import numpy as np
    from scipy import stats

    from ratercal_cli.practice.diagnostics import KS_EXACT_MAX_N, ks_from_counts

    rng = np.random.default_rng(0)
    for shift in (0, 1):
        a = rng.integers(0, 6, KS_EXACT_MAX_N + 1)
        b = np.clip(rng.integers(0, 6, 30_000) + shift * rng.integers(0, 2, 30_000), 0, 5)
        want = stats.ks_2samp(a, b)
        got = ks_from_counts(np.bincount(a, minlength=6), np.bincount(b, minlength=6))
        assert got == (want.statistic, want.pvalue)


def test_per_rater_ks_uses_counts_only_for_large_samples():
    import numpy as np
    from scipy import stats

    from ratercal_cli.practice.diagnostics import per_rater_tests
    from ratercal_cli.ratings import Ratings

    rng = np.random.default_rng(1)
    n = 24_000
    rater = rng.integers(0, 3, n)
    score = np.clip(rng.integers(0, 5, n) + (rater == 2), 0, 5)
    data = Ratings(np.arange(n), rater, score, 5, n, 3)
    per = per_rater_tests(data)
    for j in range(3):
        want = stats.ks_2samp(score[rater == j], score[rater != j])
        assert (per["ks_d"][j], per["ks_p"][j]) == (want.statistic, want.pvalue)


def test_check_no_rasch_skips_the_fit(tmp_path):
    import json

    import numpy as np

    rng = np.random.default_rng(4)
    good = tmp_path / "r.csv"
    lines = ["paper,rater,score"]
    for p in range(120):
        q = rng.normal(2.5, 1.2)
        for r in rng.choice(5, 2, replace=False):
            lines.append(f"P{p},R{r + 1},{int(np.clip(np.rint(q + 0.4 * r - 0.8 + rng.normal(0, 0.6)), 0, 5))}")
    good.write_text("\n".join(lines) + "\n")
    full = json.loads(run("check", good, "--scale", "0-5", "--json").stdout)["groups"][0]
    quick = json.loads(run("check", good, "--scale", "0-5", "--json", "--no-rasch").stdout)["groups"][0]
    assert full["rasch_fit"] and not quick["rasch_fit"]
    assert quick["rasch_notes"] == ["skipped (--no-rasch)"]
    # the assignment's evidence needs the CML fits, the one recommendation the study's say (the rater model)
    model_based = ("rasch", "rater_report", "study", "assignment_found", "recommendation", "reasons", "sources",
                   "equivalent", "warranted_by")
    assert {k: v for k, v in quick.items() if not k.startswith(model_based)} == \
        {k: v for k, v in full.items() if not k.startswith(model_based)}
    # the rater model's Wald test of its severities counts among the tests where it is fitted
    assert full["warranted_by"] == quick["warranted_by"] + ["Wald chi-square of the rater model's severities, p < .001"]
    assert full["rater_report"]["fitted"] and not quick["rater_report"]["fitted"]
    assert quick["rater_report"]["reason"] == "skipped (--no-rasch)"
    assert quick["assignment_found"]["confounded"] is None and "--no-rasch" in quick["assignment_found"]["reason"]
    assert full["assignment_found"]["confounded"] is False
    text = run("check", good, "--scale", "0-5", "--no-rasch").stdout
    assert "Rasch fit per rater: not computed (skipped (--no-rasch))" in text


def test_many_groups_each_get_their_own_rows(tmp_path):
    p = tmp_path / "g.csv"
    lines = ["grade,paper,rater,score,note"]
    for g in range(300):
        lines += [f"{g},P{k},R{(k + j) % 3},{(g + k + 2 * j) % 6},n{g}" for k in range(4) for j in range(2)]
    p.write_text("\n".join(lines) + "\n")
    t = read_ratings_file(p, "0-5", Columns(group="grade"))
    assert [g.name for g in t.groups] == [str(g) for g in range(300)]
    for g in t.groups[::37]:
        assert {t.rows[i]["note"] for i in g.file_rows} == {f"n{g.name}"} and g.file_rows.size == 8
    out = tmp_path / "o.csv"
    assert run("adjust", p, "--scale", "0-5", "--group-col", "grade", "-m", "NO", "-o", out, "-q").exit_code == 0
    rows = list(csv.DictReader(out.open()))
    by = {}
    for r in rows:   # NO_paper: the mean of the paper's two scores within its grade
        by.setdefault((r["grade"], r["paper"]), []).append(int(r["score"]))
    assert all(float(r["NO_paper"]) == sum(by[r["grade"], r["paper"]]) / 2 for r in rows)


def test_cholesky_test_of_weak_directions_agrees_with_eigenvalues():
    import numpy as np

    from ratercal_cli.methods.cml import _below

    rng = np.random.default_rng(3)
    for _ in range(20):
        q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
        w = rng.uniform(0.001, 2.0, 12)
        pen = (q * w) @ q.T
        for t in (0.0005, 0.01, 0.5, 3.0):
            assert _below(pen, t) == bool((np.linalg.eigvalsh(pen) < t).any())


def test_compare_of_many_papers_row_by_row_equals_all_at_once(monkeypatch):
    import numpy as np

    from ratercal_cli.practice.compare import method_differences
    from ratercal_cli.report import mds

    X = np.random.default_rng(0).normal(size=(6, 5001))
    scores = {str(i): X[i] for i in range(6)}
    dense = method_differences(scores)
    monkeypatch.setattr(mds, "DENSE_DIFFERENCES", 10)
    rows = method_differences(scores)
    diff = X[:, None, :] - X[None, :, :]
    assert np.array_equal(rows.maxdiff, np.abs(diff).max(axis=2)) and np.array_equal(dense.maxdiff, rows.maxdiff)
    np.testing.assert_allclose(rows.rmsd, dense.rmsd, rtol=1e-13)


def test_a_column_named_order_with_blanks_is_not_taken_as_the_reading_order(tmp_path):
    p = tmp_path / "o.csv"
    p.write_text(THIRD.replace("A,r2,1,1", "A,r2,1,"))
    t = read_ratings_file(p, "0-5", resolve=True)
    assert t.order_column is None and t.flags[:3] == ["dropped", FLAG_RESOLVED, FLAG_RESOLVED]
    assert any("column order has blank cells" in w for w in t.warnings)
    with pytest.raises(InputError) as e:   # named by the user: a blank is an error
        read_ratings_file(p, "0-5", Columns(order="order"), resolve=True)
    assert (e.value.line, e.value.field) == (3, "order")
