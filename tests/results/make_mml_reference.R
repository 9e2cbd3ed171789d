# Reference for the MML partial credit model (ratercal_cli/methods/mml.py), computed independently:
# the marginal log-likelihood by R's integrate() paper by paper, maximised by optim(BFGS), the
# standard errors from optimHess (a numerical Hessian).  No prior on any parameter.
#
#   Rscript tests/results/make_mml_reference.R      (from the repository root; a few minutes)
#
# Model: rater j gives score x in 0..M with P(x | t) = exp(x t - tau[j, x]) / sum_h exp(h t - tau[j, h]),
# tau[j, 0] = 0, t ~ N(0, sigma^2).  Parameters: tau[j, 1..M] (cumulative) and log(sigma).
# Reads tests/results/mml_150x5_0-3.csv; writes tests/results/mml_r_reference_150x5_0-3.csv
# (parameter tau_J_K or log_sigma, estimate, se) with the log-likelihood as parameter "loglik".
d <- read.csv("tests/results/mml_150x5_0-3.csv")
J <- max(d$rater); M <- max(d$score)
papers <- split(d, d$paper)

paper_lik <- function(p, tau, sigma) {
  f <- function(t) {
    out <- dnorm(t, 0, sigma)
    for (i in seq_len(nrow(p))) {
      E <- outer(t, 0:M) - matrix(c(0, tau[p$rater[i], ]), length(t), M + 1, byrow = TRUE)
      mx <- apply(E, 1, max)
      P <- exp(E - mx)
      out <- out * P[, p$score[i] + 1] / rowSums(P)
    }
    out
  }
  lim <- 10 * sigma + 10  # the prior density is below 1e-22 beyond 10 sigma
  integrate(f, -lim, lim, rel.tol = 1e-10, abs.tol = 0, subdivisions = 500L)$value
}

loglik <- function(par) {
  tau <- matrix(par[1:(J * M)], J, M, byrow = TRUE)
  sigma <- exp(par[J * M + 1])
  sum(log(vapply(papers, paper_lik, numeric(1), tau = tau, sigma = sigma)))
}

# start: each rater's adjacent-category log odds, sigma = 1
start <- numeric(J * M + 1)
for (j in 1:J) {
  n <- tabulate(d$score[d$rater == j] + 1, M + 1) + 0.5
  start[((j - 1) * M + 1):(j * M)] <- -log(n[2:(M + 1)] / n[1])
}
t0 <- proc.time()[["elapsed"]]
fit <- optim(start, function(p) -loglik(p), method = "BFGS",
             control = list(reltol = 1e-14, maxit = 2000, ndeps = rep(1e-5, length(start))))
fit <- optim(fit$par, function(p) -loglik(p), method = "BFGS",
             control = list(reltol = 1e-15, maxit = 2000, ndeps = rep(1e-6, length(start))))
H <- optimHess(fit$par, function(p) -loglik(p), control = list(ndeps = rep(1e-4, length(start))))
se <- sqrt(diag(solve(H)))
names <- c(sprintf("tau_%d_%d", rep(1:J, each = M), rep(1:M, J)), "log_sigma")
out <- data.frame(parameter = c(names, "loglik"), estimate = c(fit$par, -fit$value), se = c(se, NA))
write.csv(out, "tests/results/mml_r_reference_150x5_0-3.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("loglik %.8f, convergence %d, %.0f s\n", -fit$value, fit$convergence, proc.time()[["elapsed"]] - t0))
