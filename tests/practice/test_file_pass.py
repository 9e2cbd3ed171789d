"""The file pass of ``adjust`` (issue 32): what it imports, and the columnar read and write keeping
the guarantees of the row-by-row ones."""

import numpy as np
from support import modules_after_adjust


def _write(path, n_papers=30, seed=0):
    rng = np.random.default_rng(seed)
    lines = ["paper,rater,score"]
    for p in range(n_papers):
        for r in rng.choice(8, 2, replace=False):
            lines.append(f"P{p},R{r + 1},{rng.integers(0, 6)}")
    path.write_text("\n".join(lines) + "\n")


def test_adjust_no_does_not_import_scipy_stats(tmp_path):
    """scipy.stats took 0.5-1.7 s of every ``adjust`` (practice/assignment.py and agreement.py imported it
    at the top); the file pass of ``adjust -m NO`` needs none of it.  Fails before: 'scipy.stats' was
    in sys.modules."""
    data = tmp_path / "r.csv"
    _write(data)
    assert modules_after_adjust(data, tmp_path / "o.csv", ["NO"], ["scipy.stats"]) == []
    assert (tmp_path / "o.csv").read_text().splitlines()[0] == "paper,rater,score,flag,NO,NO_paper"


def test_adjust_no_does_not_import_pandas(tmp_path):
    """pyarrow's own conversions (pa.array, to_numpy, to_pylist, pa.scalar) import pandas, 0.3-0.5 s:
    the columnar reader and writer make and read arrays from their buffers instead."""
    data = tmp_path / "r.csv"
    _write(data)
    found = modules_after_adjust(data, tmp_path / "o.csv", ["NO"], ["pyarrow", "pandas"])
    assert "pyarrow" in found and not [m for m in found if m.split(".")[0] == "pandas"]


# -- the columnar reader reads what the row-by-row reader reads ------------------------------
import csv  # noqa: E402
import io  # noqa: E402

import pytest  # noqa: E402

from ratercal_cli import columnar  # noqa: E402
from ratercal_cli.errors import InputError  # noqa: E402
from ratercal_cli.practice import ratings_file as rf  # noqa: E402
from ratercal_cli.practice.ratings_file import read_ratings_table  # noqa: E402

LABELS = ["P1", "p1", "P 2", "P  2", " P3", "Zoë", "Zoe\u0308", "=cmd", "-1", "+x", "@a", "R\u200b1", "Ⅻ",
          "a;b", "x\ty", "\u00a0", "NA", "", "Müller"]


def random_file(rng, quotes=False):
    """A ratings text of random shape: separators, line ends, blank and blank-looking lines, spaces
    around cells, lookalike and formula-like labels, missing, bad and out-of-scale scores, short
    rows, duplicates; quoted cells (a separator or a quote inside) with ``quotes``."""
    sep = str(rng.choice([",", ";", "\t"]))
    end = str(rng.choice(["\n", "\r\n"]))
    header = ["paper", "rater", "score"] + (["note"] if rng.random() < 0.5 else [])
    lines = [""] if rng.random() < 0.2 else []
    lines.append(sep.join(header))
    width = len(header)
    n_papers = int(rng.integers(1, 12))
    for p in range(n_papers):
        for r in rng.choice(5, int(rng.integers(1, 4)), replace=False):
            u = rng.random()
            if u < 0.04:
                lines.append(str(rng.choice(["", "  ", sep * (width - 1), " " + sep * (width - 1)])))
            paper = f"P{p}" if rng.random() < 0.9 else str(rng.choice(LABELS))
            rater = f"R{r}" if rng.random() < 0.9 else str(rng.choice(LABELS))
            score = str(rng.integers(0, 6)) if rng.random() < 0.93 else str(rng.choice(["", "NA", "7", "x", "2.0",
                                                                                          " 3 ", "2,0"]))
            cells = [(" " if rng.random() < 0.1 else "") + paper, rater, score] + ["x y"] * (width - 3)
            cells = [c.replace(sep, "") for c in cells]
            if quotes and rng.random() < 0.1:
                cells[-1] = '"' + cells[-1] + sep + 'q""q"'
            if rng.random() < 0.02:
                cells = cells[:-1]
            lines.append(sep.join(cells))
            if rng.random() < 0.03:
                lines.append(lines[-1])   # a duplicate
    return end.join(lines) + (end if rng.random() < 0.7 else ""), sep


