"""rc.study (issue 31 item 4): a study run from Python, SimDesign's generate / analyse / summarise with
the user's own generator, method and criterion, the run folder as its cache."""

import math
import runpy
import sys

import numpy as np
import pandas as pd
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import ArgumentError

from support import ROOT


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "run"
    argv = sys.argv
    sys.argv = ["study.py", str(out)]
    try:
        env = runpy.run_path(str(ROOT / "examples" / "study.py"), run_name="__main__")
    finally:
        sys.argv = argv
    return env, out


def test_the_example_runs_two_cells_with_a_user_method_and_criterion(example):
    env, out = example
    res = env["results"]
    s = res.summary
    assert len(s) == 2 * 3 * 2 and set(s.method) == {"NO", "TLI", "MedianRating"}
    assert set(s.criterion) == {"rmse", "within_half"} and (s.replications == 20).all() and (s.failed == 0).all()
    assert len(res.replications) == 2 * 20 * 3 * 2 and res.folder == out
    # one row by hand: replication 3 of "raters differ", TLI's RMSE against the true scores
    spec = env["spec"]
    cell = spec.cells[1]
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, 1, 3]))
    ratings, true = env["generate"](dict(cell), rng)
    tli = rc.make_method("TLI").fit_transform(ratings).paper
    reps = res.replications
    got = reps[(reps.cell == "raters differ") & (reps.replication == 3) & (reps.method == "TLI")
               & (reps.criterion == "rmse")].value.item()
    assert got == math.sqrt(np.mean((tli - true) ** 2))
    # the summary's mean, sd and MCSE are those of the 20 replications; paired: TLI - NO per replication
    rows = reps[(reps.cell == "raters differ") & (reps.method == "TLI") & (reps.criterion == "rmse")].value
    row = s[(s.cell == "raters differ") & (s.method == "TLI") & (s.criterion == "rmse")].iloc[0]
    assert row["mean"] == pytest.approx(rows.mean(), rel=1e-12)
    assert row.mcse == pytest.approx(rows.std(ddof=1) / math.sqrt(20), rel=1e-12)
    no = reps[(reps.cell == "raters differ") & (reps.method == "NO") & (reps.criterion == "rmse")].value
    p = res.paired
    pair = p[(p.cell == "raters differ") & (p.method == "TLI") & (p.criterion == "rmse")].iloc[0]
    d = rows.to_numpy() - no.to_numpy()
    assert pair.difference == pytest.approx(d.mean(), rel=1e-12)
    # its 95% interval: Student's t with 19 df (2.093), not the normal's 1.96
    half = 2.093024054408263 * d.std(ddof=1) / math.sqrt(20)
    assert (pair.lower, pair.upper) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-9)
    # as plain Python (JSON) and as text
    import json

    as_dict = json.loads(json.dumps(res.to_dict()))
    assert as_dict["kind"] == res.kind and len(as_dict["summary"]) == len(s) and len(as_dict["paired"]) == len(p)
    mine = next(r for r in as_dict["summary"] if (r["cell"], r["method"], r["criterion"]) == ("raters differ", "TLI", "rmse"))
    assert mine["mean"] == row["mean"] and mine["replications"] == 20 and "replications" not in as_dict
    assert len(res.to_dict(replications=True)["replications"]) == len(reps)
    text = res.summary_text()
    assert "Monte Carlo SE" in text and "raters differ" in text and f"{row['mean']:.4f}" in text
    assert len(repr(res)) < 2000 and "<table" in res._repr_html_()
    # the tables by name too, as the other results' to_frame; a copy, and a bad name is an ArgumentError
    pd.testing.assert_frame_equal(res.to_frame("paired"), p)
    frame = res.to_frame()
    pd.testing.assert_frame_equal(frame, s)
    frame.loc[:, "mean"] = 0.0
    assert (res.summary["mean"] != 0).any()
    with pytest.raises(ArgumentError, match="table"):
        res.to_frame("ratings")


