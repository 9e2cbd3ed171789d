"""Issue 28 item 7: on random scores adjust put every paper near the mean (MFRM: all 202 at 3.536,
S.E. 0.0003), failed nearly every passing paper, called none uncertain and said nothing.  adjust now
runs check --simulate's paper-signal test and warns, in its warnings, its JSON and the HTML summary."""

import json

import numpy as np

import ratercal_cli as rc

from partial_double import partial_double
from support import run


def _random_scores(path, n=202, seed=7):
    rng = np.random.default_rng(seed)
    lines = ["paper,rater,score"]
    for p in range(n):
        for j in rng.choice(10, 2, replace=False):
            lines.append(f"P{p + 1},R{j + 1},{rng.integers(0, 6)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_adjust_warns_when_the_papers_do_not_differ(tmp_path):
    f = _random_scores(tmp_path / "random.csv")
    res = rc.adjust(rc.read_ratings(f, scale="0-5"), "MFRM,TLI", cut=3.5)
    w = [x for x in res.warnings if "do not differ detectably" in x]
    assert len(w) == 1 and "p = 0.53" in w[0] and "MFRM put every paper near the mean" in w[0]
    # the MFRM's papers really are all near the mean: the warning is about what the numbers show
    mfrm = np.asarray(res.groups[0].adjusted["MFRM"].paper)
    assert mfrm.std() < 0.1
    out = run("adjust", f, "--scale", "0-5", "-m", "MFRM", "--cut", "3.5", "-o", tmp_path / "o.csv",
              "--html", tmp_path / "r.html", "--json")
    assert out.exit_code == 0, out.output
    assert any("do not differ detectably" in x for x in json.loads(out.stdout)["groups"][0]["warnings"])
    summary = (tmp_path / "r.html").read_text().split('id="summary"')[1].split("</div>")[0]
    assert "do not differ detectably" in summary


def test_no_such_warning_where_the_papers_differ(tmp_path):
    partial_double(tmp_path / "pd.csv", share=1.0)
    res = rc.adjust(rc.read_ratings(tmp_path / "pd.csv", scale="0-5"), "MFRM")
    assert not any("differ detectably" in x for x in res.warnings)
    assert res.groups[0].signal_warning == ""
