"""Where ``report`` may write: never the run's own folders, nor over a folder of the user's files."""

from __future__ import annotations

import csv

import pytest

from ratercal_cli.errors import InputError
from ratercal_cli.report import MARK, build_report

from support import write_design


def _run(root, variants=("faithful",)):
    """A scored run of two sets, written by hand (the report reads the design and the scores)."""
    write_design(root, ["0151", "2153"], variants=variants)
    (root / "score").mkdir(parents=True)
    (root / "score" / "manifest.json").write_text("{}")   # (a stage folder: its manifest)
    with open(root / "score" / "scores.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["set", "method", "variant", "rmse", "r", "maxdiff"])
        for variant in variants:
            for code in ("0151", "2153"):
                for i, m in enumerate(("NO", "MN")):
                    w.writerow([code, m, variant, 0.5 + 0.1 * i, 0.9, 1.0 + i])
    return root


def test_report_refuses_the_run_and_its_stage_folders(tmp_path):
    root = _run(tmp_path / "run")
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    with pytest.raises(InputError, match="is the run folder"):
        build_report(root, root, quiet=True, draw=False)
    with pytest.raises(InputError, match="score/, a folder of the run's stages"):
        build_report(root, root / "score", quiet=True, draw=False)
    with pytest.raises(InputError, match="score/, a folder of the run's stages"):
        build_report(root, root / "score" / "sub", quiet=True, draw=False)
    with pytest.raises(InputError, match="holds the run"):
        build_report(root, tmp_path, quiet=True, draw=False)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before   # nothing written
    (root / "report").mkdir()
    (root / "report" / "notes.md").write_text("mine")   # the default folder: the run's report's, whatever it holds
    build_report(root, root / "report", quiet=True, draw=False)
    assert (root / "report" / MARK).is_file() and (root / "report" / "report.md").is_file()
    assert (root / "report" / "notes.md").read_text() == "mine"


def test_report_refuses_a_folder_of_the_users_files_and_resumes_its_own(tmp_path):
    root = _run(tmp_path / "run")
    mine = tmp_path / "mine"
    (mine / "tables").mkdir(parents=True)
    (mine / "report.md").write_text("my notes\n")
    (mine / "tables" / "table07_rmse.csv").write_text("my table\n")   # (a name the report prunes as stale)
    (mine / "tables" / "my_sums.csv").write_text("mine\n")   # (another name: no obstacle, left alone)
    with pytest.raises(InputError, match=r"mine: holds report.md, tables/table07_rmse.csv, which the report would "
                                         r"write over or remove, and no report of ratercal's"):
        build_report(root, mine, quiet=True, draw=False)
    assert (mine / "report.md").read_text() == "my notes\n"
    assert (mine / "tables" / "table07_rmse.csv").read_text() == "my table\n"
    assert not (mine / MARK).exists()
    # a report's folder, interrupted before its report.md was written: its mark lets the build go on
    out = tmp_path / "out"
    build_report(root, out, quiet=True, draw=False)
    (out / "report.md").unlink()
    (out / "tables" / "table99_old.csv").write_text("x")
    build_report(root, out, quiet=True, draw=False)
    assert (out / "report.md").read_text().startswith("# ratercal report: variant `faithful`")
    assert not (out / "tables" / "table99_old.csv").exists()
    # a report built before the mark was written is known by its report.md
    (out / MARK).unlink()
    build_report(root, out, quiet=True, draw=False)
    assert (out / MARK).is_file()


def test_report_command_says_where_in_one_line(faithful_run):
    from support import run

    root = faithful_run.root
    for out, words in ((root / "score", "score/, a folder of the run's stages"),
                       (root / "2151" / "obsgen", "2151/, a folder of the run's stages")):
        r = run("report", root, "--out", out, "--quiet")
        assert r.exit_code == 2
        assert r.output.count("\n") == 1 and words in r.output and not out.joinpath(MARK).exists()


def test_report_guard_inside_the_default_folder_with_variants_and_files(tmp_path):
    """A helper's finds: a folder inside RUN/report was taken whatever it held; a run of two variants was checked
    at OUT/<variant> alone (--out RUN wrote RUN/corrected/); a file at the place given was a traceback; a folder
    holding only a hidden file, which the report touches not, was refused."""
    root = _run(tmp_path / "run")
    mine = root / "report" / "mine"
    (mine / "tables").mkdir(parents=True)
    (mine / "report.md").write_text("# My analysis of the run\n")
    with pytest.raises(InputError, match="holds report.md, which the report would write over"):
        build_report(root, mine, quiet=True, draw=False)
    (root / "report" / "report.md").write_text("# ratercal report: my reading notes\n")   # (not a report's title)
    with pytest.raises(InputError, match="report: holds report.md, which"):
        build_report(root, root / "report", quiet=True, draw=False)
    assert (root / "report" / "report.md").read_text() == "# ratercal report: my reading notes\n"
    (root / "report" / "report.md").unlink()
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        build_report(root, tmp_path / "file", quiet=True, draw=False)
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / ".keep").write_text("")
    build_report(root, keep, quiet=True, draw=False)
    assert (keep / ".keep").exists() and (keep / "report.md").exists()
    two = _run(tmp_path / "two", variants=("faithful", "corrected"))
    for out, words in ((two, "is the run folder"), (tmp_path, "holds the run"),
                       (two / "score", "score/, a folder of the run's stages")):
        with pytest.raises(InputError, match=words) as err:
            build_report(two, out, quiet=True, draw=False)
        assert str(err.value).startswith(f"{out}: ")   # (the folder given, not a variant's under it)
    notes = tmp_path / "notes"
    (notes / "corrected").mkdir(parents=True)
    (notes / "corrected" / "report.md").write_text("mine\n")
    with pytest.raises(InputError, match="corrected: holds report.md"):
        build_report(two, notes, quiet=True, draw=False)
    assert not (notes / "faithful").exists()   # (refused before either variant is written)
    build_report(two, tmp_path / "both", quiet=True, draw=False)
    assert all((tmp_path / "both" / v / MARK).is_file() for v in ("faithful", "corrected"))


def test_report_leaves_files_of_other_names_and_follows_links_to_the_run(tmp_path):
    """A verifying helper's finds: table_notes.md, table2024_draft.csv, fig1_scan_of_paper.png and my_by_facet.png
    in a report's folders were pruned as stale (the patterns were wider than the names written); a variant's folder
    that is a link to RUN/score took the report into the score stage's folder."""
    two = _run(tmp_path / "two", variants=("faithful", "corrected"))
    out = tmp_path / "rp"
    build_report(two, out, quiet=True, draw=False)
    mine = ["tables/table_notes.md", "tables/table2024_draft.csv", "figures/fig1_scan_of_paper.png",
            "figures/my_by_facet.png", "tables/Table07_rmse.md"]
    for name in mine:
        (out / "corrected" / name).parent.mkdir(parents=True, exist_ok=True)
        (out / "corrected" / name).write_text("mine")
    (out / "corrected" / "tables" / "table99_old.csv").write_text("stale")
    build_report(two, out, quiet=True, draw=False)
    assert all((out / "corrected" / name).read_text() == "mine" for name in mine)
    assert not (out / "corrected" / "tables" / "table99_old.csv").exists()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "corrected").symlink_to(two / "score", target_is_directory=True)
    before = sorted(p.name for p in (two / "score").iterdir())
    with pytest.raises(InputError, match="corrected: is in score/, a folder of the run's stages"):
        build_report(two, linked, quiet=True, draw=False)
    assert sorted(p.name for p in (two / "score").iterdir()) == before and not (linked / "faithful").exists()