def test_the_folder_is_the_cache_and_jobs_do_not_change_the_numbers(example, tmp_path):
    env, out = example
    again = rc.study.run(env["spec"], out=out)
    assert again.computed == 0
    pd.testing.assert_frame_equal(again.summary, env["results"].summary)
    serial = rc.study.run(env["spec"], out=tmp_path / "serial", jobs=1)
    assert serial.computed == 40
    pd.testing.assert_frame_equal(serial.replications, env["results"].replications)
    with pytest.raises(ArgumentError, match="holds another study"):
        rc.study.run(rc.study.Spec(env["spec"].cells, env["generate"], ["NO"], ["rmse"], 2, 1), out=out)


def test_a_config_runs_on_the_studys_engine(tmp_path):
    config = {"name": "tiny", "generator": "pcm", "variant": ["corrected"], "methods": ["NO", "MN"],
              "raters": {"steps": "table3"}, "seed": 7, "replications": 2,
              "cells": [{"raters_per_paper": [2], "papers": [40], "max_score": [5], "quality": ["normal"]}]}
    res = rc.study.run(config, out=tmp_path / "run")
    assert res.computed == 1 and set(res.summary.method) >= {"NO", "MN"}
    assert list(res.summary.columns) == list(pd.read_csv(tmp_path / "run" / "montecarlo" / "summary.csv").columns)
    assert rc.study.run(config, out=tmp_path / "run").computed == 0
    assert "paired" in repr(res) and len(res.replications) > 0
    # its summary text: the overall rows' criteria (the fixed long-form columns left 'method' and 'failed')
    text = res.summary_text().splitlines()
    assert "in 1 scope(s)" in text[0] and "over 2 cell(s)" not in text[0]
    head = next(k for k, line in enumerate(text) if line.split()[:4] == ["scope", "variant", "shrinkage", "method"])
    rows = {line.split()[3]: line.split() for line in text[head + 1:head + 3]}
    overall = res.summary[res.summary.facet == "all"].set_index("method")
    for m in ("NO", "MN"):
        assert float(rows[m][6]) == pytest.approx(overall.loc[m, "rmse"], abs=1e-4)
    assert any(line.split()[1:3] == ["NO", "MN"] for line in text if line.startswith("multi-rater"))


def test_bad_specs_name_the_argument():
    gen = lambda cell, rng: None   # noqa: E731
    with pytest.raises(ArgumentError, match="generate: expected a function"):
        rc.study.Spec([{"papers": 5}], 5, ["NO"])
    with pytest.raises(ArgumentError, match="criteria: unknown criterion 'auc'"):
        rc.study.Spec([{"papers": 5}], gen, ["NO"], ["auc"])
    with pytest.raises(ArgumentError, match="replications: expected a whole number of at least 1"):
        rc.study.Spec([{"papers": 5}], gen, ["NO"], replications=0)
    with pytest.raises(ArgumentError, match="config_or_spec: expected a config file"):
        rc.study.run(42)
    # a researcher's finds: a string read a letter at a time, "recommended" named the argument "code", a dict of one
    # cell was a ValueError, "mml" beside "MML" two methods
    spec = rc.study.Spec([{"papers": 5}], gen, "TLI, MML", "rmse,bias")
    assert [n for n, _ in spec.methods] == ["TLI", "MML"] and list(spec.criteria) == ["rmse", "bias"]
    with pytest.raises(ArgumentError, match="methods: 'recommended' is check's pick for each data set"):
        rc.study.Spec([{"papers": 5}], gen, ["NO", "recommended"])
    with pytest.raises(ArgumentError, match="methods: unknown method 'TLJ'"):
        rc.study.Spec([{"papers": 5}], gen, ["TLJ"])
    with pytest.raises(ArgumentError, match="methods: two methods are named 'MML'"):
        rc.study.Spec([{"papers": 5}], gen, ["MML", "mml"])
    with pytest.raises(ArgumentError, match="cells: give a list of cells, each a dict"):
        rc.study.Spec({"papers": 5}, gen, ["NO"])
    with pytest.raises(ArgumentError, match="methods: 'recommended' is check's pick"):   # (named: at run time, before)
        rc.study.Spec([{"papers": 5}], gen, [("pick", "recommended")])
    assert list(rc.study.Spec([{"papers": 5}], gen, ["NO"], "RMSE, Bias").criteria) == ["rmse", "bias"]


