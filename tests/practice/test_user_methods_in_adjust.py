"""rc.adjust and rc.compare take a method of the user's own, ``module:Class``, as the study does (a researcher
found only make_method and the study did): on read-only data, its failures named; the command line runs none."""


import numpy as np
import pytest

import ratercal_cli as rc
from ratercal_cli.errors import ArgumentError

from support import ROOT, run, user_module

MODULE = '''
import numpy as np
from ratercal_cli.ratings import Adjusted

class MedianRating:   # each paper's median rating, every rating that
    def fit(self, ratings):
        return self
    def transform(self, ratings):
        med = np.array([np.median(ratings.score[ratings.paper == p]) if (ratings.paper == p).any() else np.nan
                        for p in range(ratings.n_papers)])
        return Adjusted(rating=med[ratings.paper], paper=med)
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    return user_module(tmp_path, monkeypatch, "my_methods", MODULE)


def test_adjust_and_compare_take_a_method_of_ones_own(module):
    r = rc.read_ratings(ROOT / "examples" / "ratings.csv", scale="0-5", group_col="grade", resolve_discrepancies=True)
    res = rc.adjust(r, ["TLI", "my_methods:MedianRating"])
    assert res.methods == ["TLI", "my_methods:MedianRating"]
    g = res.groups[0]
    med = [np.median(g.ratings.score[g.ratings.paper == p]) for p in range(g.ratings.n_papers)]
    np.testing.assert_allclose(g.adjusted["my_methods:MedianRating"].paper, med)
    assert "my_methods:MedianRating" in res.to_frame().columns
    cmp = rc.compare(r, ["TLI", "my_methods:MedianRating"])
    assert "my_methods:MedianRating" in cmp.to_frame().to_string()
    with pytest.raises(ArgumentError, match="methods: module 'my_methods' has no 'Nope'"):
        rc.adjust(r, ["my_methods:Nope"])


def test_the_command_line_runs_no_method_of_ones_own(module, tmp_path):
    res = run("adjust", ROOT / "examples" / "ratings.csv", "--scale", "0-5", "-m", "my_methods:MedianRating",
              "-o", tmp_path / "o.csv")
    assert res.exit_code == 2 and "unknown method MY_METHODS:MEDIANRATING" in res.output