def read_both(path, monkeypatch, **kw):
    out = []
    for columnar_path in (True, False):
        if not columnar_path:
            monkeypatch.setattr(rf, "read_columns", lambda *a, **k: None)   # the row-by-row reader
        try:
            t = read_ratings_table(path, **kw)
            out.append((t.header, list(t.rows), t.lines.tolist(), t.flags, t.warnings, t.delimiter, t.newline,
                        [(g.name, g.ratings.paper_ids, g.ratings.rater_ids, g.ratings.paper.tolist(),
                          g.ratings.rater.tolist(), g.ratings.score.tolist(), g.rows.tolist()) for g in t.groups]))
        except InputError as exc:
            out.append(("error", str(exc)))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("seed", range(80))
def test_the_columnar_reader_reads_what_the_row_reader_reads(seed, tmp_path, monkeypatch):
    rng = np.random.default_rng([32, seed])
    text, sep = random_file(rng, quotes=seed % 4 == 0)
    path = tmp_path / "r.csv"
    path.write_bytes(("\ufeff" if seed % 5 == 0 else "").encode() + text.encode("utf-8"))
    kw = dict(scale="0-5" if seed % 3 else None, fold_labels=seed % 2 == 0,
              decimal="comma" if sep != "," and seed % 7 == 0 else "point")
    fast, rows = read_both(path, monkeypatch, **kw)
    assert fast == rows


def test_the_columnar_reader_is_taken_where_records_are_lines():
    text = "\npaper,rater,score\r\nP1,R1,3\r\n\r\nP2,R1, 4\r\n"
    cells, line, rows, lines = columnar.read_columns(text, ",", 1 << 17)
    assert (cells, line, list(rows), lines.tolist()) == (
        ["paper", "rater", "score"], 2, [{"paper": "P1", "rater": "R1", "score": "3"},
                                         {"paper": "P2", "rater": "R1", "score": " 4"}], [3, 5])
    for other in ['paper,rater,score\nP1,"R1",3\n', "paper,rater,score\nP1,R1,3\n , ,\n", "a,b\n1,2\r3,4\n",
                  "paper,rater,score\nP1,R1\n", "a,b,,\n1,2,,\n", "a,b\n" + "x" * 200 + ",1\n"]:
        assert columnar.read_columns(other, ",", 100) is None, other


def test_the_columnar_readers_line_numbers_and_field_limit():
    """Where no line is empty or starts oddly, row k is line k + 2 (no search line by line); a line that
    starts with a space or a separator but holds more is still read, at its line; a field (not a line)
    over the limit, or a header over it, is left to the row-by-row reader."""
    plain = columnar.read_columns("paper,rater,score\r\nP1,R1,3\r\nP2,R1,4", ",", 100)
    assert list(plain[2]) == [{"paper": "P1", "rater": "R1", "score": "3"},
                              {"paper": "P2", "rater": "R1", "score": "4"}] and plain[3].tolist() == [2, 3]
    spaced = columnar.read_columns("paper,rater,score\nP1,R1,3\n P2,R1,4\n,R2,5\n", ",", 100)
    assert [r["paper"] for r in spaced[2]] == ["P1", " P2", ""] and spaced[3].tolist() == [2, 3, 4]
    wide = "a,b,c\n" + ",".join(["x" * 60] * 3) + "\n"   # a 182-character line of 60-character fields
    assert columnar.read_columns(wide, ",", 100) is not None
    assert columnar.read_columns(wide.replace("x" * 60, "x" * 101, 1), ",", 100) is None
    assert columnar.read_columns("h" * 101 + ",b\n1,2\n", ",", 100) is None


