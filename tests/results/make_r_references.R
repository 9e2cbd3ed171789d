# Reference CML estimates for tests/methods/test_cml.py, from psychotools (CML by BFGS).
#
#   Rscript tests/results/make_r_references.R            # from the repository root
#
# Needs Debian's r-base-core r-cran-psychotools (psychotools 0.7-x); with RUN_ERM=1 also
# r-cran-erm (eRm 1.0-x, patched below; slow), which writes tests/results/erm_pcm_500x2_0-9.csv.
# Reads  tests/results/cml_500x2_0-9.csv (paper,rater,score: 500 papers x 2 of 9 raters, 0-9)
# Writes tests/results/psychotools_pcmodel_500x2_0-9.csv   PCM steps per rater
#        tests/results/psychotools_rsmodel_500x2_0-9.csv   RSM rater locations and thresholds
#        tests/results/psychotools_fits_500x2_0-9.csv      each fit's conditional log-likelihood and
#                                                          elapsed seconds (this machine, once)
#
# Raters are items and papers are persons; a rater who did not score a paper is NA.
#
# Upstream bug worked around (psychotools 0.7-2): on incomplete data pcmodel and rsmodel build,
# per missing-data pattern, the list of item parameter vectors with
#     mapply(split, esf_par, mapply(function(x, y) rep(1:x, y), m_i, oj_max_i))
# mapply's default SIMPLIFY = TRUE turns the inner result into a matrix whenever every pattern
# has the same number of items and parameters (here: every paper has exactly two raters), and the
# outer one into a matrix of lists, so elementary_symmetric_functions gets the wrong arguments and
# the fit fails.  We patch the deparsed function text to pass SIMPLIFY = FALSE to both mapply
# calls and evaluate it in psychotools' namespace; nothing else changes.  (The alternative, giving
# one paper a third rater, would change the data set.)
#
# Parametrisation: pcmodel's coefficients are cumulative item-category parameters tau[j, x]
# (P(x | r) proportional to exp(-tau[j, x]); tau[j, 0] = 0; tau[1, 1] = 0 identifies the scale).
# The step of rater j into category x is delta[j, x] = tau[j, x] - tau[j, x - 1]; a step touching
# a null category (never used by that rater) is NA.  Items whose lowest used score is above 0 are
# shifted down by pcmodel ("scaled to zero") and null categories are left out of the numbering,
# so coefficient "R<j>-C<c>" is rater j's c-th used category above its lowest; we map it back.

suppressPackageStartupMessages(library(psychotools))

source("tests/results/psychotools_patch.R")  # patch_mapply: psychotools 0.7-2 SIMPLIFY bug (see there)
pcmodel_patched <- patch_mapply(pcmodel)
rsmodel_patched <- patch_mapply(rsmodel)

d <- read.csv("tests/results/cml_500x2_0-9.csv")
n_papers <- max(d$paper); n_raters <- 9L; M <- 9L
y <- matrix(NA_integer_, n_papers, n_raters, dimnames = list(NULL, paste0("R", 1:n_raters)))
y[cbind(d$paper, d$rater)] <- d$score

timing <- data.frame(fit = character(), seconds = numeric(), loglik = numeric())

# ---- PCM ----------------------------------------------------------------------------------
t0 <- proc.time()[["elapsed"]]
pcm <- suppressWarnings(pcmodel_patched(y, nullcats = "keep", hessian = FALSE))  # standard errors not needed
timing <- rbind(timing, data.frame(fit = "psychotools_pcmodel", seconds = proc.time()[["elapsed"]] - t0, loglik = pcm$loglik))
stopifnot(pcm$code == 0)
cf <- coef(pcm)  # named "R<j>-C<c>", c = category after pcmodel's downshift, c >= 1; first (R1-C1) fixed 0
allcf <- c(0, cf); names(allcf)[1] <- paste0(colnames(y)[1], "-C1")
mincat <- apply(y, 2, min, na.rm = TRUE)
rows <- list()
for (j in 1:n_raters) {
  tau <- rep(NA_real_, M + 1)          # tau[x + 1] for original category x
  used <- sort(unique(y[!is.na(y[, j]), j]))
  tau[used[1] + 1] <- 0
  # with nullcats = "keep", pcmodel names rater j's coefficients C1, C2, ... in the order of its
  # used categories above the lowest (null categories are skipped, not numbered)
  cj <- allcf[startsWith(names(allcf), paste0("R", j, "-C"))]
  stopifnot(length(cj) == length(used) - 1L)
  tau[used[-1] + 1] <- cj
  for (k in 1:M) rows[[length(rows) + 1]] <- data.frame(rater = j, step = k, delta = tau[k + 1] - tau[k])
}
out <- do.call(rbind, rows)
write.csv(out, "tests/results/psychotools_pcmodel_500x2_0-9.csv", row.names = FALSE, na = "")
cat(sprintf("pcmodel: loglik %.6f, %d parameters, %.2f s\n", pcm$loglik, pcm$df, timing$seconds[1]))

