"""Issue 30 items 7-8: hostile configs, anchor files and run folders give one line naming the place
(they gave tracebacks: a 37 GiB allocation, Python's digit limit, RecursionError, a folder read as a
chunk) and bad values are refused (a cut off the scale, a negative SE)."""

import json

import pytest

from ratercal_cli.config import load_config, parse_config
from ratercal_cli.errors import InputError
from ratercal_cli.practice.anchors import read_anchors

from support import run

CONFIG = ("generator: pcm\nmethods: [NO, MN]\ncells:\n  - {raters_per_paper: [2], papers: [20], max_score: [5], "
          "quality: [normal]}\nseed: 3\n")


@pytest.mark.parametrize("extra, where, words", [
    ("raters: {count: 1000000000, steps: table3}\n", ":6: raters.count", "between 1 and 1000000"),
    ("cut: -3\n", ":6: cut", "outside the 0-5 scale"),
    ("cut: 99\n", ":6: cut", "outside the 0-5 scale"),
])
def test_a_hostile_or_bad_config_value_is_one_line(tmp_path, extra, where, words):
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + extra)
    with pytest.raises(InputError) as e:
        load_config(path)
    assert str(e.value).startswith(f"{path}{where}") and words in str(e.value)


def test_a_seed_of_5001_digits_is_one_line_naming_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG.replace("seed: 3", "seed: " + "9" * 5001))
    res = run("simulate", path, "--out", tmp_path / "run", "-q")
    assert res.exit_code == 2 and res.stderr.startswith(f"error: {path}:5: not a usable number")
    assert len(res.stderr.strip().splitlines()) == 1
    with pytest.raises(InputError, match=r"seed: must be between 0 and"):
        parse_config(CONFIG.replace("seed: 3", "seed: " + "9" * 40))


def _anchor_file(tmp_path, measure="0.5", se="0.1"):
    path = tmp_path / "cal.csv"
    path.write_text("model,scale,facet,element,level,measure,se\n"
                    f"MFRM,0-5,rater,R1,,{measure},{se}\n")
    return path


@pytest.mark.parametrize("measure, se, field", [("1e300", "0.1", "measure"), ("0.5", "-1", "se"),
                                                ("-250", "", "measure")])
def test_an_anchor_measure_or_se_off_any_scale_is_refused_naming_its_line(tmp_path, measure, se, field):
    path = _anchor_file(tmp_path, measure, se)
    with pytest.raises(InputError, match=rf"^{path}:2: {field}: "):
        read_anchors(path)
    assert read_anchors(_anchor_file(tmp_path, "-2.5", "")).elements[0].measure == -2.5


def test_anchors_json_nested_200000_deep_is_one_line(tmp_path):
    path = tmp_path / "cal.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(InputError, match=r"cal.json: not an anchor file: JSON nested too deep"):
        read_anchors(path)
    json.loads("[" * 10 + "]" * 10)


def test_a_chunk_path_replaced_by_a_folder_is_one_line(tmp_path):
    (tmp_path / "c.yaml").write_text(CONFIG + "replications: 2\n")
    out = tmp_path / "run"
    assert run("montecarlo", tmp_path / "c.yaml", "--out", out, "-q").exit_code == 0
    chunk = next((out / "montecarlo" / "chunks").rglob("*.csv"))
    chunk.unlink()
    chunk.mkdir()
    res = run("montecarlo", tmp_path / "c.yaml", "--out", out, "-q")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert chunk.name in res.stderr and "is a directory" in res.stderr


def test_a_config_value_is_quoted_in_part(tmp_path):
    """Item 9: an error quotes a bounded snippet of what the file holds, not all of it."""
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG.replace("generator: pcm", "generator: " + "A" * 10_000))
    with pytest.raises(InputError) as e:
        load_config(path)
    assert "generator: must be one of" in str(e.value) and "'" + "A" * 24 + "'..." in str(e.value)
    assert len(str(e.value)) < 300
