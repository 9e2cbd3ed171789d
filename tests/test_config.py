import re

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


def test_which_raters_are_table3s_nine():
    """Tables 9 and 10 type the raters as Table 3's: its steps (in turn with a count), or the linear model's
    effects and error SDs of Table 3's pattern; raters of their own steps or effects have no such type."""
    def t3(extra):
        return parse_config(BASE + extra, source="x.yaml").table3_raters
    assert t3("") and t3("raters: {steps: table3, count: 6}\n") and t3("generator: linear\n")
    assert t3("generator: linear\nlinear: {effects: [0.5, 0.5, 0.5, 0, 0, 0, -0.5, -0.5, -0.5]}\n")
    assert not t3("generator: linear\nlinear: {effects: [1, 0, -1], error_sd: [1, 1, 1]}\n")
    own = "raters:\n  steps: [[-2, -1, 0, 1, 2], [-1.5, -0.5, 0.5, 1.5, 2.5], [-2.5, -1.5, -0.5, 0.5, 1.5]]\n"
    assert not t3(own)


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


def test_an_alias_bomb_is_refused_at_once():
    """Nine levels of aliases, each ten of the one before (10**9 values when expanded): one line,
    in milliseconds, naming the line where the expansion passes the bound."""
    import time

    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, 10)]
    text = "\n".join(lines) + "\n" + BASE.replace("[100]", "*a9")
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"^x\.yaml:\d+: a\d[][0-9]*: the config expands to more than 100,000 values") as exc:
        parse_config(text, source="x.yaml")
    assert time.perf_counter() - t0 < 2 and "\n" not in str(exc.value)


def test_an_alias_of_itself_is_refused():
    with pytest.raises(InputError, match=r"^x\.yaml:1: .*more than 50 levels deep"):
        parse_config("loop: &x [*x]\n" + BASE, source="x.yaml")
    deep = "cut: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(InputError, match=r"^x\.yaml:6: .*(levels deep|nesting depth)"):
        parse_config(BASE + deep, source="x.yaml")


def test_a_few_aliases_are_fine():
    text = BASE.replace("papers: [100]", "papers: &p [100, 200]") + \
        "  - {raters_per_paper: [3], papers: *p, max_score: [5]}\n"
    assert [c.code for c in parse_config(text, source="x.yaml").cells] == ["2151", "2251", "3151", "3251"]


def test_a_key_given_twice_is_refused_naming_both_lines():
    with pytest.raises(InputError, match=r"^x\.yaml:8: seed: given twice, on lines 6 and 8; keep one$"):
        parse_config(BASE + "seed: 1\ngenerator: pcm\nseed: 2\n", source="x.yaml")
    with pytest.raises(InputError, match=r"^x\.yaml:5: cells\[0\]\.papers: given twice, on lines 4 and 5"):
        parse_config(BASE.replace("    max_score", "    papers: [200]\n    max_score"), source="x.yaml")


def test_a_key_that_is_a_list_is_refused():
    with pytest.raises(InputError, match=r"^x\.yaml:6: a key must be a plain name"):
        parse_config(BASE + "? [a, b]\n: 1\n", source="x.yaml")


def test_a_config_that_is_not_utf8_names_the_line_and_byte(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(BASE.encode() + b"name: caf\xe9\n")
    offset = len(BASE.encode()) + len("name: caf")
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}:6: not UTF-8 text: byte 0xe9 at byte offset "
                                         rf"{offset} \(invalid continuation byte\)$"):
        load_config(path)
    with pytest.raises(InputError, match=r"missing\.yaml: no such config file"):
        load_config(tmp_path / "missing.yaml")


def test_validation_is_in_named_steps_none_over_80_lines():
    import ast
    import inspect

    import ratercal_cli.config as config

    tree = ast.parse(inspect.getsource(config))
    long = {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 80}
    assert long == {} and len([n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]) > 20
