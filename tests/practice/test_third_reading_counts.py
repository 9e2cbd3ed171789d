"""The third-reading warning of a rubric counts papers, not paper x criterion cells: a staff tester's 104 papers
read a third time (on 210 of their criteria) were "210 paper(s) have a third rating"."""

from __future__ import annotations

from support import run


def test_a_rubric_third_reading_counts_papers_and_names_the_cells(tmp_path):
    lines = ["paper,rater,order,criterion,score"]
    for p in range(40):
        third = p < 6   # six papers read a third time, on two criteria each where the first two differ by 3
        for k, rater in enumerate(("R1", "R2") + (("R3",) if third else ())):
            for c in ("ideas", "voice", "conventions"):
                wide = third and c != "conventions"
                score = 3 if not wide else (1, 4, 4)[k]
                lines.append(f"P{p},{rater},{k + 1},{c},{score + (p % 2)}")
    f = tmp_path / "rubric.csv"
    f.write_text("\n".join(lines) + "\n")
    res = run("check", f, "--scale", "0-5", "--facet-col", "criterion", "--no-rasch")
    assert res.exit_code == 0, res.output
    assert (f"{f}: 6 paper(s) (12 paper x criterion cells) have a third rating after two more than 1 point(s) "
            "apart") in res.stderr
    res = run("check", f, "--scale", "0-5", "--facet-col", "criterion", "--no-rasch", "--resolve-discrepancies")
    assert f"{f}: 6 discrepant paper(s) (12 paper x criterion cells) resolved" in res.stderr
