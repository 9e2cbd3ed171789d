"""The batched generator (the Monte Carlo fast path) holds exactly the data sets ``generate_set``
makes one at a time, on every cell of configs/corrected.yaml and on the edge cases: numerators
large enough for the PCM's rescaling, one-replication batches, the generators without a batched
form.  And the 2+ rule the generators, OBSGEN.BAS and the ratings-file reader share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ratercal_cli.config import load_config
from ratercal_cli.design import Cell, keep_first, needs_third, parse_code, table3_steps
from ratercal_cli.generators import basic1990
from ratercal_cli.generators.batched import generate_batch
from ratercal_cli.generators.modern import generate_set
from ratercal_cli.models import pcm as pcm_model
from ratercal_cli.montecarlo.spec import StudySpec
from ratercal_cli.practice.ratings_file import resolve_discrepancies
from ratercal_cli.qbasic import QBasicRandom

REPO = Path(__file__).resolve().parents[2]
CFG = load_config(REPO / "configs" / "corrected.yaml")
SPEC = StudySpec.from_config(CFG)
REPS = (0, 7, 8)


def assert_batch_is_sets(batch, cell, generator, seed, steps, linear=None, true_score="model"):
    for b, rep in enumerate(batch.reps):
        gen = generate_set(cell, generator, seed, rep, steps, linear, true_score)
        o, r = gen.observed, batch.ratings(b)
        assert np.array_equal(r.paper, o.paper[o.kept])
        assert np.array_equal(r.rater, o.rater[o.kept])
        assert np.array_equal(r.score, o.score[o.kept])
        assert batch.true[b].tobytes() == gen.true_score.tobytes()


def test_every_corrected_cell_batched_is_generate_set():
    assert len(CFG.cells) == 32
    for cell in CFG.cells:
        steps = SPEC.steps_for(cell.max_score)
        batch = generate_batch(cell, SPEC.generator, SPEC.seed, REPS, steps, None, SPEC.true_score, SPEC.n_raters)
        kept = 2 if cell.raters_per_paper == "2+" else cell.raters_drawn
        assert batch.rater.shape == (len(REPS), cell.papers, kept)
        assert_batch_is_sets(batch, cell, SPEC.generator, SPEC.seed, steps, None, SPEC.true_score)


def test_replications_that_need_the_rescaling_are_made_one_by_one():
    """Rater 1's steps put the PCM log numerators of papers above quality 10 past the rescaling
    threshold: some replications of 100 papers have one (generate_batch makes those by
    generate_set), others do not."""
    for code in ("0151", "3191", "1151"):
        cell = parse_code(code)
        m = cell.max_score
        steps = table3_steps(m)
        steps[0] = -(pcm_model.RESCALE_ABOVE / m - 10)
        reps = range(8)
        q = np.stack([generate_set(cell, "pcm", 7, r, steps).quality for r in reps])
        big = pcm_model.needs_rescale(pcm_model.log_numerators_cm(q[:, :, None], steps), per_batch=True)
        assert 0 < big.sum() < big.size
        assert_batch_is_sets(generate_batch(cell, "pcm", 7, reps, steps, None, "model", 9), cell, "pcm", 7, steps)


@pytest.mark.parametrize("generator", ["sequential", "linear"])
def test_generators_without_a_batched_form(generator):
    linear = {"effects": [0.5, -0.5, 0.0, 0.2], "error_sd": [0.5, 0.7, 1.0, 0.3], "true_mean": 3.5,
              "true_sd": 1.0} if generator == "linear" else None
    steps = table3_steps(5) if generator == "sequential" else None
    for code in ("0151", "2152"):
        cell = parse_code(code)
        batch = generate_batch(cell, generator, 3, (4,), steps, linear, "model")
        assert_batch_is_sets(batch, cell, generator, 3, steps, linear)


def test_the_third_reading_rule():
    assert [needs_third(a, b) for a, b in ((2, 3), (3, 2), (1, 3), (4, 1), (0, 0))] == [False, False, True, True,
                                                                                       False]
    assert not needs_third(1, 3, 2) and needs_third(np.array([1, 0]), np.array([4, 2]), 2).tolist() == [True, False]
    # nearer one kept; a third midway drops the lower; the same on arrays
    cases = [((1, 4, 5), False), ((4, 1, 5), True), ((1, 4, 0), True), ((1, 3, 2), False), ((3, 1, 2), True),
             ((0, 5, 3), False)]
    assert [bool(keep_first(*s)) for s, _ in cases] == [k for _, k in cases]
    s = np.array([s for s, _ in cases])
    assert list(keep_first(s[:, 0], s[:, 1], s[:, 2])) == [k for _, k in cases]


@pytest.mark.parametrize("source", ["modern", "basic1990"])
def test_generators_keep_what_the_file_reader_keeps(source):
    """A 2+ set's three ratings a paper, read back by the ratings-file reader's rule in reading
    order, keep exactly the ratings the generator kept."""
    cell = Cell("2+", 500, 5, "normal")
    if source == "modern":
        o = generate_set(cell, "pcm", 5, 0, table3_steps(5)).observed
    else:
        rng = QBasicRandom()
        q = basic1990.pargen(rng, cell)
        o = basic1990.obsgen(rng, cell, q, table3_steps(5, np.float32))
    keep, resolved = resolve_discrepancies(o.paper, o.score, 1, o.order)
    assert (~o.kept).sum() > 20
    assert np.array_equal(keep, o.kept)
    assert np.array_equal(resolved, np.isin(o.paper, o.paper[o.order == 3]))
