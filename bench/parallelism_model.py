#!/usr/bin/env python3
"""parallelism_model.py — doc/scaling.md's alpha-beta-plus-compute model
extended to model parallelism (doc/scaling.md, "Model parallelism"), and
its projection: the best D x P x T layout and its efficiency for a 1B- and
a 10B-parameter MLP on 64, 256 and 1,024 ranks, 8 ranks a host.

A step of a layout (D, P, T) with M microbatches, for an MLP of L layers of
width w (N = L w^2 parameters) and a global batch of G rows:
  compute    C = 6 N G / (D P T F)                 (F: FLOP/s a rank)
  bubble     C (M + P - 1) / M                      (GPipe's formula, 1F1B too)
  pipeline   2 (P - 1) (alpha + b w 4 beta)         (fill and drain: the
                                                     messages in the steady
                                                     state hide under compute;
                                                     b = G / (D M) rows)
  tensor     L [2 (T - 1) M alpha_h + 2 (T-1)/T (G/D) w 4 beta_h]
                                                    (one allreduce a layer
                                                     pair each way: two a
                                                     pair, on the critical
                                                     path, within a host)
  data       2 (D - 1) alpha + 2 (D-1)/D 4 N/(P T) beta, less what hides
             under backward (two thirds of the compute), as doc/scaling.md
  memory     16 N / (P T) (fp32 values, gradients, Adam's two moments)
             + the activations 1F1B keeps: min(P, M) microbatches of the
             stage's L/P layers, b w 4 bytes each (T: a slice of them)
The efficiency is C_ideal / step, C_ideal = 6 N G / (n F).

Usage: parallelism_model.py [--check BENCH_DIR]  (prints markdown)
"""
import json
import sys

F = 50e12              # FLOP/s sustained a rank (doc/scaling.md's accelerator)
ALPHA, BETA = 5e-6, 8e-11          # between hosts: 100 Gbit/s, 5 us
ALPHA_H, BETA_H = 2e-6, 1e-11      # within a host of 8: 100 GB/s, 2 us
HOST = 8
MEM = 80e9                         # bytes a rank may hold
G = 1 << 20                        # rows (tokens) a step


def step(N, L, w, D, P, T, M):
    b = G / (D * M)
    C = 6 * N * G / (D * P * T * F)
    bubble = C * (M + P - 1) / M
    pipe = 2 * (P - 1) * (ALPHA + b * w * 4 * BETA)
    # a tensor group within a host when T <= 8 (the placement's rule)
    a, be = (ALPHA_H, BETA_H) if T <= HOST else (ALPHA, BETA)
    tensor = L * (2 * (T - 1) * M * a + 2 * (T - 1) / T * (G / D) * w * 4 * be) if T > 1 else 0
    ar = 2 * (D - 1) * ALPHA + 2 * (D - 1) / D * 4 * N / (P * T) * BETA if D > 1 else 0
    data = max(0.0, ar - 2 / 3 * C)
    mem = 16 * N / (P * T) + min(P, M) * (L / P) * b * w * 4 / T
    return bubble + pipe + tensor + data, mem


def best(N, L, w, n, only=None):
    """The best layout (efficiency, D, P, T, M, step, memory); only: a
    predicate on (P, T) the layouts must meet."""
    out = []
    T = 1
    while T <= min(HOST, w):
        P = 1
        while P <= L and P * T <= n:
            D = n // (P * T)
            if D * P * T == n:
                for M in ((1,) if P == 1 else (4 * P, 8 * P, 16 * P)):
                    if M > G // D or (only and not only(P, T)):
                        continue
                    t, mem = step(N, L, w, D, P, T, M)
                    if mem <= MEM:
                        ideal = 6 * N * G / (n * F)
                        out.append((ideal / t, D, P, T, M, t, mem))
            P *= 2
        T *= 2
    return max(out) if out else None


def said(r):
    if not r:
        return "does not fit"
    e, D, P, T, M, t, mem = r
    return "D%dxP%dxT%d: %.2f" % (D, P, T, e)


def projection():
    print("| model | ranks | best layout | M | step (s) | efficiency | memory a rank (GB) | "
          "data alone | best with T > 1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, L, w in (("1B MLP (16 x 8192)", 16, 8192), ("10B MLP (40 x 16384)", 40, 16384)):
        N = L * w * w
        for n in (64, 256, 1024):
            r = best(N, L, w, n)
            dp = best(N, L, w, n, lambda P, T: P == 1 and T == 1)
            tp = best(N, L, w, n, lambda P, T: T > 1)
            if not r:
                print("| %s | %d | none fits | | | | | | |" % (name, n))
                continue
            e, D, P, T, M, t, mem = r
            print("| %s | %d | D%dxP%dxT%d | %d | %.3f | %.2f | %.1f | %s | %s |" % (
                name, n, D, P, T, M, t, e, mem / 1e9, said(dp), said(tp)))


def check(w):
    """The model's bubble against bench/parallelism.sh's measurements."""
    try:
        rows = [l.split() for l in open(w + "/bubble.dat")]
    except OSError:
        return
    print("\n| M | (P-1)/(M+P-1) | gpipe measured | 1f1b measured |")
    print("|---|---|---|---|")
    for m, th, g, o in rows:
        print("| %s | %.3f | %.3f | %.3f |" % (m, float(th), float(g), float(o)))


if __name__ == "__main__":
    projection()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
