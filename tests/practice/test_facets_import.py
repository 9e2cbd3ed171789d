"""``ratercal import-facets``: Facets specifications in the layout of the Facets manual's examples."""

import csv
import json
import shlex

import numpy as np
import pytest
from click.testing import CliRunner

from ratercal_cli.errors import InputError
from ratercal_cli.practice.facets_import import read_facets

from support import CLI, run

# The Facets manual's Essays example (Essays.txt) in its own layout, with a few data lines of our own
ESSAYS = """\
; this is file essays.txt
title = AP English Essays (College Board/ETS)
convergence = 0.1 ; size of largest remaining marginal score residual at convergence
unexpected = 3.0 ; size of smallest standardized residual to report
arrange = M
facets = 4 ; there are 4 facets in this analysis
noncenter = 1 ; examinee facet floats
positive = 1
Inter-rater = 3 ; facet 3 is the rater facet
usort = 2,3,1
Model=
?,?B,?B,?,R9 ; observations are ratings in range 1-9.
?,?,?B,?B,R9 ; look for rater x grading session interaction
*
Labels=
1,examinee
1-4 ; otherwise anonymous examinees
*
2,Essay
1,A ; 3 essays
2,B
3,C
*
3,Reader
1-3 ; otherwise anonymous readers
*
4,Session,A ; this is a dummy facet
11,day 1 time 1 ,0
12,day 1 time 2 ,0
*
data =
01,1,1,11,4 ; first rating: examinee 1, essay 1, reader 1, session 11, rating of 4
01,2,2,12,5
02,1-3,3,11,6,7,.
04,3,1,12,9
"""


def write(tmp_path, text, name="spec.txt"):
    p = tmp_path / name
    p.write_text(text)
    return p


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_essays_layout(tmp_path):
    spec = write(tmp_path, ESSAYS)
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    rows = read_csv(tmp_path / "spec.csv")
    assert rows[0] == ["examinee", "Essay", "Reader", "Session", "score"]
    # the range 1-3 spreads its observations over essays A, B, C; "." is missing
    assert rows[1:] == [["1", "A", "1", "day 1 time 1", "4"], ["1", "B", "2", "day 1 time 2", "5"],
                        ["2", "A", "3", "day 1 time 1", "6"], ["2", "B", "3", "day 1 time 1", "7"],
                        ["4", "C", "1", "day 1 time 2", "9"]]
    # Noncenter= names the papers, Inter-rater= the raters; the other facets become --facet-col
    # Session is anchored (code A, every element at 0): it stays anchored, through an anchor file
    assert ("--paper-col examinee --rater-col Reader --facet-col Essay --facet-col Session --anchors "
            f"{tmp_path / 'spec.anchors.csv'} --scale 4-9" in res.output)


def test_data_file_and_guilford_range(tmp_path):
    (tmp_path / "guilford.dat").write_text("1,1,1-5,5,5,3,5,3\n2,1,1-5,9,7,5,8,5 ; a comment\n\n1,2,1-5,3,3,3,7,1\n")
    spec = write(tmp_path, "Title = Creativity\nFacets = 3\nModels = ?,?,?,Creativity\n"
                           "Rating scale = Creativity,R9\n1=lowest\n9=highest\n*\n"
                           "Labels=\n1,Senior scientists\n1=Avogadro\n2=Brahe\n*\n2,Junior scientists\n1-2\n*\n"
                           "3,Traits\n1,Clarity\n2,Originality\n3,Attractiveness\n4,Adequacy\n5,Quality\n*\n"
                           "Data = guilford.dat\n")
    data = read_facets(spec)
    assert data.top == 9 and len(data.rows) == 15
    table = data.table()
    assert table[0] == ["Avogadro", "1", "Clarity", "5"]   # '1=Avogadro' and '1,Clarity' both name elements
    assert table[9] == ["Brahe", "1", "Quality", "5"]
    assert [r[3] for r in data.rows[10:]] == [3, 3, 3, 7, 1]
    assert data.rows[11][1] == 4   # the data file's own line numbers


