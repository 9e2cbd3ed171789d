"""``check --assignment auto`` (practice/assignment.py, issue 29): the file's own evidence of
non-random assignment, on school-confounded district files from tests/confounded.py (a graded
response model with rater slopes and central raters, none of the project's generators)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from confounded import district
from ratercal_cli.cli import cli
from ratercal_cli.errors import InputError
from ratercal_cli.practice.assignment import decide_assignment, network_clusters, paper_clusters
from ratercal_cli.ratings import Ratings


def _ratings(d):
    return Ratings.from_frame(d.frame, scale="1-6")


def test_school_confounded_file_is_found_nonrandom_with_its_schools():
    d = district(1)
    r = _ratings(d)
    a = decide_assignment(r)
    assert a.assignment == "nonrandom" and a.confounded and a.multigroup
    assert a.by_rater["p"] < 1e-6 and a.by_rater["r"] > 0.5
    assert a.by_cluster["p"] < 1e-6 and a.severity["p"] < 1e-6
    # the network's six clusters are the six schools (each cluster's papers mostly of one school)
    school = d.school.reindex(list(r.paper_ids)).to_numpy()
    assert len(a.cluster_labels) == 6
    purity = [np.mean(school[a.clusters == k] == max(set(school[a.clusters == k]),
                                                      key=list(school[a.clusters == k]).count)) for k in range(6)]
    assert min(purity) > 0.8 and np.mean(purity) > 0.85, purity   # (90% of first readers are the own pair)
    assert a.modularity > 0.3
    assert any("nonrandom" in line for line in a.lines())


def test_random_assignment_is_found_random_without_clusters():
    from ratercal_cli.network import shared_papers
    from ratercal_cli.practice.assignment import MIN_MODULARITY, modularity_bound

    r = _ratings(district(2, own=None))
    pc, _, q, _ = network_clusters(r)
    # (no split can reach MIN_MODULARITY, its bound says: Louvain is not run, and the modularity is not known)
    assert pc is None and modularity_bound(shared_papers(r)) < MIN_MODULARITY and np.isnan(q)
    a = decide_assignment(r)
    assert a.assignment == "random" and a.confounded is False and not a.multigroup
    assert a.by_rater["p"] > 0.05
    assert a.severity["p"] > 0.5   # CML and MML agree when quality does not follow the raters


def test_the_users_word_stands_and_the_evidence_is_said():
    r = _ratings(district(1))
    a = decide_assignment(r, "random")
    assert a.assignment == "random" and "the file shows otherwise" in a.reason
    b = decide_assignment(_ratings(district(2, own=None)), "nonrandom")
    assert b.assignment == "nonrandom" and "shows no confound" in b.reason


def test_a_paper_in_two_clusters_is_an_error_naming_it():
    r = Ratings(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([1, 2, 1, 2]), 3, 2, 2,
                paper_ids=("A", "B"), rater_ids=("R1", "R2"))
    with pytest.raises(InputError, match="paper B is in more than one school"):
        paper_clusters(r, np.array([0, 0, 1, 0]), "school")


def test_check_cluster_col_and_no_rasch(tmp_path):
    d = district(3, papers=300)
    path = tmp_path / "d.csv"
    d.frame.to_csv(path, index=False)
    res = CliRunner().invoke(cli, ["check", str(path), "--scale", "1-6", "--cluster-col", "school", "--json"])
    assert res.exit_code == 0, res.output
    g = json.loads(res.output)["groups"][0]
    found = g["assignment_found"]
    assert g["assignment"] == "nonrandom" and found["cluster_source"] == "column school" and found["clusters"] == 6
    assert found["multigroup"] is True
    quick = CliRunner().invoke(cli, ["check", str(path), "--scale", "1-6", "--no-rasch", "--json"])
    assert json.loads(quick.output)["groups"][0]["assignment"] == "random"   # not tested without the fits


def test_adjust_cluster_col_fits_the_schools(tmp_path):
    """``adjust -m recommended --cluster-col school``: the multi-group MML on the file's schools (not the
    network's clusters); the output keeps the input's columns and no facet of the school."""
    import csv

    d = district(3, papers=300)
    path = tmp_path / "d.csv"
    d.frame.to_csv(path, index=False)
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(cli, ["adjust", str(path), "--scale", "1-6", "-m", "recommended", "--cluster-col",
                                   "school", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "recommended MML (multi-group, shrunk)" in res.output and "(column school clusters)" in res.output
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0])[:4] == ["school", "paper", "rater", "score"] and len(rows) == len(d.frame)
    assert {r["recommended_method"] for r in rows} == {"MML (multi-group, shrunk)"}


def _partitions(items):
    """Every partition of ``items`` into non-empty blocks."""
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for part in _partitions(rest):
        yield [[head]] + part
        for k in range(len(part)):
            yield part[:k] + [[head] + part[k]] + part[k + 1:]


def test_modularity_bound_is_above_every_partitions_modularity():
    """``modularity_bound`` against networkx's modularity of all 877 partitions of 7 raters (203 of 6,
    one rater without links), on random shared-paper counts, a clustered network and a complete one."""
    import networkx as nx

    from ratercal_cli.practice.assignment import modularity_bound

    rng = np.random.default_rng(32)
    nets = []
    for n in (6, 7, 7, 7):
        W = rng.poisson(rng.uniform(0.3, 6.0), (n, n))
        nets.append(np.triu(W, 1) + np.triu(W, 1).T)
    block = np.kron(np.eye(2, dtype=int), np.full((3, 3), 9)) + 1
    nets.append(block - np.diag(np.diag(block)))
    nets.append(np.full((6, 6), 40) - 40 * np.eye(6, dtype=int))   # a complete panel: no partition gains
    nets[0][0, :] = nets[0][:, 0] = 0                               # a rater with no links
    for W in nets:
        G = nx.Graph()
        G.add_nodes_from(range(len(W)))
        G.add_weighted_edges_from((a, b, float(W[a, b])) for a, b in zip(*np.nonzero(np.triu(W, 1))))
        best = max(nx.community.modularity(G, p, weight="weight") for p in _partitions(list(range(len(W)))))
        bound = modularity_bound(W + np.diag(rng.integers(0, 50, len(W))))   # (the diagonal is no link)
        assert best <= bound + 1e-12, (best, bound)
    assert bound == pytest.approx(0.0, abs=1e-12)
    assert modularity_bound(np.diag([3, 4])) == -np.inf
    # two disjoint triangles of weight w: B's top eigenvector splits them, eigenvalue 2w, m = 6w: 2w 6 / 12w
    two = np.kron(np.eye(2), np.full((3, 3), 5.0) - 5.0 * np.eye(3))
    assert modularity_bound(two) == pytest.approx(1.0, rel=1e-12)


def test_adjust_skips_the_search_where_no_split_can_be_kept(monkeypatch):
    """``adjust -m MML``'s multi-group check: on a random design whose modularity bound is below 0.15
    Louvain's search is not run (and the fit is one group, as the search found); on the
    school-confounded file it is, and the schools' model is chosen."""
    from ratercal_cli.network import shared_papers
    from ratercal_cli.practice import adjust as adj, assignment
    from ratercal_cli.practice.assignment import MIN_MODULARITY, modularity_bound

    rand, conf = _ratings(district(2, own=None)), _ratings(district(1))
    assert modularity_bound(shared_papers(rand)) < MIN_MODULARITY <= modularity_bound(shared_papers(conf))
    assert network_clusters(rand)[0] is None
    calls = []
    real = assignment.network_clusters
    monkeypatch.setattr(assignment, "network_clusters", lambda *a, **k: calls.append(1) or real(*a, **k))
    for given in ("auto", "nonrandom"):
        assert adj._multigroup_marginal(rand, ["MML", "TLI"], given, None) is None
    assert not calls
    named, found = adj._multigroup_marginal(conf, ["MFRM", "TLI"], "auto", None)
    assert calls and named == ["MFRM"] and found.multigroup and len(found.cluster_labels) == 6


