"""Every public name of ratercal_cli.__all__ documents itself in numpydoc's sections (issue 31 item 5):
a function its Parameters, Returns and Examples; a class its Parameters or Attributes and Examples."""

import inspect

import pytest

import ratercal_cli as rc

NAMES = [n for n in rc.__all__ if n != "__version__"]


def _sections(doc):
    lines = [ln.strip() for ln in (doc or "").splitlines()]
    return {a for a, b in zip(lines, lines[1:]) if b and set(b) == {"-"} and len(b) >= len(a) > 0}


@pytest.mark.parametrize("name", NAMES)
def test_public_names_have_numpydoc_sections(name):
    obj = getattr(rc, name)
    if inspect.ismodule(obj):   # rc.study: its functions and classes
        for part in ("run", "Spec", "StudyResults"):
            sub = getattr(obj, part)
            _check(f"{name}.{part}", sub)
        return
    _check(name, obj)


def _check(name, obj):
    got = _sections(inspect.getdoc(obj))
    if inspect.isclass(obj):
        want = {"Examples"}
        assert want <= got and ({"Parameters", "Attributes"} & got), (name, sorted(got))
    else:
        assert {"Parameters", "Returns", "Examples"} <= got, (name, sorted(got))


def test_the_version_is_written_once():
    from importlib.metadata import version

    assert rc.__version__ == version("ratercal")


@pytest.mark.parametrize("module", ["ratercal_cli.errors", "ratercal_cli.ratings", "ratercal_cli.methods",
                                    "ratercal_cli.arguments"])
def test_the_examples_run(module):
    """The Examples sections that run without files (the others are marked +SKIP) give what they say."""
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0