@pytest.mark.parametrize("sep, end", [(",", "\n"), (";", "\r\n"), ("\t", "\n")])
def test_write_columns_writes_what_csv_writer_writes(sep, end):
    rng = np.random.default_rng(len(sep + end))
    pool = ["", "a", "a b", 'say "hi"', "x,y", "x;y", "x\ty", "line\nbreak", "cr\rhere", "Zoë", "日本", "'=1", " lead"]
    table = [[str(rng.choice(pool)) for _ in range(4)] for _ in range(300)]
    want = io.StringIO()
    w = csv.writer(want, delimiter=sep, lineterminator=end)
    w.writerow(["h1", "h,2", "h3", "h4"])
    w.writerows(table)
    got = io.BytesIO()
    columnar.write_columns(got, ["h1", "h,2", "h3", "h4"], [columnar.Column.from_values([r[k] for r in table])
                                                           for k in range(4)], sep, end)
    assert got.getvalue().decode("utf-8") == want.getvalue()


@pytest.mark.parametrize("sep, end", [(",", "\n"), (";", "\r\n")])
def test_write_columns_writes_a_column_and_its_repeats_as_csv_writer_does(sep, end):
    """A column written again as it is (a Rasch model's adjusted score of each rating and of its paper),
    twice or three times, with too many labels to be merged with its neighbours by their combinations, is
    written once with its cells repeated: the bytes csv.writer writes, in the middle and at the end of the
    line; a column that differs in one row from its neighbour is not taken for a repeat."""
    rng = np.random.default_rng(7)
    pool = ["", "a b", 'say "hi"', "x,y", "x;y", "line\nbreak", "Zoë"]
    values = [f"{rng.choice(pool)}{k % 400}" for k in range(2000)]
    other = [str(k) for k in rng.permutation(2000)]
    almost = list(values)
    almost[1234] = "changed"
    for cols in ([values, values, other], [other, values, values, values], [values, almost, values]):
        want = io.StringIO()
        csv.writer(want, delimiter=sep, lineterminator=end).writerows([[f"h{k}" for k in range(len(cols))]]
                                                                         + [list(r) for r in zip(*cols)])
        columns = [columnar.Column.from_values(c) for c in cols]
        got = io.BytesIO()
        columnar.write_columns(got, [f"h{k}" for k in range(len(cols))], columns, sep, end)
        assert got.getvalue().decode("utf-8") == want.getvalue()
    parts = columnar._merged([columnar.Column.from_values(c) for c in (other, values, values, values)], sep, end)
    assert [len(c.labels) for c, _ in parts] == [2000, len(set(values))]   # (the repeats one column)


class _ShortWrites(io.BytesIO):
    """A writer that takes at most 1,000 bytes a call and says how many, as a buffered writer into a pipe
    may (Python 3.11 returned 65,536 of 600,000 bytes without an error where the pipe's reader had left)."""

    def write(self, data):
        return super().write(memoryview(data)[:1000])


def test_write_columns_writes_everything_to_a_writer_that_takes_part():
    """``adjust -o - | head -1`` exited 0 one time in four with the rest of the output dropped, where
    write_columns ignored a short write's count (tests/practice/test_practice_cli.py's pipe test flaked)."""
    labels = [f"P{k}" for k in range(5000)]
    cols = [columnar.Column.from_values(labels), columnar.Column.from_values([str(k % 6) for k in range(5000)])]
    whole, short = io.BytesIO(), _ShortWrites()
    columnar.write_columns(whole, ["paper", "score"], cols)
    columnar.write_columns(short, ["paper", "score"], cols)
    assert len(whole.getvalue()) > 30_000 and short.getvalue() == whole.getvalue()


