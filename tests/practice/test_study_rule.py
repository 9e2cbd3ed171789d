"""The corrected study's advice in ``check``: the packaged numbers agree with the committed
summaries, a design maps to the study's facet levels, and the method and numbers cited."""

from pathlib import Path

import numpy as np
import pytest

from ratercal_cli.ratings import Ratings
from ratercal_cli.practice.study_rule import design_levels, extract, facet_table, study_recommendation

ROOT = Path(__file__).resolve().parents[2]


def test_packaged_numbers_are_the_committed_summaries():
    """ratercal_cli/data/corrected/facet_rmse.csv is extract(results/corrected) (regenerate with
    python -m ratercal_cli.practice.study_rule results/corrected ratercal_cli/data/corrected/facet_rmse.csv)."""
    assert [dict(r) for r in facet_table()] == extract(ROOT / "results" / "corrected")


def _design(raters_per_paper, papers, M, third=0, n_raters=9, seed=0):
    rng = np.random.default_rng(seed)
    paper, rater = [], []
    for p in range(papers):
        k = raters_per_paper + (1 if p < third else 0)
        for j in rng.choice(n_raters, k, replace=False):
            paper.append(p)
            rater.append(int(j))
    score = rng.integers(0, M + 1, len(paper))
    return Ratings(np.array(paper), np.array(rater), score, M, papers, n_raters)


def test_design_levels():
    d = design_levels(_design(2, 100, 5))
    assert (d["raters"], d["papers"], d["scale"], d["scope"]) == ("2", "100", "0-5", "multi-rater")
    assert d["papers_per_rater"] == pytest.approx(200 / 9, abs=4)
    assert design_levels(_design(2, 100, 5, third=5))["raters"] == "2+"
    d = design_levels(_design(3, 500, 9))
    assert (d["raters"], d["papers"], d["scale"]) == ("3", "500", "0-9")
    # 60 papers per rater with two per paper: nearer 111 (500 papers) than 22 (100) on a log scale
    assert design_levels(_design(2, 270, 5))["papers"] == "500"
    assert design_levels(_design(1, 100, 5))["scope"] == "one-rater"


def test_three_raters_per_paper_supports_the_pcm_with_the_studys_numbers():
    rec = study_recommendation(_design(3, 100, 5), model_fits=True, differ=True)
    assert rec["applies"] and rec["method"] == "PCM"
    # results/corrected/summary.csv, corrected PCM (WLE) at raters = 3: 0.448706 +- 0.000393, rank 1
    r3 = rec["levels"]["raters"]["method"]
    assert (r3["rmse"], r3["mcse"], r3["rank"], r3["replications"]) == (0.448706, 0.000393, 1, 1000)
    # on the 0-5 scale over all raters-per-paper levels the PCM is first too, 0.460827, TLI next 0.473103
    sc = rec["levels"]["scale"]
    assert sc["best"]["method"] == "PCM" and sc["best"]["rmse"] == 0.460827
    assert sc["runner_up"]["method"] == "TLI" and sc["runner_up"]["rmse"] == 0.473103
    assert "PCM 0.4487 +- 0.0004 (rank 1)" in "\n".join(rec["lines"])
    # the beyond-1990 model-based fits are cited with their failures (results/corrected/beyond1990/
    # summary.csv, 200 replications): CML (WLE, shrinkage none) at 3 raters failed 8 of 1,600; MML at its EAP
    # (shrinkage kelley, what adjust -m MML gives) none, and it has the smallest RMSE of the Kelley-shrunk methods
    cml = next(m for m in rec["model_based"] if m["method"] == "CML")
    assert (cml["failed"], cml["sets"], cml["rmse"], cml["shrinkage"]) == (8, 1600, 0.479147, "none")
    mml = next(m for m in rec["model_based"] if m["method"] == "MML")
    assert (mml["failed"], mml["sets"], mml["rmse"], mml["shrinkage"]) == (0, 1600, 0.421106, "kelley")
    assert "model-based MML (beyond-1990 run, 200 replications, EAP fair averages, ranked among the Kelley-shrunk " \
           "methods) at 3 rater(s) per paper: 0.4211 +- 0.0008, fitted on all 1,600 data sets (rank 1 of that run's " \
           "methods)" in "\n".join(rec["lines"])