def test_a_generator_that_fails_is_named_with_its_cell_and_replication(tmp_path):
    """A generator raising on some replications aborted the study with "RuntimeError: boom" and nothing else."""
    def generate(cell, rng):
        if cell["name"] == "b":
            raise RuntimeError("boom")
        return _two_cell_generator(cell, rng)

    spec = rc.study.Spec([{"name": "a", "papers": 20, "shift": 1}, {"name": "b", "papers": 20, "shift": 1}], generate,
                         ["NO"], replications=2)
    with pytest.raises(RuntimeError, match="boom") as err:
        rc.study.run(spec, out=tmp_path / "run")
    said = " ".join(getattr(err.value, "__notes__", [])) + str(err.value)
    assert "failed on cell 'b', replication 1" in said
    (tmp_path / "file").write_text("x")
    with pytest.raises(ArgumentError, match="out: is a file, not a folder"):
        rc.study.run(spec, out=tmp_path / "file")
    with pytest.raises(ArgumentError, match="out: is under .*file, a file, not a folder"):
        rc.study.run(spec, out=tmp_path / "file" / "sub")


@pytest.mark.parametrize("made, said", [(lambda r, t: (r, t, 1), "returned a tuple of 3: expected \\(ratings, true"),
                                        (lambda r, t: r, "returned Ratings: expected \\(ratings, true"),
                                        (lambda r, t: (t, r), "returned ndarray first: expected a Ratings")])
def test_a_generator_returning_something_else_is_named(tmp_path, made, said):
    """A generator of the user's giving three values was a bare 'too many values to unpack'."""
    from ratercal_cli.errors import InputError

    def generate(cell, rng):
        paper = np.repeat(np.arange(20), 2)
        r = rc.Ratings.from_labels(paper, (paper + np.tile([0, 1], 20)) % 4, rng.integers(0, 6, 40), 5)
        return made(r, r.paper_mean())

    spec = rc.study.Spec([{"papers": 20}], generate, ["NO"], replications=1)
    with pytest.raises(InputError, match="generate: .*generate " + said):
        rc.study.run(spec, out=tmp_path / "run")


def test_a_call_that_fails_leaves_no_temporary_folder(tmp_path, monkeypatch):
    """Without ``out`` the run folder is a new temporary one, named only in the results: a call that
    fails (a bad config, found before the study starts or as it starts) leaves none behind."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ngenerator: pcm\nmethods: [NO, NOPE]\n", encoding="utf-8")
    with pytest.raises(ArgumentError, match="config_or_spec: expected a config file"):
        rc.study.run(42)
    with pytest.raises(Exception, match="NOPE"):
        rc.study.run(bad)
    with pytest.raises(ArgumentError, match="scheduler"):
        rc.study.run(rc.study.Spec([{"papers": 5}], lambda cell, rng: None, ["NO"]), scheduler="tcp://x:1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]
    # a run that works keeps its folder: the results name it
    config = {"name": "tiny", "generator": "pcm", "variant": ["corrected"], "methods": ["NO"],
              "raters": {"steps": "table3"}, "seed": 7, "replications": 1,
              "cells": [{"raters_per_paper": [2], "papers": [30], "max_score": [5], "quality": ["normal"]}]}
    res = rc.study.run(config)
    assert res.folder.parent == tmp_path and res.folder.name.startswith("ratercal-study-")
    assert (res.folder / "montecarlo" / "summary.csv").is_file()


def _two_cell_generator(cell, rng):
    """Two raters a paper of four, one more severe by ``cell["shift"]`` points; the truth the papers' quality."""
    n = cell["papers"]
    quality = rng.integers(1, 5, n).astype(float)
    raters = np.array([rng.choice(4, 2, replace=False) for _ in range(n)])
    paper, rater = np.repeat(np.arange(n), 2), raters.ravel()
    score = np.clip(quality[paper] - cell["shift"] * (rater == 0), 0, 5).astype(int)
    return rc.Ratings(paper, rater, score, max_score=5, n_papers=n, n_raters=4), quality