# ---- RSM ----------------------------------------------------------------------------------
t0 <- proc.time()[["elapsed"]]
rsm <- suppressWarnings(rsmodel_patched(y, hessian = FALSE))
timing <- rbind(timing, data.frame(fit = "psychotools_rsmodel", seconds = proc.time()[["elapsed"]] - t0, loglik = rsm$loglik))
stopifnot(rsm$code == 0)
ip <- itempar(rsm, ref = NULL, alias = TRUE)   # rater locations, sum-zero
tp <- threshpar(rsm, type = "mode", relative = TRUE, ref = NULL)  # thresholds relative to location
kappa <- as.numeric(tp[[1]])
rs_out <- rbind(data.frame(kind = "beta", index = 1:n_raters, value = as.numeric(ip)),
                data.frame(kind = "kappa", index = seq_along(kappa), value = kappa))
write.csv(rs_out, "tests/results/psychotools_rsmodel_500x2_0-9.csv", row.names = FALSE)
cat(sprintf("rsmodel: loglik %.6f, %.2f s\n", rsm$loglik, timing$seconds[2]))

# ---- eRm (optional: RUN_ERM=1; about 30 s to a few minutes) --------------------------------
# eRm 1.0-2's fitcml builds each missing-data pattern's ESFs from
#     split(beta.vec[NAvec == 1], mt_ind[1:(length(beta.vec[NAvec == 1]))])
# i.e. it assigns the parameters of the raters present to the categories of the *first* raters,
# wrong whenever raters have different numbers of categories.  Patched to mt_ind[NAvec == 1].
# eRm has no "keep" for null categories: it shifts raters whose lowest score is above 0 down and
# lets a null category's parameter run off; eRm's betapar are easiness parameters,
# beta[j, c] = -tau[j, c] for the c-th category above the rater's lowest.
if (Sys.getenv("RUN_ERM") == "1" && requireNamespace("eRm", quietly = TRUE)) {
  suppressPackageStartupMessages(library(eRm))
  f <- eRm:::fitcml
  txt <- deparse(f, width.cutoff = 500L)
  old <- "mt_ind[1:(length(beta.vec[NAvec == 1]))]"
  stopifnot(any(grepl(old, txt, fixed = TRUE)))
  g <- eval(parse(text = gsub(old, "mt_ind[NAvec == 1]", txt, fixed = TRUE)))
  environment(g) <- environment(f)
  assignInNamespace("fitcml", g, ns = "eRm")
  t0 <- proc.time()[["elapsed"]]
  erm <- suppressWarnings(PCM(y, se = FALSE))
  timing <- rbind(timing, data.frame(fit = "eRm_PCM_patched", seconds = proc.time()[["elapsed"]] - t0, loglik = erm$loglik))
  bp <- erm$betapar
  parts <- regmatches(names(bp), regexec("^beta R([0-9]+)\\.c([0-9]+)$", names(bp)))
  erm_out <- data.frame(rater = as.integer(sapply(parts, "[", 2)), category = mincat[as.integer(sapply(parts, "[", 2))] +
                          as.integer(sapply(parts, "[", 3)), beta = as.numeric(bp))
  write.csv(erm_out, "tests/results/erm_pcm_500x2_0-9.csv", row.names = FALSE)
  cat(sprintf("eRm PCM (patched): loglik %.6f, %.1f s\n", erm$loglik, timing$seconds[nrow(timing)]))
}

write.csv(timing, "tests/results/psychotools_fits_500x2_0-9.csv", row.names = FALSE)
