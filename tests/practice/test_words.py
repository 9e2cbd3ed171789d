"""Words a staff tester found wrong: the app's list of methods called RAS "the rating-scale model" beside RSM,
"the rating scale model" (RAS is de Gruijter's Rasch extension), and named PWEQP and SEQP only by code; an empty
folder given with -o was "a run folder"."""

from __future__ import annotations

from support import run

from ratercal_cli.methods import method_codes
from ratercal_cli.practice.memo import METHOD_NAMES, method_words


def test_every_method_has_its_own_words():
    assert method_words("RAS") == "the Rasch extension (de Gruijter 1984) (RAS)"
    assert set(method_codes()) <= set(METHOD_NAMES)
    names = [METHOD_NAMES[c] for c in method_codes()]
    assert len(set(names)) == len(names)


def test_an_empty_folder_is_not_called_a_run_folder(tmp_path):
    folder = tmp_path / "adir"
    folder.mkdir()
    res = run("adjust", folder, "-o", tmp_path / "x.csv")
    assert res.exit_code == 2 and res.stderr.strip() == (f"error: --output/-o applies only to a ratings file, and "
                                                         f"{folder} is a folder (not a ratings file)")
