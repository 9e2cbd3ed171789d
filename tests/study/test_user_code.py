"""Issue 30 item 3: a method of the user's own cannot change the data the others get, and its
failures (an exception on every set, scores of 1e300, sys.exit) are reported, not silent."""

from __future__ import annotations

import csv
import sys
import warnings

import numpy as np
import pytest

from ratercal_cli.config import import_user_methods, load_config
from ratercal_cli.errors import InputError, MethodError
from ratercal_cli.methods import make_method
from ratercal_cli.methods.apply import apply_methods
from ratercal_cli.ratings import Ratings

from support import run, user_module

CAPPING = '''
import numpy as np
import sys
from ratercal_cli.ratings import Adjusted

class CapAt3:            # an in-place "cap at 3": writes into the ratings every method is given
    def fit(self, ratings):
        np.minimum(ratings.score, 3, out=ratings.score)
        return self
    def transform(self, ratings):
        r = ratings.score.astype(float)
        return Adjusted(rating=r, paper=ratings.paper_mean(r))

class Huge:              # finite, but no score: its RMSE overflows to inf
    def fit(self, ratings):
        return self
    def transform(self, ratings):
        r = np.full(ratings.n_ratings, 1e300)
        return Adjusted(rating=r, paper=np.full(ratings.n_papers, 1e300))

class Unflags(CapAt3):   # turns the read-only flag back on first, then zeroes every score and reading order
    def fit(self, ratings):
        for a in (ratings.score, ratings.paper, ratings.reading_order):
            if a is not None:
                a.setflags(write=True)
                a[:] = 0
        return self

class Exits(CapAt3):
    def fit(self, ratings):
        sys.exit(5)

class Fails(CapAt3):
    def fit(self, ratings):
        raise RuntimeError("always")
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    return user_module(tmp_path, monkeypatch, "hostile_methods", CAPPING)


def _ratings():
    rng = np.random.default_rng(3)
    paper = np.repeat(np.arange(60), 2)
    rater = np.array([(p + k) % 6 for p in range(60) for k in range(2)])
    score = rng.integers(0, 6, paper.size)
    return Ratings(paper, rater, score, 5, 60, 6)


def test_a_method_writing_into_the_ratings_fails_and_changes_nothing(module):
    r = _ratings()
    before = r.score.copy()
    alone = apply_methods(r, ["TLI"]).adjusted["TLI"].paper
    applied = apply_methods(r, ["hostile_methods:CapAt3", "TLI"])
    assert "read-only" in applied.skipped["hostile_methods:CapAt3"]
    np.testing.assert_array_equal(r.score, before)
    np.testing.assert_array_equal(applied.adjusted["TLI"].paper, alone)   # TLI saw the real scores


def test_a_method_turning_the_read_only_flag_back_on_fails_and_changes_nothing(module):
    """A read-only view of the shared arrays could be made writeable again (its base was): the method zeroed
    every later method's scores and the caller's, and nothing was recorded."""
    r = _ratings()
    r = Ratings(r.paper, r.rater, r.score, 5, 60, 6, reading_order=np.arange(r.n_ratings)[::-1].copy())
    before = r.score.copy(), r.paper.copy(), r.reading_order.copy()
    alone = apply_methods(r, ["TLI"]).adjusted["TLI"].paper
    applied = apply_methods(r, ["hostile_methods:Unflags", "TLI"])
    assert "cannot set WRITEABLE flag" in applied.skipped["hostile_methods:Unflags"]
    for a, b in zip((r.score, r.paper, r.reading_order), before):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(applied.adjusted["TLI"].paper, alone)
    with pytest.raises(MethodError, match="cannot set WRITEABLE"):
        make_method("hostile_methods:Unflags").fit(r)   # (outside a study too: the caller's ratings kept)
    np.testing.assert_array_equal(r.score, before[0])


def test_scores_of_1e300_are_refused_without_warnings(module):
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # a numpy RuntimeWarning would fail the test
        applied = apply_methods(_ratings(), ["hostile_methods:Huge", "NO"])
    assert "not scores" in applied.skipped["hostile_methods:Huge"]


def test_sys_exit_in_fit_is_a_method_error_and_on_import_a_config_error(module):
    with pytest.raises(MethodError, match=r"hostile_methods:Exits: called sys.exit\(5\)"):
        make_method("hostile_methods:Exits").fit(_ratings())
    (module / "exits_on_import.py").write_text("import sys\nsys.exit(5)\n")
    (module / "c.yaml").write_text('generator: pcm\nmethods: [NO, "exits_on_import:X"]\n'
                                   "cells:\n  - {raters_per_paper: [2], papers: [50], max_score: [5], "
                                   "quality: [normal]}\nseed: 3\n")
    with pytest.raises(InputError, match=r"c.yaml:2: .*called sys.exit\(5\) on import"):
        import_user_methods(load_config(module / "c.yaml"))


def test_a_method_failing_on_every_set_is_in_scores_and_named_by_report(module, tmp_path):
    (tmp_path / "c.yaml").write_text('generator: pcm\nvariant: corrected\nmethods: [NO, "hostile_methods:Fails"]\n'
                                     "cells:\n  - {raters_per_paper: [2], papers: [50, 60], max_score: [5], "
                                     "quality: [normal]}\nseed: 3\n")
    out = tmp_path / "run"
    assert run("simulate", tmp_path / "c.yaml", "--out", out, "-q").exit_code == 0
    assert run("score", out, "-q").exit_code == 0
    rows = list(csv.DictReader((out / "score" / "scores.csv").open()))
    failed = [r for r in rows if r["method"] == "hostile_methods:Fails"]
    assert len(failed) == 2 and all(r["rmse"] == "" for r in failed)
    res = run("report", out, "-q")
    assert res.exit_code == 0, res.output
    text = (out / "report" / "report.md").read_text()
    assert "hostile_methods:Fails has no value on 2 of the 2 data sets" in text


# -- item 4: stale or mixed results ------------------------------------------------------------
OWN = '''
from ratercal_cli.ratings import Adjusted

