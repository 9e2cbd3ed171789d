# Reference agreement statistics for tests/test_agreement.py, from R (psych and base R).
#
#   Rscript tests/results/make_agreement_references.R        # from the repository root
#
# Needs Debian's r-base-core and r-cran-psych (psych 2.2.x).  (r-cran-irr is not packaged for
# this Debian, so Krippendorff's alpha is computed here from its definition -- the coincidence
# matrix of Krippendorff (2011), "Computing Krippendorff's alpha-reliability" -- in base R, and
# the script first checks that code against the worked example of that paper: 4 observers x 12
# units, alpha nominal 0.743, ordinal 0.815, interval 0.849 as published.)
#
# Reads  tests/results/cml_500x2_0-9.csv          500 papers x 2 of 9 raters, scale 0-9 (balanced)
#        tests/results/agreement_grade11_0-5.csv  grade 11 of examples/ratings.csv, 0-5, 122 papers,
#                                                 4 with a third rating (unbalanced)
# Writes tests/results/r_agreement.csv  columns dataset,statistic,rater_a,rater_b,value
#   per rater pair (rater_a < rater_b as strings sort in Python, i.e. by the raters' index order
#   in ratercal: numbers numerically, labels alphabetically): papers, exact, adjacent, kappa_w
#   (psych::cohen.kappa of the pair's 0..M x 0..M table, $weighted.kappa: quadratic weights);
#   overall: exact, adjacent, kappa_w (cohen.kappa of every pair in both orders),
#   alpha_ordinal, alpha_interval, icc1, icc1_lo, icc1_hi, icc1k, icc1k_lo, icc1k_hi, k0
#   (balanced: psych::ICC(lmer = FALSE) rows ICC1 and ICC1k of the papers x 2 matrix of first and
#   second rating; unbalanced: one-way ANOVA by base R's aov and the k0 formula of McGraw & Wong).

suppressPackageStartupMessages(library(psych))

kripp_alpha <- function(units, values, level) {
  # units, values: one row per rating; only units with 2+ ratings are pairable
  keep <- units %in% names(which(table(units) >= 2))
  units <- units[keep]; values <- values[keep]
  lev <- sort(unique(values))
  cnt <- table(factor(units), factor(values, levels = lev))     # units x values
  m <- rowSums(cnt)
  o <- matrix(0, length(lev), length(lev))                      # coincidence matrix
  for (u in seq_len(nrow(cnt))) {
    cu <- as.numeric(cnt[u, ])
    o <- o + (outer(cu, cu) - diag(cu)) / (m[u] - 1)
  }
  nc <- rowSums(o); n <- sum(nc)
  if (level == "interval") {
    d2 <- outer(lev, lev, function(a, b) (a - b)^2)
  } else if (level == "ordinal") {
    d2 <- matrix(0, length(lev), length(lev))
    for (i in seq_along(lev)) for (k in seq_along(lev)) {
      a <- min(i, k); b <- max(i, k)
      d2[i, k] <- (sum(nc[a:b]) - (nc[a] + nc[b]) / 2)^2
    }
  } else {
    d2 <- 1 - diag(length(lev))
  }
  1 - (n - 1) * sum(o * d2) / sum(outer(nc, nc) * d2)
}

# Krippendorff (2011), section C: observers A-D, units 1-12, NA = missing
ex <- rbind(c(1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA),
            c(1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3),
            c(NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA),
            c(1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA))
u <- rep(1:12, each = 4)[!is.na(as.vector(ex))]
v <- as.vector(ex)[!is.na(as.vector(ex))]
published <- c(nominal = 0.743, ordinal = 0.815, interval = 0.849)
for (lv in names(published)) {
  a <- kripp_alpha(u, v, lv)
  stopifnot(abs(a - published[[lv]]) < 5e-4)
}

# cohen.kappa is given the (M+1) x (M+1) table, not the n x 2 data: psych takes any square input
# as a table, so the data of a rater pair sharing exactly two papers (a 2 x 2 matrix) would be
# misread as a table of counts.
ktab <- function(a, b, M) unclass(table(factor(a, levels = 0:M), factor(b, levels = 0:M)))

rows <- list()
add <- function(ds, stat, a, b, value) {
  rows[[length(rows) + 1]] <<- data.frame(dataset = ds, statistic = stat, rater_a = a, rater_b = b,
                                          value = sprintf("%.10g", value))
}

