"""A paper scored on fewer criteria than the others: its rubric sum total is short, and says so."""

from support import run


def test_a_paper_missing_a_criterion_is_warned(tmp_path):
    rows = ["student,rater,style,org"]
    for k in range(12):
        for r in ("R1", "R2") if k % 2 else ("R2", "R3"):
            rows.append(f"S{k},{r},{1 + (k + len(r)) % 6},{1 + k % 6}")
    rows[1] = rows[1].rsplit(",", 1)[0] + ","
    rows[2] = rows[2].rsplit(",", 1)[0] + ","
    f = tmp_path / "w.csv"
    f.write_text("\n".join(rows) + "\n")
    res = run("adjust", f, "--scale", "1-6", "--paper-col", "student", "--score-cols", "style,org",
              "-m", "NO", "-o", tmp_path / "o.csv")
    assert res.exit_code == 0, res.output
    assert "1 paper(s) scored in fewer cells than the others (S0 (1 of 2))" in res.stderr