def _random_design(J, P, r, seed, K=4):
    """Papers read by ``r`` raters drawn at random from ``J``: a rating scale model with rater severities
    ~N(0, 0.5) and slopes exp(N(0, 0.3)) (a generalized one, which the test's CML does not assume),
    quality ~N(0, 1), scores 1..K: written here, not by the project's generators."""
    rng = np.random.default_rng(seed)
    sev, slope = rng.normal(0, 0.5, J), np.exp(rng.normal(0, 0.3, J))
    raters = np.argsort(rng.random((P, J)), axis=1)[:, :r]
    theta = rng.normal(0, 1.0, P)
    eta = slope[raters][:, :, None] * (theta[:, None, None] - sev[raters][:, :, None] - np.linspace(-1.5, 1.5, K - 1))
    logits = np.concatenate([np.zeros((P, r, 1)), np.cumsum(eta, axis=2)], axis=2)
    prob = np.exp(logits - logits.max(axis=2, keepdims=True))
    prob /= prob.sum(axis=2, keepdims=True)
    score = 1 + (rng.random((P, r, 1)) > np.cumsum(prob, axis=2)).sum(axis=2)
    paper = np.repeat(np.arange(P), r)
    return Ratings(paper, raters.ravel(), score.ravel(), K, P, J, scale_low=1)