for (spec in list(list(name = "cml_500x2_0-9", file = "tests/results/cml_500x2_0-9.csv", M = 9),
                  list(name = "agreement_grade11_0-5", file = "tests/results/agreement_grade11_0-5.csv", M = 5))) {
  d <- read.csv(spec$file, colClasses = c("character", "character", "integer"))
  ds <- spec$name
  # rater order as ratercal sorts labels: numerically when every label is a number
  ids <- unique(d$rater)
  ids <- if (all(grepl("^[0-9]+$", ids))) ids[order(as.numeric(ids))] else sort(ids, method = "radix")
  d$r <- match(d$rater, ids)
  # every pair of ratings of a paper, the lower rater index first
  pa <- do.call(rbind, lapply(split(d, d$paper), function(p) {
    if (nrow(p) < 2) return(NULL)
    cmb <- combn(nrow(p), 2)
    i <- cmb[1, ]; k <- cmb[2, ]
    sw <- p$r[i] > p$r[k]
    data.frame(ra = ifelse(sw, p$r[k], p$r[i]), rb = ifelse(sw, p$r[i], p$r[k]),
               xa = ifelse(sw, p$score[k], p$score[i]), xb = ifelse(sw, p$score[i], p$score[k]))
  }))
  for (key in unique(paste(pa$ra, pa$rb))) {
    s <- pa[paste(pa$ra, pa$rb) == key, ]
    a <- ids[s$ra[1]]; b <- ids[s$rb[1]]
    add(ds, "papers", a, b, nrow(s))
    add(ds, "exact", a, b, mean(s$xa == s$xb))
    add(ds, "adjacent", a, b, mean(abs(s$xa - s$xb) <= 1))
    k <- tryCatch(suppressWarnings(cohen.kappa(ktab(s$xa, s$xb, spec$M))$weighted.kappa),
                  error = function(e) NA)
    add(ds, "kappa_w", a, b, k)
  }
  add(ds, "exact", "", "", mean(pa$xa == pa$xb))
  add(ds, "adjacent", "", "", mean(abs(pa$xa - pa$xb) <= 1))
  both <- rbind(cbind(pa$xa, pa$xb), cbind(pa$xb, pa$xa))
  add(ds, "kappa_w", "", "", suppressWarnings(cohen.kappa(ktab(both[, 1], both[, 2], spec$M))$weighted.kappa))
  add(ds, "alpha_ordinal", "", "", kripp_alpha(d$paper, d$score, "ordinal"))
  add(ds, "alpha_interval", "", "", kripp_alpha(d$paper, d$score, "interval"))
  n_i <- table(d$paper)
  if (all(n_i == 2)) {
    # balanced: psych's ICC on the papers x 2 matrix (one-way ICCs ignore which rater is which)
    wide <- do.call(rbind, lapply(split(d$score, d$paper), function(x) x[1:2]))
    res <- ICC(wide, lmer = FALSE)$results
    add(ds, "icc1", "", "", res["Single_raters_absolute", "ICC"])
    add(ds, "icc1_lo", "", "", res["Single_raters_absolute", "lower bound"])
    add(ds, "icc1_hi", "", "", res["Single_raters_absolute", "upper bound"])
    add(ds, "icc1k", "", "", res["Average_raters_absolute", "ICC"])
    add(ds, "icc1k_lo", "", "", res["Average_raters_absolute", "lower bound"])
    add(ds, "icc1k_hi", "", "", res["Average_raters_absolute", "upper bound"])
    add(ds, "k0", "", "", 2)
  } else {
    e <- d[d$paper %in% names(n_i)[n_i >= 2], ]
    tab <- summary(aov(score ~ factor(paper), data = e))[[1]]
    msb <- tab[1, "Mean Sq"]; msw <- tab[2, "Mean Sq"]; df1 <- tab[1, "Df"]; df2 <- tab[2, "Df"]
    N <- nrow(e); ni <- as.numeric(table(e$paper))
    k0 <- (N - sum(ni^2) / N) / df1
    F <- msb / msw
    FL <- F / qf(0.975, df1, df2); FU <- F * qf(0.975, df2, df1)
    add(ds, "icc1", "", "", (msb - msw) / (msb + (k0 - 1) * msw))
    add(ds, "icc1_lo", "", "", (FL - 1) / (FL + k0 - 1))
    add(ds, "icc1_hi", "", "", (FU - 1) / (FU + k0 - 1))
    add(ds, "icc1k", "", "", (msb - msw) / msb)
    add(ds, "icc1k_lo", "", "", 1 - 1 / FL)
    add(ds, "icc1k_hi", "", "", 1 - 1 / FU)
    add(ds, "k0", "", "", k0)
  }
}
out <- do.call(rbind, rows)
write.csv(out, "tests/results/r_agreement.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("wrote tests/results/r_agreement.csv: %d rows (psych %s, %s)\n", nrow(out),
            as.character(packageVersion("psych")), R.version.string))