def test_two_raters_per_paper_supports_the_pcm_and_third_readings_tli():
    rec = study_recommendation(_design(2, 100, 9), model_fits=True, differ=True)
    assert rec["method"] == "PCM"
    assert rec["levels"]["raters"]["method"]["rmse"] == 0.607902
    assert rec["levels"]["raters"]["runner_up"]["method"] == "TLI"
    assert rec["levels"]["scale"]["method"]["rmse"] == 0.717538   # PCM, 0-9
    assert rec["levels"]["scale"]["best"]["method"] == "TLI"      # 0.713713: TLI over all raters levels


def test_no_advice_unless_the_model_fits_and_raters_differ():
    r = _design(2, 100, 5)
    no_fit = study_recommendation(r, model_fits=False, differ=True, model_reason="unlinked raters")
    assert not no_fit["applies"] and "unlinked raters" in no_fit["lines"][0]
    same = study_recommendation(r, model_fits=True, differ=False)
    assert not same["applies"] and same["lines"] == []


def test_one_paper_read_many_times_does_not_make_a_design_of_third_readings():
    """299 papers read twice and one six times took the study's cells of third readings ("the nearest, by the most
    common number of readings", which is two: a researcher tester); papers read three times, however few, are
    the district's third readings and do."""
    import numpy as np

    from ratercal_cli.practice.study_rule import design_levels
    from ratercal_cli.ratings import Ratings

    def levels(extra):
        paper = np.repeat(np.arange(300), 2)
        rater = (paper + np.tile([0, 1], 300)) % 10
        for p, k in extra:
            paper, rater = np.r_[paper, [p] * k], np.r_[rater, (np.arange(k) + 2 + p) % 10]
        return design_levels(Ratings(paper=paper, rater=rater, score=np.ones(paper.size, dtype=np.int64),
                                     max_score=5, n_papers=300, n_raters=10))

    d = levels([(0, 4)])
    assert d["raters"] == "2" and not d["exact"]
    assert "(299 read twice, 1 read 6 times); the nearest, by the most common number of readings, is its cells " \
           "with two readings on every paper:" in d["note"]
    d = levels([(p, 1) for p in range(2)])   # (two papers read three times)
    assert d["raters"] == "2+" and d["exact"]
    d = levels([(0, 4), (1, 1)])
    assert d["raters"] == "2+" and not d["exact"]


def test_the_studys_scale_is_said_beside_the_files_own():
    """A file scored 1-6 read as the study's 0-5 cells: "scale 0-5" alone read as a mistake (a staff tester)."""
    r = _design(2, 100, 5)
    head = next(line for line in study_recommendation(r, model_fits=True, differ=True)["lines"]
                if line.startswith("CORRECTED STUDY supports"))
    assert "scale 0-5)" in head and "this file's" not in head
    shifted = Ratings(r.paper, r.rater, r.score, 5, r.n_papers, r.n_raters, scale_low=1)
    head = next(line for line in study_recommendation(shifted, model_fits=True, differ=True)["lines"]
                if line.startswith("CORRECTED STUDY supports"))
    assert "scale 0-5 ~ this file's 1-6)" in head


def test_the_confounded_advice_cites_the_committed_rater_effects_study():
    """The advice for a file whose papers went to raters by quality cited "PCM 0.259 against NO 0.431", numbers
    of a run since replaced (a staff helper found them in no results file): it cites the packaged copy of
    results/corrected/rater_effects/summary.csv."""
    import csv

    from ratercal_cli.practice.check import check
    from ratercal_cli.practice.study_rule import cited_rmse

    with open(ROOT / "results" / "corrected" / "rater_effects" / "summary.csv", newline="") as fh:
        rows = {(r["shrinkage"], r["method"]): float(r["rmse"]) for r in csv.DictReader(fh)
                if (r["variant"], r["scope"], r["facet"]) == ("corrected", "multi-rater", "all")}
    assert cited_rmse("rater_effects", "PCM", "kelley") == rows["kelley", "PCM"]
    assert cited_rmse("rater_effects", "NO") == rows["none", "NO"]
    import io

    import pandas as pd
    from support import confounded_csv

    frame = pd.read_csv(io.StringIO(confounded_csv()))   # (the weakest papers read by a harsh rater)
    text = check(Ratings.from_frame(frame, scale="1-6")).summary()
    assert (f"(the rater-effects study, assignment by quality: PCM (shrunk) {rows['kelley', 'PCM']:.3f} against the "
            f"scores left alone {rows['none', 'NO']:.3f})") in text
