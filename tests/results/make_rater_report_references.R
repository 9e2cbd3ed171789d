# Reference rater severities and standard errors for tests/test_rater_report.py, from psychotools.
#
#   Rscript tests/results/make_rater_report_references.R        # from the repository root
#
# Needs Debian's r-base-core and r-cran-psychotools (0.7-2).  Reads tests/results/cml_500x2_0-9.csv
# (500 papers x 2 of 9 raters, 0-9) and writes tests/results/psychotools_rsm_severity_500x2_0-9.csv:
# the rating scale model's rater locations by CML (rsmodel, with the Hessian), centred to sum 0
# (itempar(ref = NULL)), and their standard errors from itempar's covariance matrix; then the
# separation statistics of those measures (population variance, RMSE of the S.E.s, separation,
# strata, reliability, fixed chi-square) as rows with rater = "all".
# rsmodel is patched exactly as in make_r_references.R (psychotools 0.7-2's mapply SIMPLIFY bug
# on incomplete data in which every paper has two raters).

suppressPackageStartupMessages(library(psychotools))
source("tests/results/psychotools_patch.R")  # patch_mapply: psychotools 0.7-2 SIMPLIFY bug (see there)
rsmodel_patched <- patch_mapply(rsmodel)
d <- read.csv("tests/results/cml_500x2_0-9.csv")
y <- matrix(NA_integer_, max(d$paper), 9L, dimnames = list(NULL, paste0("R", 1:9)))
y[cbind(d$paper, d$rater)] <- d$score
rsm <- suppressWarnings(rsmodel_patched(y, hessian = TRUE))
stopifnot(rsm$code == 0)
ip <- itempar(rsm, ref = NULL, alias = TRUE, vcov = TRUE)
b <- as.numeric(ip)
se <- sqrt(diag(vcov(ip)))
v <- mean((b - mean(b))^2); rmse <- sqrt(mean(se^2)); tv <- max(v - rmse^2, 0)
G <- sqrt(tv) / rmse; w <- 1 / se^2
q <- sum(w * (b - sum(w * b) / sum(w))^2)
out <- rbind(data.frame(rater = as.character(1:9), statistic = "severity", value = b),
             data.frame(rater = as.character(1:9), statistic = "se", value = se),
             data.frame(rater = "all", statistic = c("rmse", "adj_sd", "separation", "strata", "reliability", "chi2", "chi2_p"),
                        value = c(rmse, sqrt(tv), G, (4 * G + 1) / 3, tv / v, q, pchisq(q, 8, lower.tail = FALSE))))
out$value <- sprintf("%.10g", out$value)
write.csv(out, "tests/results/psychotools_rsm_severity_500x2_0-9.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("rsmodel: loglik %.6f (psychotools %s)\n", rsm$loglik, as.character(packageVersion("psychotools"))))
