"""The commands' output as text and JSON: numbers, p-values, aligned tables, JSON-safe values."""

from __future__ import annotations

import math

import numpy as np


def json_clean(x):
    """For JSON: nan/inf -> None, numpy scalars -> Python numbers, recursively."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, (np.floating, np.integer)):
        return json_clean(x.item())
    if isinstance(x, dict):
        return {str(k): json_clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_clean(v) for v in x]
    return x


def num(x, nd):
    """``x`` with ``nd`` decimals, ``-`` for a missing or non-finite value."""
    return "-" if x is None or not np.isfinite(x) else f"{x:.{nd}f}"


def num_cell(x, nd=2) -> str:
    """``x`` (anything ``float`` takes) with ``nd`` decimals, ``-`` when it is missing, not a number or
    not finite: the pages' and the memo's cells, which hold values from JSON and tables alike."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "-"
    return num(x, nd)


def pvalue(p):
    """A p-value with three decimals, ``<.001`` below that, ``-`` when missing."""
    if p is None or not np.isfinite(p):
        return "-"
    return "<.001" if p < 0.001 else f"{p:.3f}"


def text_table(header, rows):
    """Lines of a table: the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)] if rows else [len(h) for h in header]
    fmt = lambda r: "  ".join(str(x).rjust(w) if i else str(x).ljust(w)  # noqa: E731
                              for i, (x, w) in enumerate(zip(r, widths))).rstrip()
    return [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


#: Between the groups' parts of a command's text.
GROUP_RULE = "=" * 72


#: the most bytes of a group's name in a file name (:func:`group_path`): a longer one is cut, with a hash of the
#: whole so that two long names that begin alike stay apart
GROUP_NAME_BYTES = 100


def group_path(path, name):
    """The file of one group: ``path`` itself without groups, else ``NAME_GROUP.png`` beside it (the
    group's label with anything but letters, digits, ``.``, ``+`` and ``-`` made ``_``)."""
    import re

    if name is None:
        return path
    safe = re.sub(r"[^\w.+-]+", "_", str(name))   # (letters of any alphabet kept: "École Sud" was "_cole_Sud")
    if len(safe.encode("utf-8")) > GROUP_NAME_BYTES:   # (a file name holds 255 bytes: an 87-character Japanese
        import hashlib                                  # school name stopped the app with "File name too long")

        digest = hashlib.sha256(str(name).encode("utf-8")).hexdigest()[:10]
        cut = safe.encode("utf-8")[:GROUP_NAME_BYTES - 11].decode("utf-8", "ignore")
        safe = f"{cut}_{digest}"
    return path.with_name(f"{path.stem}_{safe}{path.suffix or '.png'}")


def group_paths(path, names, column=None) -> list:
    """:func:`group_path` of each group ``names`` (None: no groups, ``[path]``), refused where two groups
    would share a file (on a case-insensitive file system too): an :class:`ArgumentError` naming ``png``,
    the two groups and the group ``column``.  (check's Wright maps wrote one group's over another's.)"""
    from ..errors import ArgumentError

    targets: list = []
    for name in names:
        target = group_path(path, name)
        clash = next((n for n, t in zip(names, targets) if str(t).lower() == str(target).lower()), None)
        if clash is not None:
            raise ArgumentError("png", f"groups {clash!r} and {name!r} would both be mapped to {target}; rename one "
                                f"in the {column or 'group'} column")
        targets.append(target)
    return targets
