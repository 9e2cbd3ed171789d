"""Results that must not depend on how a file is written (issue 28): relabelling raters and papers,
shuffling rows, a CSV, a ';' or tab file of decimal commas, an .xlsx workbook or a wide file of the same
ratings, and one rater's label changed (no paper's score may move: the methods see raters, not their names)."""

import random
import tempfile
import warnings
from pathlib import Path

import numpy as np
from hypothesis import event, example, given, strategies as st

import ratercal_cli as rc
from ratercal_cli.errors import RatercalError
from ratercal_cli.methods import method_codes

from designs import Design, designs, write_csv, write_spreadsheet_csv, write_wide_criteria, write_xlsx

TOL = 1e-6


def scores(path, design, methods, **kw):
    """``{(group, paper label): {method: score}}`` from the library's adjust (None: refused)."""
    opts = dict(scale=design.scale, group_col="group" if design.groups > 1 else None,
                facet_cols=["criterion"] if design.criteria else (), fold_labels=design.lookalike)
    opts.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = rc.read_ratings(path, **opts)
            res = rc.adjust(r, methods, strict=False)
        except RatercalError as exc:
            return str(exc).split(": ", 1)[-1]
    df = res.paper_frame()
    gcol = "group" if design.groups > 1 else None
    cols = [c for c in df.columns if c in res.methods or c.endswith("_total")]
    return {((row[gcol] if gcol else None), row["paper"]): {c: row[c] for c in cols} for _, row in df.iterrows()}


def same(a, b, rename_paper=lambda p: p):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b, (a, b)
        return
    assert {(g, rename_paper(p)) for g, p in a} == set(b)
    for (g, p), va in a.items():
        vb = b[(g, rename_paper(p))]
        assert va.keys() == vb.keys()
        for m in va:
            x, y = va[m], vb[m]
            assert (np.isnan(x) and np.isnan(y)) or abs(x - y) <= TOL * max(1.0, abs(x)), (m, g, p, x, y)


methods = st.lists(st.sampled_from(method_codes()), min_size=1, max_size=3, unique=True)


#: (PCM, CML and RSM were left out of these tests where a rater had fewer than 10 ratings in a group, as
#: order-dependent on tiny designs: PCM's tie (PCM_TIE) and CML's direction of no information (CML_ORDER), both
#: fixed; 150 designs drawn afresh with each, relabelled and renamed, then moved no paper)


PCM_TIE = Design(n_papers=6, n_raters=2, per_paper=2, double_share=0.0, third=False, groups=2, criteria=0, low=0,
                 high=4, seed=0, severity_sd=0.0)


@given(design=designs(lookalike=False), methods=methods, seed=st.integers(0, 2**16))
# PCM (PAIR) on 2 raters, 3 papers a group: two equal parts of the comparisons, of which np.argmax took the first in
# the raters' order (a paper moved by 0.03); neither now (pcm._largest)
@example(design=PCM_TIE, methods=["PCM"], seed=0)
def test_relabelled_and_shuffled_files_give_the_same_scores(design, methods, seed):
    rows = design.rows()
    rnd = random.Random(seed)
    raters = sorted({r["rater"] for r in rows})
    new = [f"{rnd.choice('ABQXZ')}{k}" for k in rnd.sample(range(100, 999), len(raters))]
    to_rater = dict(zip(raters, new))
    papers = list(dict.fromkeys(r["paper"] for r in rows))
    to_paper = {p: f"S{k}" for p, k in zip(papers, rnd.sample(range(1000, 9999), len(papers)))}
    changed = [dict(r, rater=to_rater[r["rater"]], paper=to_paper[r["paper"]]) for r in rows]
    rnd.shuffle(changed)
    with tempfile.TemporaryDirectory() as tmp:
        a = scores(write_csv(rows, design.columns(), Path(tmp) / "a.csv"), design, methods)
        b = scores(write_csv(changed, design.columns(), Path(tmp) / "b.csv"), design, methods)
    same(a, b, to_paper.get)