def test_cells_and_methods_of_one_name_and_changed_parameters_are_not_shared(tmp_path):
    """Rows are kept by cell and method name: two cells of one name shared their replications' rows (the
    second cell's summary was the first's 6 rows over again: "replications 6" for one cell of 3), two
    MMLs were averaged into one row, and an MML at its WLE run into the folder of one at its EAP was
    given the EAP's cached rows (computed 0).  A cell named "../x" wrote outside the replications folder."""
    gen = _two_cell_generator
    with pytest.raises(ArgumentError, match="cells: two cells are named 'x': give each cell its own name"):
        rc.study.Spec([{"name": "x", "papers": 20, "shift": 0}, {"name": "x", "papers": 20, "shift": 2}], gen, ["NO"])
    with pytest.raises(ArgumentError, match=r"methods: two methods are named 'MML': name them apart"):
        rc.study.Spec([{"papers": 20, "shift": 1}], gen, [rc.make_method("MML"), rc.make_method("MML", quality="wle")])
    with pytest.raises(ArgumentError, match=r"cells: cell 1: its name '\.\./x' names the folder"):
        rc.study.Spec([{"name": "../x", "papers": 20, "shift": 1}], gen, ["NO"])
    cells = [{"papers": 40, "shift": 1}]
    eap = rc.study.run(rc.study.Spec(cells, gen, ["NO", rc.make_method("MML")], replications=2, seed=3),
                       out=tmp_path / "run")
    assert eap.computed == 2
    wle = rc.study.Spec(cells, gen, ["NO", rc.make_method("MML", quality="wle")], replications=2, seed=3)
    with pytest.raises(ArgumentError, match="holds another study"):
        rc.study.run(wle, out=tmp_path / "run")
    # named apart, both are computed and kept apart
    both = rc.study.run(rc.study.Spec(cells, gen, ["NO", ("MML eap", rc.make_method("MML")),
                                                   ("MML wle", rc.make_method("MML", quality="wle"))],
                                      replications=2, seed=3), out=tmp_path / "both")
    s = both.summary[both.summary.criterion == "rmse"].set_index("method")["mean"]
    assert s["MML eap"] == eap.summary[(eap.summary.criterion == "rmse") & (eap.summary.method == "MML")]["mean"].item()
    assert s["MML wle"] != s["MML eap"]
    # a method at its defaults is recorded by its name alone (folders of earlier runs stay theirs)
    assert rc.study.Spec(cells, gen, ["NO", rc.make_method("MML")]).manifest()["methods"] == ["NO", "MML"]


class _CapAtThree:
    """A method of the user's own that writes into the data it is given (an in-place "cap at 3")."""

    def __init__(self, fail_above=None):
        self.fail_above = fail_above

    def fit(self, ratings):
        if self.fail_above is not None and ratings.n_papers > self.fail_above:
            raise ValueError("too many papers for me")
        np.minimum(ratings.score, 3, out=ratings.score)
        return self

    def transform(self, ratings):
        p = ratings.paper_mean()
        return p[ratings.paper], p