def test_the_adjusted_file_keeps_the_inputs_dialect_and_neutralises_labels(tmp_path):
    """A ;-separated, CRLF, BOM, decimal-comma input with formula-like labels comes back in its
    dialect, the labels with a leading ' (guard.neutralise), plain numbers left alone."""
    rows = ["paper;rater;score;note"] + [f"{p};{r};{(k + j) % 6};{'=HYPERLINK(1)' if k == 0 else '-1'}"
                                         for k, p in enumerate(["=P1", "P2", "@P3", "-4"])
                                         for j, r in enumerate(["R1", "+R2"])]
    path = tmp_path / "r.csv"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(rows).encode() + b"\r\n")
    out = tmp_path / "o.csv"
    from click.testing import CliRunner

    from ratercal_cli.cli import cli
    res = CliRunner().invoke(cli, ["adjust", str(path), "--scale", "0-5", "--sep", "semicolon", "--decimal", "comma", "-m", "NO",
                                   "-o",
                                   str(out), "-q"])
    assert res.exit_code == 0, res.output
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\r\n") == 9
    lines = data[3:].decode().split("\r\n")
    assert lines[0] == "paper;rater;score;note;flag;NO;NO_paper"
    assert lines[1] == "'=P1;R1;0;'=HYPERLINK(1);;0,0000;0,5000"
    assert lines[4] == "P2;'+R2;2;-1;;2,0000;1,5000"
    assert lines[7] == "-4;R1;3;-1;;3,0000;3,5000"
    # read back, the neutralised labels are the labels again: the adjusted file's '+R2 and a new file's +R2 are one
    # rater (a staff tester's '+Bob was a rater of its own); a quote before anything else stays
    from ratercal_cli.practice.ratings_file import read_ratings_file

    again = tmp_path / "again.csv"
    again.write_text("\n".join(lines[:-1] + ["P9;+R2;4;;;;", "P9;'quoted';1;;;;", "P9;R1;3;;;;"]) + "\n",
                     encoding="utf-8")
    r = read_ratings_file(again, "0-5", delimiter=";", decimal=",").ratings
    assert sorted(r.rater_ids) == sorted(["'quoted'", "+R2", "R1"])
    assert "=P1" in r.paper_ids and "'=P1" not in r.paper_ids and "@P3" in r.paper_ids


def test_runs_of_a_papers_rows_are_coded_as_by_the_row_reader(tmp_path, monkeypatch):
    """Above 2,000 rows, a column whose neighbours repeat (each paper's ratings together) is hashed a
    run at a time (columnar._run_heads): papers in runs of 1-4, some coming back later, and a rater
    column without runs, read as the row reader reads them."""
    rng = np.random.default_rng(7)
    lines = ["paper,rater,score"]
    for k in range(1500):
        back = rng.random() < 0.1   # a paper coming back, read by other raters
        p = f"P{rng.integers(0, k + 1)}" if back else f"P{k}"
        for r in rng.choice(30, int(rng.integers(1, 5)), replace=False):
            lines.append(f"{p},R{r + (100 + k if back else 0)},{rng.integers(0, 6)}")
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    papers = [ln.split(",")[0] for ln in lines[1:]]
    heads = columnar._run_heads(columnar._strings(papers))
    assert heads is not None and heads.tolist() == [k for k in range(len(papers)) if k == 0 or papers[k] != papers[k - 1]]
    fast, slow = read_both(path, monkeypatch, scale="0-5")
    assert fast == slow and fast[0] != "error"


@pytest.mark.parametrize("seed", range(5))
def test_facet_cells_are_the_lexicographic_combinations(seed):
    """Ratings.facet_cells numbers each rating's combination of facet levels in the rows'
    lexicographic order (it sorted the rows with np.unique(axis=0), 0.8 s a call at 1M ratings of a
    rubric; now one number a combination): the same cells and labels as that sort on random facets
    with combinations missing."""
    from ratercal_cli.ratings import Ratings

    rng = np.random.default_rng(seed)
    n = 400
    crit = rng.integers(0, 4, n) * (rng.random(n) < 0.9)
    task = rng.integers(0, 3, n)
    r = Ratings(paper=np.arange(n) // 4, rater=np.arange(n) % 4, score=rng.integers(0, 6, n), max_score=5,
                n_papers=n // 4, n_raters=4,
                facets={"criterion": (crit, ("a", "b", "c", "d")), "task": (task, ("t1", "t2", "t3"))})
    cell, labels = r.facet_cells()
    combos, want = np.unique(np.column_stack([crit, task]), axis=0, return_inverse=True)
    assert cell.tolist() == want.ravel().tolist()
    assert labels == [(("a", "b", "c", "d")[i], ("t1", "t2", "t3")[j]) for i, j in combos.tolist()]