CML_ORDER = Design(n_papers=7, n_raters=2, per_paper=1, double_share=0.5, third=False, groups=1, criteria=0, low=0,
                   high=8, seed=414, severity_sd=1.5)


@given(design=designs(lookalike=False), methods=methods, which=st.integers(0, 100))
# CML on 2 raters, 7 papers, 0-8: a direction the data say nothing of took the factorisation's noisy step, whose
# end hung on the raters' order (a paper moved by 0.87); the pseudo-inverse's step now (cml._cml_newton)
@example(design=CML_ORDER, methods=["CML"], which=-1)
def test_one_raters_new_label_moves_no_paper(design, methods, which):
    rows = design.rows()
    raters = sorted({r["rater"] for r in rows})
    old = raters[which % len(raters)]
    for label in ("A0", "zz-last"):
        changed = [dict(r, rater=label if r["rater"] == old else r["rater"]) for r in rows]
        with tempfile.TemporaryDirectory() as tmp:
            a = scores(write_csv(rows, design.columns(), Path(tmp) / "a.csv"), design, methods)
            b = scores(write_csv(changed, design.columns(), Path(tmp) / "b.csv"), design, methods)
        same(a, b)


@given(design=designs(lookalike=False, max_papers=25), methods=methods)
def test_csv_xlsx_and_wide_files_give_the_same_scores(design, methods):
    rows = design.rows()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        a = scores(write_csv(rows, design.columns(), tmp / "a.csv"), design, methods)
        same(a, scores(write_xlsx(rows, design.columns(), tmp / "a.xlsx"), design, methods))
        # a decimal-comma spreadsheet's ';' file and a tab file of decimal commas, their marks found alone
        same(a, scores(write_spreadsheet_csv(rows, design.columns(), tmp / "s.csv"), design, methods))
        same(a, scores(write_spreadsheet_csv(rows, design.columns(), tmp / "t.tsv", "\t"), design, methods))
        if design.criteria:
            wide = write_wide_criteria(rows, design.columns(), tmp / "w.csv", design.criteria)
            crit = ",".join(f"c{c + 1}" for c in range(design.criteria))
            same(a, scores(wide, design, methods, facet_cols=(), score_cols=crit))


@given(design=designs(rubric=False, groups=False))
def test_lookalike_labels_folded_give_the_file_without_them(design):
    """A rater typed with a Cyrillic letter on some lines and folded (--fold-labels) is the same rater."""
    design.lookalike = False
    plain = design.rows()
    design.lookalike = True
    typed = design.rows()
    assert typed != plain or all(r["rater"].isascii() for r in typed)
    with tempfile.TemporaryDirectory() as tmp:
        a = scores(write_csv(plain, design.columns(), Path(tmp) / "a.csv"), design, ["TLI", "MFRM"])
        b = scores(write_csv(typed, design.columns(), Path(tmp) / "b.csv"), design, ["TLI", "MFRM"])
    same(a, b)


@given(design=designs(lookalike=False, max_papers=30), methods=methods, which=st.integers(0, 100))
def test_a_rater_left_out_is_the_file_without_its_rows(design, methods, which):
    """``leave_out=[R]`` (``--leave-out R``) reads R's ratings as not given: every method's scores are those of
    the file with R's rows deleted (papers only R read drop out of both)."""
    rows = design.rows()
    raters = sorted({r["rater"] for r in rows})
    gone = raters[which % len(raters)]
    with tempfile.TemporaryDirectory() as tmp:
        a = scores(write_csv(rows, design.columns(), Path(tmp) / "a.csv"), design, methods, leave_out=[gone])
        kept = [r for r in rows if r["rater"] != gone]
        b = scores(write_csv(kept, design.columns(), Path(tmp) / "b.csv"), design, methods) if kept else "empty"
    event("refused" if isinstance(a, str) else "compared")
    if isinstance(a, str) or isinstance(b, str):   # refused: both (the words differ: no rating at all, or none usable)
        assert isinstance(a, str) and isinstance(b, str), (a, b)
        return
    same(a, b)
