"""Run the generation stages for every set of a run, in chain order."""

from __future__ import annotations

import json
import sys

from .. import __version__
from ..io import write_json
from .pipeline import MANIFEST, Runner, read_manifest
from ..vocabulary import VARIANTS
from ..progress import progress
from .pipeline import STAGES
from .rater import RaterStage


def ordered_cells(run, codes=None):
    """Sets in the order their random numbers were made (the chains), else config order."""
    cells = run.cells(codes)
    if run.config.faithful_generator:
        order = {code: i for i, code in enumerate(c for ch in run.config.chains for c in ch.sets)}
        cells.sort(key=lambda c: order[c.code])
    return cells


def independent_sequences(run, cells):
    """``cells`` (in run order) grouped into sequences that share no random numbers: a
    chain of the faithful generator each (a set starts from the RND state of the set
    before it in its chain), every set alone for the modern generators."""
    if not run.config.faithful_generator:
        return [[c] for c in cells]
    chain_of = {code: i for i, ch in enumerate(run.config.chains) for code in ch.sets}
    groups = {}
    for c in cells:
        groups.setdefault(chain_of[c.code], []).append(c)
    return list(groups.values())


def jobs_within_memory(config, cells, jobs=None):
    """``jobs``, or fewer processes where the largest of ``cells`` made at once (one a process) would
    not fit this machine's memory (:func:`~ratercal_cli.config.too_big`; each set alone was checked
    when the config was read).  ``None`` (the runner's default: up to both cores) stays None where
    that many fit.  The files are the same whatever the number of processes."""
    from ..config import too_big
    from ..parallel import cpu_count

    most = min(jobs if jobs is not None else min(2, cpu_count()), len(cells))
    sizes = sorted((config.set_bytes(c) for c in cells), reverse=True)
    n = most
    while n > 1 and too_big(sum(sizes[:n]), "") is not None:
        n -= 1
    return jobs if n >= most else n


def run_stage(run, stage_name, codes=None, force=False, quiet=False, runner=None, jobs=None):
    """Bring ``stage_name`` up to date for the given sets (all by default); the
    independent sequences of sets (:func:`independent_sequences`) in ``jobs`` processes
    (default: both cores when there are several sets; fewer where their sets would not fit in
    memory together: :func:`jobs_within_memory`).  Holds the run folder's lock
    (:meth:`~ratercal_cli.study.run.Run.lock`) unless ``run`` holds it already."""
    with run.lock(stage_name):
        runner = runner or Runner(force=force)
        runner.ensure(RaterStage(run))  # the design every set reads, made once, here
        if stage_name == "rater":
            return runner
        cls = STAGES[stage_name]
        cells = ordered_cells(run, codes)
        edited = [] if quiet else edited_outputs(run, cells)
        bar = progress(total=len(cells), desc=stage_name, quiet=quiet, unit="set")
        try:
            runner.ensure_sequences([[cls(run, c) for c in seq] for seq in independent_sequences(run, cells)],
                                    jobs=jobs_within_memory(run.config, cells, jobs), bar=bar)
        finally:
            bar.close()
        say_edited(edited)
        return runner


def say_edited(paths) -> None:
    """A warning for each file of :func:`edited_outputs`, once its stage has made it again."""
    for path in paths:
        print(f"warning: {path}: changed since ratercal wrote it (by hand?), and made again from its inputs: a run's "
              "files are remade from its config; to keep a change, copy the file out of the run", file=sys.stderr)


def edited_outputs(run, cells) -> list:
    """The files of the sets ``cells``' stages (``pargen``, ``truegen``, ``obsgen``, ``equate/<variant>``) that
    changed after their stage's manifest recorded them: modified later than it and no longer the digest it
    recorded (a staff tester's hand edit of ``obsgen/ratings.csv`` was remade by ``adjust RUN`` without a word).
    Only the files modified after their manifest are hashed."""
    from ..io import sha256_file

    found = []
    for c in cells:
        folders = [run.root / c.code / s for s in ("pargen", "truegen", "obsgen")]
        folders += [run.root / c.code / "equate" / v for v in VARIANTS]
        for folder in folders:
            try:
                made = (folder / MANIFEST).stat().st_mtime_ns
            except OSError:
                continue
            for rel, digest in ((read_manifest(folder / MANIFEST) or {}).get("outputs") or {}).items():
                path = run.root / rel
                try:
                    if path.stat().st_mtime_ns > made and sha256_file(path) != digest:
                        found.append(path)
                except OSError:
                    continue
    return found


def write_run_manifest(run) -> None:
    """``RUN/manifest.json``: the config (and its digest), the version, every set's
    seeds, and the SHA-256 of every file the stages of the config's sets wrote,
    gathered from their manifests (no timestamps: the same config gives the same
    bytes).  Written by simulate, adjust and score, so it follows the run."""
    design = json.loads(run.design_path.read_text())
    folders = [run.root / "rater"] + [run.root / c.code / stage for c in run.config.cells
                                      for stage in ("pargen", "truegen", "obsgen")]
    folders += [run.root / c.code / "equate" / v for c in run.config.cells for v in VARIANTS]
    folders.append(run.root / "score")
    files = {}
    for folder in folders:
        man = read_manifest(folder / MANIFEST)   # None: a stage not run (or a variant not equated)
        if man is not None:
            files.update(man.get("outputs", {}))
    write_json(run.root / MANIFEST, {
        "ratercal": __version__,
        "config": run.config.raw,
        "config_sha256": run.config.digest(),
        "seeds": {s["code"]: s["seeds"] for s in design["sets"]},
        "files": dict(sorted(files.items())),
    })
