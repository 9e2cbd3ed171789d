"""The marginal-ML rater models beside a peer (issue 21): ``MML`` and ``MFRM`` against Python's
``mirt`` 1.2.0 (``fit_mfrm``) on the same data, timed in the same run, estimates compared.

    .venv/bin/python benchmarks/bench_mirt.py [--sizes 100000[,1000000]] [--no-rubric] [--only MFRM]

``mirt`` is not a dependency of ratercal: the first run installs it from PyPI into its own
environment, ``benchmarks/.bench/mirt-venv`` (git-ignored); without it (no network) the benchmark
says so and exits 0.  Data: two of 200 raters per paper on 0-5 (the large-file benchmark's
generator) at each size (100,000 ratings by default; ``mirt`` is stopped past PEER_LIMIT x our
time, the ratio then a lower bound), and a rubric: 372 papers, each scored by all of 21 raters in 4
domains (84 ratings a paper) on 0-3, with domain effects.  Models, the same in both programs:

* ``MFRM``: rater severity + shared thresholds (+ the domain as a further facet on the rubric);
  mirt: one item (the rubric: the domains as items) and an anchored rater facet;
* ``MML``: each rater's own thresholds (PCM; + the domain facet on the rubric); mirt: the raters
  as items with ``partial_credit`` thresholds (+ an anchored domain facet).

Both fit with flat priors (ours: ``step_sd = location_sd = 1e6``) so that both maximise the same
marginal likelihood; each in a fresh process with one BLAS thread, the fit and its standard errors
alone timed (data already in memory; ``fit_mfrm`` computes an information for its SEs, and ours are
computed when first asked for, so the timed part asks; a fit under 2 s repeated up to REPEAT times,
the best kept).  Printed: both times, wall and
CPU, the ratio (mirt / ours in CPU seconds, the target: >= 2; on a shared machine the wall time is
mostly what else runs, the CPU time the work), the two log-likelihoods and the largest difference of
the estimates (severities or steps, thresholds, facet, sigma; target: within 2e-3 logits or 0.05 of
our standard error).  The rubric runs before the sizes past RUBRIC_BEFORE ratings.  The peer's
failure (out of memory under ``make bench``'s 12 GiB limit, killed, stopped past PEER_LIMIT x our
time, an error) is printed with our time and is not ours: the ratio is then a lower bound (stopped)
or not measured.  Exits 1 if a target is missed or our fit fails (absolute times are for information).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER = "mirt==1.2.0"
PEER_ENV = HERE / ".bench" / "mirt-venv"
TARGET_RATIO = 2.0
TARGET_AGREE = 2e-3
#: the peer is stopped after PEER_LIMIT x our time (at least PEER_MIN_SECONDS): its PCM took 16 minutes
#: on 100,000 ratings, and at 1M ratings its information (persons x parameters a node) needs ~15 GB
PEER_LIMIT = 20.0
PEER_MIN_SECONDS = 120.0
#: a fit under 2 s runs up to REPEAT times in its process, the best time kept (one fit of 0.1-0.5 s
#: is noisy on a shared machine)
REPEAT = 3
#: the rubric runs after the sizes up to this many ratings and before the larger ones
RUBRIC_BEFORE = 100_000
TARGET_AGREE_SE = 0.05   # (or this many of our SEs: mirt's L-BFGS stops short along flat directions)

#: the peer's side: numpy + mirt only (it runs in the peer's environment)
_MIRT = r"""
import json, sys, time, warnings
import numpy as np
from mirt.estimation import fit_mfrm
from mirt.models import Facet, PolytomousMFRM
d = np.load(sys.argv[1]); model = sys.argv[2]; REPEAT = int(sys.argv[4])
paper, rater, score, domain = d["paper"], d["rater"], d["score"], d["domain"]
K = int(d["K"]); J = int(rater.max()) + 1; N = int(paper.max()) + 1
width = int(np.bincount(paper).max())
slot = np.zeros(paper.size, dtype=np.int64)
order = np.argsort(paper, kind="stable")
starts = np.r_[0, np.cumsum(np.bincount(paper))[:-1]]
slot[order] = np.arange(paper.size) - np.repeat(starts, np.bincount(paper))
def grid(values, fill):
    out = np.full((N, width), fill, dtype=values.dtype)
    out[paper, slot] = values
    return out
