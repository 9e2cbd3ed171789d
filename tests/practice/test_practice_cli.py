"""End to end: ``ratercal check | adjust | compare`` on an example file and on bad input."""

import csv
import json
import sys
import types

import numpy as np
import pytest
from scipy import stats

from ratercal_cli.models.pcm import sample_scores

from support import run


def write_example(path, seed=11, grades=(5, 8), n_papers=60, n_raters=10, M=5):
    """Like Denny's writing data: two raters per paper, a third when they differ by more than 1."""
    rng = np.random.default_rng(seed)
    delta = np.linspace(-4, 3, M)[None, :] + np.linspace(-1, 1, n_raters)[:, None]
    rows = []
    for g in grades:
        theta = rng.normal(0.5, 1.5, n_papers)
        for p in range(n_papers):
            rs = rng.choice(n_raters, 3, replace=False)
            s = sample_scores(rng, np.full(3, theta[p]), delta[rs])
            k = 3 if abs(int(s[0]) - int(s[1])) > 1 else 2
            rows += [(g, f"G{g}-{p + 1:03d}", f"R{rs[i] + 1}", int(s[i])) for i in range(k)]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["grade", "paper", "rater", "score"])
        w.writerows(rows)
    return rows


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    path = tmp_path_factory.mktemp("ex") / "ratings.csv"
    rows = write_example(path)
    return path, rows


def kept_rows(rows):
    """Independent resolution: per (grade, paper) in file order, keep r3 with the nearer of r1, r2."""
    by = {}
    for r in rows:
        by.setdefault((r[0], r[1]), []).append(r)
    out = []
    for rs in by.values():
        if len(rs) == 3 and abs(rs[0][3] - rs[1][3]) > 1:
            a, b, c = rs
            da, db = abs(c[3] - a[3]), abs(c[3] - b[3])
            drop = a if da > db else b if db > da else (a if a[3] < b[3] else b)
            rs = [r for r in rs if r is not drop]
        out += rs
    return out


