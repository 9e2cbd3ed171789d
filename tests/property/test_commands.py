"""Every command on drawn designs (issue 28's "test suite over the design space"): check, adjust
(every method, --json, --html) and compare end in results or in one clean line of error (exit 2),
never a traceback; the truncated methods keep every score on the scale."""

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import example, given, strategies as st

from ratercal_cli.cli import cli
from ratercal_cli.methods import method_codes

from designs import Design, designs, write_csv

#: methods whose scores stay on the scale (README: NO, the truncated ones, the equipercentile ones, RAS)
ON_SCALE = ("NO", "TMN", "TLI", "TLS", "EQP", "PWEQP", "SEQP", "RAS", "MML", "MFRM", "CML", "RSM", "PCM")


def invoke(*args):
    """``ratercal ARGS``: (exit code, stdout, stderr); a traceback fails the test."""
    res = CliRunner().invoke(cli, [str(a) for a in args])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        import traceback

        raise AssertionError("traceback from ratercal " + " ".join(map(str, args)) + "\n"
                             + "".join(traceback.format_exception(res.exception)))
    if res.exit_code != 0:
        assert res.exit_code == 2, (args, res.exit_code, res.output)
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
        assert len(lines) == 1, (args, res.stderr)
    return res.exit_code, res.stdout, res.stderr


#: in two halves of like cost (check; adjust and compare: 37 and 38 CPU seconds of the ci profile's 40
#: examples), so that the processes of `make test` (-n auto) share them; each half draws its own 40 designs
#: (Hypothesis seeds a parametrized test by its node id), so each command still sees as many as before
@pytest.mark.parametrize("part", ["check", "adjust-compare"])
@given(design=designs(), methods=st.lists(st.sampled_from(method_codes()), min_size=1, max_size=3, unique=True),
       html=st.booleans())
# found by the explore profile: a group whose rater model could not be fitted came first, and the bias
# table's model name was read from its None (AttributeError)
@example(design=Design(n_papers=30, n_raters=6, per_paper=1, double_share=0.5, third=False, groups=3, criteria=0,
                       low=0, high=6, seed=3, severity_sd=0.0), methods=["NO"], html=False)
def test_check_adjust_compare_never_traceback(part, design, methods, html):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        f = write_csv(design.rows(), design.columns(), tmp / "r.csv")
        opts = design.options(fold=design.lookalike)
        if part == "check":
            code, out, _ = invoke("check", f, *opts, "--json")
            if code == 0:
                json.loads(out)
            return
        args = ["adjust", f, *opts, "-m", ",".join(methods), "-o", tmp / "o.csv", "--json", "--cut",
                design.low + (design.high - design.low) / 2]
        if html:
            args += ["--html", tmp / "a.html"]
        code, out, _ = invoke(*args)
        if code == 0:
            d = json.loads(out)
            assert (tmp / "o.csv").exists() and (not html or (tmp / "a.html").exists())
            _on_scale(tmp / "o.csv", d["methods"], design)
        else:
            assert not (tmp / "o.csv").exists()
        invoke("compare", f, *opts, "-m", ",".join(sorted(set(methods) | {"NO"})))


def _on_scale(path, methods, design):
    import csv

    rows = list(csv.DictReader(open(path, newline="", encoding="utf-8")))
    for m in methods:
        if m not in ON_SCALE:
            continue
        for col in (m, f"{m}_paper"):
            v = np.array([float(r[col]) for r in rows if r.get(col) not in (None, "")])
            assert v.size == 0 or (v.min() >= design.low - 1e-9 and v.max() <= design.high + 1e-9), \
                (m, col, v.min(), v.max(), design.scale)
