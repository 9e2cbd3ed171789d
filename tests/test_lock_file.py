"""Issue 30 item 5: RUN/.lock is never followed through a symlink, and a .lock that is a directory
or a FIFO is one line, not a traceback."""

import os

import pytest

from ratercal_cli.errors import RatercalError
from ratercal_cli.io import folder_lock

from support import run


def test_a_lock_linked_to_another_file_leaves_that_file_alone(tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ".lock").symlink_to(victim)
    with pytest.raises(RatercalError, match=r"run/\.lock: is a symbolic link"):
        with folder_lock(run_dir, "test"):
            pass
    assert victim.read_text() == "keep me\n"


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_lock_that_is_not_a_file_is_one_line(tmp_path, kind):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if kind == "directory":
        (run_dir / ".lock").mkdir()
    else:
        os.mkfifo(run_dir / ".lock")
    with pytest.raises(RatercalError, match=r"\.lock: is (a directory|not a regular file)"):
        with folder_lock(run_dir, "test"):
            pass
    # through a command: one line, exit 2
    (tmp_path / "c.yaml").write_text("generator: pcm\nmethods: [NO]\ncells:\n  - {raters_per_paper: [2], "
                                     "papers: [20], max_score: [5], quality: [normal]}\nseed: 3\n")
    res = run("simulate", tmp_path / "c.yaml", "--out", run_dir, "-q")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1 and ".lock" in res.stderr


def test_the_lock_still_says_who_holds_it(tmp_path):
    with folder_lock(tmp_path, "first"):
        with pytest.raises(RatercalError, match=r"in use by ratercal first \(process \d+\)"):
            with folder_lock(tmp_path, "second"):
                pass
    assert (tmp_path / ".lock").read_text().startswith("ratercal first")
