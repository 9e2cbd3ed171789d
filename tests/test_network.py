"""Rater network: pairs of ratings on a paper, shared papers, connected components."""

import numpy as np
import pytest

from ratercal_cli.errors import MethodError
from ratercal_cli.network import (disconnected_raters, rater_components, rating_pairs,
                                  require_connected, shared_papers)
from ratercal_cli.ratings import Ratings


def _ratings(paper, rater, n_raters, n_papers=None, max_score=4, rater_ids=()):
    paper = np.asarray(paper)
    return Ratings(paper, np.asarray(rater), np.zeros(paper.size, dtype=int), max_score,
                   int(paper.max()) + 1 if n_papers is None else n_papers, n_raters,
                   rater_ids=rater_ids)


def test_rating_pairs_follow_basic_loop_order():
    # Papers appear in the file as 2, 0, 1 (indices); paper 2 has raters 5, 1, 3.
    r = _ratings(paper=[2, 2, 2, 0, 0, 1], rater=[5, 1, 3, 4, 2, 0], n_raters=6)
    first, second = rating_pairs(r)
    # paper 2 sorted by rater: ratings 1 (r1), 2 (r3), 0 (r5) -> (1,2), (1,0), (2,0)
    # then paper 0: ratings 4 (r2), 3 (r4) -> (4,3); paper 1 has one rating.
    assert first.tolist() == [1, 1, 2, 4]
    assert second.tolist() == [2, 0, 0, 3]
    assert (r.rater[first] <= r.rater[second]).all()


