"""alpha_beta.py — the ring allreduce model t = 2(n-1) alpha + 2(n-1)/n S beta
and its least-squares fit to bench/allreduce's sweep; one implementation,
used by bench/scaling_model.py (doc/scaling.md) and bench/parallelism_model.py
(doc/parallelism.md's check of part c)."""
import math


def ring(n, s, a, b):
    """seconds for a ring allreduce of s bytes over n ranks"""
    return 0.0 if n < 2 else 2 * (n - 1) * a + 2 * (n - 1) / n * s * b


def fit(rows):
    """alpha, beta of the ring model by least squares on the relative error
    (each point divided by its time: plain least squares would fit the
    64 MiB points and ignore every small message); rows: bench/allreduce's
    JSON lines (ranks, bytes, seconds). Returns alpha, beta, rms error."""
    x = [(2 * (r["ranks"] - 1), 2 * (r["ranks"] - 1) / r["ranks"] * r["bytes"]) for r in rows]
    t = [r["seconds"] for r in rows]
    u = [(x1 / ti, x2 / ti) for (x1, x2), ti in zip(x, t)]
    # the normal equations of the 2-parameter fit to ones
    suu, suv, svv = (sum(p[i] * p[j] for p in u) for i, j in ((0, 0), (0, 1), (1, 1)))
    su, sv = sum(p[0] for p in u), sum(p[1] for p in u)
    det = suu * svv - suv * suv
    a, b = max((su * svv - sv * suv) / det, 0.0), (suu * sv - suv * su) / det
    err = math.sqrt(sum(((a * x1 + b * x2) - ti) ** 2 / ti ** 2 for (x1, x2), ti in zip(x, t)) / len(t))
    return a, b, err



def binomial(n, s, a, b):
    """libnbc's in-place default (what recordio-train's reducer calls): a
    binomial reduce to rank 0, then a binomial broadcast; rank 0 takes
    ceil(log2 n) whole messages each way"""
    return 0.0 if n < 2 else 2 * math.ceil(math.log2(n)) * (a + s * b)