def test_random_designs_are_not_called_nonrandom():
    """Under random assignment the by-rater test rejects at about its level: each paper is measured from its
    other ratings.  Measured from all its ratings (as before), its measure leaned on its own raters'
    severities: the same files are called non-random at p < .05 in most cases."""
    from types import SimpleNamespace

    from ratercal_cli.practice.assignment import _by_rater
    from ratercal_cli.practice.rater_report import fit_rater_model

    rest, whole = [], []
    for seed in range(8):   # (2 of 12 raters a paper, as in 1990)
        ratings = _random_design(12, 600, 2, seed)
        model = fit_rater_model(ratings)
        rest.append(_by_rater(ratings, model)["p"])
        whole.append(_by_rater(ratings, SimpleNamespace(measure=model.measure, measured=model.measured))["p"])
    assert sum(p < 0.05 for p in rest) <= 1 and np.mean(rest) > 0.3, rest   # (1 of 8 at .044, mean .45)
    assert sum(p < 0.05 for p in whole) >= 4, whole                        # (5 of 8)


def _sample_read_twice(J, P, share, seed, K=4):
    """``_random_design``'s model, each paper read once and a random ``share`` of them by a second rater."""
    full = _random_design(J, P, 2, seed, K)
    twice = np.random.default_rng([seed, 7]).random(P) < share
    keep = np.ones(full.n_ratings, dtype=bool)
    keep[1::2] = twice   # (each paper's second reading, only on the papers read twice)
    return Ratings(full.paper[keep], full.rater[keep], full.score[keep] - 1, K - 1, P, J, scale_low=1)


def test_a_sample_read_twice_is_not_called_nonrandom():
    """1,000 papers, 10% read by a second rater, 12 raters: the two-way model had 200 rest ratings, 17 a rater,
    and was taken for 80 a rater because all 1,100 ratings were counted; its robust covariance was too small
    and random files were called non-random at p < .01 in 16% of 200 (a tester's: 4-6 of 30), the advice then
    NO.  Counted on the rests, the model's residuals are taken there.  The forced two-way test shows the rate
    the files had."""
    from ratercal_cli.practice.assignment import _by_rater
    from ratercal_cli.practice.rater_report import fit_rater_model

    auto, forced = [], []
    for seed in range(16):
        ratings = _sample_read_twice(12, 1000, 0.1, seed)
        model = fit_rater_model(ratings)
        auto.append(_by_rater(ratings, model)["p"])
        forced.append(_by_rater(ratings, model, residuals="two-way")["p"])
    assert sum(p < 0.01 for p in auto) == 0 and sum(p < 0.05 for p in auto) <= 2, auto
    assert sum(p < 0.05 for p in forced) >= 3, forced


def test_the_test_reads_each_papers_first_readings():
    """Third readings (a paper's scores decide it gets one) are left out of the by-rater test: each paper's
    first ``r`` ratings in the file's order, ``r`` the usual count (at least 2); a sample of papers read
    twice keeps both readings."""
    from ratercal_cli.practice.assignment import design_readings

    # papers 0-3 read twice, paper 1 a third time (its line last), paper 4 three times in a row
    paper = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 1])
    rater = np.array([0, 1, 1, 2, 2, 3, 3, 0, 0, 2, 1, 3])
    r = Ratings(paper, rater, np.arange(12) % 4, 3, 5, 4)
    d = design_readings(r)
    assert d.n_ratings == 10 and list(zip(d.paper, d.rater)) == list(zip(paper[:9], rater[:9])) + [(4, 2)]
    once = Ratings(np.array([0, 1, 2, 2, 3]), np.array([0, 1, 0, 1, 2]), np.array([1, 2, 1, 2, 0]), 3, 4, 3)
    assert design_readings(once) is once


