"""``columnar.fixed_texts`` and ``fixed_column``: the adjusted scores' texts made in C are ``str.format``'s,
byte for byte."""

import numpy as np
import pytest

from ratercal_cli.columnar import fixed_column, fixed_texts


def _values():
    rng = np.random.default_rng(7)
    v = np.r_[rng.uniform(-10, 10, 20_000), rng.normal(0, 1e-5, 2_000), rng.uniform(-1e9, 1e9, 2_000),
              np.arange(-2_000, 2_000) / 2_000,      # ties at 4 digits and near them
              np.arange(0, 4_000) / 32,              # exact binary ties (0.03125 ...) at every digit count
              [0.0, -0.0, 2.5, 0.5, -0.5, 1.5, 0.00005, -0.00005, 1e-300, 2.0 ** 42 / 1e4, 1e15, -1e15,
               123456789.123456789, np.nan, np.inf, -np.inf]]
    return np.r_[v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)]


@pytest.mark.parametrize("digits", range(7))
def test_fixed_texts_equal_str_format(digits):
    v = _values()
    want = [("{:.%df}" % digits).format(x) for x in v.tolist()]
    got = fixed_texts(v, digits)
    assert got == want


def test_fixed_texts_decimal_comma():
    assert fixed_texts(np.array([1.25, -2.5, 0.03125, -0.0]), 4, ",") == ["1,2500", "-2,5000", "0,0312", "-0,0000"]


def test_fixed_column_has_a_label_per_text_and_blanks_non_finite_values():
    """A column of a paper's score on each of its lines (333,000 distinct values at 1M ratings): one
    label per text, not per value; ``nonfinite`` the text of nan and the infinities."""
    rng = np.random.default_rng(3)
    papers = rng.normal(2.5, 1.0, 5_000)
    v = np.r_[np.repeat(papers, 3), [np.nan, np.inf, -np.inf, -0.0, 0.0]]
    col = fixed_column(v, 2, nonfinite="")
    want = ["" if not np.isfinite(x) else "{:.2f}".format(x) for x in v.tolist()]
    assert col.values() == want
    assert len(set(want)) < 700 < papers.size    # (-0.00 and 0.00 are two texts)
    assert sorted(col.labels[:-3]) == sorted(set(want) - {""}) and col.labels[-3:] == ["", "", ""]
