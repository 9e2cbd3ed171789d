import pytest

from ratercal_cli.config import load_config, parse_config
from ratercal_cli.errors import InputError

from support import CONFIG

BASE = """
cells:
  - raters_per_paper: [2]
    papers: [100]
    max_score: [5]
"""


def test_the_study_config_has_32_sets_in_9_chains():
    cfg = load_config(CONFIG)
    assert len(cfg.cells) == 32 and cfg.n_raters == 9 and len(cfg.chains) == 9
    assert sum(len(c.sets) for c in cfg.chains) == 32
    assert {c.low_byte for c in cfg.chains} == {None, 68, 137}
    # 500-paper sets are normal only
    assert all(c.quality == "normal" for c in cfg.cells if c.papers == 500)
    # YAML 1.1 would read the method code NO as false
    assert cfg.methods[0] == "NO"


def test_unknown_key_names_file_line_and_key():
    with pytest.raises(InputError, match=r"^x\.yaml:3: cells\[0\]\.paperz: unknown key"):
        parse_config("cells:\n  - raters_per_paper: [2]\n    paperz: [100]\n", source="x.yaml")


def test_wrong_type_names_the_key():
    with pytest.raises(InputError, match=r"x\.yaml:4: cells\[0\]\.papers\[0\]: expected an integer, got 'many'"):
        parse_config(BASE.replace("[100]", "[many]"), source="x.yaml")


def test_impossible_design_is_refused():
    text = BASE.replace("[2]", "[3]") + "generator: pcm\nraters:\n  steps: [[-1, 0, 1, 2, 3], [0, 1, 2, 3, 4]]\n"
    with pytest.raises(InputError, match="3 raters per paper, but only 2 raters"):
        parse_config(text, source="x.yaml")


def test_steps_must_match_the_scale():
    text = BASE + "generator: pcm\nraters:\n  steps: [[-1, 0, 1], [0, 1, 2], [1, 2, 3]]\n"
    with pytest.raises(InputError, match=r"raters\.steps\[0\]: rater 1 has 3 steps; the 0-5 scale needs 5"):
        parse_config(text, source="x.yaml")


def test_chains_must_cover_every_set():
    text = BASE.replace("[2]", "[2, 3]") + "chains:\n  - {start: fresh, sets: ['2151']}\n"
    with pytest.raises(InputError, match="set\\(s\\) in no chain: 3151"):
        parse_config(text, source="x.yaml")


def test_linear_generator_takes_rater_effects():
    cfg = parse_config(BASE + "generator: linear\n", source="x.yaml")
    assert cfg.n_raters == 9 and cfg.linear["effects"][0] == 0.5 and cfg.linear["error_sd"][2] == 0.4


def test_changing_config_changes_digest():
    a = parse_config(BASE + "seed: 1\ngenerator: pcm\n")
    b = parse_config(BASE + "seed: 2\ngenerator: pcm\n")
    assert a.digest() != b.digest()


def test_numbers_must_be_finite():
    with pytest.raises(InputError, match=r"x\.yaml:6: cut: expected a finite number, got nan"):
        parse_config(BASE + "cut: .nan\n", source="x.yaml")


def test_duplicate_methods_and_variants_are_refused():
    with pytest.raises(InputError, match=r"methods\[1\]: method MN is listed twice"):
        parse_config(BASE + "methods: [MN, mn]\n", source="x.yaml")
    with pytest.raises(InputError, match=r"variant: a variant is listed twice"):
        parse_config(BASE + "variant: [corrected, corrected]\n", source="x.yaml")


def test_error_under_a_per_scale_steps_mapping_names_its_own_line():
    text = BASE + "generator: pcm\nraters:\n  steps:\n    5:\n      - [0, 1, 2, 3, 4]\n      - [0, 1, 2]\n"
    with pytest.raises(InputError, match=r"^x\.yaml:11: raters\.steps\[5\]\[1\]: rater 2 has 3 steps"):
        parse_config(text, source="x.yaml")


def test_a_run_reads_its_config_from_the_parse_cache_while_the_text_is_unchanged(tmp_path):
    """``load_config(..., cache=)``: the same config from the YAML and from the cache, which a
    changed text, a damaged cache or another version's key leave unused."""
    import subprocess
    import sys

    path, cache = tmp_path / "config.yaml", tmp_path / ".config.yaml.parsed"
    path.write_text(CONFIG.read_text())
    first = load_config(path, cache=cache)
    assert cache.read_text().startswith("ratercal-config-cache ")
    again = load_config(path, cache=cache)
    assert again.digest() == first.digest() == load_config(CONFIG).digest() and again.methods[0] == "NO"
    # read from the cache, PyYAML is not imported
    code = (f"import sys; from ratercal_cli.config import load_config; "
            f"c = load_config({str(path)!r}, cache={str(cache)!r}); print(len(c.cells), 'yaml' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split() == \
        ["32", "False"]
    path.write_text(BASE + "seed: 7\ngenerator: pcm\n")     # a new text: parsed, cached anew
    changed = load_config(path, cache=cache)
    assert changed.seed == 7 and len(changed.cells) == 1 and "'seed': 7" in cache.read_text()
    cache.write_text(cache.read_text().splitlines()[0] + "\n{'cells': [oops\n")   # damaged
    assert load_config(path, cache=cache).digest() == changed.digest()


def test_an_error_in_cached_data_still_names_the_line(tmp_path):
    """A config that this version rejects, cached by one that did not: the error gets its line
    from the text, parsed only then."""
    import hashlib

    from ratercal_cli import __version__
    from ratercal_cli.config import _CACHE_KEY

    text = BASE + "bogus: 1\n"
    path, cache = tmp_path / "config.yaml", tmp_path / "cache"
    path.write_text(text)
    key = f"{_CACHE_KEY} {__version__} {hashlib.sha256(text.encode()).hexdigest()}"
    cache.write_text(key + "\n" + repr({"cells": [{"raters_per_paper": [2], "papers": [100], "max_score": [5]}],
                                        "bogus": 1}) + "\n")
    with pytest.raises(InputError, match=r"config\.yaml:6: bogus: unknown key"):
        load_config(path, cache=cache)