@pytest.mark.parametrize("change, message", [
    (("data =\n", "Dvalues=\n5, 4, 5, 1\n*\ndata =\n"), "spec.txt:31: the Facets specification Dvalues= is not supported"),
    (("04,3,1,12,9", "04,3,1,13,9"), "spec.txt:35: Session: element 13 is not in Labels="),
    (("04,3,1,12,9", "04,3,1,0,9"), "spec.txt:35: Session: element 0"),
    (("04,3,1,12,9", "R2,04,3,1,12,9"), "spec.txt:35: data line 'R2,04,3,1,12,9': weighted"),
    (("04,3,1,12,9", "04,1-3,1-2,12,9,9,9"), "spec.txt:35: data line with element ranges in two facets"),
    (("02,1-3,3,11,6,7,.", "02,1-3,3,11,6,7"), "spec.txt:34: data line has 2 observation(s) where its elements need 3"),
    (("04,3,1,12,9", "04,3,1,12,4.5"), "spec.txt:35: observation '4.5' is not a whole number"),
    (("?,?,?B,?B,R9", "?,?,?B,?B,P"), "spec.txt:13: model scale 'P' is not supported"),
    (("facets = 4", "facets = 5"), "Facets = 5 but Labels= lists 4 facet(s)"),
    (("04,3,1,12,9", "04,C,1,12,9"), "spec.txt:35: Essay: element 'C' is not an element number"),
    # (a staff tester's: a value after a label that is no number, and a label holding a comma, taken without a word)
    (("2,B\n", "2,B,abc\n"), "spec.txt:21: value after the label (Facets: a starting value) 'abc' of element 2 "
                             "of facet Essay is not a number"),
    (("2,B\n", '2,=HYPERLINK("http://x","B")\n'), "spec.txt:21: value after the label (Facets: a starting value) "
                                                  "'\"B\")' of element 2 of facet Essay is not a number (a label "
                                                  "holding a comma is cut there"),
])
def test_unsupported_is_one_line_naming_the_line(tmp_path, change, message):
    spec = write(tmp_path, ESSAYS.replace(*change))
    with pytest.raises(InputError) as exc:
        read_facets(spec)
    assert message in str(exc.value)
    res = CliRunner().invoke(CLI, ["import-facets", str(spec)])
    assert res.exit_code == 2 and not (tmp_path / "spec.csv").exists()


def test_excel_data_file_refused(tmp_path):
    spec = write(tmp_path, ESSAYS.split("data =")[0] + "data = ratings.xlsx\n")
    with pytest.raises(InputError, match=r"spec.txt:31: Data = ratings.xlsx: only a text file"):
        read_facets(spec)


def test_a_label_that_is_another_elements_number_does_not_merge_them(tmp_path):
    """Rater 1 labelled '3' (an ID from elsewhere) and rater 3 unlabelled would both be written '3'
    and counted as one rater: the facet is written by element numbers instead, with a warning."""
    spec = write(tmp_path, "Facets = 3\nNoncenter = 1\nInter-rater = 2\nModels = ?,?,?,R4\nLabels=\n"
                           "1,Essay\n1-4\n*\n2,Rater\n1, 3\n2, 7\n3\n*\n3,Domain\n1,Content\n*\nData=\n"
                           "1,1,1,2\n1,2,1,3\n2,3,1,1\n2,2,1,2\n3,1,1,4\n3,2,1,4\n4,3,1,3\n4,2,1,1\n")
    data = read_facets(spec)
    raters = [row[1] for row in data.table()]
    assert raters == ["1", "2", "3", "2", "1", "2", "3", "2"]
    assert any("Rater" in n and "3" in n for n in data.notes)
    res = run("import-facets", spec)
    assert res.exit_code == 0 and "element numbers" in res.output


def test_an_observation_above_the_models_top_category_is_an_error(tmp_path):
    """Models= R4 says the categories end at 4: a 7 is a typing error, not a wider scale."""
    spec = write(tmp_path, ESSAYS.replace("04,3,1,12,9", "04,3,1,12,19"))
    with pytest.raises(InputError, match=r"spec.txt:35: observation 19 is above the top category 9 of Models="):
        read_facets(spec)


def test_the_printed_command_names_the_papers_and_raters_without_noncenter(tmp_path):
    """Without Noncenter=/Inter-rater= the printed `check` command must still run: the papers are the
    facet Positive= names (else the first), the raters the one facet called judge/rater/reader...;
    the command it prints reads the file it wrote."""
    text = ESSAYS.replace("noncenter = 1 ; examinee facet floats\n", "").replace(
        "Inter-rater = 3 ; facet 3 is the rater facet\n", "")
    spec = write(tmp_path, text)
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    assert "--paper-col examinee --rater-col Reader --facet-col Essay --facet-col Session" in res.output


