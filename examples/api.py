"""ratercal from Python: the README's walk-through (check, adjust, compare) as a notebook would run it.

Run it from the repository's folder: ``.venv/bin/python examples/api.py`` (a test runs it too).
Each step prints a DataFrame; raters and papers are labelled and in natural order (R1, R2, ..., R10).
"""

import warnings

import pandas as pd

import ratercal_cli as rc

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)

# 1. Read the file as `ratercal check examples/ratings.csv --scale 0-5 --group-col grade
#    --resolve-discrepancies` does (what reading finds worth saying comes as warnings and stays
#    in ratings.notes).  A DataFrame you already have: rc.Ratings.from_frame(df, group_col="grade").
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ratings = rc.read_ratings("examples/ratings.csv", scale="0-5", group_col="grade",
                              resolve_discrepancies=True)
print(f"{ratings.n_ratings} ratings of {ratings.n_papers} papers by {ratings.n_raters} raters "
      f"in grades {', '.join(ratings.group_ids)}")

# 2. Is adjustment warranted?  The rule's recommendation per grade, and each rater's figures.
checked = rc.check(ratings)
print("\nrecommended:", checked.recommendation)
raters = checked.to_frame("raters")
print(raters[["grade", "rater", "papers", "mean", "sd", "measure", "se", "infit", "outfit"]].head(12))

# 3. Adjust by two methods; one row per paper, the grades' papers in natural order.
adjusted = rc.adjust(ratings, ["TLI", "MFRM"])
papers = adjusted.paper_frame()
print("\n", papers.head(8), sep="")

# 4. How much does the choice matter?  RMSD between methods' paper scores, and pass/fail at 3.25.
compared = rc.compare(ratings, ["MN", "TLI", "MFRM"], cut=3.25)
table4 = compared.to_frame()
print("\n", table4[table4["method"] == "NO"].round(3), sep="")
print("\n", compared.pass_fail_frame(), sep="")

# The fitted estimators keep arrays and give labelled views: MFRM's rater severities in grade 11
# with standard errors, z, p and 95% intervals, as statsmodels lays out estimates.
mfrm = adjusted.groups[-1].estimators["MFRM"]
print("\n", mfrm.severity_frame().round(3), sep="")

# 5. Any Rasch model fitted to one grade, its estimates as statsmodels lays them out: a long table of
#    every parameter (rater severities, thresholds) with SEs, intervals, log-likelihood, AIC, BIC.
fitted = rc.fit(dict(ratings.by_group())["11"], model="MFRM")
print("\n", fitted.summary(), sep="")
intervals = fitted.conf_int(0.05)