def test_the_decision_says_its_level():
    """The reason names the level the p was held to (.01, or a lower --alpha), in the text and the JSON."""
    r = _ratings(district(2, own=None))
    a = decide_assignment(r)
    assert a.alpha == 0.01 and a.reason.endswith("; the level 0.01)") and a.to_dict()["alpha"] == 0.01
    b = decide_assignment(_ratings(district(1)), alpha=0.001)
    assert "under the level 0.001: who read a paper says how good it is" in b.reason


def test_first_readings_are_coded_as_the_resolved_ratings(tmp_path):
    """A reader of third readings alone (R9) is among the resolved file's raters and not among the first
    readings' (which number their raters afresh): the test reads the first readings in the resolved
    ratings' codes, the raters' tau, not the resolved pairs and not another rater's row."""
    import ratercal_cli as rc
    from ratercal_cli.practice.assignment import design_readings

    rng = np.random.default_rng(3)
    lines, firsts = ["paper,rater,score"], []
    for p in range(60):
        a, b = rng.choice(6, 2, replace=False) + 1
        x, y = rng.integers(1, 7, 2)
        lines += [f"P{p},R{a},{x}", f"P{p},R{b},{y}"]
        firsts += [(f"P{p}", f"R{a}"), (f"P{p}", f"R{b}")]
        if abs(int(x) - int(y)) > 1:
            lines.append(f"P{p},R9,{(x + y) // 2}")
    path = tmp_path / "third.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning):
        r = rc.read_ratings(path, scale="1-6", resolve_discrepancies=True)
    assert "R9" in r.rater_ids and "R9" not in r.first_readings.rater_ids
    d = design_readings(r)
    assert d.rater_ids == r.rater_ids and d.n_ratings == 120
    assert sorted((r.paper_ids[p], d.rater_ids[j]) for p, j in zip(d.paper, d.rater)) == sorted(firsts)


def _school_design(S, per, P, own, seed):
    """``S`` schools of ``per`` raters; each of a paper's two readers one of its school's raters with
    probability ``own``, else any rater; scores 1-4 at random (the network alone is looked at)."""
    rng = np.random.default_rng(seed)
    J = S * per
    school = np.arange(P) % S
    raters = []
    for p in range(P):
        who = []
        while len(who) < 2:
            j = int(school[p] * per + rng.integers(per)) if rng.random() < own else int(rng.integers(J))
            if j not in who:
                who.append(j)
        raters += who
    return Ratings(np.repeat(np.arange(P), 2), np.array(raters), rng.integers(0, 4, 2 * P), 3, P, J), school


def test_a_sparse_random_network_is_not_split_into_clusters():
    """Two readers a paper among 150 raters, ten ratings a rater: Louvain splits the random network
    at modularity 0.27-0.29, above MIN_MODULARITY (0.15), as it splits random assignments of the same
    design (0.28-0.31): no clusters are kept, and no multi-group fit follows."""
    from ratercal_cli.practice.assignment import MIN_MODULARITY, null_modularity

    for seed in range(4):
        r = _random_design(150, 750, 2, seed)
        pc, _, q, _ = network_clusters(r)
        assert pc is None and 0.25 < q and MIN_MODULARITY < q, (seed, q)
        null = null_modularity(r, q)
        assert null["rewirings"] >= 1 and null["max"] > q - 0.02, (seed, q, null)


def test_a_sparse_school_design_is_still_split_into_its_schools():
    """Fifteen schools of ten raters each, 750 papers, each reader one of the school's raters nine
    times in ten: modularity 0.74, far beyond random assignments of the design (at most 0.31):
    the schools are found (each cluster's papers mostly of one school)."""
    r, school = _school_design(15, 10, 750, 0.9, 1)
    pc, _, q, within = network_clusters(r)
    assert pc is not None and q > 0.6 and within > 0.8, (q, within)
    purity = [np.mean(school[pc == k] == np.bincount(school[pc == k]).argmax()) for k in range(pc.max() + 1)]
    assert pc.max() + 1 >= 12 and np.mean(purity) > 0.8, purity


