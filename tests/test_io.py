"""io.read_csv: duplicate header names and line numbers after multi-line quoted fields."""

import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.io import read_csv


def test_duplicate_column_is_refused(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("paper,rater,score,score\n1,a,3,4\n")
    with pytest.raises(InputError) as e:
        read_csv(p)
    assert (e.value.line, e.value.field) == (1, "score")
    assert "column score appears twice" in str(e.value)


def test_duplicate_column_after_blank_lines_names_its_line(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("\n\npaper, rater ,rater\n1,a,b\n")
    with pytest.raises(InputError) as e:
        read_csv(p)
    assert (e.value.line, e.value.field) == (3, "rater")


def test_line_numbers_after_a_quoted_field_spanning_lines(tmp_path):
    # record 2 (file lines 2-4) holds a comment with two newlines; the short record is on line 5
    p = tmp_path / "q.csv"
    p.write_text('paper,rater,score,comment\n1,a,3,"first\nsecond\nthird"\n2,b,4,ok\n3,c,5\n')
    with pytest.raises(InputError) as e:
        read_csv(p)
    assert e.value.line == 6
    p.write_text('paper,rater,score,comment\n1,a,3,"first\nsecond\nthird"\n2,b,4,ok\n')
    _, rows = read_csv(p)
    assert [ln for ln, _ in rows] == [2, 5]
    assert rows[0][1]["comment"] == "first\nsecond\nthird"


def test_two_unnamed_columns_are_refused(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("paper,,rater,,score\n1,x,a,y,3\n")
    with pytest.raises(InputError) as e:
        read_csv(p)
    assert e.value.line == 1 and "field 4 of the header" in str(e.value)


def test_sniff_delimiter_uses_the_first_non_blank_line():
    from ratercal_cli.io import sniff_delimiter

    assert sniff_delimiter("\n  \npaper\trater\tscore,x\n1,2,3,4,5\n") == "\t"
    assert sniff_delimiter("paper,rater\tscore\n") == ","
    assert sniff_delimiter("") == ","
    # semicolons (a spreadsheet's CSV where the decimal mark is a comma), the marks inside quotes not counted
    assert sniff_delimiter("paper;rater;score\n") == ";"
    assert sniff_delimiter('"Student, ID";"Marker, name";"Score (0-5)"\n') == ";"
    assert sniff_delimiter('"a;b;c",d,e\n') == "," and sniff_delimiter("a;b\tc\td\n") == "\t"


def test_read_csv_sniffs_tabs(tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("\npaper\trater\tscore\n1\ta, b\t3\n")
    header, rows = read_csv(p)
    assert header == ["paper", "rater", "score"] and rows == [(3, {"paper": "1", "rater": "a, b", "score": "3"})]


def test_sha256_file_is_hashlibs_over_blocks(tmp_path):
    """Read through the descriptor in 1 MiB blocks: the digest of the whole content, empty included."""
    import hashlib
    import os

    from ratercal_cli.io import sha256_file

    data = os.urandom((5 << 19) + 17)   # 2.5 MiB and a bit: three blocks
    (tmp_path / "big").write_bytes(data)
    (tmp_path / "empty").write_bytes(b"")
    assert sha256_file(tmp_path / "big") == hashlib.sha256(data).hexdigest()
    assert sha256_file(str(tmp_path / "empty")) == hashlib.sha256(b"").hexdigest()


def test_a_run_folders_file_that_is_a_link_is_written_through(tmp_path):
    """atomic_write's shortcut for run folders (one lstat) still writes a link's target, keeps
    the link, refuses a folder, and writes through a linked folder."""
    import os

    import pytest

    from ratercal_cli.errors import InputError
    from ratercal_cli.io import atomic_write

    target, link = tmp_path / "real.csv", tmp_path / "run" / "link.csv"
    link.parent.mkdir()
    target.write_text("old\n")
    os.symlink(target, link)
    with atomic_write(link) as fh:
        fh.write("new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    (tmp_path / "run" / "adir").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        with atomic_write(tmp_path / "run" / "adir"):
            pass
    os.symlink(tmp_path / "run", tmp_path / "linked_run")
    with atomic_write(tmp_path / "linked_run" / "stage" / "x.csv") as fh:
        fh.write("x\n")
    assert (tmp_path / "run" / "stage" / "x.csv").read_text() == "x\n"
    assert sorted(p.name for p in (tmp_path / "run" / "stage").iterdir()) == ["x.csv"]


def test_sigterm_during_the_cleanup_of_a_failed_write_still_removes_the_temporary(tmp_path, monkeypatch):
    """A worker whose write failed (a full disk) is unwinding when the parent, told of the failure,
    stops it with SIGTERM: the signal used to land between the failure and the removal of the
    temporary file and leave it behind (test_faults' full-disk test, one run in four)."""
    import os
    import signal

    import ratercal_cli.io as rio

    target = tmp_path / "ratings.csv"
    pid = os.fork()
    if pid == 0:   # the worker
        try:
            real_unlink = os.unlink

            class OS:
                def __getattr__(self, name):
                    return getattr(os, name)

                @staticmethod
                def unlink(path, *a, **k):   # SIGTERM arrives just as the cleanup starts
                    os.kill(os.getpid(), signal.SIGTERM)
                    return real_unlink(path, *a, **k)

            rio.os = OS()
            with rio.atomic_write(target) as fh:
                fh.write("half")
                raise OSError(28, "No space left on device")
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    assert list(tmp_path.iterdir()) == []



def _sigterm_at_line(folder, k, fail):
    """Fork a worker writing ``folder/manifest.json`` atomically (its write failing with ENOSPC if
    ``fail``) that sends itself SIGTERM at the ``k``-th line run by the atomic write's code; returns
    its wait status."""
    import linecache
    import os
    import signal
    import sys

    import ratercal_cli.io as rio

    pid = os.fork()
    if pid == 0:   # the worker
        try:
            codes = {f.__wrapped__.__code__ for f in (rio.atomic_write, rio._term_unwinds, rio._naming_write_errors)}
            codes.add(rio._create_temporary.__code__)
            count = [0]

            def line(frame, event, arg):
                # a signal's handler runs at a call or a jump, never at the no-op of a ``try:`` line (an
                # exception raised there by a trace function skips the enclosing handlers in Python 3.11)
                if event == "line" and linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() != "try:":
                    count[0] += 1
                    if count[0] == k:
                        os.kill(os.getpid(), signal.SIGTERM)
                return line

            sys.settrace(lambda frame, event, arg: line if frame.f_code in codes else None)
            try:
                with rio.atomic_write(folder / "manifest.json") as fh:
                    fh.write("{}")
                    if fail:
                        raise OSError(28, "No space left on device")
            except Exception:   # noqa: BLE001 - the failed write's error
                pass
            finally:
                sys.settrace(None)
        finally:
            os._exit(3)
    return os.waitpid(pid, 0)[1]


@pytest.mark.parametrize("fail", [False, True])
def test_sigterm_at_any_line_of_an_atomic_write_leaves_no_temporary(tmp_path, fail):
    """A worker stopped by its parent's SIGTERM at any moment of an atomic write, one that succeeds or
    one that fails (a full disk), leaves no temporary file.  The signal used to land, at some lines,
    where nothing removed the file: as it was released after the file was made (before the ``try``
    that removes it) and between a failed write and the cleanup that held it.  test_faults' full-disk
    test found them: a ``manifest.json`` or ``ratings.csv`` temporary left in 14 of 40 runs at load 5."""
    import os
    import signal

    k, killed = 0, 0
    while True:
        k += 1
        folder = tmp_path / str(k)
        folder.mkdir()
        status = _sigterm_at_line(folder, k, fail)
        assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == [], k
        if os.WIFEXITED(status):   # past the write's last line: no signal sent
            assert os.WEXITSTATUS(status) == 3
            break
        assert os.WTERMSIG(status) == signal.SIGTERM
        killed += 1
    assert killed >= 15   # every line of the write's code was tried


@pytest.mark.parametrize("codec", ["utf-32", "utf-32-le", "utf-32-be"])
def test_a_utf32_file_with_its_mark_is_read(tmp_path, codec):
    """UTF-32's byte-order mark begins as UTF-16's: an edge tester's file was taken for UTF-16 and refused as NULs."""
    import codecs

    from ratercal_cli.io import read_text

    text = "paper,rater,score\nP1,Zoë,3\n"
    mark = {"utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}.get(codec, b"")
    (tmp_path / "u.csv").write_bytes(mark + text.encode(codec))
    assert read_text(tmp_path / "u.csv") == text


def test_a_separator_at_the_end_of_every_line_adds_no_column(tmp_path):
    """``note,`` on every line (an edge tester's export): an empty unnamed column was written back as a column named ""
    (``note,,flag``). Empty throughout, it is dropped; with a value, it stays a column."""
    from ratercal_cli.io import read_table

    path = tmp_path / "t.csv"
    path.write_text("paper,rater,score,note,\nP1,A,3,x,\nP1,B,4,,\n")
    header, rows, _ = read_table(path)
    assert header == ["paper", "rater", "score", "note"] and rows[1][1] == {"paper": "P1", "rater": "B", "score": "4",
                                                                             "note": ""}
    path.write_text("paper,rater,score,note,\nP1,A,3,x,\nP1,B,4,,7\n")
    header, rows, _ = read_table(path)
    assert header == ["paper", "rater", "score", "note", ""] and rows[1][1][""] == "7"


def test_a_long_field_without_a_quote_names_its_column(tmp_path):
    """A 1 MB label with no quote anywhere was "a field longer than 128 KiB (an unterminated quote?)", naming no column
    (an edge tester): it names the column and the length; a quote left open still gets its hint."""
    from ratercal_cli.errors import InputError
    from ratercal_cli.io import read_table

    path = tmp_path / "t.csv"
    path.write_text("paper,rater,score,note\nP1,A,3,x\nP1,B,4," + "y" * 200_000 + "\n")
    with pytest.raises(InputError) as exc:
        read_table(path)
    assert str(exc.value) == f"{path}:3: note: a field of 200,000 characters, longer than the 128 KiB a field may hold"
    path.write_text('paper,rater,score,note\nP1,A,3,"x\n' + "P1,B,4,y\n" * 20_000)
    with pytest.raises(InputError, match="an unterminated quote"):
        read_table(path)
