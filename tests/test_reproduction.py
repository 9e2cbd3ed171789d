"""The faithful study reproduces the published Tables 7 and 12."""

from support import published

from ratercal_cli.criteria import table_round
from ratercal_cli.study.files import read_columns
from ratercal_cli.vocabulary import ONE_RATER_METHODS, adjusted_columns


def test_faithful_methods_reproduce_555_of_576_published_values(faithful_run):
    import csv

    with open(faithful_run.root / "score" / "scores.csv", newline="") as fh:
        got = {(r["set"], r["method"]): r for r in csv.DictReader(fh)}
    hits, misses = 0, []
    for name, column in (("table7_rmse.csv", "rmse"), ("table12_maxdiff.csv", "maxdiff")):
        for row in published(name):
            for method, value in row.items():
                if method in ("set", "code") or not value:
                    continue
                mine = got.get((row["code"], method))
                regenerated = table_round(float(mine[column])) if mine else None
                if regenerated == float(value):
                    hits += 1
                else:
                    misses.append(f"{name[:7]} {row['set']} {method}: published {value}, regenerated {regenerated}")
    print(f"{hits} of 576 reproduced; misses:\n  " + "\n  ".join(misses))
    assert hits + len(misses) == 576
    assert hits >= 555, "\n".join(misses)
    # the misses are the known ones: set 2151 (no start state reproduces it), 1151 LI,
    # 0151 NO RMSE and 0192 NO maximum
    assert all(" 2151 " in m or m.split()[1:3] in (["1151", "LI:"], ["2+151", "NO:"], ["2+192", "NO:"])
               for m in misses)


def test_one_rater_sets_run_only_the_six_single_rating_methods(faithful_run):
    import json

    meta = json.loads((faithful_run.root / "1551" / "equate" / "faithful" / "methods.json").read_text())
    assert meta["methods"] == ["NO", "MN", "TMN", "LI", "TLI", "EQP"]
    assert set(meta["skipped"]) == {"OLS", "TLS", "RAS", "PCM"}


def test_equate_files_hold_rating_and_paper_scores(faithful_run):
    paper, score, adj, padj = read_columns(faithful_run.root / "3551" / "equate" / "faithful" / "adjusted.csv",
                                           ["paper", "score", "MN", "MN_paper"], [int, int, float, float])
    assert len(paper) == 1500
    # MN's paper score is the mean of its three adjusted ratings
    import numpy as np

    means = np.bincount(paper, weights=adj)[1:] / 3
    assert np.allclose(padj, means[paper - 1])
    # the PCM's is not: its paper score comes from the paper's quality
    pcm, pcm_paper = read_columns(faithful_run.root / "3551" / "equate" / "faithful" / "adjusted.csv",
                                  ["PCM", "PCM_paper"], [float, float])
    assert not np.allclose(pcm_paper, (np.bincount(paper, weights=pcm)[1:] / 3)[paper - 1])
    # a one-rater set has the columns of the six methods run on it, in the study's order
    with open(faithful_run.root / "1551" / "equate" / "faithful" / "adjusted.csv") as fh:
        assert fh.readline().strip() == "paper,rater,score," + ",".join(adjusted_columns(ONE_RATER_METHODS))
