"""The reader's fast paths (issue 32) read what the record-at-a-time loop reads: io._read_unquoted
(a file without quotes: its records parsed by csv in one call) against io.read_table's loop, the
column-at-a-time field parsing and the set check for duplicates against their loops, on random
files with blank lines, CR/LF/CRLF ends, separators, spaces around cells and unnamed columns; and
errors found after a vectorised check fails still name the first bad line and its field."""

from __future__ import annotations

import numpy as np
import pytest

from ratercal_cli import io as rio
from ratercal_cli.errors import InputError
from ratercal_cli.practice import ratings_file as rf
from ratercal_cli.practice.ratings_file import read_ratings_table


def random_text(rng):
    sep = str(rng.choice([",", ";", "\t"]))
    end = str(rng.choice(["\n", "\r\n", "\r"]))
    header = ["paper", "rater", "score"] + (["note"] if rng.random() < 0.5 else [])
    if rng.random() < 0.2:
        header += ["", ""]   # unnamed columns right of the table
    lines = []
    if rng.random() < 0.3:
        lines.append("")
    lines.append(sep.join(header))
    width = len(header)
    for k in range(int(rng.integers(1, 30))):
        if rng.random() < 0.1:
            lines.append(str(rng.choice(["", "  ", sep * (width - 1)])))   # blank records
            continue
        cells = [f"P{k}", f"{' ' if rng.random() < 0.2 else ''}R{rng.integers(1, 4)}", str(rng.integers(0, 5))]
        cells += ["x y"] * (width - 3)
        if rng.random() < 0.05:
            cells = cells[:-1]   # a short row
        lines.append(sep.join(cells))
    return end.join(lines) + (end if rng.random() < 0.5 else ""), sep


def read_both(text, sep, monkeypatch, tmp_path):
    path = tmp_path / "r.csv"
    out = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(rio, "_read_unquoted", lambda *a, **k: None)
        try:
            out.append(rio.read_table(path, required=("paper",), delimiter=sep, strip=False, text=text))
        except InputError as exc:
            out.append(("error", str(exc)))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("seed", range(60))
def test_the_unquoted_fast_path_reads_what_the_loop_reads(seed, monkeypatch, tmp_path):
    rng = np.random.default_rng(seed)
    text, sep = random_text(rng)
    fast, loop = read_both(text, sep, monkeypatch, tmp_path)
    assert fast == loop


def test_the_fast_path_is_taken_and_gives_line_numbers(tmp_path):
    text = "\npaper,rater,score\r\nP1,R1,3\r\n\r\n,,\r\nP2,R1,4\r\n"
    got = rio._read_unquoted(text, ("paper",), ",", tmp_path / "r.csv")
    assert got == (["paper", "rater", "score"], [(3, {"paper": "P1", "rater": "R1", "score": "3"}),
                                                 (6, {"paper": "P2", "rater": "R1", "score": "4"})], ",")
    assert rio._read_unquoted('paper,rater,score\nP1,"R1",3\n', (), ",", tmp_path / "r.csv") is None


def write(tmp_path, text):
    path = tmp_path / "r.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, message", [
    ("P1,R1,3\nP1,R2,x\nP2,,3\n", "r.csv:3: score: 'x' is not a number"),
    ("P1,R1,3\nP1,R2,3\nP2,,3\nP3,R1,zz\n", "r.csv:4: rater: blank"),
    ("P1,R1,3\nP1,R2,3\nP1,R1,4\n", "r.csv:4: rater: duplicate rating of paper P1 by rater R1 (first at line 2)"),
    # (a fuzzer's: the label as the line holds it, where stripping made it the first's; it named 'R1' alone)
    ("P1,R1,3\nP1,R1 ,4\n", "r.csv:3: rater: duplicate rating of paper P1 by rater R1 (written 'R1 ') (first at line 2)"),
    ("P1,R1,3\nP1,R2,3.5\n", "r.csv:3: score: '3.5' is not a whole number"),
    ("P1,R1,3\nP1,R2,1e400\n", "r.csv:3: score: '1e400' is too large to be a score"),   # (was "not a whole number")
    ("P1,R1,3\nP1,R2\n", "r.csv:3: expected 3 fields, found 2"),
])
def test_errors_after_a_vectorised_check_name_the_first_bad_line(tmp_path, body, message):
    path = write(tmp_path, "paper,rater,score\n" + body)
    with pytest.raises(InputError) as exc:
        read_ratings_table(path, scale="0-5")
    assert message in str(exc.value)


def test_cells_are_stripped_in_place_as_by_the_loop(tmp_path, monkeypatch):
    text = "paper,rater,score,note\n P1 ,R1, 3 , kept \nP1, R2,4,x\nP2,R1,2 ,y\nP2,R2,2,z\n"
    path = write(tmp_path, text)
    fast = read_ratings_table(path, scale="0-5")
    monkeypatch.setattr(rf, "read_columns", lambda *a, **k: None)   # the row-by-row reader
    loop = read_ratings_table(path, scale="0-5")
    assert fast.rows == loop.rows and fast.rows[0] == {"paper": "P1", "rater": "R1", "score": "3", "note": " kept "}
    assert fast.flags == loop.flags
    assert [g.ratings.score.tolist() for g in fast.groups] == [[3, 4, 2, 2]]
