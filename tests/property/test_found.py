"""Defects the property suite found, each kept as a plain regression test (they fail before the
fix named in their docstring and pass after)."""

from click.testing import CliRunner

from support import CLI, run

# found by test_invariance (design: 4 papers, 6 raters, 2 a paper, 2 groups, scale 0-1): in group G2
# every rater has one rating, so CML fits nothing (all_thin_) and has no qualities; paper_uncertainty
# asked for them anyway -> AttributeError: 'ConditionalPCM' object has no attribute 'quality_'
ALL_THIN = """group,paper,rater,order,score
G1,P1,R4,1,0
G1,P1,R6,2,1
G2,P2,R4,1,0
G2,P2,R5,2,1
G1,P3,R4,1,0
G1,P3,R1,2,1
G2,P4,R2,1,1
G2,P4,R1,2,1
"""


def test_a_group_of_thin_raters_gets_no_paper_se_and_no_traceback(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(ALL_THIN)
    for m in ("CML", "RSM", "MML", "MFRM"):
        res = run("adjust", f, "--scale", "0-1", "--group-col", "group", "-m", f"all,{m}", "-o", tmp_path / "o.csv")
        assert res.exit_code == 0, (m, res.output)
        assert f"methods NO MN TMN LI TLI EQP OLS TLS RAS PCM {m}" in res.output


# found by test_commands (4 papers, 3 raters read each, 3 groups, scale 0-1): within each group every
# rater has one rating, CML fits nothing (all_thin_), and the rater report asked for its result_ ->
# AttributeError: 'ConditionalPCM' object has no attribute 'result_' from `ratercal check`
THIN_GROUPS = """group,paper,rater,order,score
G1,P1,R1,1,0
G1,P1,R2,2,1
G1,P1,R3,3,1
G2,P2,R1,1,1
G2,P2,R2,2,0
G2,P2,R3,3,1
G3,P3,R1,1,0
G3,P3,R2,2,0
G3,P3,R3,3,1
G1,P4,R1,1,1
"""


def test_check_says_why_the_rater_model_was_not_fitted_when_every_rater_has_one_rating(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(THIN_GROUPS.replace("G1,P4,R1,1,1\n", ""))
    res = run("check", f, "--scale", "0-1", "--group-col", "group", "--json")
    assert res.exit_code == 0, res.output
    import json

    reports = [g["rater_report"] for g in json.loads(res.stdout)["groups"]]
    assert all(not r["fitted"] and "only one rating" in r["reason"] for r in reports)


# found by test_commands (4 papers, 3 raters, 2 a paper, 2 groups, scale 0-2): a rater with one rating
# is left out of the joint many-facet fit of the rater x group table, whose expectations then had one
# rating fewer than the table -> ValueError: operands could not be broadcast together (check.py)
THIN_RATER_GROUPS = """group,paper,rater,order,score
G1,P1,R1,1,2
G1,P1,R2,2,1
G2,P2,R1,1,0
G2,P2,R2,2,1
G1,P3,R2,1,2
G1,P3,R1,2,1
G2,P4,R2,1,0
G2,P4,R3,2,2
"""


def test_the_rater_by_group_table_leaves_a_thin_rater_out(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(THIN_RATER_GROUPS)
    res = run("check", f, "--scale", "0-2", "--group-col", "group")
    assert res.exit_code == 0, res.output


# found by test_commands (4 papers read once, 2 raters, 2 criteria, scale 0-1): adjust --html wrote the
# adjusted file, then building the page's check failed (the rubric's raters share no paper) and exited 2
# with the file left behind -- half the outputs of a failed command
UNLINKED_RUBRIC = """paper,rater,order,criterion,score
P1,R1,1,c1,1
P1,R1,1,c2,0
P2,R2,1,c1,0
P2,R2,1,c2,1
P3,R1,1,c1,0
P3,R1,1,c2,0
P4,R2,1,c1,1
P4,R2,1,c2,1
"""


def test_adjust_html_that_fails_writes_nothing(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(UNLINKED_RUBRIC)
    res = CliRunner().invoke(CLI, ["adjust", str(f), "--scale", "0-1", "--facet-col", "criterion", "-m", "NO", "-o",
                                   str(tmp_path / "o.csv"), "--html", str(tmp_path / "a.html"), "--cut", "0.5"])
    assert res.exit_code == 2 and "not linked" in res.stderr
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "a.html").exists()
