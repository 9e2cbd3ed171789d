# Reference for the many-facet rating scale model (MFRM) fitted by marginal ML
# (ratercal_cli/methods/mml.py, model "rsm" with further facets), computed independently: the
# marginal log-likelihood by R's integrate() paper by paper, maximised by optim(BFGS), the standard
# errors from optimHess (a numerical Hessian) by the delta method.  No prior on any parameter.
#
#   Rscript tests/results/make_mfrm_reference.R criterion           (from the repository root)
#   Rscript tests/results/make_mfrm_reference.R criterion,session
#
# Model (Linacre's ?,?,...,R): paper p, rater j, a level l_f of each further facet f, score x in 0..M,
#   P(x | t) = exp(x (t - beta[j] - sum_f gamma_f[l_f]) - sum_{k<=x} kappa[k]) / (sum over h of the same)
#   t ~ N(mu, sigma^2);   sum_j beta = 0, sum_l gamma_f = 0 for each f, sum_k kappa = 0.
# Free parameters: beta[1..J-1], gamma_f[1..L_f-1], kappa[1..M-1], mu, log(sigma).
# Reads tests/results/mfrm_120x6_3crit_2sess_0-3.csv; writes
# tests/results/mfrm_r_reference_<facets joined by +>.csv with rows parameter,estimate,se:
# beta_J (every rater), gamma_FACET_L (every level), kappa_K, mu, log_sigma, and loglik (se blank).
args <- commandArgs(trailingOnly = TRUE)
facets <- if (length(args)) strsplit(args[1], ",")[[1]] else "criterion"
d <- read.csv("tests/results/mfrm_120x6_3crit_2sess_0-3.csv")
J <- max(d$rater); M <- max(d$score)
L <- sapply(facets, function(f) max(d[[f]]))
papers <- split(d, d$paper)

# the linear map from free parameters to the full (sum-zero) vectors
sumzero <- function(n) rbind(diag(n - 1), rep(-1, n - 1))
nb <- J - 1; ng <- L - 1; nk <- M - 1
P <- nb + sum(ng) + nk + 2
unpack <- function(par) {
  at <- 0
  beta <- sumzero(J) %*% par[at + seq_len(nb)]; at <- at + nb
  gamma <- list()
  for (f in facets) { gamma[[f]] <- sumzero(L[[f]]) %*% par[at + seq_len(ng[[f]])]; at <- at + ng[[f]] }
  kappa <- sumzero(M) %*% par[at + seq_len(nk)]; at <- at + nk
  list(beta = as.vector(beta), gamma = gamma, kappa = as.vector(kappa), mu = par[at + 1], sigma = exp(par[at + 2]))
}

paper_lik <- function(p, th) {
  loc <- th$beta[p$rater]
  for (f in facets) loc <- loc + th$gamma[[f]][p[[f]]]
  cumk <- c(0, cumsum(th$kappa))
  x <- p$score
  f <- function(t) {
    A <- outer(t, loc, "-")                       # theta - location, nodes x ratings
    E <- lapply(0:M, function(h) h * A - cumk[h + 1])
    mx <- do.call(pmax, E)
    lse <- mx + log(Reduce(`+`, lapply(E, function(e) exp(e - mx))))
    obs <- A * rep(x, each = length(t)) - rep(cumk[x + 1], each = length(t))
    exp(rowSums(obs - lse)) * dnorm(t, th$mu, th$sigma)
  }
  lim <- 10 * th$sigma + 10
  integrate(f, th$mu - lim, th$mu + lim, rel.tol = 1e-10, abs.tol = 0, subdivisions = 500L)$value
}

loglik <- function(par) {
  th <- unpack(par)
  sum(log(vapply(papers, paper_lik, numeric(1), th = th)))
}

start <- c(rep(0, P - 2), mean(d$score) - M / 2, 0)
t0 <- proc.time()[["elapsed"]]
fit <- optim(start, function(p) -loglik(p), method = "BFGS",
             control = list(reltol = 1e-14, maxit = 2000, ndeps = rep(1e-5, P)))
fit <- optim(fit$par, function(p) -loglik(p), method = "BFGS",
             control = list(reltol = 1e-15, maxit = 2000, ndeps = rep(1e-6, P)))
H <- optimHess(fit$par, function(p) -loglik(p), control = list(ndeps = rep(1e-4, P)))
V <- solve(H)

# every reported quantity as a linear function of the free parameters: its rows of A
A <- matrix(0, 0, P); names <- character(0); at <- 0
blk <- function(n, m, at) { a <- matrix(0, n, P); a[, at + seq_len(m)] <- sumzero(n); a }
A <- rbind(A, blk(J, nb, at)); names <- c(names, sprintf("beta_%d", 1:J)); at <- at + nb
for (f in facets) {
  A <- rbind(A, blk(L[[f]], ng[[f]], at)); names <- c(names, sprintf("gamma_%s_%d", f, 1:L[[f]])); at <- at + ng[[f]]
}
A <- rbind(A, blk(M, nk, at)); names <- c(names, sprintf("kappa_%d", 1:M)); at <- at + nk
e <- diag(P)
A <- rbind(A, e[at + 1, ], e[at + 2, ]); names <- c(names, "mu", "log_sigma")
est <- as.vector(A %*% fit$par)
se <- sqrt(diag(A %*% V %*% t(A)))
out <- data.frame(parameter = c(names, "loglik"), estimate = c(est, -fit$value), se = c(se, NA))
target <- sprintf("tests/results/mfrm_r_reference_%s.csv", paste(facets, collapse = "+"))
write.csv(out, target, row.names = FALSE, quote = FALSE, na = "")
cat(sprintf("%s: loglik %.8f, convergence %d, %.0f s\n", target, -fit$value, fit$convergence,
            proc.time()[["elapsed"]] - t0))
