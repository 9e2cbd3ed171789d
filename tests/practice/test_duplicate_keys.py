"""A second rating of one paper by one rater is refused whichever way the keys are counted: in a table of
every possible key (few papers x raters per row: a complete panel, a rubric) or by hashing (many of both),
and where each paper's ratings are together and few (the neighbour check) or not."""

import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.practice.ratings_file import Columns, read_ratings_file


def _lines(papers, raters, facets=("",)):
    """Each paper rated by each rater (in each facet level), the paper's lines together."""
    return [f"P{p},R{r}{f},{(p + r) % 6}" for p in papers for r in raters for f in facets]


CASES = {
    # 10 raters a paper: past the neighbour check; 12 x 10 keys for 120 rows: counted in a table
    "complete panel": ("paper,rater,score", _lines(range(12), range(10))),
    # a rubric: paper x rater x criterion
    "rubric": ("paper,rater,criterion,score", _lines(range(6), range(9), (",a", ",b"))),
    # 30 papers, each by 10 of 300 raters: 30 x 300 keys for 300 rows: hashed
    "sparse": ("paper,rater,score", [f"P{p},R{(p * 10 + k)},{k % 6}" for p in range(30) for k in range(10)]),
}


@pytest.mark.parametrize("name", CASES)
def test_a_repeated_key_is_refused_and_named(tmp_path, name):
    head, lines = CASES[name]
    facets = ("criterion",) if "criterion" in head else ()
    ok = tmp_path / "ok.csv"
    ok.write_text("\n".join([head, *lines]) + "\n")
    assert len(read_ratings_file(ok, "0-5", Columns(facets=facets)).rows) == len(lines)
    # the 5th line repeated at the end, with another score: refused, named at the last line
    bad = tmp_path / "bad.csv"
    again = lines[3].rsplit(",", 1)[0] + ",0"
    bad.write_text("\n".join([head, *lines, again]) + "\n")
    key = lines[3].split(",")
    with pytest.raises(InputError) as exc:
        read_ratings_file(bad, "0-5", Columns(facets=facets))
    at = f", criterion {key[2]}" if facets else ""
    assert str(exc.value) == (f"{bad}:{len(lines) + 2}: rater: duplicate rating of paper {key[0]} by rater {key[1]}{at} "
                              "(first at line 5)")