resp = grid(score.astype(float), np.nan)
rubric = domain.max() > 0
F = int(domain.max()) + 1
if model == "rsm":
    items = grid(domain, 0)
    m = PolytomousMFRM(F if rubric else 1, K, [Facet("rater", J)], category_structure="rating_scale")
    facets = {"rater": grid(rater, 0)}
else:
    items = grid(rater, 0)
    m = PolytomousMFRM(J, K, [Facet("domain", F)] if rubric else [], category_structure="partial_credit")
    facets = {"domain": grid(domain, 0)} if rubric else None
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    sec = cpu = float("inf")
    for _ in range(REPEAT):   # a short fit again, the best kept (the same as ours)
        t, c = time.perf_counter(), time.process_time()
        res = fit_mfrm(m, resp, facets, item_indices=items)
        sec, cpu = min(sec, time.perf_counter() - t), min(cpu, time.process_time() - c)
        if sec > 2.0:
            break
thr = np.asarray(res.thresholds)
b = np.asarray(res.item_difficulty)
if model == "rsm":
    sev = np.asarray(res.facet_parameters["rater"])
    facet = (b - b.mean()) if rubric else np.zeros(0)
    loc = sev + b.mean()
    out = dict(severity=sev.tolist(), location=loc.tolist(), thresholds=thr.ravel().tolist(), facet=facet.tolist())
else:
    steps = b[:, None] + thr
    out = dict(steps=steps.ravel().tolist(), facet=(np.asarray(res.facet_parameters["domain"]).tolist()
                                                    if rubric else []))
out.update(seconds=sec, cpu=cpu, loglik=float(res.log_likelihood), sigma=float(res.sigma), nodes=int(res.n_quadpts))
print(json.dumps(out))
"""

#: our side, in this checkout's environment
_OURS = r"""
import json, os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[3])
from ratercal_cli.methods.mml import fit_mml
from ratercal_cli.ratings import Ratings
d = np.load(sys.argv[1]); model = sys.argv[2]; REPEAT = int(sys.argv[4])
K = int(d["K"])
r = Ratings(d["paper"], d["rater"], d["score"], K - 1, int(d["paper"].max()) + 1, int(d["rater"].max()) + 1)
facet = d["domain"] if d["domain"].max() > 0 else None
sec = cpu = float("inf")
for _ in range(REPEAT):   # a short fit again, the best kept (the same as the peer's)
    t, c = time.perf_counter(), time.process_time()
    fit = fit_mml(r, model=model, facet=facet, step_sd=1e6, location_sd=1e6)
    fit.severity_se   # the standard errors, computed when asked for: timed, as mirt's fit_mfrm computes its own
    sec, cpu = min(sec, time.perf_counter() - t), min(cpu, time.process_time() - c)
    if sec > 2.0:
        break
out = dict(seconds=sec, cpu=cpu, loglik=fit.loglik, sigma=fit.sigma, nodes=fit.n_nodes, facet=fit.facet.tolist(),
           converged=bool(fit.converged))
if model == "rsm":
    out.update(severity=fit.severity.tolist(), location=(fit.severity - fit.theta_mean).tolist(),
               thresholds=np.ravel(fit.thresholds).tolist(), location_se=fit.severity_se.tolist(),
               thresholds_se=np.ravel(fit.thresholds_se).tolist())
else:
    out.update(steps=(fit.steps - fit.theta_mean).ravel().tolist(), steps_se=fit.steps_se.ravel().tolist())
