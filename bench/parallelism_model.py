#!/usr/bin/env python3
"""parallelism_model.py — doc/scaling.md's alpha-beta-plus-compute model
extended to model parallelism (doc/scaling.md, "Model parallelism"): one
model, step(), used twice:
  - the projection: the best D x P x T layout and its efficiency for a 1B-
    and a 10B-parameter MLP on 64, 256 and 1,024 ranks, 8 ranks a host,
    with ACCEL's constants (100 Gbit/s, 50 TFLOP/s a rank);
  - the check of bench/parallelism.sh part c (doc/parallelism.md, "Which
    layout wins where"): the samples/s it predicts for each layout, model
    and link with constants of this machine measured in the same run
    (machine()), set beside the measured ones by parallelism_report.py.

A step of a layout (D, P, T) with M microbatches, for an MLP of layer
widths dims (layer l an in x out = dims[l] x dims[l+1] matrix, N the sum of
in x out) and a global batch of G rows, b = G / (D M) rows a microbatch:
  stages     P contiguous groups of layers balanced by in x out (the
             trainer's split: the costliest stage as cheap as it can be);
             in a stage, layers are paired (Megatron-LM) from its first
             and a pair is split over T ranks, a lone layer is whole on each
  compute    C = 6 n_s G / (D F), n_s the costliest stage's in x out a rank
             (a pair's / T); F: FLOP/s of one rank on a core of its own, at
             the GEMMs of a microbatch, b rows (Machine.rate(b, G / D)
             where the machine has one: on a CPU a GEMM of 32 rows runs at
             a quarter to two thirds of one of 512, bench/parallelism.sh
             part c's reference runs; else F, an accelerator's at large
             GEMMs)
  schedule   M + P - 1 slots of C / M each (GPipe's formula, 1F1B's is
             the same), each slot stretched by max(1, busy / cores), busy
             = D T k ranks when k stages compute in it: with a core a rank
             (cores None) C (M + P - 1) / M; on 2 cores for 4 ranks the
             all-busy slots take twice as long and the fill and drain less
  pipeline   2 sum over the P - 1 boundaries (alpha + b w_i 4 beta) (fill
             and drain); the steady state's messages hide under compute
             where a rank's messages cost no core (an accelerator's DMA:
             Machine.msg_cpu None); where they take the cores that compute
             (TCP through the kernel on this machine's 2 cores), each
             microbatch adds the CPU of the busiest stage's messages, 2 a
             boundary it touches (activations and their gradient), each
             a_c + bytes b_c (msg_cpu: the unshaped link's alpha and beta,
             the CPU's copy rate), stretched as the slots are; and a link
             slower than that carries one message each way a microbatch:
             the steady state takes at least M b w 4 beta
  tensor     each pair, each microbatch, an allreduce over T forward (its
             output width) and one backward (its input width), on the
             critical path: the pairs of the costliest stage, times
             (M + P - 1) / M like its compute, as a ring within a host
             (alpha_h, beta_h) where T <= host, else between hosts
  data       the allreduce of the rank's 4 n_r gradient bytes over D (ring:
             the cost of the trainer's sums in slices, --reduce alltoall,
             what it takes across hosts, doc/scaling.md; or binomial:
             libnbc's in-place default, --reduce mpi), less what hides
             under backward (two thirds of C)
  memory     16 n_r (fp32 values, gradients, Adam's two moments) + the
             activations 1F1B keeps: min(P, M) microbatches of the stage's
             layers, b w 4 bytes each (a slice of them under T)
The efficiency is C_ideal / step, C_ideal = 6 N G / (n F).

Usage: parallelism_model.py [--check BENCH_DIR]  (prints markdown)
"""
import collections
import glob
import json
import os
import re
import statistics
import sys

from alpha_beta import fit, ring

# F: FLOP/s of a rank; alpha, beta: between hosts; alpha_h, beta_h: within a
# host of `host` ranks; cores: the cores all ranks share (None: one a rank);
# data: the data-parallel allreduce's cost (ring: the trainer's sums in slices)
# rate: FLOP/s of a rank at a microbatch of b rows out of a rank's batch of
# R, rate(b, R) (None: F); msg_cpu: (alpha, beta) of the CPU a message takes
# from the cores that compute (None: messages cost no core)
Machine = collections.namedtuple("Machine", "F alpha beta alpha_h beta_h host cores data "
                                 "rate msg_cpu", defaults=(None, None))
