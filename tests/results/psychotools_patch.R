# patch_mapply(f): psychotools 0.7-2's pcmodel/rsmodel with both mapply calls given SIMPLIFY = FALSE.
# On incomplete data in which every paper has the same number of raters, mapply's default
# SIMPLIFY = TRUE turns the per-pattern parameter lists into matrices and the fit fails (see
# make_r_references.R).  Sourced by make_r_references.R and make_rater_report_references.R.
patch_mapply <- function(f) {
  txt <- deparse(f, width.cutoff = 500L)
  txt <- gsub("mapply(split, ", "mapply(split, SIMPLIFY = FALSE, ", txt, fixed = TRUE)
  txt <- gsub("rep(1:x, y), m_i, oj_max_i)", "rep(1:x, y), m_i, oj_max_i, SIMPLIFY = FALSE)", txt, fixed = TRUE)
  txt <- gsub("rep.int(1:x, y), m_i, oj_i)", "rep.int(1:x, y), m_i, oj_i, SIMPLIFY = FALSE)", txt, fixed = TRUE)
  g <- eval(parse(text = txt))
  environment(g) <- environment(f)
  g
}
