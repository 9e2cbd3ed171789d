"""``ratercal import-facets``: a Facets specification and its data -> the long CSV that ``check``,
``adjust`` and ``compare`` read (:mod:`ratercal_cli.practice.facets_import`)."""

from __future__ import annotations

from pathlib import Path

import click

from . import command


@command("import-facets")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="The long CSV to write, or - for standard output (default: SPEC's name with .csv, beside it).")
@click.option("--encoding", default=None, metavar="NAME", help="Text encoding of the files (default: UTF-8).")
@click.option("--quiet", "-q", is_flag=True, help="Do not print what was written.")
def import_facets(spec, output, encoding, quiet):
    """Read a Facets specification file (its Labels= element lists and the data after Data=, or the
    file Data= names) and write one row per observation: a column per facet (element labels where
    Labels= gives them), then score.  Anything the importer does not support is an error naming its line.
    """
    from ..errors import InputError
    from ..guard import refuse_clashing_paths
    from ..practice.facets_import import read_facets, write_long

    if not spec.exists():
        raise InputError("no such file", spec)
    data = read_facets(spec, encoding)
    out = output if output is not None else spec.with_suffix(".csv")
    data.steps_by()                 # refused (with the reason) before anything is written
    if str(out) != "-":             # so is an -o that names a workbook ratercal cannot write (.ods)
        from ..practice.output import is_workbook

        is_workbook(out)
    anchors = data.anchor_table()   # Labels= anchors (code A with values, D): a file --anchors reads
    beside = spec if str(out) == "-" else Path(out)
    anchor_path = None if anchors is None else beside.with_name(beside.stem + ".anchors.csv")
    refuse_clashing_paths([("SPEC", spec)] + [(f"Data= of {spec}", p) for p in data.files if p != spec],
                          [("-o", out), ("the anchor file", anchor_path)])
    for note in data.notes:
        click.echo(f"warning: {note}", err=True)
    if anchors is not None:
        from ..practice.anchors import write_anchors

        write_anchors(anchor_path, anchors)
    write_long(data, out)
    if anchors is not None and not quiet:
        click.echo(f"wrote {anchor_path}: {len(anchors.elements)} anchored element(s) of Labels= "
                   f"({', '.join(anchors.facets)})", err=str(out) == "-")
    if not quiet and str(out) != "-":
        click.echo(f"wrote {out}: {len(data.rows)} ratings, facets {', '.join(f.name for f in data.facets)}")
        click.echo(f"read it with: {data.command(out, anchor_path)}")
        (paper, why_paper), (rater, why_rater) = data.roles()
        if why_paper is None or why_rater != "Inter-rater=":
            click.echo(f"  (the papers are taken to be facet {paper.name} ({why_paper or 'a guess: the first facet'})"
                       + (f", the raters facet {rater.name} ({why_rater or 'by its name'})" if rater is not None
                          else "; put the raters' facet in place of RATERS_FACET")
                       + "; Positive= (the papers) and Inter-rater= (the raters) in the specification say which)")