def test_rating_pairs_count_is_m_choose_2_per_paper():
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 6, size=40)
    paper = rng.permutation(np.repeat(np.arange(40), counts))
    rater = rng.integers(0, 7, size=paper.size)
    first, second = rating_pairs(_ratings(paper, rater, 7))
    assert first.size == int((counts * (counts - 1) // 2).sum())
    assert (paper[first] == paper[second]).all()
    # every unordered pair of ratings on a paper appears exactly once
    pairs = {tuple(sorted(p)) for p in zip(first.tolist(), second.tolist())}
    assert len(pairs) == first.size


def test_shared_papers_by_hand():
    # paper 0: raters 0,1,2; paper 1: raters 0,1; paper 2: rater 2 alone; rater 3 unused
    r = _ratings(paper=[0, 0, 0, 1, 1, 2], rater=[0, 1, 2, 1, 0, 2], n_raters=4)
    expected = np.array([[2, 2, 1, 0],
                         [2, 2, 1, 0],
                         [1, 1, 2, 0],
                         [0, 0, 0, 0]])
    np.testing.assert_array_equal(shared_papers(r), expected)


def test_components_and_cut_off_raters():
    # {0,1,2} linked by papers 0-1, {3,4} by paper 2, rater 5 only alone, rater 6 unused
    r = _ratings(paper=[0, 0, 1, 1, 2, 2, 3], rater=[0, 1, 1, 2, 3, 4, 5], n_raters=7)
    labels = rater_components(r)
    assert labels.tolist() == [0, 0, 0, 1, 1, 2, -1]
    assert disconnected_raters(r).tolist() == [3, 4, 5]


def test_largest_component_tie_goes_to_more_ratings():
    # two groups of two raters; the second has more ratings, so the first is cut off
    r = _ratings(paper=[0, 0, 1, 1, 2, 2], rater=[0, 1, 2, 3, 3, 2], n_raters=4)
    assert disconnected_raters(r).tolist() == [0, 1]


def test_links_override_shared_papers():
    r = _ratings(paper=[0, 0, 1, 1], rater=[0, 1, 1, 2], n_raters=3)
    assert disconnected_raters(r).size == 0
    cut = disconnected_raters(r, links=(np.array([0]), np.array([1])))
    assert cut.tolist() == [2]


def test_require_connected_names_raters_by_label():
    r = _ratings(paper=[0, 0, 1, 1, 2, 2, 3], rater=[0, 1, 1, 2, 3, 4, 2], n_raters=5,
                 rater_ids=("ann", "bob", "cy", "dee", "eve"))
    with pytest.raises(MethodError, match=r"OLS: raters dee, eve not linked .* raters ann, bob, cy"):
        require_connected(r, "OLS")
    connected = _ratings(paper=[0, 0, 1, 1], rater=[0, 1, 1, 2], n_raters=3)
    assert require_connected(connected, "OLS") is None


def _union_find_components(n, edges):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    return [find(i) for i in range(n)]


def test_components_match_union_find_on_random_sparse_designs():
    rng = np.random.default_rng(11)
    for _ in range(20):
        nr, npap = 12, 8
        k = rng.integers(1, 3, size=npap)
        paper = np.repeat(np.arange(npap), k)
        rater = np.concatenate([rng.choice(nr, size=m, replace=False) for m in k])
        r = _ratings(paper, rater, nr, n_papers=npap)
        edges = [(a, b) for p in range(npap) for a in rater[paper == p] for b in rater[paper == p]]
        roots = _union_find_components(nr, edges)
        labels = rater_components(r)
        active = np.bincount(rater, minlength=nr) > 0
        assert ((labels >= 0) == active).all()
        for i in np.flatnonzero(active):
            for j in np.flatnonzero(active):
                assert (labels[i] == labels[j]) == (roots[i] == roots[j])


@pytest.mark.parametrize("dense", [0, np.inf])   # the pair counts always, the dense product always
@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("rows", [1 << 16, 7])   # the dense product's papers in one block, or several
def test_shared_papers_counts_each_pair_of_raters_papers_once(dense, shuffled, rows, monkeypatch):
    """``shared_papers`` is A'A of the papers x raters incidence (issue 32: listing every paper's rater
    pairs took 12 s at 21 raters a paper); checked against a count by sets, repeats of a rater on a
    paper counted once, on drawn designs (up to 9 ratings a paper, the ratings in paper order or
    shuffled), by the pair counts and by the dense product (its papers in one block or blocks of 7)."""
    from itertools import combinations

    import ratercal_cli.network as network

    monkeypatch.setattr(network, "DENSE_GRAM", dense)
    monkeypatch.setattr(network, "DENSE_ROWS", rows)

    rng = np.random.default_rng(32)
    for _ in range(25):
        P, J = int(rng.integers(1, 40)), int(rng.integers(1, 12))
        paper, rater = [], []
        for p in range(P):
            who = list(rng.choice(J, int(rng.integers(1, min(J, 9) + 1)), replace=False))
            if rng.random() < 0.3:
                who.append(who[0])   # the same rater twice on a paper
            paper += [p] * len(who)
            rater += who
        order = rng.permutation(len(paper)) if shuffled else np.arange(len(paper))
        r = Ratings(np.array(paper)[order], np.array(rater)[order], np.zeros(len(paper), dtype=int), 4, P, J)
        want = np.zeros((J, J), dtype=int)
        for p in range(P):
            mine = sorted({int(j) for q, j in zip(paper, rater) if q == p})
            for j in mine:
                want[j, j] += 1
            for a, b in combinations(mine, 2):
                want[a, b] += 1
                want[b, a] += 1
        assert np.array_equal(shared_papers(r), want)



def test_a_pairs_table_larger_than_the_memory_left_is_refused_in_one_line(monkeypatch, tmp_path):
    """50,000 raters: their pairs' table (18.6 GiB) ended in numpy's traceback, or the kernel's kill with no word (a
    tester's file). Each raters x raters table now asks first (config.require_memory): here a file of 300 raters
    with 2 MiB, then 1 MiB, left. The methods that need no pairs still run, and --no-rasch checks."""
    from click.testing import CliRunner

    from ratercal_cli import config
    from ratercal_cli.cli import cli
    from ratercal_cli.errors import MethodError
    from ratercal_cli.network import shared_papers

    rng = np.random.default_rng(1)
    P, J = 3000, 300
    lines = ["paper,rater,score"]
    for p in range(P):
        for j in rng.choice(J, 2, replace=False):
            lines.append(f"P{p},R{j},{rng.integers(0, 6)}")
    src = tmp_path / "many.csv"
    src.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(config, "memory_left", lambda: 2.0 * 2 ** 20)
    from ratercal_cli.practice.coerce import as_ratings

    with pytest.raises(MethodError, match=r"^the table of papers shared by each pair of the 300 raters needs 2.1 MiB"):
        shared_papers(as_ratings(src, scale=(0, 5)))
    monkeypatch.setattr(config, "memory_left", lambda: 1.0 * 2 ** 20)
    res = CliRunner().invoke(cli, ["check", str(src), "--scale", "0-5", "-q"])
    assert res.exit_code == 2, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith(f"error: {src}: the table of papers shared by each pair of the 300 raters needs")   # (file named)
    assert "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["check", str(src), "--scale", "0-5", "--no-rasch", "-q"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["adjust", str(src), "--scale", "0-5", "-m", "OLS", "-o", str(tmp_path / "o.csv"), "-q"])
    assert res.exit_code == 2 and "least squares' equations of 300 raters" in res.output, res.output
    assert not (tmp_path / "o.csv").exists()
    res = CliRunner().invoke(cli, ["adjust", str(src), "--scale", "0-5", "-m", "TLI", "-o", str(tmp_path / "o.csv"), "-q"])
    assert res.exit_code == 0, res.output