HBM = 2e12                         # bytes/s of an accelerator's memory
# 100 Gbit/s and 5 us; 100 GB/s and 2 us; a microbatch's GEMM reads each
# fp32 weight (4 bytes) once for 2 b FLOPs: the roofline min(F, b HBM / 2)
# (50 TFLOP/s from 50 rows up; the projection's microbatches have more)
ACCEL = Machine(F=50e12, alpha=5e-6, beta=8e-11, alpha_h=2e-6, beta_h=1e-11, host=8,
                cores=None, data=ring, rate=lambda b, R: min(50e12, b * HBM / 2))
MEM = 80e9                         # bytes a rank may hold
G = 1 << 20                        # rows (tokens) a step of the projection


def split(dims, P):
    """the trainer's balanced split: P contiguous stages (lists of layer
    indices), the costliest stage's in x out the least (dynamic
    programming over where the stages end)"""
    L = len(dims) - 1
    pre = [0]
    for l in range(L):
        pre.append(pre[-1] + dims[l] * dims[l + 1])
    # best[p][e]: (the least worst stage, cuts) of layers 0..e-1 in p stages
    best = {(0, 0): (0, ())}
    for p in range(1, P + 1):
        for e in range(p, L - (P - p) + 1):
            best[p, e] = min((max(best[p - 1, s][0], pre[e] - pre[s]), best[p - 1, s][1] + (s,))
                             for s in range(p - 1, e) if (p - 1, s) in best)
    edges = best[P, L][1][1:] + (L,)
    starts = (0,) + edges[:-1]
    return [list(range(a, e)) for a, e in zip(starts, edges)]


def busy_slots(M, P, DT, cores):
    """the schedule's length in units of C / M: M + P - 1 slots, slot s
    stretched by the ranks busy in it (k stages of D T ranks) over the cores"""
    if cores is None:
        return M + P - 1
    return sum(max(1.0, DT * sum(1 for p in range(P) if 0 <= s - p < M) / cores)
               for s in range(M + P - 1))


def step(dims, G, D, P, T, M, m):
    """seconds a step and bytes a rank of layout D x P x T with M
    microbatches on machine m; also the terms, a dict"""
    b = G / (D * M)
    stages = split(dims, P)
    flops, params, tensor = [], [], []
    for st in stages:
        f = n = t = 0.0
        pairs = [st[i:i + 2] for i in range(0, len(st), 2)]
        for pr in pairs:
            share = T if len(pr) == 2 else 1
            cost = sum(dims[l] * dims[l + 1] for l in pr)
            f += cost / share
            n += cost / share
            if len(pr) == 2 and T > 1:
                a, be = (m.alpha_h, m.beta_h) if T <= m.host else (m.alpha, m.beta)
                t += M * (ring(T, b * dims[pr[1] + 1] * 4, a, be) + ring(T, b * dims[pr[0]] * 4, a, be))
        flops.append(f)
        params.append(n)
        tensor.append(t)
    F = m.rate(b, G / D) if m.rate else m.F
    worst = max(range(P), key=lambda i: flops[i] + tensor[i] * F / (6 * G / D))
    C = 6 * flops[worst] * G / (D * F)
    slots = busy_slots(M, P, D * T, m.cores)
    compute = C / M * slots
    tens = tensor[worst] * (M + P - 1) / M
    pipe = 2 * sum(m.alpha + b * dims[st[0]] * 4 * m.beta for st in stages[1:])
    msgs = 0.0
    if P > 1 and m.msg_cpu:
        a_c, b_c = m.msg_cpu
        edge = [b * dims[st[0]] * 4 for st in stages[1:]]   # boundary i: into stage i + 1
        cpu = max(sum(2 * (a_c + edge[i] * b_c) for i in (p - 1, p) if 0 <= i < P - 1)
                  for p in range(P))
        msgs = M * cpu * slots / (M + P - 1)
        msgs = max(compute + msgs, M * max(edge) * m.beta) - compute
    n_r = max(params)
    # data parallelism alone overlaps its sums with the backward (buckets);
    # a split model (P or T > 1) sums its stage's gradient after the
    # schedule, MPI_Allreduce, nothing hidden (strategy_pipeline.c)
    hidden = 2 / 3 * C if P == 1 and T == 1 else 0.0
    data = max(0.0, m.data(D, 4 * n_r, m.alpha, m.beta) - hidden) if D > 1 else 0.0
    acts = max(sum(b * dims[l + 1] * 4 for l in st) for st in stages)
    mem = 16 * n_r + min(P, M) * acts / T
    terms = {"compute": compute, "pipeline": pipe + msgs, "tensor": tens, "data": data}
    return compute + pipe + msgs + tens + data, mem, terms


def uniform(L, w):
    """an MLP of L layers of width w (N = L w^2)"""
    return (w,) * (L + 1)


