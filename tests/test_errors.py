"""The library's errors are plain Python exceptions naming its own arguments; the command line shows
the same message with each argument as its flag (issue 31, item 1)."""

import pickle
import subprocess
import sys

import pytest

import ratercal_cli as rc
from ratercal_cli.commands import cli_message, flag
from ratercal_cli.errors import ArgumentError, InputError, MethodError, NotFittedError, RatercalError, arg
from ratercal_cli.ratings import parse_scale


def test_plain_exceptions():
    assert issubclass(rc.InputError, ValueError) and issubclass(ArgumentError, InputError)
    assert issubclass(NotFittedError, AttributeError) and issubclass(MethodError, RatercalError)
    assert not any("click" in c.__module__ for c in RatercalError.__mro__)


def test_no_library_module_imports_click():
    """Only cli.py and commands/ may import click: importing every other module pulls in no click."""
    code = ("import importlib, pathlib, sys, ratercal_cli\n"
            "root = pathlib.Path(ratercal_cli.__file__).parent\n"
            "skip = ('cli', 'commands')\n"
            "for p in sorted(root.rglob('*.py')):\n"
            "    parts = p.relative_to(root).with_suffix('').parts\n"
            "    if parts[0] not in skip and parts[-1] != '__main__':\n"
            "        importlib.import_module('.'.join(('ratercal_cli',) + parts).removesuffix('.__init__'))\n"
            "print('click' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_library_names_the_argument_and_the_command_line_the_flag():
    with pytest.raises(rc.InputError) as e:
        parse_scale("abc")
    assert str(e.value) == "scale: expected LOW-HIGH such as 0-5, not 'abc'"
    assert cli_message(e.value) == "--scale: expected LOW-HIGH such as 0-5, not 'abc'"
    err = ArgumentError("decimal", f"needs another separator ({arg('sep', 'semicolon')} or tab)", "f.csv", 1)
    assert str(err) == "f.csv:1: decimal: needs another separator (sep='semicolon' or tab)"
    assert cli_message(err) == "f.csv:1: --decimal: needs another separator (--sep semicolon or tab)"
    mfrm = ArgumentError("anchors_in", f"give {arg('method', 'MFRM', cli='-m MFRM')}")
    assert (str(mfrm), cli_message(mfrm)) == ("anchors_in: give method='MFRM'", "--anchors: give -m MFRM")
    # a file's column is not an argument: shown as it is on both sides
    col = InputError("not a number", "f.csv", 3, "score")
    assert str(col) == cli_message(col) == "f.csv:3: score: not a number"
    assert (flag("paper_col"), flag("facet_cols"), flag("--json")) == ("--paper-col", "--facet-col", "--json")


def test_wrapping_keeps_the_marks_and_errors_pickle():
    inner = ArgumentError("cut", f"off the scale; give another {arg('cut')}")
    outer = RatercalError(f"grade=5: {inner.marked()}")
    assert str(outer) == "grade=5: cut: off the scale; give another cut"
    assert cli_message(outer) == "grade=5: --cut: off the scale; give another --cut"
    back = pickle.loads(pickle.dumps(InputError("bad", "f.csv", 4, "rater")))
    assert (type(back), back.path, back.line, back.field, str(back)) == (InputError, "f.csv", 4, "rater",
                                                                          "f.csv:4: rater: bad")
    assert repr(inner) == "ArgumentError('cut: off the scale; give another cut')"


def test_warnings_name_the_library_argument_or_the_flag_and_point_at_the_callers_line(tmp_path):
    """The library's warnings said "give --resolve-discrepancies" and "--order-col" to a Python user
    and were reported at ratercal's own coerce.py line; now the library says resolve_discrepancies=True
    and order_col at the caller's line, the command line --resolve-discrepancies and --order-col."""
    import warnings

    from support import run

    path = tmp_path / "r.csv"
    path.write_text("paper,rater,score\n" + "".join(f"p{i},R{i % 3},{1 + i % 2}\np{i},R{(i + 1) % 3},{4 - i % 2}\n"
                                                   f"p{i},R{(i + 2) % 3},3\n" for i in range(6)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc.adjust(path, methods=["MN"], scale="1-4")
    texts = [str(w.message) for w in caught]
    assert any("give resolve_discrepancies=True to keep the two nearest" in t for t in texts), texts
    assert any("(give order_col for the order of reading)" in t for t in texts), texts
    assert not any("--" in t for t in texts)
    assert {w.filename for w in caught} == {__file__}
    res = run("adjust", path, "--scale", "1-4", "-m", "MN", "-o", tmp_path / "o.csv")
    assert res.exit_code == 0, res.output
    assert "give --resolve-discrepancies to keep the two nearest" in res.output
    assert "(give --order-col for the order of reading)" in res.output and "order_col" not in res.output