# The Facets manual's Guilford.txt (3 facets, Creativity) as the manual spells its specifications:
# Non-centered= (Facets reads a specification's first letters only), a "Rating (or partial credit)
# scale", Usort with parentheses; it floats the judges (Non-centered = 1) and names the examinees
# Positive = 2.  A few data lines of our own.
GUILFORD = """\
Title = Ratings of Scientists (Psychometric Methods p.282 Guilford 1954)
Facets = 3  ; three facets: judges, examinees, items
Non-centered = 1 ; examinees and items are centered on 0, judges are allowed to float
Positive = 2  ; the examinees have greater creativity with greater score
Model = ?B,?B,?,Creativity ; judges, examinees and items produce ratings on "Creativity".
Rating (or partial credit) scale = Creativity,R9 ;Creativity is a rating scale with possible categories 0 to 9
1 = lowest ; name of lowest observed category
5 = middle ; no need to list unnamed categories
9 = highest ; name of highest observed category
*
Unexpected = 2 ; report ratings if standardized residual >=|2|
Usort = (1,2,3),(3,1,2),(Z,3) ; sort and report unexpected ratings several ways
Vertical = 2N,3A,2*,1L,1A ;define rulers to display and position facet elements
Arrange = m,2N,0f
Inter-rater Agreement Coefficients = 0
Labels =
1,Senior scientists
1 = Avogadro
2 = Brahe
3 = Cavendish
*
2,Junior Scientists
1 = Anne
2 = Betty
*
3,Traits
1 = Attack
2 = Basis
*
Data =
1,1,1-2,5,5
1,2,1-2,9,7
2,1,1-2,6,5
2,2,1-2,8,7
3,1,1-2,5,5
3,2,1-2,7,7
"""


def test_guilford_as_the_facets_manual_spells_it(tmp_path):
    """Non-centered= was refused as unsupported ('it changes which observations there are'), and the
    papers were the Noncenter= facet, which in Guilford.txt is the judges: the command printed
    --paper-col 'Senior scientists'.  The examinees are the Positive= facet, the judges the one left
    to float."""
    spec = write(tmp_path, GUILFORD)
    data = read_facets(spec)
    assert data.top == 9 and len(data.rows) == 12
    assert data.table()[:2] == [["Avogadro", "Anne", "Attack", "5"], ["Avogadro", "Anne", "Basis", "5"]]
    paper, rater = data.paper_and_rater()
    assert (paper.name, rater.name) == ("Junior Scientists", "Senior scientists")
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    assert ("--paper-col 'Junior Scientists' --rater-col 'Senior scientists' --facet-col Traits --scale 5-9"
            in res.output)
    assert "Junior Scientists (Positive=)" in res.output and "Senior scientists (Noncenter=)" in res.output


@pytest.mark.parametrize("spelling", ["Noncenter = 1", "Non-center = 1", "Noncentered = 1", "NON-CENTERED=1"])
def test_noncenter_spellings(tmp_path, spelling):
    spec = write(tmp_path, ESSAYS.replace("noncenter = 1 ; examinee facet floats", spelling))
    assert read_facets(spec).paper_facet == 1


def test_an_unknown_keyword_that_starts_like_a_known_one_is_still_refused(tmp_path):
    """The prefix rule reads longer spellings of known specifications, not other specifications."""
    spec = write(tmp_path, ESSAYS.replace("data =\n", "Delem = N\ndata =\n"))   # an abbreviation of Delements=
    with pytest.raises(InputError, match="Delem= is not supported"):
        read_facets(spec)