def test_a_method_given_as_an_instance_is_run_as_one_given_as_a_class():
    """An instance of the user's class was used as it is: its error ended the whole study (a class's is
    recorded as that method's failure), and its write into ratings.score changed the scores of every method
    after it in the replication (NO's RMSE then that of capped scores)."""
    cells = [{"papers": 40, "shift": 1}]
    alone = rc.study.run(rc.study.Spec(cells, _two_cell_generator, ["NO"], replications=2, seed=3))
    after = rc.study.run(rc.study.Spec(cells, _two_cell_generator, [("cap", _CapAtThree()), "NO"], replications=2,
                                       seed=3))
    no = lambda res: res.replications.query("method == 'NO' and criterion == 'rmse'").value.tolist()   # noqa: E731
    assert no(after) == no(alone)
    err = after.replications.query("method == 'cap'").error.unique().tolist()
    assert err == ["_CapAtThree: ValueError: output array is read-only"]
    failing = rc.study.run(rc.study.Spec(cells, _two_cell_generator, ["NO", _CapAtThree(fail_above=10)],
                                         replications=2, seed=3))
    s = failing.summary.query("method == '_CapAtThree'")
    assert (s.failed == 2).all() and s["mean"].isna().all()
    assert failing.replications.query("method == '_CapAtThree'").error.iloc[0] == \
        "_CapAtThree: ValueError: too many papers for me"


def test_a_generator_edited_since_the_run_is_another_study(tmp_path, monkeypatch):
    """The manifest named the generator by its qualified name only: a generator edited (rater 0 made two
    points severe instead of one) and run again into the same folder was given the old rows (computed 0,
    RMSE 0.3622 where a fresh run gives 0.67)."""
    import importlib
    import json

    source = (ROOT / "tests" / "montecarlo" / "test_study_api.py").read_text()
    start = source.index("def _two_cell_generator")
    body = source[start:source.index("\n\n\n", start)]
    module = tmp_path / "my_generator.py"
    module.write_text("import numpy as np\nimport ratercal_cli as rc\n\n\n" + body + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mine = importlib.import_module("my_generator")
    cells = [{"papers": 40, "shift": 1}]
    first = rc.study.run(rc.study.Spec(cells, mine._two_cell_generator, ["NO"], replications=2, seed=3),
                         out=tmp_path / "run")
    assert first.computed == 2
    module.write_text(module.read_text().replace('cell["shift"] * (rater == 0)', '2 * cell["shift"] * (rater == 0)'))
    mine = importlib.reload(mine)
    edited = rc.study.Spec(cells, mine._two_cell_generator, ["NO"], replications=2, seed=3)
    with pytest.raises(ArgumentError, match=r"holds another study \(its manifest.json differs: the source of generate\)"):
        rc.study.run(edited, out=tmp_path / "run")
    # a folder written before the digests were kept is taken as this study's (its rows as they are)
    manifest = tmp_path / "run" / "manifest.json"
    old = json.loads(manifest.read_text())
    del old["code"]
    manifest.write_text(json.dumps(old))
    again = rc.study.run(rc.study.Spec(cells, mine._two_cell_generator, ["NO"], replications=2, seed=3),
                         out=tmp_path / "run")
    assert again.computed == 0 and "code" in json.loads(manifest.read_text())


_SCRIPT = '''import json
import sys
import numpy as np
import ratercal_cli as rc
import helper

SPREAD = {spread}
LEVELS = {{"low", "high"}}   # (a set: its order differs from process to process)
PARAMS = json.load(open("params.json"))   # (a dict whose source line no edit of the file's changes)


def severity(rng):
    return rng.normal(0.0, SPREAD, 4)


def generate(cell, rng):
    n = cell["papers"]
    quality = rng.normal(2.5 + PARAMS["shift"], helper.QUALITY_SD, n)
    sev = severity(rng) if len(LEVELS) == 2 else np.zeros(4)
    raters = np.array([rng.choice(4, 2, replace=False) for _ in range(n)])
    paper, rater = np.repeat(np.arange(n), 2), raters.ravel()
    score = np.clip(np.rint(quality[paper] - sev[rater]), 0, 5).astype(int)
    return rc.Ratings(paper, rater, score, max_score=5, n_papers=n, n_raters=4), np.clip(quality, 0, 5)


spec = rc.study.Spec([{{"papers": 30}}], generate, ["NO", "MN"], replications=2, seed=5)

if __name__ == "__main__":
    print("computed", rc.study.run(spec, out=sys.argv[1]).computed)
    print("again", rc.study.run(spec, out=sys.argv[1]).computed)
'''


def _study_script(tmp_path, spread=0.5, quality_sd=1.0, shift=0.0):
    (tmp_path / "helper.py").write_text(f"QUALITY_SD = {quality_sd}\n")
    (tmp_path / "params.json").write_text(f'{{"shift": {shift}}}')
    (tmp_path / "mystudy.py").write_text(_SCRIPT.format(spread=spread))


def _run_script(tmp_path, out, seed="1"):
    import os
    import subprocess

    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(tmp_path / "mystudy.py"), str(out)], capture_output=True, text=True,
                          cwd=tmp_path, env=env)