def test_the_test_reads_the_first_readings_of_the_order_column(tmp_path):
    """Without --resolve-discrepancies, a paper's first readings are its first in the file's ``order``
    column (where it has one), not its first lines: here a third reading of a paper is on its first
    line; the test reads the two that the order column puts first, in each group too."""
    import ratercal_cli as rc
    from ratercal_cli.practice.assignment import design_readings

    lines, firsts = ["grade,paper,rater,score,order"], set()
    for p in range(16):
        a, b, c = (p % 4) + 1, ((p + 1) % 4) + 1, ((p + 2) % 4) + 1
        third = [f"{p % 2},P{p},R{c},3,30"] if p % 4 == 0 else []   # (in the file before the first two)
        lines += third + [f"{p % 2},P{p},R{a},1,10", f"{p % 2},P{p},R{b},{1 + p % 3},20"]
        firsts |= {(f"P{p}", f"R{a}"), (f"P{p}", f"R{b}")}
    path = tmp_path / "order.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = rc.read_ratings(path, scale="1-4", group_col="grade")
    assert r.reading_order is not None and r.first_readings is None and r.n_ratings == 36
    d = design_readings(r)
    assert d.n_ratings == 32 and {(r.paper_ids[p], r.rater_ids[j]) for p, j in zip(d.paper, d.rater)} == firsts
    for _, g in r.by_group():
        d = design_readings(g)
        assert d.n_ratings == 16 and {(g.paper_ids[p], g.rater_ids[j]) for p, j in zip(d.paper, d.rater)} <= firsts
    # without the column, the first two lines: the third reading is among them
    path.write_text("\n".join(x.rsplit(",", 1)[0] for x in lines) + "\n", encoding="utf-8")
    r = rc.read_ratings(path, scale="1-4")
    d = design_readings(r)
    assert r.reading_order is None and ("P0", "R3") in {(r.paper_ids[p], r.rater_ids[j]) for p, j in zip(d.paper, d.rater)}


def test_schools_of_equal_quality_read_by_their_own_pairs_are_not_called_nonrandom():
    """Six schools of equal mean quality, each read mostly by its own pair (tests/confounded.py, a graded
    response model with slopes and central raters): the papers' Warm measures leaned on the pairs'
    severities, so the by-rater test called 6 of seeds 0-7 non-random (p 2e-5 to .007); a rest's total
    against what its raters give papers of every kind, and the clusters compared within each rater,
    call none of seeds 0-3 so, and the confounded schools (means -1.5..1.5) still are, by both tests."""
    for seed in range(4):
        a = decide_assignment(_ratings(district(seed, school_means=np.zeros(6))), severities=False)
        assert a.assignment == "random" and a.by_rater["p"] > 0.05 and a.by_cluster["p"] > 0.1, (seed, a.reason)
        assert len(a.cluster_labels) == 6
        b = decide_assignment(_ratings(district(seed)), severities=False)
        assert b.assignment == "nonrandom" and b.by_rater["p"] < 1e-10 and b.by_cluster["p"] < 0.02, (seed, b.reason)


def test_group_effects_is_the_two_way_least_squares_wald_test():
    """group_effects against the two-way model written out: score on rater and group dummies (the last
    group the reference) by least squares, the covariance clustered by paper (the sandwich of the
    dummies' matrix), the Wald statistic of the group effects."""
    from ratercal_cli.practice.assignment import group_effects

    rng = np.random.default_rng(5)
    n, J, G, P = 400, 7, 4, 150
    rater, group, paper = rng.integers(0, J, n), rng.integers(0, G, n), rng.integers(0, P, n)
    score = rng.integers(0, 5, n) + (group == 1)
    W, df, eff, links = group_effects(rater, paper, score, group, J, G, P)
    X = np.concatenate([np.eye(J)[rater], np.eye(G)[group][:, :-1]], axis=1)
    beta = np.linalg.lstsq(X, score.astype(float), rcond=None)[0]
    e = score - X @ beta
    bread = np.linalg.inv(X.T @ X)
    S = np.zeros((P, X.shape[1]))
    np.add.at(S, paper, X * e[:, None])
    V = bread @ S.T @ S @ bread
    b, Vg = beta[J:], V[J:, J:]
    assert df == G - 1 and links == n
    assert np.allclose(eff[:-1], b, atol=1e-10) and eff[-1] == 0
    assert W == pytest.approx(float(b @ np.linalg.solve(Vg, b)), rel=1e-9)