out.update(facet_se=fit.facet_se.tolist(), sigma_se=fit.sigma_se)
print(json.dumps(out))
"""


def peer_python(package=PEER, env=PEER_ENV, module="mirt", what="mirt: ", skipped="peer comparison skipped"):
    """A peer's interpreter, installing ``package`` (importable as ``module``) into its own environment
    ``env`` on first use (None: not available, after printing ``what`` and ``skipped``): ``mirt``
    here, ``polars`` for bench_shapes' file pass."""
    py = env / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", f"import {module}"], capture_output=True).returncode == 0:
        return py
    print(f"installing {package} into {env.relative_to(ROOT)} (not a ratercal dependency)", flush=True)
    try:
        venv.create(env, with_pip=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", package], check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError) as e:
        print(f"{what}could not install {package} ({e}); {skipped}")
        return None
    return py


def large_file_data(n_ratings: int):
    """The large-file benchmark's ratings (two of 200 raters per paper, 0-5) as arrays."""
    sys.path.insert(0, str(HERE))
    from bench_large_files import simulate

    paper, rater, score = simulate(n_ratings, 200)
    return dict(paper=paper, rater=rater, score=score, domain=np.zeros_like(paper), K=6)


#: seeds tried for a shape's data that mirt's PCM can fit (:func:`shape_data`)
SHAPE_SEEDS = 50


def shape_data(name: str, n_ratings: int):
    """The ratings of a design shape of :mod:`shapes` (issue 32) as arrays, 0-5: the first seed's (1, 2, ...)
    whose every rater gives every score at least once.  mirt's partial-credit model refuses
    an item with a category it never gets (``MirtDataError: category 5 is never used``), and with seed 1
    1-3 of the 200 raters' 1,200 (rater, score) cells are empty at 100,000 ratings, 3 and 21 of 200 raters
    a paper: the MML comparison there was not measured.  Ours fits either (a threshold the data do not
    bound is held by its prior); the data mirt can fit are those both can."""
    sys.path.insert(0, str(HERE))
    from shapes import shape_arrays

    for seed in range(1, SHAPE_SEEDS + 1):
        paper, rater, score, domain = shape_arrays(name, n_ratings, seed=seed)
        if np.bincount(rater * 6 + score, minlength=(rater.max() + 1) * 6).min() > 0:
            break
    return dict(paper=paper, rater=rater, score=score, domain=domain, K=6)


def rubric_data(seed: int = 21):
    """372 papers, each scored by all 21 raters in all 4 domains (84 ratings a paper), 0-3."""
    rng = np.random.default_rng(seed)
    n, J, F, M = 372, 21, 4, 3
    theta = rng.normal(0.0, 1.5, n)
    sev = rng.normal(0.0, 0.5, J)
    dom = np.array([-0.4, -0.1, 0.2, 0.3])
    kappa = np.array([-1.6, 0.1, 1.5])
    paper = np.repeat(np.arange(n), J * F)
    rater = np.tile(np.repeat(np.arange(J), F), n)
    domain = np.tile(np.arange(F), n * J)
    eta = theta[paper] - sev[rater] - dom[domain]
    logits = np.arange(M + 1)[None, :] * eta[:, None] - np.r_[0.0, np.cumsum(kappa)][None, :]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    score = (rng.random(paper.size)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return dict(paper=paper, rater=rater, score=np.minimum(score, M), domain=domain, K=M + 1)


class PeerFailed(Exception):
    """The peer's fit did not finish: what it did (out of memory, killed, stopped, its error)."""


def run(py, code, data_file, model, timeout=None):
    """The fit's JSON line.  Raises :class:`PeerFailed` saying what the process did if it ran past
    ``timeout`` seconds (stopped), ran out of memory, was killed or failed."""
    t = time.perf_counter()
    try:
        res = subprocess.run([str(py), "-c", code, str(data_file), model, str(ROOT), str(REPEAT)], capture_output=True,
                             text=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"), timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PeerFailed(f"stopped after {timeout:.0f} s") from None
    after = f"after {time.perf_counter() - t:.0f} s"
    err = res.stderr.strip().splitlines()
    if res.returncode < 0:   # a signal: SIGKILL is what the kernel's OOM killer sends
        sig = signal.Signals(-res.returncode).name
        raise PeerFailed(f"killed by {sig} {after}" + (" (what the out-of-memory killer sends)" if sig == "SIGKILL" else ""))
    if res.returncode != 0:
        last = err[-1] if err else f"exit {res.returncode}"
        if "MemoryError" in res.stderr or "Unable to allocate" in res.stderr:
            raise PeerFailed(f"out of memory {after} ({last[:120]})")
        raise PeerFailed(f"failed {after} ({last[:160]})")
    return json.loads(res.stdout.strip().splitlines()[-1])


def largest_difference(a, b, model):
    """The largest difference of the estimates, in logits and in our standard errors."""
    keys = ("location", "thresholds", "facet", "sigma") if model == "rsm" else ("steps", "facet", "sigma")
    d = np.concatenate([np.abs(np.ravel(a[k]) - np.ravel(b[k])) for k in keys])
    se = np.concatenate([np.ravel(a[k + "_se"]) for k in keys])
    return float(d.max(initial=0.0)), float(np.max(d / np.maximum(se, 1e-12), initial=0.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="comma-separated numbers of ratings (e.g. 100000,1000000)")
    ap.add_argument("--no-rubric", action="store_true")
    ap.add_argument("--only", default="MFRM,MML")
    ap.add_argument("--shapes", default="", help="comma-separated design shapes of benchmarks/shapes.py (issue 32), "
                    "each NAME or NAME=RATINGS (default --shape-ratings), 0-5")
    ap.add_argument("--shape-ratings", type=int, default=100_000)
    args = ap.parse_args()
    py = peer_python()
    if py is None:
        return 0
    models = [("rsm" if c == "MFRM" else "pcm", c) for c in args.only.upper().split(",")]
    sizes = [int(n) for n in args.sizes.split(",") if n]
    sets = [(f"{n:,} ratings, 200 raters, 2 a paper, 0-5", lambda n=n: large_file_data(n)) for n in sorted(sizes)]
    if not args.no_rubric:   # the rubric before the sizes past it (a late failure must not lose it)
        at = sum(n <= RUBRIC_BEFORE for n in sizes)
        sets.insert(at, ("rubric: 372 papers x 21 raters x 4 domains (84 a paper), 0-3", rubric_data))
    for item in (x.strip() for x in args.shapes.split(",") if x.strip()):   # NAME or NAME=RATINGS
        name, _, n = item.partition("=")
        n = int(n) if n else args.shape_ratings
        sets.append((f"{name}: {n:,} ratings, 0-5", lambda name=name, n=n: shape_data(name, n)))
    ok = True
    with tempfile.TemporaryDirectory(prefix="ratercal-mirt-") as tmp:
        for label, make in sets:
            data = Path(tmp) / "data.npz"
            np.savez(data, **make())
            for model, code in models:
                try:
                    ours = run(sys.executable, _OURS, data, model)
                except PeerFailed as e:   # ours: a failure of the target
                    print(f"{code:<4} {label}: our fit {e}  FAILED", flush=True)
                    ok = False
                    continue
                head = (f"{code:<4} {label}: ours {ours['seconds']:7.2f} s (CPU {ours['cpu']:.2f} s, {ours['nodes']} nodes"
                        f"{'' if ours['converged'] else ', NOT CONVERGED'})")
                ok &= ours["converged"]
                limit = max(PEER_MIN_SECONDS, PEER_LIMIT * ours["seconds"])
                try:
                    peer = run(py, _MIRT, data, model, timeout=limit)
                except PeerFailed as e:
                    # the peer's failure is not ours: our time stands, the ratio is a lower bound when the
                    # peer was stopped past PEER_LIMIT x our time, unknown otherwise; estimates not compared
                    bound = (f"mirt/ours > {limit / ours['seconds']:.1f}x (a lower bound)" if str(e).startswith("stopped")
                             else "ratio not measured")
                    print(f"{head}; mirt {e}: {bound} (target >= {TARGET_RATIO:g}); estimates not compared; the "
                          f"peer's failure is not ours  {'ok' if ours['converged'] else 'FAILED'}", flush=True)
                    continue
                ratio = peer["cpu"] / ours["cpu"]
                diff, in_se = largest_difference(ours, peer, model)
                good = ratio >= TARGET_RATIO and (diff <= TARGET_AGREE or in_se <= TARGET_AGREE_SE) and ours["converged"]
                ok &= good
                print(f"{head}, mirt {peer['seconds']:7.2f} s (CPU {peer['cpu']:.2f} s, {peer['nodes']} nodes); "
                      f"mirt/ours {ratio:5.2f}x in CPU (wall {peer['seconds'] / ours['seconds']:.2f}x; target >= "
                      f"{TARGET_RATIO:g}); log L {ours['loglik']:.4f} vs {peer['loglik']:.4f} "
                      f"(diff {ours['loglik'] - peer['loglik']:+.1e}); estimates within {diff:.1e} = {in_se:.2f} SE "
                      f"(target {TARGET_AGREE:g} or {TARGET_AGREE_SE:g} SE)  {'ok' if good else 'FAILED'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