class Shift:
    def fit(self, ratings):
        return self
    def transform(self, ratings):
        r = ratings.score + SHIFT
        return Adjusted(rating=r, paper=ratings.paper_mean(r))
'''


def _config(folder, seed):
    (folder / "c.yaml").write_text('generator: pcm\nvariant: corrected\nmethods: [NO, "own_shift:Shift"]\n'
                                   "cells:\n  - {raters_per_paper: [2], papers: [50], max_score: [5], "
                                   f"quality: [normal]}}\nseed: {seed}\n")
    return folder / "c.yaml"


def _rmse(out, method):
    return {r["method"]: r["rmse"] for r in csv.DictReader((out / "score" / "scores.csv").open())}[method]


def test_report_refuses_edited_scores_and_scores_of_older_data(tmp_path, monkeypatch):
    (tmp_path / "own_shift.py").write_text(OWN.replace("SHIFT", "0.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "own_shift", raising=False)
    out = tmp_path / "run"
    assert run("simulate", _config(tmp_path, 3), "--out", out, "-q").exit_code == 0
    assert run("score", out, "-q").exit_code == 0
    assert run("report", out, "--out", tmp_path / "r", "-q").exit_code == 0
    # an edited value in scores.csv
    scores = out / "score" / "scores.csv"
    text = scores.read_text()
    scores.write_text(text.replace(",NO,corrected,0.", ",NO,corrected,9."))
    res = run("report", out, "--out", tmp_path / "r", "-q")
    assert res.exit_code == 2 and "score/scores.csv: changed since `ratercal score` wrote it" in res.stderr
    scores.write_text(text)
    # another seed, adjusted without score: the report would mix the new data with the old scores
    assert run("simulate", _config(tmp_path, 4), "--out", out, "-q").exit_code == 0
    assert run("adjust", out, "-q").exit_code == 0
    res = run("report", out, "--out", tmp_path / "r", "-q")
    assert res.exit_code == 2 and "changed after `ratercal score` read it" in res.stderr
    assert run("score", out, "-q").exit_code == 0
    assert run("report", out, "--out", tmp_path / "r", "-q").exit_code == 0
    # a config simulated again with other methods, or the run's own config edited, without adjust and score: the
    # files agree with each other, and a researcher's report showed the old methods' columns without a word
    config = _config(tmp_path, 4)
    config.write_text(config.read_text().replace('methods: [NO, "own_shift:Shift"]', 'methods: [NO, MN, "own_shift:Shift"]'))
    assert run("simulate", config, "--out", out, "-q").exit_code == 0
    res = run("report", out, "--out", tmp_path / "r", "-q")
    assert res.exit_code == 2 and "scores.csv: the scores are not of the run's config as it is now (equate of set" in \
        res.stderr, res.stderr
    assert run("score", out, "-q").exit_code == 0
    assert run("report", out, "--out", tmp_path / "r", "-q").exit_code == 0
    assert "MN" in {r["method"] for r in csv.DictReader((out / "score" / "scores.csv").open())}
    (out / "config.yaml").write_text((out / "config.yaml").read_text().replace("seed: 4", "seed: 5"))
    res = run("report", out, "--out", tmp_path / "r", "-q")
    assert res.exit_code == 2 and "is out of date with" in res.stderr and "run `ratercal score" in res.stderr
    # report --out outside RUN takes RUN's lock too (it took none): no stage rewrites what it reads
    from ratercal_cli.io import folder_lock

    with folder_lock(out, "score"):
        res = run("report", out, "--out", tmp_path / "r", "-q")
    assert res.exit_code == 2 and "in use by ratercal score" in res.stderr
    # the user's module edited: adjust RUN redoes the stage (its source hash is in the manifest)
    before = _rmse(out, "own_shift:Shift")
    (tmp_path / "own_shift.py").write_text(OWN.replace("SHIFT", "1.0"))
    monkeypatch.delitem(sys.modules, "own_shift", raising=False)   # as a new process would
    assert run("score", out, "-q").exit_code == 0
    assert _rmse(out, "own_shift:Shift") != before


# -- item 10: naming a module in a config runs nothing until a stage applies the methods -------------
def test_a_user_module_is_imported_only_by_the_stage_that_applies_it(tmp_path, monkeypatch):
    marker = tmp_path / "imported.txt"
    (tmp_path / "side_effect.py").write_text(
        f"open({str(marker)!r}, 'a').write('x')\n" + OWN.replace("SHIFT", "0.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "side_effect", raising=False)
    (tmp_path / "c.yaml").write_text('generator: pcm\nvariant: corrected\nmethods: [NO, "side_effect:Shift"]\n'
                                     "cells:\n  - {raters_per_paper: [2], papers: [50], max_score: [5], "
                                     "quality: [normal]}\nseed: 3\n")
    load_config(tmp_path / "c.yaml")
    assert not marker.exists()                      # validating runs nothing
    out = tmp_path / "run"
    assert run("simulate", tmp_path / "c.yaml", "--out", out, "-q").exit_code == 0
    assert not marker.exists()                      # nor do the stages that make the data
    assert run("adjust", out, "-q").exit_code == 0
    assert marker.exists()                          # the stage applying the methods imports it
    bad = tmp_path / "bad.yaml"
    bad.write_text((tmp_path / "c.yaml").read_text().replace("side_effect:Shift", "side effect:Shift"))
    with pytest.raises(InputError, match=r"bad.yaml:3: methods\[1\]: 'side effect:Shift': a method of your own"):
        load_config(bad)


# -- item 6: a per-method timeout ---------------------------------------------------------------
SLEEPER = '''
import time
from ratercal_cli.ratings import Adjusted

