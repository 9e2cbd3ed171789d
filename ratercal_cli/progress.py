"""Progress bars: tqdm on a terminal, nothing when piped or with ``--quiet``."""

from __future__ import annotations

import sys

from tqdm import tqdm


def progress(iterable=None, total=None, desc=None, quiet=False, unit="it"):
    disable = quiet or not sys.stderr.isatty()
    return tqdm(iterable, total=total, desc=desc, disable=disable, unit=unit, leave=False, dynamic_ncols=True)
