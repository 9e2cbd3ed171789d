"""Words a staff tester found wrong: the app's list of methods called RAS "the rating-scale model" beside RSM,
"the rating scale model" (RAS is de Gruijter's Rasch extension), and named PWEQP and SEQP only by code; an empty
folder given with -o was "a run folder"."""

from __future__ import annotations

from support import run

from ratercal_cli.methods import method_codes
from ratercal_cli.practice.memo import METHOD_NAMES, method_words


def test_every_method_has_its_own_words():
    assert method_words("RAS") == "the Rasch extension (de Gruijter 1984) (RAS)"
    # a recommendation's qualifiers beside its code: "(TLI (shrunk))" doubled the brackets
    assert method_words("TLI (shrunk)") == f"{METHOD_NAMES['TLI']} (TLI, shrunk)"
    assert method_words("MML (multi-group, shrunk)") == f"{METHOD_NAMES['MML']} (MML, multi-group, shrunk)"
    assert method_words("NO (shrunk)").endswith("by its reliability (NO, shrunk)")
    assert set(method_codes()) <= set(METHOD_NAMES)
    names = [METHOD_NAMES[c] for c in method_codes()]
    assert len(set(names)) == len(names)


def test_an_empty_folder_is_not_called_a_run_folder(tmp_path):
    folder = tmp_path / "adir"
    folder.mkdir()
    res = run("adjust", folder, "-o", tmp_path / "x.csv")
    assert res.exit_code == 2 and res.stderr.strip() == (f"error: --output/-o applies only to a ratings file, and "
                                                         f"{folder} is a folder (not a ratings file)")


def test_a_file_of_one_rater_is_not_told_that_no_test_found_the_raters_differing(tmp_path):
    """A staff tester's one-rater file: "no test found the raters differing significantly: no adjustment is
    necessary", where no test could be run."""
    src = tmp_path / "one.csv"
    src.write_text("paper,rater,score\n" + "".join(f"P{p},R1,{p % 6}\n" for p in range(30)))
    out = run("check", src, "--scale", "0-5", "-q")
    assert out.exit_code == 0, out.output
    assert ("recommended NO -- Chapter 5's rule: one rater (R1) scored every paper: no other to compare it with; "
            "adjustment warranted: no (a single rater: no test to run)") in out.stdout
    assert "no test found the raters differing" not in out.stdout


def test_the_app_names_every_setting_a_message_may_name():
    """The app's pages showed resolve_discrepancies and simulate, the library's names, where they name settings."""
    from ratercal_cli.app.work import SETTING_NAMES

    assert SETTING_NAMES["resolve_discrepancies"] == "Resolve third readings"
    assert SETTING_NAMES["simulate"] == "Simulate the methods"


def test_a_fits_line_counts_its_parameters_as_its_summary_does():
    """A researcher's: MML's FitResults said 74 parameters in its line and 61 in summary() (derived rows counted)."""
    import numpy as np

    import ratercal_cli as rc

    rng = np.random.default_rng(3)
    paper = np.repeat(np.arange(60), 2)
    rater = np.column_stack([np.arange(60) % 6, (np.arange(60) + 1) % 6]).ravel()
    score = np.clip(np.rint(2 + rng.normal(0, 1, 60)[paper] + rng.normal(0, 0.6, 120)), 0, 4).astype(int)
    res = rc.fit(rc.Ratings(paper, rater, score, 4, 60, 6), model="MML")
    assert f"{res.df_model} parameters (" in repr(res) and f"parameters: {res.df_model}" in res.summary()


def test_a_shrinkage_named_is_in_the_memos_decision_and_settings_and_no_heading_doubles_brackets(tmp_path):
    """A tester's ``-m TLI --shrinkage kelley`` memo said "adjust the scores by truncated linear equating (TLI)"
    and listed no shrinkage among "every setting", beside "16 of these 55 level change(s) come from the
    shrinkage alone"; and the summary and the page headed the recommendation "recommended (TLI (shrunk))"."""
    import re
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "examples" / "ratings.csv"
    memo, page = tmp_path / "memo.html", tmp_path / "page.html"
    res = run("adjust", src, "--scale", "0-5", "--group-col", "grade", "-m", "TLI", "--shrinkage",
              "kelley", "--cut", "2.5,3.5", "--levels", "Low,Mid,High", "-o", tmp_path / "a.csv", "--memo", memo)
    assert res.exit_code == 0, res.output
    text = memo.read_text()
    assert text.count("adjust the scores by truncated linear equating (TLI, shrunk).") == 3
    assert re.search(r"<th>shrinkage</th>\s*<td>kelley</td>", text)
    res = run("adjust", src, "--scale", "0-5", "--group-col", "grade", "-m", "recommended",
              "--resolve-discrepancies", "-o", tmp_path / "b.csv", "--html", page)
    assert res.exit_code == 0, res.output
    assert "recommended (MML, shrunk)" in res.stderr and "recommended (MML, shrunk)" in page.read_text()
    assert not re.search(r"\([A-Z]+ \([a-z]", res.stderr + page.read_text())