class Sleeper:
    def fit(self, ratings):
        time.sleep(60)
        return self
    def transform(self, ratings):
        r = ratings.score.astype(float)
        return Adjusted(rating=r, paper=ratings.paper_mean(r))
'''


def test_a_user_method_past_its_timeout_is_recorded_as_failed(tmp_path, monkeypatch):
    import time

    (tmp_path / "sleepy.py").write_text(SLEEPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "c.yaml").write_text('generator: pcm\nvariant: corrected\n'
                                     'methods: [NO, {method: "sleepy:Sleeper", timeout: 0.5}]\n'
                                     "cells:\n  - {raters_per_paper: [2], papers: [50], max_score: [5], "
                                     "quality: [normal]}\nseed: 3\n")
    cfg = load_config(tmp_path / "c.yaml")
    assert cfg.methods == ("NO", "sleepy:Sleeper") and cfg.raw["timeouts"] == {"sleepy:Sleeper": 0.5}
    import_user_methods(cfg)
    t0 = time.monotonic()
    applied = apply_methods(_ratings(), cfg.methods)
    assert time.monotonic() - t0 < 20
    assert applied.skipped["sleepy:Sleeper"] == "MethodError: sleepy:Sleeper: took longer than its timeout of 0.5 s"
    assert "NO" in applied.adjusted
    (tmp_path / "c.yaml").write_text((tmp_path / "c.yaml").read_text().replace("timeout: 0.5", "timeout: -1"))
    with pytest.raises(InputError, match=r"c.yaml:3: methods\[1\].timeout: must be a number of seconds > 0"):
        load_config(tmp_path / "c.yaml")


def test_montecarlo_says_when_a_method_failed_on_every_data_set(module, tmp_path):
    """A method failing on every data set of a Monte Carlo study was only counted under 'Failed
    fits' in summary.md: the command ended as if all went well.  It now warns on stderr, with the
    count, even with --quiet (which turns off the progress bar)."""
    (tmp_path / "c.yaml").write_text('generator: pcm\nvariant: corrected\nmethods: [NO, "hostile_methods:Fails"]\n'
                                     "cells:\n  - {raters_per_paper: [2], papers: [50], max_score: [5], "
                                     "quality: [normal]}\nseed: 3\nreplications: 3\n")
    res = run("montecarlo", tmp_path / "c.yaml", "--out", tmp_path / "run", "-q")
    assert res.exit_code == 0, res.output
    assert ("warning: montecarlo: hostile_methods:Fails (corrected) failed on 3 of 3 data set(s): it has no "
            "results") in res.output
    assert "NO (corrected) failed" not in res.output
    assert "hostile_methods:Fails" in (tmp_path / "run" / "montecarlo" / "summary.md").read_text()
