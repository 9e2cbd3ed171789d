"""Every config goes through the file pipeline (simulate -> adjust -> score -> report), and the
run folder, not set names or the config, says which cells and variants there are."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from support import ROOT

from ratercal_cli.cli import cli
from ratercal_cli.config import load_config

CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


def _ok(*args):
    res = CliRunner().invoke(cli, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res


def _smallest_cells(config):
    """One set per raters-per-paper level, the smallest (fewest papers, then the narrowest scale)."""
    best = {}
    for c in load_config(config).cells:
        if c.raters_per_paper not in best or (c.papers, c.max_score) < (best[c.raters_per_paper].papers,
                                                                      best[c.raters_per_paper].max_score):
            best[c.raters_per_paper] = c
    return [c.code for c in best.values()]


def _scores(run):
    with open(run / "score" / "scores.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_every_config_goes_through_the_file_pipeline(config, tmp_path):
    run, out = tmp_path / "run", tmp_path / "report"
    codes = _smallest_cells(config)
    sets = [a for code in codes for a in ("--set", code)]
    _ok("simulate", config, "--out", run, *sets, "-q")
    _ok("adjust", run, "-q")
    _ok("score", run, *sets, "-q")
    _ok("report", run, "--out", out, "-q")
    cfg = load_config(config)
    rows = _scores(run)
    assert {r["set"] for r in rows} == set(codes)
    assert {r["variant"] for r in rows} == set(cfg.variants)
    one_variant = len(cfg.variants) == 1
    for v in cfg.variants:
        report = (out if one_variant else out / v) / "report.md"
        text = report.read_text()
        assert f"variant `{v}`" in text and f"{len(codes)} data sets" in text


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_district_example_cells_are_read_from_the_design(tmp_path):
    """Issue 10, reproduction 1: set names that are not 1990 codes ('0-124-5-1') score and report."""
    run, out = tmp_path / "run", tmp_path / "report"
    _ok("simulate", ROOT / "configs" / "district_example.yaml", "--out", run, "-q")
    _ok("score", run, "-q")
    _ok("report", run, "--out", out, "-q")
    design = json.loads((run / "rater" / "design.json").read_text())
    assert [s["code"] for s in design["sets"]] == ["0-124-5-1", "0-141-5-1", "0-122-5-1"]
    assert design["variants"] == ["corrected"] and design["generator"] == "pcm"
    table = (out / "tables" / "table08_rmse_by_facet.csv").read_text().splitlines()
    # the facet levels come from the design: 2+ raters per paper, papers 122/124/141, scale 0-5
    levels = [line.split(",")[:2] for line in table[1:]]
    assert ["papers", "122"] in levels and ["raters", "2+"] in levels and ["scale", "0-5"] in levels
    assert "| 0-124-5-1 |" in (out / "tables" / "table07_rmse.md").read_text()


@pytest.mark.slow
def test_variants_are_a_dimension_of_the_run(tmp_path):
    """Issue 10, reproduction 2: `adjust RUN --variant corrected && score RUN` scores corrected; a
    second variant adjusted later is kept beside the first, and both are scored and reported."""
    run, out = tmp_path / "run", tmp_path / "report"
    _ok("simulate", ROOT / "configs" / "denny1990.yaml", "--out", run, "--set", "0551", "--set", "3191", "-q")
    _ok("adjust", run, "--variant", "corrected", "-q")
    _ok("score", run, "--set", "0551", "--set", "3191", "-q")
    rows = _scores(run)
    assert {r["variant"] for r in rows} == {"corrected"} and len(rows) == 20
    corrected = (run / "0551" / "equate" / "corrected" / "adjusted.csv").read_bytes()
    _ok("adjust", run, "-q")                      # the config's variant, faithful, beside it
    assert (run / "0551" / "equate" / "corrected" / "adjusted.csv").read_bytes() == corrected
    _ok("score", run, "--set", "0551", "--set", "3191", "-q")
    rows = _scores(run)
    assert [r["variant"] for r in rows] == ["faithful"] * 20 + ["corrected"] * 20
    ols = {r["variant"]: float(r["rmse"]) for r in rows if r["set"] == "0551" and r["method"] == "OLS"}
    assert ols["corrected"] < ols["faithful"]     # the +1/+1 design of OLS.BAS costs accuracy
    _ok("score", run, "--set", "0551", "--set", "3191", "--variant", "faithful", "-q")
    assert {r["variant"] for r in _scores(run)} == {"faithful"}
    _ok("score", run, "--set", "0551", "--set", "3191", "-q")
    _ok("report", run, "--out", out, "-q")
    assert "variant `faithful`" in (out / "faithful" / "report.md").read_text()
    assert "variant `corrected`" in (out / "corrected" / "report.md").read_text()


def test_a_method_of_ones_own_goes_through_the_file_pipeline(tmp_path, monkeypatch):
    """``module:Class`` is imported from the config's folder; the run folder's copy of the config
    (RUN/config.yaml) lives elsewhere, so the later stages must look beside the config the run was
    made from.  Run from another folder, with the module forgotten between the commands as it is
    between two processes."""
    import sys

    home = tmp_path / "study"
    home.mkdir()
    (home / "pipeline_own_method.py").write_text(
        "from ratercal_cli.ratings import Adjusted\n\n"
        "class Raw:\n"
        "    def fit(self, ratings):\n        return self\n"
        "    def transform(self, ratings):\n"
        "        r = ratings.score.astype(float)\n        return Adjusted(rating=r, paper=ratings.paper_mean(r))\n")
    (home / "own.yaml").write_text(
        'generator: pcm\nvariant: corrected\nmethods: [NO, "pipeline_own_method:Raw"]\n'
        "cells:\n  - raters_per_paper: [2]\n    papers: [100]\n    max_score: [5]\n    quality: [normal]\n"
        "seed: 7\n")
    monkeypatch.chdir(home)
    _ok("simulate", "own.yaml", "--out", tmp_path / "run", "-q")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(home)])
    monkeypatch.delitem(sys.modules, "pipeline_own_method", raising=False)   # simulate does not import it
    _ok("adjust", tmp_path / "run", "-q")
    _ok("score", tmp_path / "run", "-q")
    rows = {r["method"]: r for r in _scores(tmp_path / "run")}
    # the method is raw scores, so it scores exactly as NO does
    assert rows["pipeline_own_method:Raw"]["rmse"] == rows["NO"]["rmse"]
