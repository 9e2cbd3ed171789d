"""``adjust -m recommended`` on a rubric (issue 29): each criterion gets ``check``'s one recommendation
for it, applied as ``check --simulate`` ranks it on a rubric (MML/MFRM the many-facet model over all the
criteria, multi-group where the assignment is confounded with clusters).  Before, a rubric was refused
("recommended is not available with facets")."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from confounded import rubric
from ratercal_cli.practice.adjust import adjust
from ratercal_cli.practice.check import check
from ratercal_cli.practice.simulate import rubric_level_scores
from ratercal_cli.ratings import Ratings
from support import run

CRITERIA = ["style", "org", "conv", "sent_form"]


def _example():
    import ratercal_cli as rc

    with pytest.warns(UserWarning, match="wide row"):
        return rc.read_ratings("examples/rubric_year1.csv", scale="1-6", paper_col="student", score_cols=CRITERIA)


@pytest.mark.slow   # check and three fits of the 1,000-paper example (about 5 s)
def test_recommended_on_the_example_rubric_is_checks_decision():
    """examples/rubric_year1.csv: check recommends MML shrunk (the study) in every criterion; adjust's
    ``recommended`` scores are then the many-facet MML's at its EAP (``-m MML``, Kelley's level), not
    the MFRM's."""
    r = _example()
    decisions = {rep.decision.label for rep in check(r).reports}
    assert decisions == {"MML (shrunk)"}
    g = adjust(r, ["recommended", "MML", "MFRM"]).groups[0]
    assert g.recommended == "MML (shrunk)"
    rec = g.cells["recommended"][1]
    np.testing.assert_array_equal(rec, g.cells["MML"][1])
    scores, errors = rubric_level_scores(r, ["MML"], ["kelley", "none"])
    assert not errors
    np.testing.assert_allclose(rec, scores[("kelley", "MML")], rtol=0, atol=1e-12)
    assert np.nanmax(np.abs(rec - scores[("none", "MML")])) > 0.05   # the level matters
    assert np.nanmax(np.abs(rec - g.cells["MFRM"][1])) > 0.1          # and so does the method
    cell, _ = r.facet_cells()
    np.testing.assert_array_equal(g.adjusted["recommended"].rating, rec[r.paper, cell])


def test_cli_writes_the_rubrics_recommended_columns(tmp_path):
    out = tmp_path / "adj.csv"
    res = run("adjust", "examples/rubric_year1.csv", "--scale", "1-6", "--paper-col", "student", "--score-cols",
              ",".join(CRITERIA), "-m", "recommended", "-o", out)
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(out.open()))
    assert {row["recommended_method"] for row in rows} == {"MML (shrunk)"}
    assert [c for c in rows[0] if c.endswith("_recommended")] == [f"{c}_recommended" for c in CRITERIA]
    r = _example()
    g = adjust(r, "MML").groups[0]
    first = {c: float(rows[0][f"{c}_recommended"]) for c in CRITERIA}
    _, labels = r.facet_cells()
    p = r.paper_ids.index(rows[0]["student"])
    for k, lab in enumerate(labels):
        assert first[lab[0]] == pytest.approx(g.cells["MML"][1][p, k] + 1, abs=1e-4)


def _rmse(scores, truth, low=1):
    return float(np.sqrt(np.nanmean((scores + low - truth) ** 2)))


def test_recommended_on_a_school_confounded_rubric_beats_no():
    """tests/confounded.py's rubric (six schools each read mostly by its own pair of raters, graded
    response scores): every criterion's check finds the confound and recommends the multi-group MML;
    applied over the rubric its RMSE against the hidden truth is 0.266, NO's 0.540, the single-group
    many-facet MML's 0.323."""
    d = rubric(1, papers=120)
    r = Ratings.from_frame(d.frame, scale="1-6", facet_cols=["criterion"])
    assert {rep.decision.label for rep in check(r).reports} == {"MML (multi-group, shrunk)"}
    g = adjust(r, ["recommended", "NO", "MML"]).groups[0]
    assert g.recommended == "MML (multi-group, shrunk)"
    _, labels = r.facet_cells()
    truth = d.truth.loc[list(r.paper_ids), [lab[0] for lab in labels]].to_numpy()
    rec, no, single = (_rmse(g.cells[k][1], truth) for k in ("recommended", "NO", "MML"))
    assert rec <= no - 0.2, (rec, no)
    assert rec < single, (rec, single)