def _import_and_run(tmp_path, out):
    import os
    import subprocess

    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import ratercal_cli as rc; from mystudy import spec; "
            f"print('computed', rc.study.run(spec, out={str(out)!r}).computed)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONHASHSEED": "2", "PYTHONPATH": str(ROOT)})


def test_a_helper_module_or_constant_edited_since_the_run_is_another_study(tmp_path):
    """Only the generator's own source was digested: a helper module it reads (``helper.QUALITY_SD`` 1.0 -> 0.05,
    a new user's), a constant of its script or a dict it loads from a file, edited and run again into the same
    folder, was given the old rows (RMSE 0.5279 where a fresh folder gave 0.5495). The same script run again, in a process whose set order
    differs, and imported from another script (its generator ``__main__.generate`` there, ``mystudy.generate``
    here: "holds another study") is the same study."""
    _study_script(tmp_path)
    out = tmp_path / "run"
    first = _run_script(tmp_path, out)
    assert first.returncode == 0 and first.stdout.split() == ["computed", "2", "again", "0"], first.stderr
    again = _run_script(tmp_path, out, seed="7")
    assert again.returncode == 0 and again.stdout.split() == ["computed", "0", "again", "0"], again.stderr
    imported = _import_and_run(tmp_path, out)
    assert imported.returncode == 0 and imported.stdout.split() == ["computed", "0"], imported.stderr
    _study_script(tmp_path, quality_sd=0.05)
    edited = _run_script(tmp_path, out)
    assert edited.returncode != 0 and \
        "holds another study (its manifest.json differs: the source of module helper, which generate uses)" in \
        edited.stderr
    _study_script(tmp_path, spread=1.5)
    edited = _run_script(tmp_path, out)
    assert "differs: the value of mystudy.SPREAD, which generate uses" in edited.stderr
    _study_script(tmp_path, shift=0.5)   # (a verifier's: a dict loaded from a file, the file edited, served old rows)
    edited = _run_script(tmp_path, out)
    assert "differs: the value of mystudy.PARAMS, which generate uses" in edited.stderr
    fresh = _run_script(tmp_path, tmp_path / "fresh")
    assert fresh.stdout.split() == ["computed", "2", "again", "0"], fresh.stderr


def test_what_a_generator_reaches_is_digested_not_ratercal_or_numpy():
    from ratercal_cli.montecarlo.study import _reached

    reached = _reached(_two_cell_generator)
    assert reached == {}   # (np and rc: installed packages and ratercal's own, not the study)
    local = {"n": 3}

    def gen(cell, rng, k=2):
        return local["n"] * k + _helper_value()

    keys = set(_reached(gen))
    assert keys == {f"function {_helper_value.__qualname__}", f"value {gen.__qualname__} defaults",
                    f"value {gen.__qualname__} closure local", "value test_study_api.HELPER_SCALE"}, keys
    before = _reached(gen)
    local["n"] = 4
    assert _reached(gen)[f"value {gen.__qualname__} closure local"] != before[f"value {gen.__qualname__} closure local"]


HELPER_SCALE = 2.0


def _helper_value():
    return HELPER_SCALE