# -- issue 28 item 9: what import-facets honours, and what it refuses with the reason ------------------
def essays(n=80, readers=6, models="?,?B,?B,?,R9\n?,?,?B,?B,R9\n*\n", reader_code="", reader_values=None,
           session_code="A", extra="", seed=3):
    """An Essays-style specification (the manual's layout) with data drawn from the many-facet model:
    ``n`` examinees, each essay A-C read by two of ``readers`` readers in one of two sessions."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.5, n)
    sev = np.linspace(-0.8, 0.8, readers)
    ess = np.array([-0.3, 0.0, 0.3])
    kap = np.linspace(-3, 3, 8)
    lines = []
    for p in range(n):
        for j in rng.choice(readers, 2, replace=False):
            s = int(rng.integers(0, 2))
            xs = []
            for e in range(3):
                cc = np.r_[0, np.cumsum(theta[p] - sev[j] - ess[e] - kap)]
                pr = np.exp(cc - cc.max())
                xs.append(int(rng.choice(9, p=pr / pr.sum())) + 1)
            lines.append(f"{p + 1},1-3,{j + 1},{11 + s}," + ",".join(map(str, xs)))
    readers_block = ("1-%d\n" % readers if reader_values is None else
                     "".join(f"{j + 1},R{j + 1}{'' if v is None else f',{v}'}\n" for j, v in enumerate(reader_values)))
    return (f"title = AP English Essays\n{extra}facets = 4\nnoncenter = 1\npositive = 1\nInter-rater = 3\n"
            f"Model=\n{models}Labels=\n1,examinee\n1-{n}\n*\n2,Essay\n1,A\n2,B\n3,C\n*\n"
            f"3,Reader{',' + reader_code if reader_code else ''}\n{readers_block}*\n"
            f"4,Session,{session_code} ; a dummy facet\n11,day 1 time 1,0\n12,day 1 time 2,0\n*\n"
            "data =\n" + "\n".join(lines) + "\n")


def test_partial_credit_becomes_steps_by(tmp_path):
    """'#' in Models= (each element of the facet its own rating scale) vanished from the printed command:
    it is --steps-by now; on the raters (ratercal's MML) or the papers it is refused with the reason."""
    spec = write(tmp_path, essays(models="?,#,?,?,R9\n*\n"))
    assert read_facets(spec).steps_by().name == "Essay"
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    assert "--facet-col Essay --facet-col Session --steps-by Essay --anchors" in res.output
    spec = write(tmp_path, essays(models="?,?,#,?,R9\n*\n"), "r.txt")
    res = CliRunner().invoke(CLI, ["import-facets", str(spec)])
    assert res.exit_code == 2 and "Reader '#'" in res.output and "-m MML" in res.output
    assert not (tmp_path / "r.csv").exists()
    spec = write(tmp_path, essays(models="#,?,?,?,R9\n*\n"), "p.txt")
    with pytest.raises(InputError, match="papers' facet examinee '#'"):
        read_facets(spec).steps_by()


@pytest.mark.parametrize("weight, ok", [("2", False), ("0.5", False), ("1", True)])
def test_a_model_weight_is_refused_with_the_reason(tmp_path, weight, ok):
    spec = write(tmp_path, essays(models=f"?,?,?,?,R9,{weight}\n*\n"))
    if ok:
        assert read_facets(spec).top == 9
        return
    with pytest.raises(InputError, match=rf"spec.txt:7: model '\?,\?,\?,\?,R9,{weight}' weighs its ratings {weight}: "
                                         "ratercal weighs every rating alike"):
        read_facets(spec)


def test_anchor_codes_become_an_anchor_file_the_command_reads(tmp_path):
    """'3,Reader,A' with values (1,R1,0.5): the values vanished, the readers were estimated free.  Now they
    are an anchor file beside the table (the raters' facet written 'rater'), the printed command reads it,
    and check holds them there; an element without a value stays free."""
    from ratercal_cli.practice.anchors import read_anchors

    spec = write(tmp_path, essays(reader_code="A", reader_values=[0.5, -0.5, None, None, None, None]))
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    cal = read_anchors(tmp_path / "spec.anchors.csv")
    assert [(a.facet, a.element, a.measure) for a in cal.elements] == [
        ("rater", "R1", 0.5), ("rater", "R2", -0.5), ("Session", "day 1 time 1", 0.0), ("Session", "day 1 time 2", 0.0)]
    assert str(cal.scale) == "1-9"
    command = next(line for line in res.output.splitlines() if line.startswith("read it with: "))
    args = shlex.split(command[len("read it with: "):])[1:]
    res = CliRunner().invoke(CLI, [*args, "--json", "-q"])
    assert res.exit_code == 0, res.output
    raters = {r["rater"]: r for r in json.loads(res.output)["rubric"][0]["raters"]}
    assert raters["R1"]["severity"] == 0.5 and raters["R2"]["severity"] == -0.5


@pytest.mark.slow
def test_essays_session_anchored_at_zero_stays_anchored(tmp_path):
    """Essays' Session facet, coded A with every element at 0, became free.  It stays at 0 now; the readers,
    anchored by nothing, are centred as Facets centres them (before, with the papers' mean freed by the
    anchored facet, the readers' origin was left to the weak prior: S.E.s of 4.08 logits)."""
    spec = write(tmp_path, essays())
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    command = next(line for line in res.output.splitlines() if line.startswith("read it with: "))
    args = shlex.split(command[len("read it with: "):])[1:]
    res = CliRunner().invoke(CLI, [*args, "--json", "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)["rubric"][0]
    assert [r["difficulty"] for r in doc["facets"]["Session"]] == [0.0, 0.0]
    sev = np.array([r["severity"] for r in doc["raters"]])
    assert abs(sev.mean()) < 1e-6 and max(r["se"] for r in doc["raters"]) < 0.3
    assert np.corrcoef(sev, np.linspace(-0.8, 0.8, 6))[0, 1] > 0.9


@pytest.mark.parametrize("value, ok", [("N", True), ("1N", True), ("1N, 2N", True), ("NL", False), ("2L", False)])
def test_delements_of_numbers_is_facets_default(tmp_path, value, ok):
    spec = write(tmp_path, ESSAYS.replace("data =\n", f"Delements = {value}\ndata =\n"))
    if ok:
        assert len(read_facets(spec).rows) == 5
        return
    with pytest.raises(InputError, match=rf"Delements = {value}: element labels in the data \(L\) are not supported"):
        read_facets(spec)


@pytest.mark.parametrize("spelling", ["Non-centred = 1", "Noncentred = 1", "NON-CENTRED=1"])
def test_british_noncentred(tmp_path, spelling):
    spec = write(tmp_path, ESSAYS.replace("noncenter = 1 ; examinee facet floats", spelling))
    assert read_facets(spec).paper_facet == 1


@pytest.mark.parametrize("change, message", [
    (("4,Session,A", "4,Session,G"), "spec.txt:27: facet anchoring code 'G' is not supported (group anchoring"),
    (("1,examinee\n", "1,examinee,A\n1,first,0.5\n"), "Labels= anchors the papers' facet examinee (A)"),
    (("facets = 4", "umean = 50, 10\nfacets = 4"), "Umean=/Uscale= put the anchor values of Labels= in user units"),
    (("11,day 1 time 1 ,0", "11,day 1 time 1 ,zero"), "spec.txt:28: anchor value 'zero' of element 11"),
])
def test_anchoring_it_cannot_honour_is_refused_with_the_reason(tmp_path, change, message):
    spec = write(tmp_path, ESSAYS.replace(*change))
    res = CliRunner().invoke(CLI, ["import-facets", str(spec)])
    assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "spec.csv").exists() and not (tmp_path / "spec.anchors.csv").exists()
def test_the_readmes_import_facets_example_runs(tmp_path):
    """README's `ratercal import-facets examples/essays.txt -o essays.csv` named a file not shipped
    (issue 28 item 11); the check command it prints reads what it wrote."""
    from pathlib import Path

    spec = Path(__file__).resolve().parents[2] / "examples" / "essays.txt"
    assert "import-facets examples/essays.txt -o essays.csv" in (spec.parents[1] / "README.md").read_text()
    res = run("import-facets", spec, "-o", tmp_path / "essays.csv")
    assert res.exit_code == 0, res.output
    assert len(read_csv(tmp_path / "essays.csv")) == 361          # 60 examinees x 3 essays x 2 readers + header
    cmd = res.output.split("read it with: ratercal ")[1].split()
    assert cmd[:2] == ["check", str(tmp_path / "essays.csv")]
    out = run(*cmd, "--no-rasch")
    assert out.exit_code == 0, out.output


def test_starting_values_of_a_facet_not_anchored_are_said_to_be_unused(tmp_path):
    """``2,B,0.7`` in a facet not anchored is Facets' starting value: taken without a word before; now a note."""
    spec = write(tmp_path, ESSAYS.replace("2,B\n", "2,B,0.7\n").replace("3,C\n", "3,C,-0.2\n"))
    res = run("import-facets", spec)
    assert res.exit_code == 0, res.output
    said = [line for line in res.stderr.splitlines() if "starting values" in line]
    assert said == [f"warning: {spec}:21: Essay: starting values after the elements' labels are not used (the facet is "
                    "not anchored; ratercal's fits need none)"], res.stderr
