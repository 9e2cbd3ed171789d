"""Hypothesis profiles of the property suite: ``ci`` (``make test``: 40 examples a test, 300
in all, small designs, derandomized so CI sees the same ones), ``slow`` (``make test-slow``,
HYPOTHESIS_PROFILE=slow: 100 a test, derandomized too: CI must not fail on a draw no one has seen)
and ``explore`` (300 a test, drawn afresh: run it by hand to look for new defects).  No deadline: a fit's time varies with
the machine's load, not with the example.  Every test here is marked ``property``."""

import os

import pytest

from hypothesis import HealthCheck, Phase, settings

#: no "explain" phase: it re-runs a failing example ~100 times (5 minutes on a model fit)
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True, phases=PHASES,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("slow", max_examples=100, deadline=None, derandomize=True, print_blob=True, phases=PHASES,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
#: HYPOTHESIS_PROFILE=explore: examples drawn afresh each run, to look for what the fixed ones miss
settings.register_profile("explore", max_examples=300, deadline=None, print_blob=True, phases=PHASES,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/property/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.property)
