"""A command's outputs are all of one run or all as they were: ``adjust -o A --memo M`` stopped after A was
written (an error building the memo, ^C) left a new A beside the old M.  ratercal_cli.io.output_set
renames them together at the end."""

from __future__ import annotations

import os

import pytest

import ratercal_cli.commands.practice as practice
from ratercal_cli.io import atomic_write, open_output, output_set
from support import ROOT, run

RATINGS = ROOT / "examples" / "ratings.csv"


def test_a_set_is_renamed_together_or_not_at_all(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")
    with pytest.raises(RuntimeError):
        with output_set():
            with open_output(a) as fh:
                fh.write("new a")
            assert a.read_text() == "old a"          # (not yet: renamed at the end of the set)
            raise RuntimeError("the second output failed")
    assert a.read_text() == "old a" and not b.exists()
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]   # no temporary left
    with output_set():
        for path, text in ((a, "new a"), (b, "new b")):
            with open_output(path) as fh:
                fh.write(text)
        with output_set():                            # (a nested set joins the outer one)
            with atomic_write(tmp_path / "c.txt", stage=True) as fh:
                fh.write("c")
        assert a.read_text() == "old a"
    assert (a.read_text(), b.read_text(), (tmp_path / "c.txt").read_text()) == ("new a", "new b", "c")
    with output_set():   # a file the command reads back (a report's figure) is not held back
        with atomic_write(tmp_path / "figure.png") as fh:
            fh.write("png")
        assert (tmp_path / "figure.png").read_text() == "png"


@pytest.mark.parametrize("stop", [RuntimeError("the memo failed"), KeyboardInterrupt()])
def test_adjust_stopped_while_writing_the_memo_leaves_the_old_outputs(tmp_path, monkeypatch, stop):
    out, memo = tmp_path / "adjusted.csv", tmp_path / "memo.html"
    args = [RATINGS, "--scale", "0-5", "--group-col", "grade", "-m", "TLI", "-o", out, "--memo", memo, "-q"]
    assert run("adjust", *args).exit_code == 0
    before = out.read_bytes(), memo.read_bytes()

    def failing(*a, **k):
        raise stop

    monkeypatch.setattr(practice, "_write_memo", failing)
    again = [("MN" if a == "TLI" else a) for a in args]
    if isinstance(stop, RuntimeError):
        with pytest.raises(RuntimeError):
            run("adjust", *again)
    else:   # (click makes ^C "Aborted!", exit status 1)
        assert run("adjust", *again).exit_code == 1
    assert (out.read_bytes(), memo.read_bytes()) == before     # TLI's file and memo, not MN's beside TLI's memo
    assert sorted(os.listdir(tmp_path)) == ["adjusted.csv", "memo.html"]