def test_the_null_distribution_keeps_a_paper_whose_rating_underflows_at_every_node():
    """A rater so lenient that a 0 from it has probability below 1e-308 at every node of the grid: the
    paper's likelihood is taken in logs, so the distribution stays a distribution (it was -inf - -inf
    = nan, and every weight nan, found by tests/property/test_commands.py)."""
    from ratercal_cli.methods.quality import pcm_tau
    from ratercal_cli.practice.assignment import quality_distribution

    steps = np.array([[-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0], [-800.0, 0.0, 1.0]])
    paper = np.repeat(np.arange(6), 2)
    rater = np.array([0, 1, 0, 2, 1, 2] * 2)
    score = np.array([1, 2, 0, 0, 2, 1, 3, 2, 1, 1, 2, 3])
    r = Ratings(paper, rater, score, 4, 6, 3)
    nodes, w = quality_distribution(r, pcm_tau(steps))
    assert np.all(np.isfinite(w)) and w.sum() == pytest.approx(1.0)
    assert nodes[np.argmax(w)] > -6.0


def _chain(seed, P=600, J=16):
    """Papers routed to raters by quality: rater k reads the k-th band of a noisy pre-score, with its
    neighbour k + 1 (a tester's design): a chain of raters with no natural place to cut it."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 1, P)
    band = np.argsort(np.argsort(q + rng.normal(0, 0.5, P))) * (J - 1) // P
    paper = np.repeat(np.arange(P), 2)
    rater = np.column_stack([band, band + 1]).ravel()
    score = np.clip(np.rint(2 + q[paper] + rng.normal(0, 0.6, paper.size)), 0, 4).astype(int)
    return paper, rater, score, J


def test_the_network_clusters_do_not_depend_on_the_raters_labels():
    """Louvain's moves follow the order of its nodes: renaming the raters of a chain design split them
    otherwise (30 of 30 renamings of six files differed from the original's split), and the multi-group MML
    of a tester's file moved its papers by up to 0.29 points.  The network is handed to Louvain in an order
    the labels do not set: every renaming finds the same clusters."""
    for seed in range(3):
        paper, rater, score, J = _chain(seed)
        found = []
        for k in range(5):
            perm = np.random.default_rng(k).permutation(J) if k else np.arange(J)
            r = Ratings.from_labels([f"P{p}" for p in paper], [f"R{perm[j]:02d}" for j in rater], score, max_score=4)
            _, rc, q, _ = network_clusters(r)
            assert rc is not None, seed   # (the chain does split)
            back = {f"R{perm[j]:02d}": j for j in range(J)}
            found.append((sorted(sorted(back[r.rater_ids[j]] for j in np.flatnonzero(rc == c))
                                 for c in range(rc.max() + 1)), round(q, 12)))
        assert all(f == found[0] for f in found), seed


def test_cells_read_in_one_design_share_whether_a_mean_per_cluster_meets_the_confound():
    """A researcher tester's rubric: every criterion confounded with the same network clusters, but the multi-group
    MML's severities missed the conditional model's on one criterion only (p = 0.02 against 0.64 and 0.71), which
    got the PCM while the others got the multi-group MML.  The cells now take the totals' verdict on it too."""
    from ratercal_cli.practice.assignment import CLUSTER_FIT_ALPHA, Assignment, shared_verdict

    clusters = np.array([0, 0, 1, 1, 2, 2])

    def found(p):
        return Assignment(given="auto", assignment="nonrandom", confounded=True, clusters=clusters,
                          cluster_labels=("C1", "C2", "C3"), cluster_source="network", reason="own",
                          cluster_fit={"chi2": 1.0, "df": 5, "p": p, "max_z": 1.0, "rater": "R1"})

    cells = [found(0.64), found(0.71), found(0.02)]
    assert [f.multigroup for f in cells] == [True, True, False]
    for total_p in (0.5, 0.01):
        out = shared_verdict(cells, ["ideas", "org", "voice"], lambda: found(total_p))
        assert [f.multigroup for f in out] == [total_p >= CLUSTER_FIT_ALPHA] * 3
        assert all(f.reason.startswith("one verdict for the 3 cells read by the same raters") for f in out)
    agree = [found(0.64), found(0.71)]
    assert shared_verdict(agree, ["ideas", "org"], lambda: 1 / 0) == agree   # (no totals where they agree)


def _sampled_double_file(seed=14, papers=600, raters=12):
    """A researcher tester's design, drawn here: random readers, a 10% sample of papers read twice, a third
    reading where the first two differ by more than a point, scores 0-5 from a rater's severity and a
    paper's quality; lines ``(paper, rater, score, order)``, each paper's together."""
    rng = np.random.default_rng(seed)
    severity = rng.normal(0, 0.6, raters)
    lines = []
    for p in range(papers):
        q = rng.normal(2.5, 1.0)
        k = 2 if rng.random() < 0.1 else 1
        who = [int(j) for j in rng.choice(raters, 3, replace=False)]
        sc = [int(np.clip(np.rint(q + severity[j] + rng.normal(0, 0.7)), 0, 5)) for j in who]
        n = 3 if k == 2 and abs(sc[0] - sc[1]) > 1 else k
        lines += [(f"P{p:04d}", f"R{who[i] + 1}", sc[i], i + 1) for i in range(n)]
    return lines


def _write(path, lines):
    path.write_text("paper,rater,score,order\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in lines),
                    encoding="utf-8")
    return path


def test_the_network_and_its_random_baselines_do_not_depend_on_the_order_of_lines(tmp_path):
    """A researcher tester's file (random readers, 10% of papers read twice, third readings): read as its lines
    came, the rater network split into two clusters beyond its random rewirings; with each paper's lines apart
    (every even line first, then every odd one: the same ratings, the same order column) it did not, and the
    recommendation changed (TMN where NO), the rewirings drawn in the file's order.  They are drawn in an order
    of the ratings themselves (assignment.canonical_order): the same baselines, clusters and advice in any
    order of lines and with the raters renamed, and the same rests drawn for the assignment test (in any order
    of lines; renamed raters alike in what they gave may swap theirs)."""
    import ratercal_cli as rc
    from ratercal_cli.network import shared_papers
    from ratercal_cli.practice.assignment import _louvain, null_modularity, rater_profile, rest_items
    from ratercal_cli.practice.check import check

    lines = _sampled_double_file(seed=2)   # (Louvain's 0.200 against its rewirings' 0.184: near the margin)
    rng = np.random.default_rng(5)
    raters = sorted({x[1] for x in lines})
    new = dict(zip(raters, (f"Z{k}" for k in rng.permutation(len(raters)))))   # (renamed raters: another order)
    back = {v: k for k, v in new.items()}
    orders = {"file": lines, "halves": lines[::2] + lines[1::2], "shuffled": [lines[i] for i in rng.permutation(len(lines))],
              "renamed": [(p, new[j], x, o) for p, j, x, o in lines]}
    found = {}
    for name, ls in orders.items():
        r = rc.read_ratings(_write(tmp_path / f"{name}.csv", ls), scale="0-5", resolve_discrepancies=True)
        W = shared_papers(r)
        q = _louvain(W, np.flatnonzero(r.ratings_per_rater() > 0), rater_profile(r))[1]
        chosen, rest, at = rest_items(r)
        key = lambda i: (r.paper_ids[r.paper[i]], back.get(r.rater_ids[r.rater[i]], r.rater_ids[r.rater[i]]))   # noqa: E731
        rep = check(r).report()
        a = rep.assignment_found
        null = {k: round(float(v), 9) for k, v in null_modularity(r, q).items()}   # (an eigenvalue's last bits)
        found[name] = (round(q, 12), null, sorted(map(key, chosen)), sorted(map(key, at)),
                       a.assignment, len(a.cluster_labels) if a.clusters is not None else 0,
                       round(a.by_rater["chi2"], 9), rep.decision.label)   # (the chi2 summed in the lines' order)
    assert found["halves"] == found["file"] and found["shuffled"] == found["file"]
    assert found["renamed"][:2] == found["file"][:2] and found["renamed"][4:] == found["file"][4:]
    assert found["file"][1]["rewirings"] >= 2


def test_a_rubrics_cells_keep_the_order_of_reading(tmp_path):
    """A rubric's checks are made on each criterion's ratings (rubric.cell_parts), which dropped the file's order
    column: their first readings were a paper's first lines, and a school-confounded rubric whose lines were
    reversed within each paper (the order column kept) got another test on its clusters (chi2 6.0, 8.3, 13.7 as
    the lines came) and papers moved by up to 0.35."""
    import ratercal_cli as rc
    from ratercal_cli.practice.assignment import design_readings
    from ratercal_cli.practice.rubric import cell_parts

    lines = _sampled_double_file(papers=120, raters=6)
    rows = [(p, j, c, s, o) for p, j, s, o in lines for c, s in zip("ab", (s, max(s - 1, 0)))]
    def write(name, rs):
        path = tmp_path / name
        path.write_text("paper,rater,criterion,score,order\n" + "".join(",".join(map(str, x)) + "\n" for x in rs),
                        encoding="utf-8")
        return rc.read_ratings(path, scale="0-5", facet_cols=("criterion",))
    by_paper: dict = {}
    for x in rows:
        by_paper.setdefault(x[0], []).append(x)
    flipped = [x for p in by_paper for x in reversed(by_paper[p])]
    firsts = []
    for r in (write("a.csv", rows), write("b.csv", flipped)):
        cells = cell_parts(r)
        assert all(part.reading_order is not None for _, part in cells)
        firsts.append([sorted((part.paper_ids[p], part.rater_ids[j]) for p, j in
                              zip(design_readings(part).paper, design_readings(part).rater)) for _, part in cells])
    assert firsts[0] == firsts[1]
    assert len(firsts[0][0]) < sum(1 for x in rows if x[2] == "a")   # (the third readings left out)


def _harsh_reader_with_thirds(seed=5, n=300, confound=0.0):
    """Papers of quality N(3.5, 1) on 1-6 read by the harsh rater T1 (1.5 points; 95% of papers) and one of seven
    others at random (``confound``: T2 reads the better papers), a third reading by another rater where the first
    two differ by more than a point; an ``order`` column."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(3.5, 1.0, n)
    lines = ["paper,rater,order,score"]
    for p in range(n):
        partner = 1 if confound and quality[p] > 3.5 + confound else int(rng.integers(2, 8))
        first = [0, partner] if rng.random() < 0.95 else [partner, int(rng.choice([j for j in range(1, 8) if j != partner]))]
        third = int(rng.choice([j for j in range(8) if j not in first]))
        scores = [int(np.clip(np.rint(quality[p] - 1.5 * (j == 0) + rng.normal(0, 0.6)), 1, 6)) for j in first + [third]]
        for i in range(3 if abs(scores[0] - scores[1]) > 1 else 2):
            lines.append(f"P{p},T{(first + [third])[i] + 1},{i + 1},{scores[i]}")
    return "\n".join(lines) + "\n"


def test_a_resolved_file_is_judged_on_its_first_readings_and_their_model(tmp_path):
    """The third reading kept with the nearer of the first two drops the harsh rater's readings where the third
    reader agrees with the other: in the resolved file's rater model that rater looked less harsh and its papers
    weaker, and a staff tester's file of random first readings was called nonrandom (chi2(7) = 104.8, where 6.8
    on every reading) and sent to the PCM.  The assignment test reads the first two readings and their model."""
    f = tmp_path / "harsh_thirds.csv"
    f.write_text(_harsh_reader_with_thirds())
    runner = CliRunner()
    res = runner.invoke(cli, ["check", str(f), "--scale", "1-6", "--resolve-discrepancies", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    group = out["groups"][0] if "groups" in out else out
    text = json.dumps(group)
    assert '"assignment": "random"' in text, text[:2000]
    confounded = tmp_path / "confounded.csv"
    confounded.write_text(_harsh_reader_with_thirds(confound=0.3))
    res = runner.invoke(cli, ["check", str(confounded), "--scale", "1-6", "--resolve-discrepancies", "--json"])
    assert res.exit_code == 0 and '"assignment": "nonrandom"' in res.stdout