def test_recommended_on_a_rubric_with_a_cluster_column():
    """``--cluster-col school`` on a rubric: each criterion's clusters are the schools, the applied
    recommendation the multi-group MML about them, no worse than NO."""
    d = rubric(2, papers=120)
    r = Ratings.from_frame(d.frame, scale="1-6", facet_cols=["criterion", "school"])
    g = adjust(r, ["recommended", "NO"], cluster="school").groups[0]
    assert g.recommended == "MML (multi-group, shrunk)"
    labels = g.cells["recommended"][0]
    truth = d.truth.loc[list(g.ratings.paper_ids), [lab[0] for lab in labels]].to_numpy()
    assert _rmse(g.cells["recommended"][1], truth) <= _rmse(g.cells["NO"][1], truth) - 0.2


def test_shrinkage_on_a_rubric_and_a_recommendation_within_criteria():
    """A rubric whose assignment is random (tests/confounded.py, ``own=None``): check recommends TLI
    shrunk in every criterion; ``recommended`` is then ``-m TLI --shrinkage kelley``: Kelley's formula
    on each criterion's own TLI scores, each rating moved by as much as its paper's criterion score.
    Before, ``--shrinkage`` was ignored on a rubric (``-m MML --shrinkage none`` gave the EAP)."""
    from ratercal_cli.methods.shrinkage import kelley
    from ratercal_cli.practice.rubric import cell_parts

    d = rubric(3, papers=120, own=None)
    r = Ratings.from_frame(d.frame, scale="1-6", facet_cols=["criterion"])
    g = adjust(r, "recommended").groups[0]
    assert g.recommended == "TLI (shrunk)"
    own = adjust(r, ["TLI", "MML"]).groups[0]
    shrunk = adjust(r, "TLI", shrinkage="kelley").groups[0]
    np.testing.assert_array_equal(g.cells["recommended"][1], shrunk.cells["TLI"][1])
    np.testing.assert_array_equal(g.adjusted["recommended"].rating, shrunk.adjusted["TLI"].rating)
    cell, _ = r.facet_cells()
    for c, (_, part) in enumerate(cell_parts(r)):
        papers = np.unique(r.paper[cell == c])
        want = kelley(adjust(part, "TLI").groups[0].adjusted["TLI"].paper, part, "additive")[0]
        np.testing.assert_allclose(shrunk.cells["TLI"][1][papers, c], want, rtol=0, atol=1e-12)
    move = (shrunk.cells["TLI"][1] - own.cells["TLI"][1])[r.paper, cell]
    assert np.abs(move).max() > 0.05
    np.testing.assert_allclose(shrunk.adjusted["TLI"].rating - own.adjusted["TLI"].rating, move, atol=1e-12)
    wle = adjust(r, "MML", shrinkage="none").groups[0]
    est = own.estimators["MML"][0]
    from ratercal_cli.practice.rubric import model_cell_scores
    np.testing.assert_allclose(wle.cells["MML"][1], model_cell_scores(est, r, est.quality_wle_), atol=1e-9)
    assert np.nanmax(np.abs(wle.cells["MML"][1] - own.cells["MML"][1])) > 0.05


def _rows(groups, seed):
    import random

    rng = random.Random(seed)
    out = ["grp,paper,rater,criterion,score"]
    for g, papers, pairs, criteria in groups:
        for p in range(papers):
            for r in (pairs[p % len(pairs)] if pairs else rng.sample(["R1", "R2", "R3", "R4", "R5", "R6"], 2)):
                out += [f"{g},{g}-{p},{r},{c},{rng.randint(1, 4)}" for c in criteria]
    return "\n".join(out) + "\n"


