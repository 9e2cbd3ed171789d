"""Schools read by their own raters, no column saying so (issue 29's confounded assignment, over the
design space): 2-3 schools of different mean quality, apart or linked by a few papers read across.
Where the raters fall into groups that share no paper (found here by a union-find of the file's rows,
not by the project's network code), ``check`` recommends leaving the scores alone and ``adjust``
says that a linking method put the groups on one scale; where every rater is linked, it says nothing."""

import json
import tempfile
from pathlib import Path

from hypothesis import event, given

from designs import school_designs, write_csv
from test_commands import invoke


def rater_groups(rows):
    """The number of groups of raters joined by shared papers (union-find over each paper's raters)."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first = {}
    for r in rows:
        a, b = find(r["rater"]), find(first.setdefault(r["paper"], r["rater"]))
        parent[a] = b
    return len({find(x) for x in parent})


@given(design=school_designs())
def test_raters_in_groups_that_share_no_paper_are_told_and_left_alone(design):
    rows = design.rows()
    groups = rater_groups(rows)
    event(f"groups {groups}")
    with tempfile.TemporaryDirectory() as tmp:
        f = write_csv(rows, design.columns(), Path(tmp) / "r.csv")
        code, out, _ = invoke("check", f, "--scale", design.scale, "--json")
        assert code == 0
        rec = json.loads(out)["groups"][0]["recommendation"]
        if groups > 1:
            assert rec == "NO", (groups, rec)
        code, out, _ = invoke("adjust", f, "--scale", design.scale, "-m", "TLI", "-o", Path(tmp) / "o.csv", "--json")
        assert code == 0
        told = [w for w in json.loads(out)["groups"][0]["warnings"] if "share no paper" in w]
        assert len(told) == (1 if groups > 1 else 0), (groups, told)
        if groups > 1:
            assert f"fall into {groups} groups" in told[0]
