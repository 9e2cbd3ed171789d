"""A method of the user's own (``module:Class`` in a config, methods/user.py): the example under
examples/ runs in montecarlo serial and with --jobs 2 to the same bytes, its numbers are what its
definition gives, a failing method is recorded with its reason, and a wrong name is a one-line
error naming the config line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ratercal_cli.config import import_user_methods, load_config, parse_config
from ratercal_cli.errors import InputError
from ratercal_cli.methods import make_method
from ratercal_cli.montecarlo.run import MonteCarloRun
from ratercal_cli.ratings import Ratings

REPO = Path(__file__).resolve().parents[2]
OUTPUTS = ("replications.csv", "summary.csv", "paired.csv", "summary.md")


def outputs(run_dir):
    return {name: (Path(run_dir) / "montecarlo" / name).read_bytes() for name in OUTPUTS}

EXAMPLE = REPO / "examples" / "user_method.yaml"


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_the_example_method_runs_serial_and_jobs_2_to_the_same_bytes(tmp_path):
    cfg = load_config(EXAMPLE)
    assert cfg.methods[-1] == "user_method:MedianEquating"
    for jobs, out in ((1, tmp_path / "serial"), (2, tmp_path / "jobs2")):
        run = MonteCarloRun(cfg, out, replications=4, chunk_size=2)
        run.run(jobs=jobs, quiet=True)
        run.summarise()
    assert outputs(tmp_path / "serial") == outputs(tmp_path / "jobs2")
    rows = (tmp_path / "serial" / "montecarlo" / "replications.csv").read_text().splitlines()
    mine = [r.split(",") for r in rows if ",user_method:MedianEquating," in r]
    # 3 cells x 4 replications, two shrinkage levels on the two multi-rater cells
    assert len(mine) == 4 * (1 + 2 + 2) and all(r[-1] == "" for r in mine)


def test_the_example_method_is_truncated_median_equating():
    paper = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    rater = np.array([0, 1, 0, 1, 0, 2, 1, 2])
    score = np.array([1, 3, 2, 4, 0, 2, 5, 3])
    r = Ratings(paper, rater, score, 5, 4, 3)
    sys.path.insert(0, str(REPO / "examples"))
    try:
        adj = make_method("user_method:MedianEquating").fit_transform(r)
    finally:
        sys.path.remove(str(REPO / "examples"))
    # grand median 2.5; rater medians 1, 4, 2.5 -> shifts +1.5, -1.5, 0; clipped to 0..5
    want = np.clip(score + np.array([1.5, -1.5, 0.0])[rater], 0, 5)
    np.testing.assert_array_equal(adj.rating, want)
    np.testing.assert_array_equal(adj.paper, [(2.5 + 1.5) / 2, (3.5 + 2.5) / 2, (1.5 + 2) / 2, (3.5 + 3) / 2])


FAILING = '''
import numpy as np
from ratercal_cli.ratings import Adjusted

class Flaky:
    needs_multiple_raters = True
    def fit(self, ratings):
        if ratings.score.sum() % 2:
            raise RuntimeError("odd total")
        return self
    def transform(self, ratings):
        rating = ratings.score.astype(float)
        return rating, ratings.paper_mean(rating)
'''

CONFIG = """\
generator: pcm
variant: corrected
methods: [MN, "flaky_method:Flaky"]
cells:
  - {raters_per_paper: [1, 2], papers: [100], max_score: [5], quality: [normal]}
seed: 3
replications: 8
"""


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_a_failing_user_method_is_recorded_with_its_reason(tmp_path):
    (tmp_path / "flaky_method.py").write_text(FAILING)
    (tmp_path / "c.yaml").write_text(CONFIG)
    cfg = load_config(tmp_path / "c.yaml")           # found beside the config
    run = MonteCarloRun(cfg, tmp_path / "run", chunk_size=4)
    run.run(quiet=True)
    run.summarise()
    rows = [r.split(",") for r in (tmp_path / "run" / "montecarlo" / "replications.csv").read_text().splitlines()[1:]]
    mine = [r for r in rows if r[4] == "flaky_method:Flaky"]
    assert len(mine) == 8                            # needs_multiple_raters: no rows on the one-rater cell
    failed = [r for r in mine if r[-1]]
    assert failed and len(failed) < 8
    assert all(r[-1] == "MethodError: flaky_method:Flaky: RuntimeError: odd total" and r[5] == "" for r in failed)
    assert "corrected flaky_method:Flaky failed on some data sets" in (tmp_path / "run" / "montecarlo" /
                                                                      "summary.md").read_text()


def test_a_method_that_cannot_be_imported_is_a_one_line_error(tmp_path):
    # the config is validated without importing (issue 30); the stage that applies the methods imports
    cfg = parse_config(CONFIG.replace("flaky_method:Flaky", "no_such_module_xyz:Thing"), source=str(tmp_path / "c.yaml"))
    with pytest.raises(InputError) as e:
        import_user_methods(cfg)
    assert str(e.value).startswith(f"{tmp_path / 'c.yaml'}:3: methods[1]: cannot use no_such_module_xyz:Thing: "
                                   "ModuleNotFoundError")
    (tmp_path / "flaky_method.py").write_text(FAILING)
    with pytest.raises(InputError, match="expected a class with fit"):
        MonteCarloRun(load_config_text(tmp_path, CONFIG.replace("flaky_method:Flaky", "flaky_method:np")),
                      tmp_path / "run")


def load_config_text(folder, text):
    (folder / "c.yaml").write_text(text)
    return load_config(folder / "c.yaml")
