"""QuickBASIC 4.5 arithmetic the 1990 programs relied on.

* ``RND``: a 24-bit linear congruential generator,
  ``seed = (seed * 16598013 + 12820163) mod 2**24``, returning ``seed / 2**24``
  as a single.  A fresh interpreter starts with ``seed = &H50000``.
* ``RANDOMIZE n``: take the IEEE-754 double of ``n``, its upper 32 bits ``m``;
  ``m ^= m >> 16``; ``seed = ((m & &HFFFF) << 8) | (seed & &HFF)``: the low byte of
  the previous state survives, which is how one data set's numbers depend on the
  sets run before it in the same interpreter session.
* ``PRINT #`` of a single writes 7 significant digits; reading it back with
  ``INPUT #`` gives the rounded value.
"""

from __future__ import annotations

import struct
from functools import lru_cache

import numpy as np

RND_MULTIPLIER = 16598013
RND_INCREMENT = 12820163
RND_MODULUS = 1 << 24
RND_MASK = RND_MODULUS - 1
FRESH_SEED = 0x050000


class QBasicRandom:
    """The RND/RANDOMIZE state of one QuickBASIC interpreter session."""

    __slots__ = ("seed",)

    def __init__(self, seed: int = FRESH_SEED):
        self.seed = int(seed) & RND_MASK

    @classmethod
    def with_low_byte(cls, low_byte: int) -> "QBasicRandom":
        """A state whose low byte is ``low_byte`` (all RANDOMIZE keeps of it)."""
        return cls((FRESH_SEED & ~0xFF) | (int(low_byte) & 0xFF))

    @property
    def low_byte(self) -> int:
        return self.seed & 0xFF

    def randomize(self, n) -> None:
        """``RANDOMIZE n``."""
        (bits,) = struct.unpack("<Q", struct.pack("<d", float(np.float32(n))))
        m = bits >> 32
        m ^= m >> 16
        self.seed = ((m & 0xFFFF) << 8) | (self.seed & 0xFF)

    def rnd(self) -> float:
        """``RND``: the next number, exactly ``seed / 2**24`` (a single, held as float)."""
        self.seed = (self.seed * RND_MULTIPLIER + RND_INCREMENT) & RND_MASK
        return self.seed / RND_MODULUS

    def rnd_array(self, n: int) -> np.ndarray:
        """The next ``n`` RND values at once (float64 holding exact singles).

        Uses the LCG's jump-ahead: after k steps the state is
        ``a_k * seed + c_k mod 2**24``.
        """
        if n <= 0:
            return np.empty(0)
        a, c = _jump_tables(n)
        states = (a * self.seed + c) & RND_MASK
        self.seed = int(states[-1])
        return states / RND_MODULUS


@lru_cache(maxsize=8)
def _jump_tables(n: int):
    """``a_k = A**k`` and ``c_k = C (A**(k-1) + ... + 1)`` mod 2**24, k = 1..n."""
    a = np.empty(n, dtype=np.int64)
    c = np.empty(n, dtype=np.int64)
    ak, ck = 1, 0
    for k in range(n):
        ak = (ak * RND_MULTIPLIER) & RND_MASK
        ck = (ck * RND_MULTIPLIER + RND_INCREMENT) & RND_MASK
        a[k], c[k] = ak, ck
    a.flags.writeable = False
    c.flags.writeable = False
    return a, c


def single(x):
    """Round to IEEE single precision (a BASIC ``!`` variable)."""
    return np.float32(x)


def print_single(x) -> str:
    """The number as ``PRINT #`` writes a single: 7 significant digits.

    QuickBASIC also writes a leading space for non-negative numbers and drops a
    leading zero (``.5``); those do not change the value read back, so ratercal
    writes the plain 7-digit decimal.
    """
    return format(float(np.float32(x)), ".7g")


def print_singles(values) -> list[str]:
    """``print_single`` of every element."""
    return [format(v, ".7g") for v in np.asarray(values, dtype=np.float32).astype(np.float64)]


def read_singles(texts) -> np.ndarray:
    """``INPUT #`` into single variables: parse and round to float32."""
    return np.array([float(t) for t in texts], dtype=np.float64).astype(np.float32)