def test_a_group_without_a_criterion_or_with_unlinked_raters_is_said_not_a_traceback(tmp_path):
    """A researcher's rubric files with groups: a 5-paper group never scored on criterion c made check end in an
    IndexError (its many-facet table indexed a level the group's fit did not have), as adjust --html and compare
    --html did; a 3-paper group whose raters share no paper stopped the check of every group with an error that
    did not name it.  The first group's table shows c as not rated; the second group's model is said not fitted,
    and the other group is checked."""
    import json

    from support import run

    missing = tmp_path / "missing.csv"
    missing.write_text(_rows([("g1", 5, None, "ab"), ("g2", 60, None, "abc")], 1))
    out = run("check", missing, "--scale", "1-4", "--group-col", "grp", "--facet-col", "criterion", "--json", "-q")
    assert out.exit_code == 0, out.output
    rub = {x["group"]: x for x in json.loads(out.stdout)["rubric"]}
    c = next(row for row in rub["g1"]["facets"]["criterion"] if row["level"] == "c")
    assert c["count"] == 0 and c["difficulty"] is None and rub["g2"]["facets"]["criterion"][2]["count"] > 0
    unlinked = tmp_path / "unlinked.csv"
    unlinked.write_text(_rows([("g1", 3, [("R1", "R2"), ("R3", "R4"), ("R5", "R6")], "xy"), ("g2", 200, None, "xy")], 2))
    out = run("check", unlinked, "--scale", "1-4", "--group-col", "grp", "--facet-col", "criterion", "-q")
    assert out.exit_code == 0, out.output
    assert "grp=g1\n\nMany-facet Rasch model: not fitted (MML (RSM): raters R3, R4, R5, R6 not linked" in out.stdout
    assert "grp=g2, criterion=y: recommended" in out.stdout
    html = run("adjust", unlinked, "--scale", "1-4", "--group-col", "grp", "--facet-col", "criterion", "-m", "TLI",
               "-o", tmp_path / "o.csv", "--html", tmp_path / "o.html", "-q")
    assert html.exit_code == 0, html.output


def test_each_line_of_a_rubric_says_its_own_criterions_method(tmp_path):
    """The adjusted file's ``recommended_method`` says the method each line got; on a rubric whose criteria got
    different ones every line carried the joined "criterion=C1: ...; criterion=C2: ..." (a researcher tester).  A
    long file's line (one criterion) now says its criterion's; a wide file's line (every criterion) the joined
    label."""
    d = rubric(4, papers=300, school_means=np.linspace(-0.3, 0.3, 6))
    r = Ratings.from_frame(d.frame, scale="1-6", facet_cols=["criterion"])
    own = {rep.group.split("=", 1)[1]: rep.decision.label for rep in check(r).reports}
    assert len(set(own.values())) == 2, own   # (the criteria's methods differ)
    long = tmp_path / "long.csv"
    d.frame.to_csv(long, index=False)
    out = run("adjust", long, "--scale", "1-6", "--facet-col", "criterion", "-m", "recommended", "-o",
              tmp_path / "long_out.csv", "-q")
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(open(tmp_path / "long_out.csv", newline="")))
    assert rows and all(row["recommended_method"] == own[row["criterion"]] for row in rows)
    wide = tmp_path / "wide.csv"
    d.frame.pivot_table(index=["paper", "rater"], columns="criterion", values="score", sort=False).reset_index() \
        .to_csv(wide, index=False)
    out = run("adjust", wide, "--scale", "1-6", "--score-cols", "C1,C2,C3", "-m", "recommended", "-o",
              tmp_path / "wide_out.csv", "-q")
    assert out.exit_code == 0, out.output
    joined = "; ".join(f"criterion={c}: {own[c]}" for c in ("C1", "C2", "C3"))
    rows = list(csv.DictReader(open(tmp_path / "wide_out.csv", newline="")))
    assert rows and {row["recommended_method"] for row in rows} == {joined}, {row["recommended_method"] for row in rows}