# -- the example file ----------------------------------------------------------------
def test_check_text_and_json(example):
    path, rows = example
    res = run("check", path, "--scale", "0-5", "--group-col", "grade", "--resolve-discrepancies")
    assert res.exit_code == 0, res.output
    assert res.output.count("RECOMMENDATION:") == 2 and "grade=8" in res.output
    res = run("check", path, "--scale", "0-5", "--group-col", "grade", "--resolve-discrepancies", "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert [g["group"] for g in data["groups"]] == ["5", "8"]
    g5 = data["groups"][0]
    # the ANOVA F against scipy on the kept grade-5 ratings, read here with csv alone
    kept = [r for r in kept_rows(rows) if r[0] == 5]
    by_rater = {}
    for r in kept:
        by_rater.setdefault(r[2], []).append(r[3])
    f = stats.f_oneway(*by_rater.values())
    anova = next(t for t in g5["tests"] if t["test"].startswith("ANOVA"))
    assert anova["statistic"] == pytest.approx(f.statistic, rel=1e-10)
    assert anova["p_value"] == pytest.approx(f.pvalue, rel=1e-8)
    assert g5["min_papers"] == min(len(v) for v in by_rater.values())
    assert g5["n_ratings"] == len(kept) == 2 * 60
    assert g5["linked"] is True
    expected = "NO" if g5["min_papers"] < 8 else "TMN" if g5["min_papers"] <= 20 else "TLI"
    rule = g5["rule"]["recommendation"]
    assert rule == expected or (rule == "NO" and not g5["warranted"])
    # the one recommendation: the study's best at two raters a paper (the beyond-1990 run's MML at its EAP)
    assert (g5["recommendation"], g5["recommendation_shrinkage"], g5["recommendation_source"]) == \
        ("MML", "kelley", "the study")
    assert g5["sources"]["study"]["rmse"] == pytest.approx(0.529514)   # results/corrected/beyond1990, 200 replications


def test_check_nonrandom(example):
    path, _ = example
    res = run("check", path, "--group-col", "grade", "--assignment", "nonrandom", "--json", "-q")
    groups = json.loads(res.stdout)["groups"]
    assert {g["rule"]["recommendation"] for g in groups} == {"NO"}   # Chapter 5: no equating
    # the user's word stands, and with no clusters the raters are compared on the papers they share: the
    # PCM, unless the links' say finds their differences no larger than the noise of estimating them
    # (grade 8: rater effects of 0.24 score points root mean square, their noise 0.18: gain -0.2)
    got = {(g["recommendation"], g["recommendation_source"], g["sources"]["links"]["gain"] > 0) for g in groups}
    assert got == {("PCM", "the assignment", True), ("NO", "the links", False)}
    assert all("the file itself shows no confound" in g["assignment_found"]["reason"] for g in groups)


def test_adjust_tli_values(example, tmp_path):
    path, rows = example
    out = tmp_path / "adj.csv"
    res = run("adjust", path, "--scale", "0-5", "--group-col", "grade", "--resolve-discrepancies",
              "--method", "TLI,NO", "-o", out)
    assert res.exit_code == 0, res.output
    got = list(csv.DictReader(out.open()))
    assert len(got) == len(rows)
    assert list(got[0]) == ["grade", "paper", "rater", "score", "flag", "TLI", "TLI_paper", "NO", "NO_paper"]
    kept = kept_rows(rows)
    assert sum(r["flag"] == "dropped" for r in got) == len(rows) - len(kept)
    for g in (5, 8):
        k = [r for r in kept if r[0] == g]
        x = np.array([r[3] for r in k], float)
        m, s = x.mean(), x.std(ddof=1)
        raters = {r[2] for r in k}
        mj = {j: np.mean([r[3] for r in k if r[2] == j]) for j in raters}
        sj = {j: np.std([r[3] for r in k if r[2] == j], ddof=1) for j in raters}
        want = {(r[1], r[2]): np.clip((r[3] - mj[r[2]]) / sj[r[2]] * s + m, 0, 5) for r in k}
        for r in got:
            if r["grade"] == str(g) and r["flag"] != "dropped":
                assert float(r["TLI"]) == pytest.approx(want[(r["paper"], r["rater"])], abs=6e-5)
        # paper scores: NO is the mean of the kept raw scores
        papers = {}
        for r in k:
            papers.setdefault(r[1], []).append(r[3])
        for r in got:
            if r["grade"] == str(g):
                assert float(r["NO_paper"]) == pytest.approx(np.mean(papers[r["paper"]]), abs=6e-5)


@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_adjust_all_and_compare(example, tmp_path):
    path, _ = example
    out = tmp_path / "all.tsv"
    res = run("adjust", path, "--group-col", "grade", "--resolve-discrepancies", "-m", "all", "-o", out, "-q")
    assert res.exit_code == 0, res.output
    header = out.read_text().splitlines()[0].split("\t")
    assert header[5::2] == ["NO", "MN", "TMN", "LI", "TLI", "EQP", "OLS", "TLS", "RAS", "PCM"]

    png = tmp_path / "mds.png"
    res = run("compare", path, "--group-col", "grade", "--resolve-discrepancies", "--cut", "3.25",
              "--png", png, "--json", "-q")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    for g in data["groups"]:
        c = g["comparison"]
        rmsd = np.array(c["rmsd"], float)
        assert c["methods"][0] == "NO" and len(c["methods"]) == 10
        np.testing.assert_allclose(rmsd, rmsd.T)
        assert np.all(np.diag(rmsd) == 0) and np.all(rmsd[~np.eye(10, dtype=bool)] >= 0)
        pf = {r["method"]: r for r in g["pass_fail"]}
        assert pf["NO"]["helped"] == pf["NO"]["hurt"] == 0
        for r in pf.values():
            assert r["passing"] + r["failing"] == c["n_papers"] == 60
            # helped - hurt is the change in the number passing
            assert r["helped"] - r["hurt"] == r["passing"] - pf["NO"]["passing"]
        assert (tmp_path / f"mds_{g['group']}.png").read_bytes()[:4] == b"\x89PNG"
    res = run("compare", path, "--group-col", "grade", "-m", "NO,MN,TLI", "--cut", "3.25", "-q")
    assert res.exit_code == 0 and "root mean squared difference" in res.output and "helped" in res.output


def test_one_rater_data(tmp_path):
    p = tmp_path / "one.csv"
    p.write_text("paper,rater,score\n" + "".join(f"{i},{'AB'[i % 2]},{i % 5}\n" for i in range(20)))
    res = run("adjust", p, "--scale", "0-5", "-m", "OLS", "-o", tmp_path / "o.csv")
    assert res.exit_code == 2 and "OLS needs two or more raters per paper" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()
    res = run("adjust", p, "-m", "all", "-o", tmp_path / "o.csv")
    assert res.exit_code == 0 and "warning:" in res.stderr and "OLS skipped" in res.stderr
    assert (tmp_path / "o.csv").read_text().splitlines()[0].endswith("EQP,EQP_paper")


# -- bad input -----------------------------------------------------------------------
BAD = {
    "non-numeric": ("paper,rater,score\n1,A,3\n1,B,three\n", 3, "score"),
    "off-scale": ("paper,rater,score\n1,A,3\n1,B,6\n", 3, "score"),
    "duplicate": ("paper,rater,score\n1,A,3\n2,A,4\n1,A,2\n", 4, "rater"),
    "missing-column": ("paper,reader,score\n1,A,3\n", 1, "rater"),
    "short-row": ("paper,rater,score\n1,A,3\n1,B\n", 3, "expected 3 fields"),
    "blank-rater": ("paper,rater,score\n1,,3\n", 2, "rater"),
    "header-only": ("paper,rater,score\n", 2, "no ratings"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("command", ["check", "adjust", "compare"])
def test_bad_input_exit_2(tmp_path, kind, command):
    text, line, field = BAD[kind]
    p = tmp_path / "bad.csv"
    p.write_text(text)
    out = tmp_path / "out.csv"
    extra = {"check": [], "adjust": ["-o", out], "compare": ["--png", tmp_path / "m.png"]}[command]
    res = run(command, p, "--scale", "0-5", *extra)
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {p}:{line}: ")
    assert field in err and "Traceback" not in res.output
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.csv"]      # nothing half-written


def test_empty_and_missing_file(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    for cmd in ("check", "adjust", "compare"):
        res = run(cmd, p)
        assert res.exit_code == 2 and res.stderr.strip() == f"error: {p}: empty file"
    res = run("check", tmp_path / "nope.csv")
    assert res.exit_code == 2 and "no such file" in res.stderr
    res = run("adjust", tmp_path / "nope.csv", "-m", "XYZ")
    assert res.exit_code == 2


def test_unknown_method_and_bad_scale(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("paper,rater,score\n1,A,3\n1,B,4\n")
    res = run("adjust", p, "-m", "XYZ")
    assert res.exit_code == 2 and res.stderr.strip().startswith("error: --method: unknown method XYZ")
    res = run("check", p, "--scale", "5-0")
    assert res.exit_code == 2 and "--scale" in res.stderr


def test_warnings_let_the_method_go_on(tmp_path):
    # rater C has one rating; paper 3's only rating is blank
    p = tmp_path / "w.csv"
    p.write_text("paper,rater,score\n1,A,3\n1,B,4\n2,A,2\n2,B,2\n3,A,\n4,C,5\n4,B,3\n5,A,1\n5,B,3\n")
    out = tmp_path / "o.csv"
    res = run("adjust", p, "--scale", "0-5", "-m", "TMN", "-o", out)
    assert res.exit_code == 0, res.output
    assert f"{p}:7: rater: rater C has only one rating" in res.stderr
    assert f"{p}:6: score: 1 paper(s) with no usable rating (e.g. paper 3)" in res.stderr
    got = list(csv.DictReader(out.open()))
    assert got[4]["flag"] == "missing" and got[4]["TMN"] == got[4]["TMN_paper"] == ""
    # TMN by hand: means A 2, B 3, C 5, overall 23/8; clipped to 0..5.  The corrected
    # variant leaves a one-rating rater (C) unadjusted; the faithful one maps it to the mean.
    m = 23 / 8
    want = [3 - 2 + m, 4 - 3 + m, 2 - 2 + m, 2 - 3 + m, None, 5, 3 - 3 + m, 1 - 2 + m, 3 - 3 + m]
    for r, w in zip(got, want):
        if w is not None:
            assert float(r["TMN"]) == pytest.approx(min(max(w, 0), 5), abs=6e-5)
    res = run("adjust", p, "--scale", "0-5", "-m", "TMN", "--variant", "faithful", "-o", out, "-q")
    assert res.exit_code == 0 and res.stderr == ""
    got = list(csv.DictReader(out.open()))
    assert float(got[5]["TMN"]) == pytest.approx(m, abs=6e-5)
    assert float(got[5]["TMN_paper"]) == pytest.approx((m + m) / 2, abs=6e-5)


def test_adjust_run_folder_calls_equate(tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("ratercal_cli.study.equate")
    fake.run_equate = lambda run, methods=None, variants=None, quiet=False: calls.append(
        (run.root, methods, variants, quiet))
    monkeypatch.setitem(sys.modules, "ratercal_cli.study.equate", fake)
    import ratercal_cli.study as study
    monkeypatch.setattr(study, "equate", fake, raising=False)
    (tmp_path / "config.yaml").write_text("generator: pcm\ncells: [{raters_per_paper: 2, papers: 100, max_score: 5}]\n")
    res = run("adjust", tmp_path, "-m", "TLI,MN", "-q")
    assert res.exit_code == 0, res.output
    assert calls == [(tmp_path, ["TLI", "MN"], None, True)]      # None: the run's own variant
    run("adjust", tmp_path, "--variant", "corrected")
    assert calls[-1] == (tmp_path, None, ("corrected",), False)


def test_tsv_with_custom_columns(tmp_path):
    p = tmp_path / "r.tsv"
    p.write_text("essay\treader\tmark\n1\tA\t4\n1\tB\t5\n2\tA\t2\n2\tB\t4\n3\tA\t3\n3\tB\t3\n")
    out = tmp_path / "o.tsv"
    res = run("adjust", p, "--scale", "1-5", "--paper-col", "essay", "--rater-col", "reader",
              "--score-col", "mark", "-m", "MN", "-o", out)
    assert res.exit_code == 0, res.output
    lines = [ln.split("\t") for ln in out.read_text().splitlines()]
    assert lines[0] == ["essay", "reader", "mark", "flag", "MN", "MN_paper"]
    # means A 3, B 4, overall 3.5: A +0.5, B -0.5, on the 1-5 scale as given
    assert [float(ln[4]) for ln in lines[1:]] == pytest.approx([4.5, 4.5, 2.5, 3.5, 3.5, 2.5])


# -- compare --png -------------------------------------------------------------------
def _two_group_file(path, second="8", second_one_rater=True):
    lines = ["grade,paper,rater,score"]
    for p in range(12):
        lines += [f"5,P{p},R{p % 4},{p % 6}", f"5,P{p},R{(p + 1) % 4},{(p + 2) % 6}"]
        lines += [f"{second},Q{p},S{p % 3},{(p + 1) % 6}"]
        if not second_one_rater:
            lines += [f"{second},Q{p},S{(p + 1) % 3},{(p * 5) % 6}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_compare_png_written_only_when_every_group_succeeds(tmp_path):
    # grade 5 has two raters per paper (OLS applies), grade 8 one: OLS fails in the second group
    p = _two_group_file(tmp_path / "r.csv")
    res = run("compare", p, "--scale", "0-5", "--group-col", "grade", "-m", "OLS", "--png", tmp_path / "m.png")
    assert res.exit_code == 2 and "grade=8" in res.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["r.csv"]     # no map of grade 5 left behind


def test_compare_png_names_must_not_collide(tmp_path):
    p = tmp_path / "r.csv"
    _two_group_file(p, second="a b", second_one_rater=False)
    p.write_text(p.read_text().replace("\n5,", "\na_b,"))
    res = run("compare", p, "--scale", "0-5", "--group-col", "grade", "-m", "NO,MN", "--png", tmp_path / "m.png")
    assert res.exit_code == 2
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "--png" in err and "m_a_b.png" in err and "'a b'" in err
    assert sorted(f.name for f in tmp_path.iterdir()) == ["r.csv"]


def test_compare_png_is_deterministic(tmp_path):
    p = _two_group_file(tmp_path / "r.csv", second_one_rater=False)
    for k in (1, 2):
        res = run("compare", p, "--scale", "0-5", "--group-col", "grade", "-m", "NO,MN,LI,TLI",
                  "--png", tmp_path / f"m{k}.png", "-q")
        assert res.exit_code == 0, res.output
    for g in ("5", "8"):
        one, two = ((tmp_path / f"m{k}_{g}.png").read_bytes() for k in (1, 2))
        assert one[:4] == b"\x89PNG" and one == two and b"atplotlib" not in one


# -- adjust RUN_DIR ------------------------------------------------------------------
@pytest.mark.parametrize("option", [["--scale", "0-5"], ["-o", "x.csv"], ["--group-col", "grade"],
                                    ["--sep", "tab"], ["--resolve-discrepancies"], ["--score-col", "s"],
                                    ["--discrepancy", "2"], ["--leave-out", "R1"]])
def test_adjust_run_dir_refuses_file_options(tmp_path, monkeypatch, option):
    calls = []
    fake = types.ModuleType("ratercal_cli.study.equate")
    fake.run_equate = lambda *a, **k: calls.append((a, k))
    monkeypatch.setitem(sys.modules, "ratercal_cli.study.equate", fake)
    (tmp_path / "config.yaml").write_text("generator: pcm\ncells: [{raters_per_paper: 2, papers: 100, max_score: 5}]\n")
    res = run("adjust", tmp_path, *option)
    assert res.exit_code == 2 and not calls
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and option[0] in err and "run folder" in err
    # the options a run folder does take still reach it
    res = run("adjust", tmp_path, "-m", "MN", "--variant", "faithful", "-q")
    assert res.exit_code == 0 and [(a[0].root, k) for a, k in calls] == \
        [(tmp_path, {"methods": ["MN"], "variants": ("faithful",), "quiet": True})]


# -- the rater report, agreement and the corrected study's advice in check ----------------
@pytest.mark.slow  # over 0.6 s: `make test-slow` (CI) runs it
def test_check_examples_rater_report_agreement_and_study(tmp_path):
    """The issue's done-when: ``check examples/ratings.csv --scale 0-5 --group-col grade``."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    path = root / "examples" / "ratings.csv"
    res = run("check", path, "--scale", "0-5", "--group-col", "grade", "-q", "--png", tmp_path / "map.png")
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.count("Rater measurement report (rating scale model") == 3
    assert out.count("Agreement (") == 3 and "Krippendorff's alpha" in out and "ICC(1)" in out
    assert out.count("CORRECTED STUDY supports TLI") == 3 and "2+: TLI 0.6675 +- 0.0006 (rank 1)" in out
    assert "Rater x grade bias/interaction" in out and "of 30 cells significant" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["map_11.png", "map_5.png", "map_8.png"]
    data = json.loads(run("check", path, "--scale", "0-5", "--group-col", "grade", "--json").stdout)
    g11 = data["groups"][2]
    assert g11["group"] == "11"
    # grade 11 is tests/results/agreement_grade11_0-5.csv: the R (psych) numbers
    with open(root / "tests" / "results" / "r_agreement.csv", newline="") as fh:
        ref = {r["statistic"]: float(r["value"]) for r in csv.DictReader(fh)
               if r["dataset"] == "agreement_grade11_0-5" and not r["rater_a"]}
    ov = g11["agreement"]["overall"]
    assert ov["kappa_w"] == pytest.approx(ref["kappa_w"], abs=1e-9)
    assert ov["alpha_ordinal"] == pytest.approx(ref["alpha_ordinal"], abs=1e-9)
    assert ov["icc"]["icc1"] == pytest.approx(ref["icc1"], abs=1e-9)
    rr = g11["rater_report"]
    assert rr["fitted"] and len(rr["raters"]) == 10
    assert abs(sum(r["measure"] for r in rr["raters"])) < 1e-9      # centred severities
    assert sum(r["count"] for r in rr["raters"]) == g11["n_ratings"] == 248
    assert 0 < rr["rater_separation"]["reliability"] < 1
    assert g11["study"]["method"] == "TLI" and g11["study"]["levels"]["raters"]["method"]["rmse"] == 0.667467
    bias = data["bias"]
    assert bias["fitted"] and len(bias["rows"]) == 30
    # bias = severity in the grade minus the rater's mean over grades: sums to 0 per rater
    for rid in {r["rater"] for r in bias["rows"]}:
        assert abs(sum(r["bias"] for r in bias["rows"] if r["rater"] == rid)) < 1e-9
    sev11 = {r["rater"]: r["measure"] for r in rr["raters"]}
    assert all(r["severity"] == sev11[r["rater"]] for r in bias["rows"] if r["group"] == "11")


def test_check_one_rater_per_paper_says_the_model_cannot_be_fitted(tmp_path):
    p = tmp_path / "one.csv"
    p.write_text("paper,rater,score\n" + "".join(f"P{i},R{i % 3},{i % 4}\n" for i in range(30)))
    res = run("check", p, "--scale", "0-3", "-q")
    assert res.exit_code == 0
    assert "Rater measurement report: not available: the rating scale model cannot be fitted " \
        "(needs two or more raters per paper)" in res.output
    assert "Agreement: no paper has two ratings" in res.output


def test_output_to_a_pipe_closed_early_ends_quietly(tmp_path):
    """``adjust ... -o - | head -1``: no 'error: Broken pipe' line, the shell's exit code for SIGPIPE."""
    import subprocess
    import sys

    src = tmp_path / "big.csv"   # ~0.5 MB of output: far more than a pipe's buffer
    src.write_text("paper,rater,score\n" + "".join(f"P{p},R{(p + k) % 7},{(p * 3 + k) % 6}\n"
                                                  for p in range(12000) for k in (0, 1)))
    cmd = [sys.executable, "-m", "ratercal_cli.cli", "adjust", str(src), "--scale", "0-5", "-m", "MN",
           "-o", "-", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()                      # the reader leaves after one line
    err = proc.stderr.read().decode()
    assert first.startswith(b"paper,rater,score,flag,MN") and proc.wait(timeout=60) == 141
    assert err == ""


def test_the_console_script_delivers_all_output_and_its_exit_status(tmp_path):
    """The console script (``cli.main``): a piped output is whole, and the status is the command's."""
    import subprocess
    import sys

    src = tmp_path / "big.csv"
    src.write_text("paper,rater,score\n" + "".join(f"P{p},R{(p + k) % 7},{(p * 3 + k) % 6}\n"
                                                  for p in range(3000) for k in (0, 1)))
    main = [sys.executable, "-c", "from ratercal_cli.cli import main; main()"]
    out = subprocess.run(main + ["adjust", str(src), "--scale", "0-5", "-m", "MN", "-o", "-", "-q"],
                         capture_output=True, text=True)
    lines = out.stdout.splitlines()   # ~150 KB: more than a pipe holds, so flushed at the end too
    assert out.returncode == 0 and len(lines) == 6001 and lines[-1].startswith("P2999,R")
    bad = subprocess.run(main + ["adjust", str(tmp_path / "missing.csv"), "--scale", "0-5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip().endswith("missing.csv: no such file")


def test_a_tab_separated_file_is_written_back_with_tabs_unless_the_output_is_named_csv(tmp_path):
    """Found by the tester: ``-o x.txt`` from a tab-separated file wrote commas (only .tsv/.tab names got tabs)."""
    p = tmp_path / "r.txt"
    p.write_text("paper\trater\tscore\n1\tA\t4\n1\tB\t5\n2\tA\t2\n2\tB\t4\n")
    for name, sep in (("o.txt", "\t"), ("o.tsv", "\t"), ("o.csv", ",")):
        res = run("adjust", p, "--scale", "0-5", "-m", "MN", "-o", tmp_path / name, "-q")
        assert res.exit_code == 0, res.output
        # MN: each rating moved by the mean of all (3.75) minus its rater's (A 3, B 4.5): paper 1 (4.75 + 4.25) / 2
        assert (tmp_path / name).read_text().splitlines()[:2] == [
            sep.join(["paper", "rater", "score", "flag", "MN", "MN_paper"]), sep.join(["1", "A", "4", "", "4.7500", "4.5000"])]