def best(L, w, n, only=None):
    """The best layout (efficiency, D, P, T, M, step, memory) on ACCEL;
    only: a predicate on (P, T) the layouts must meet."""
    dims, N = uniform(L, w), L * w * w
    out = []
    T = 1
    while T <= min(ACCEL.host, w):
        P = 1
        while P <= L and P * T <= n:
            D = n // (P * T)
            if D * P * T == n:
                for M in ((1,) if P == 1 else (4 * P, 8 * P, 16 * P)):
                    if M > G // D or (only and not only(P, T)):
                        continue
                    t, mem, _ = step(dims, G, D, P, T, M, ACCEL)
                    if mem <= MEM:
                        ideal = 6 * N * G / (n * ACCEL.F)
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
        for n in (64, 256, 1024):
            r = best(L, w, n)
            dp = best(L, w, n, lambda P, T: P == 1 and T == 1)
            tp = best(L, w, n, lambda P, T: T > 1)
            if not r:
                print("| %s | %d | none fits | | | | | | |" % (name, n))
                continue
            e, D, P, T, M, t, mem = r
            print("| %s | %d | D%dxP%dxT%d | %d | %.3f | %.2f | %.1f | %s | %s |" % (
                name, n, D, P, T, M, t, e, mem / 1e9, said(dp), said(tp)))


# ---- the check of part c: constants of this machine, from the same run ----
# the models of bench/parallelism.sh part c (keep the two alike): widths,
# input and classes included
LAYOUT_MODELS = {"fmnist": (784, 256, 256, 128, 10),
                 "wide": (784, 4096, 4096, 4096, 10),
                 "big": (784, 1024, 1024, 1024, 10)}
LAYOUT_BATCH = 512                 # part c's --global-batch
# where the run did not measure a link (an older BENCH_DIR): alpha as
# doc/scaling.md's fits found it on this machine (20-26 us, the software's),
# 1/beta the tbf rate, unshaped the fitted 6.69 Gbit/s (the CPU's limit)
LINK_FALLBACK = {"none": (22.4e-6, 1.196e-9), "10gbit": (26.3e-6, 0.8e-9),
                 "1gbit": (20.2e-6, 8e-9)}


