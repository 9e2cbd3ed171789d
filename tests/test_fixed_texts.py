"""``columnar.fixed_texts``: the adjusted scores' texts made in C are ``str.format``'s, byte for byte."""

import numpy as np
import pytest

from ratercal_cli.columnar import fixed_texts


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
