"""NO: raw scores, paper score = mean of its ratings (EZEQ.BAS first block)."""

import numpy as np
import pytest

from ratercal_cli.methods import make_method
from ratercal_cli.methods.none import NoEquating
from ratercal_cli.ratings import Ratings


def _ratings():
    # paper 0: 3, 4; paper 1: 1, 2, 2 (three ratings); paper 2: 0
    return Ratings(paper=[0, 0, 1, 1, 1, 2], rater=[0, 1, 0, 1, 2, 2],
                   score=[3, 4, 1, 2, 2, 0], max_score=4, n_papers=3, n_raters=3)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
def test_ratings_unchanged_and_paper_means(variant):
    adj = NoEquating(variant).fit_transform(_ratings())
    assert adj.rating.tolist() == [3, 4, 1, 2, 2, 0]
    assert adj.paper[0] == 3.5 and adj.paper[2] == 0.0
    if variant == "faithful":
        # adj / mj in single precision: 5 / 3 rounded to float32
        assert adj.paper[1] == float(np.float32(5) / np.float32(3))
        assert adj.paper[1] != 5 / 3
    else:
        assert adj.paper[1] == 5 / 3


def test_registry_builds_no():
    m = make_method("no", "corrected")
    assert isinstance(m, NoEquating) and m.variant == "corrected"
    assert m.get_params() == {"variant": "corrected"}