def last_json(path):
    """the last metrics line of a file, or None (empty: refused or failed)"""
    try:
        with open(path) as f:
            return json.loads(f.read().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def layout_of(name):
    """D, P, T of a part-c layout name (D4, D2xP2, P2xT2, ...)"""
    got = dict(re.findall(r"([DPT])(\d+)", name))
    return tuple(int(got.get(k, 1)) for k in "DPT")


def refs(w, model, rows):
    """part c's one-rank reference runs of a model at a batch of `rows`
    (ref-MODEL-bROWS-i.json; at LAYOUT_BATCH also an older run's
    ref-MODEL-i.json)"""
    names = glob.glob(os.path.join(w, "ref-%s-b%d-*.json" % (model, rows)))
    if rows == LAYOUT_BATCH and not names:
        names = glob.glob(os.path.join(w, "ref-%s-[0-9]*.json" % model))
    return [r for r in map(last_json, names) if r and r.get("samples")]


def rows_rate(w, model):
    """rate(b, R) of a model on this machine, from the reference runs at b
    and at R rows (None where they are missing): 6 N FLOPs a row over the
    seconds a row takes, the GEMMs' at b rows (gemm_seconds) and the rest
    of the step's (the activations, the loss, the optimizer once a step) at
    R, a rank's batch, as a pipeline's rank computes: its GEMMs a
    microbatch at a time, its optimizer once for its R rows"""
    dims = LAYOUT_MODELS[model]
    N = sum(dims[l] * dims[l + 1] for l in range(len(dims) - 1))

    def per_row(rows, key):
        got = refs(w, model, rows)
        if not got:
            return None
        return statistics.median((r["seconds"] - r["gemm_seconds"] if key == "rest" else
                                  r["gemm_seconds"]) / r["samples"] for r in got)

    def rate(b, R):
        g, rest = per_row(int(round(b)), "gemm"), per_row(int(round(R)), "rest")
        return 6 * N / (g + rest) if g is not None and rest is not None else None
    return rate


def flop_rate(w, model):
    """(F, where from): FLOP/s of one rank on a core of its own, from part
    c's one-rank reference run of the model at the global batch
    (ref-MODEL-b512-i.json: the trainer's whole step, 6 N FLOPs a row, as
    doc/scaling.md's check takes compute at 1 rank); else the median GEMM
    rate of the layout runs (contended: an older BENCH_DIR)"""
    dims = LAYOUT_MODELS[model]
    N = sum(dims[l] * dims[l + 1] for l in range(len(dims) - 1))
    ref = refs(w, model, LAYOUT_BATCH)
    if ref:
        return 6 * N * statistics.median(r["samples_per_s"] for r in ref), "1-rank run"
    lay = [r for r in map(last_json, glob.glob(os.path.join(w, "lay-*-%s-*.json" % model))) if r]
    rates = [r["gemm_gflops"] * 1e9 for r in lay if r.get("gemm_gflops")]
    return (statistics.median(rates), "GEMM rate of the 4-rank runs") if rates else (None, "none")


def link_constants(w, link):
    """(alpha, beta, where from) of a link: the ring fitted to part c's
    2-rank allreduce sweep over it (ar-LINK.json), else LINK_FALLBACK"""
    try:
        rows = [json.loads(l) for l in open(os.path.join(w, "ar-%s.json" % link))
                if l.startswith("{")]
    except OSError:
        rows = []
    if len(rows) >= 2:
        a, b, err = fit(rows)
        return a, b, "fitted to the 2-rank sweep (rms %.0f %%)" % (100 * err)
    a, b = LINK_FALLBACK.get(link, LINK_FALLBACK["none"])
    return a, b, "not measured: doc/scaling.md's fit"


def machine(w, link, model, cores):
    """this machine's constants for a part-c point: every host one slot, so
    every message crosses a link (host = 1); the trainer's data
    allreduce sums in slices (--reduce alltoall, what --reduce auto takes
    across hosts: a linear all-to-all and allgather, the ring's cost,
    doc/scaling.md); F at a microbatch's rows from the
    reference runs at those rows where the run has them (rows_rate; else
    F at the global batch for every b); a message's CPU the unshaped
    link's alpha and beta (TCP through the kernel, on the cores that
    compute: the namespace hosts share this machine's)"""
    F, _ = flop_rate(w, model)
    a, b, _ = link_constants(w, link)
    a_c, b_c, _ = link_constants(w, "none")
    measured = rows_rate(w, model)
    return Machine(F=F, alpha=a, beta=b, alpha_h=a, beta_h=b, host=1, cores=cores,
                   data=ring, rate=lambda rows, R: measured(rows, R) or F,
                   msg_cpu=(a_c, b_c))


def predict(w, link, model, layout, cores):
    """samples/s step() predicts for a part-c point (None: no F), with M
    the trainer's default (4 P, at most a rank's batch)"""
    m = machine(w, link, model, cores)
    if m.F is None:
        return None
    D, P, T = layout_of(layout)
    M = min(4 * P, LAYOUT_BATCH // D) if P > 1 else 1
    t, _, _ = step(LAYOUT_MODELS[model], LAYOUT_BATCH, D, P, T, M, m)
    return LAYOUT_BATCH / t


def constants_lines(w, links, models, cores):
    """markdown: the constants the prediction used, and where they came from"""
    out = ["Constants of the prediction (%d cores shared by the 4 ranks: a slot "
           "in which k ranks compute takes max(1, k / %d) times as long):\n" % (cores, cores),
           "| model | F a rank (GFLOP/s) | from |", "|---|---|---|"]
    for model in models:
        F, src = flop_rate(w, model)
        out.append("| %s | %s | %s |" % (model, "%.1f" % (F / 1e9) if F else "-", src))
    # F at a microbatch's rows (b) within a rank's batch (R), as step() takes it
    pairs = [(32, 256), (32, 512), (64, 512), (128, 128), (256, 256)]
    out += ["", "F a rank at b rows a microbatch of a rank's R (GFLOP/s; rows_rate(): the "
            "GEMMs' seconds a row at b, the rest's at R, one-rank reference runs):\n",
            "| model | " + " | ".join("b %d, R %d" % p for p in pairs) + " |",
            "|---|" + "---|" * len(pairs)]
    for model in models:
        rate = rows_rate(w, model)
        out.append("| %s | %s |" % (model, " | ".join(
            "%.1f" % (rate(*p) / 1e9) if rate(*p) else "-" for p in pairs)))
    a_c, b_c, _ = link_constants(w, "none")
    out += ["", "A message's CPU (the steady state's messages, on the cores that compute): "
            "the unshaped link's alpha %.1f us and %.2f Gbit/s." % (a_c * 1e6, 8 / b_c / 1e9)]
    out += ["", "| link | alpha (us) | 1/beta (Gbit/s) | from |", "|---|---|---|---|"]
    for link in links:
        a, b, src = link_constants(w, link)
        out.append("| %s | %.1f | %.2f | %s |" % (link, a * 1e6, 8 / b / 1e9, src))
    return out


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
