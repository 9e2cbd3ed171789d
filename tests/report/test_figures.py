"""Figures, the MDS map and the whole report: numbers against hand computations, files deterministic."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from ratercal_cli.report import MARK, build_report, figures, method_distances
from ratercal_cli.report.mds import classical_mds, rmsd_matrix

from conftest import METHODS
from support import write_design

PNG = b"\x89PNG\r\n\x1a\n"


def _pairwise(x):
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))


def test_mds_collinear_by_hand():
    # points 0, 1, 3 on a line: centred coordinates -4/3, -1/3, 5/3; the farthest (5/3) is positive
    d = np.array([[0, 1, 3], [1, 0, 2], [3, 2, 0]], dtype=float)
    coords, lam = classical_mds(d)
    assert coords[:, 0] == pytest.approx([-4 / 3, -1 / 3, 5 / 3])
    assert coords[:, 1] == pytest.approx([0, 0, 0], abs=1e-7)
    assert lam[0] == pytest.approx(16 / 9 + 1 / 9 + 25 / 9)  # sum of squared centred coordinates


def test_mds_recovers_planar_configuration():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, 2)) * [3, 1]
    coords, lam = classical_mds(_pairwise(x))
    assert _pairwise(coords) == pytest.approx(_pairwise(x), abs=1e-9)
    assert lam[2:] == pytest.approx(0, abs=1e-9)
    # the signs do not depend on the input's orientation
    flipped, _ = classical_mds(_pairwise(-x))
    assert flipped == pytest.approx(coords, abs=1e-9)
    for a in range(2):
        big = np.argmax(np.abs(coords[:, a]))
        assert coords[big, a] > 0


def test_mds_rejects_bad_input():
    with pytest.raises(ValueError):
        classical_mds(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        classical_mds(np.array([[0, np.nan], [np.nan, 0]]))


def test_rmsd_matrix_by_hand():
    x = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, -1.0, -1.0], [2.0, 0.0, 2.0, 0.0]])
    m = rmsd_matrix(x)
    assert m[0, 1] == pytest.approx(1.0) and m[0, 2] == pytest.approx(np.sqrt(2.0))
    assert m[1, 2] == pytest.approx(np.sqrt((1 + 1 + 9 + 1) / 4))
    assert np.allclose(m, m.T) and np.allclose(np.diag(m), 0)


def test_method_distances_average_over_sets(run):
    root, _, _ = run
    sets = ["2151", "3152"]
    labels, mat, n = method_distances(root, sets, METHODS, "faithful")
    assert labels[-1] == "TRUE" and n == 2
    expect = 0.0
    for s in sets:
        true = np.loadtxt(root / s / "truegen" / "true_scores.csv", delimiter=",", skiprows=1)[:, 1]
        table = np.loadtxt(root / s / "equate" / "faithful" / "adjusted.csv", delimiter=",", skiprows=1)
        eqp = table[::2, 3 + 2 * 5 + 1]   # paper, rater, score, then NO, NO_paper, ... EQP is the sixth method
        expect += np.sqrt(np.mean((eqp - true) ** 2)) / 2
    assert mat[labels.index("EQP"), labels.index("TRUE")] == pytest.approx(expect)
    assert method_distances(root, ["1151"], METHODS, "faithful") is None  # one-rater sets have no equate files here


def test_rasch_extension_matches_the_text():
    """p. 16: quality 1.0 gives expected scores 4.4, 3.7 and 2.5 from raters of stringency -1, 0, 1 (M = 5)."""
    r = figures.rasch_expected_score(1.0, np.array([-1.0, 0.0, 1.0]), 5)
    assert np.round(r, 1).tolist() == [4.4, 3.7, 2.5]


def test_figures_are_deterministic_pngs(tmp_path):
    a = figures.rasch_extension_figure(tmp_path / "a.png")
    b = figures.rasch_extension_figure(tmp_path / "b.png")
    data = a.read_bytes()
    assert data.startswith(PNG) and data == b.read_bytes()
    assert b"Software" not in data and b"matplotlib" not in data


def test_a_failed_report_stops_the_figures_it_started(tmp_path):
    """``FigureBatch.start`` forks a worker for the figures noted so far; leaving the batch (a
    report that failed half-way) stops and reaps it, and draws nothing more."""
    import os

    from ratercal_cli.parallel import start_method

    with figures.FigureBatch() as batch:
        assert batch.add(figures.pcm_probability_figure, tmp_path / "late.png", 9) == tmp_path / "late.png"
        batch.start(2)
        background = batch.background
        assert (background is not None) == (start_method() == "fork")   # else drawn at the end, in a pool
        pids = list(background.workers.values()) if background is not None else []
        batch.add(figures.rasch_extension_figure, tmp_path / "never.png")
    assert batch.background is None and batch.notes == []
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)   # stopped and reaped
    assert not (tmp_path / "never.png").exists()


def test_a_batch_draws_what_it_noted_as_drawing_at_once_would(tmp_path):
    batch = figures.FigureBatch()
    noted = [batch.add(figures.rasch_extension_figure, tmp_path / f"{k}.png", 5, (-k, 0.0, k)) for k in (1, 2)]
    assert not any(p.exists() for p in noted)
    batch.draw(2)
    for k, p in zip((1, 2), noted):
        assert p.read_bytes() == figures.rasch_extension_figure(tmp_path / "now.png", 5, (-k, 0.0, k)).read_bytes()


def _digest(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_build_report_twice_gives_identical_files(run, tmp_path):
    root, _, _ = run
    s1 = build_report(root, tmp_path / "r1", quiet=True, jobs=1)  # serial; r2 draws in two processes
    # a stale file named like the report's own is removed by the next build; a user's files,
    # even of the same types, are left alone
    (tmp_path / "r2" / "figures").mkdir(parents=True)
    (tmp_path / "r2" / "tables").mkdir(parents=True)
    (tmp_path / "r2" / MARK).write_text("")   # (a report's folder: another folder with files is refused)
    (tmp_path / "r2" / "figures" / "fig09_old.png").write_bytes(PNG)
    (tmp_path / "r2" / "tables" / "table99_old.tex").write_text("x")
    mine = {"figures/notes.txt": b"mine", "figures/my_plot.png": PNG, "tables/my_sums.csv": b"a,b\n"}
    for name, data in mine.items():
        (tmp_path / "r2" / name).write_bytes(data)
    s2 = build_report(root, tmp_path / "r2", quiet=True, jobs=2)
    assert not (tmp_path / "r2" / "figures" / "fig09_old.png").exists()
    assert not (tmp_path / "r2" / "tables" / "table99_old.tex").exists()
    for name, data in mine.items():
        assert (tmp_path / "r2" / name).read_bytes() == data
        (tmp_path / "r2" / name).unlink()
    assert s1 == s2
    assert s1["faithful"]["figures"][:3] == ["figures/fig03_rasch_extension.png", "figures/fig04_pcm_probabilities_M5.png",
                                             "figures/fig04_pcm_probabilities_M9.png"]   # the report's order
    d1, d2 = _digest(tmp_path / "r1"), _digest(tmp_path / "r2")
    assert d1 == d2
    names = set(d1)
    from ratercal_cli.report import OWN_NAMES

    for name in names:   # every file the report writes is one a later build may prune
        sub, _, base = name.partition("/")
        assert sub not in OWN_NAMES or OWN_NAMES[sub].fullmatch(base), name
    for stem in ("table07_rmse", "table08_rmse_by_facet", "table09_rater_level", "table10_rater_spread",
                 "table11_correlation", "table12_maxdiff", "table13_maxdiff_by_facet",
                 "table14_one_rater_rmse", "rmsd_between_methods"):
        for ext in ("md", "csv", "tex"):
            assert f"tables/{stem}.{ext}" in names
    for fig in ("fig03_rasch_extension", "fig04_pcm_probabilities_M5", "fig04_pcm_probabilities_M9",
                "fig05_expected_scores", "rmse_by_facet", "maxdiff_by_facet", "mds_methods"):
        assert f"figures/{fig}.png" in names
        assert (tmp_path / "r1" / "figures" / f"{fig}.png").read_bytes().startswith(PNG)
    # a synthetic run is not the Denny study: no comparison
    assert not any(n.startswith("comparison/") for n in names)
    report = (tmp_path / "r1" / "report.md").read_text()
    assert "Table 7" in report and "![" in report and str(tmp_path) not in report
    # tables only: earlier figures stay, stale tables go
    (tmp_path / "r1" / "figures" / "fig09_old.png").write_bytes(PNG)
    (tmp_path / "r1" / "tables" / "table99_old.csv").write_text("x")
    build_report(root, tmp_path / "r1", quiet=True, draw=False)
    assert (tmp_path / "r1" / "figures" / "fig09_old.png").exists()
    assert not (tmp_path / "r1" / "tables" / "table99_old.csv").exists()


@pytest.mark.slow
def test_denny_like_run_gets_the_comparison(tmp_path):
    """A faithful run whose scores equal the published Table 7/12 values reproduces them all."""
    import csv

    from ratercal_cli.report.tables import published_table

    t7, t12 = published_table("table07_rmse"), published_table("table12_maxdiff")
    write_design(tmp_path / "run", [k[0] for k in t7.index])
    (tmp_path / "run" / "score").mkdir(parents=True)
    with open(tmp_path / "run" / "score" / "scores.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["set", "method", "variant", "rmse", "r", "maxdiff"])
        for (code,), m in itertools.product(t7.index, t7.columns):
            v = t7.get((code,), m)
            if np.isfinite(v):
                # 0.004 above rounds back to the published value (0.0049 would not: half-up to 3
                # decimals first makes 0.9749 0.975, then 0.98); one cell is made to miss
                extra = 0.02 if (code, m) == ("2151", "NO") else 0.004
                w.writerow([code, m, "faithful", v + extra, 0.9, t12.get((code,), m)])
    summary = build_report(tmp_path / "run", tmp_path / "out", quiet=True, draw=False)["faithful"]
    n7, m7 = summary["comparisons"]["table07_rmse"]
    assert (n7, m7) == (287, 288)
    assert summary["comparisons"]["table12_maxdiff"] == (288, 288)
    md = (tmp_path / "out" / "comparison" / "table07_rmse.md").read_text()
    assert "287 of 288 published values reproduced" in md
    assert "| 2151 | **0.64** (0.62) |" in md
    assert "287 of 288" in (tmp_path / "out" / "report.md").read_text()


def test_mds_figure_serves_compare_too(tmp_path):
    """One map for the report and ``compare --png``: deterministic bytes, no matplotlib version inside,
    coincident methods labelled together."""
    coords = np.array([[0.0, 0.1], [0.2, -0.1], [0.2001, -0.1]])
    a = figures.mds_figure(tmp_path / "m" / "a.png", ["NO", "LI", "TLI"], coords, "t", np.array([2.0, 1.0, 0.0]))
    b = figures.mds_figure(tmp_path / "m" / "b.png", ["NO", "LI", "TLI"], coords, "t", np.array([2.0, 1.0, 0.0]))
    data = a.read_bytes()
    assert data.startswith(PNG) and data == b.read_bytes() and b"atplotlib" not in data
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["a.png", "b.png"]   # no temporaries
    # LI and TLI are 0.0001 apart on a map 0.2 wide: one label; NO alone
    assert figures._coincident(coords, 0.03 * 0.2) == [[0], [1, 2]]
    assert figures._coincident(coords, 1e-5) == [[0], [1], [2]]
