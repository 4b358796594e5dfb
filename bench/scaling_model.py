#!/usr/bin/env python3
"""scaling_model.py - the analysis half of bench/scaling.sh.

Reads the JSON that bench/scaling.sh wrote in W (allreduce sweeps from
bench/allreduce, recordio-train --metrics files, meta.json), fits the ring
model t = 2(n-1) alpha + 2(n-1)/n * bytes * beta per link setting, predicts
the trainer's allreduce time per step and its weak and strong scaling,
projects both to 64-1024 ranks, prints Markdown tables (also W/tables.md)
and draws the PNGs into OUT with gnuplot.

Usage: scaling_model.py W OUT
"""
import json
import math
import os
import subprocess
import sys

import numpy as np

from alpha_beta import binomial, fit, ring

W, OUT = sys.argv[1], sys.argv[2]
META = json.load(open(os.path.join(W, "meta.json")))
LINKS = META["links"]
RANKS = META["ranks"]
BUCKET = META["bucket_bytes"]


def jlines(name):
    path = os.path.join(W, name)
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path) if l.startswith("{")]


# ---- the models: seconds for one allreduce of S bytes over n ranks ------
def rabenseifner(n, s, a, b):
    """reduce-scatter + allgather by recursive halving/doubling: the ring's
    bandwidth term with a logarithmic latency term"""
    return 0.0 if n < 2 else 2 * math.ceil(math.log2(n)) * a + 2 * (n - 1) / n * s * b


def buckets(total, size):
    """the byte sizes of the reducer's allreduces for a gradient of total bytes"""
    full, rest = divmod(total, size)
    return [size] * full + ([rest] if rest else [])


# ---- allreduce sweeps ---------------------------------------------------
out = []
def say(line=""):
    out.append(line)

params = {}
say(f"Load average of the machine ({META['cores']} cores) before and after the run: "
    f"{META['load_before']} and {META['load_after']}.\n")
say("### Allreduce: measured and the ring model\n")
say("Float sum, out of place, ring forced (`coll_tuned_allreduce_algorithm 4`); "
    "time of the slowest rank. busbw = algbw x 2(n-1)/n.\n")
say("| link (tbf burst) | ranks | 4 KiB | 64 KiB | 1 MiB | 16 MiB | 64 MiB | busbw at 64 MiB |")
say("|---|---|---|---|---|---|---|---|")
for link in LINKS:
    rows = []
    for n in RANKS:
        rs = jlines(f"ar-{link}-{n}-ring.json")
        rows += rs
        by = {r["bytes"]: r for r in rs}
        cell = lambda s: f"{by[s]['seconds'] * 1e3:.3g} ms" if s in by else "-"
        big = by.get(64 << 20)
        say(f"| {META['link_names'][link]} | {n} | {cell(4096)} | {cell(65536)} | {cell(1 << 20)} | "
            f"{cell(16 << 20)} | {cell(64 << 20)} | "
            f"{(big['busbw_GBps'] * 8 if big else float('nan')):.2f} Gbit/s |")
    if rows:
        params[link] = fit(rows)
say()
say("Fitted per link (least squares on the relative error over every size and rank count):\n")
say("| link | alpha (latency per step) | beta (per byte) | 1/beta | rms relative error |")
say("|---|---|---|---|---|")
for link, (a, b, e) in params.items():
    say(f"| {META['link_names'][link]} | {a * 1e6:.1f} us | {b * 1e9:.3f} ns | "
        f"{8 / b / 1e9:.2f} Gbit/s | {100 * e:.0f} % |")
say()

# the trainer's own call (in place, non-blocking) against both models
say("The trainer's call, `MPI_Iallreduce(MPI_IN_PLACE)` + wait (`allreduce -i`), "
    "against the binomial model with the ring's alpha and beta; 1 MiB messages:\n")
say("| link | ranks | ring (forced) | in place, libnbc default | binomial model | "
    "in place, libnbc ring | ring model |")
say("|---|---|---|---|---|---|---|")
for link in LINKS:
    if link not in params:
        continue
    a, b, _ = params[link]
    for n in RANKS:
        get = lambda name: {r["bytes"]: r for r in jlines(name)}.get(1 << 20)
        ms = lambda r: f"{r['seconds'] * 1e3:.2f} ms" if r else "-"
        say(f"| {META['link_names'][link]} | {n} | {ms(get(f'ar-{link}-{n}-ring.json'))} | "
            f"{ms(get(f'ar-{link}-{n}-inplace.json'))} | {binomial(n, 1 << 20, a, b) * 1e3:.2f} ms | "
            f"{ms(get(f'ar-{link}-{n}-inplace-ring.json'))} | {ring(n, 1 << 20, a, b) * 1e3:.2f} ms |")
say()

# ---- the trainer ----------------------------------------------------------
def epoch(name):
    """the median epoch (by time per step) of a metrics file, every epoch
    counted: never the fastest, which hides the slow ones"""
    ls = sorted(jlines(name), key=lambda e: e["seconds"] / e["steps"])
    return ls[(len(ls) - 1) // 2] if ls else None


GRAD = 4 * (META["nparams"] + 5)
B, G = META["batch"], META["global_batch"]


def per_step(e):
    return e["seconds"] / e["steps"], e["allreduce_seconds"] / e["steps"]


compute = {}  # per-rank batch -> compute seconds per step at one rank
for bsz in sorted({B} | {G // n for n in [1] + RANKS}):
    e = epoch(f"tr-1-b{bsz}.json")
    if e:
        compute[bsz] = per_step(e)[0]

say("### The trainer: measured and predicted\n")
say(f"784-256-128-10 ({META['nparams']} parameters, {GRAD / 1e6:.2f} MB of gradients in "
    f"{len(buckets(GRAD, BUCKET))} buckets of {BUCKET // 1024} KiB), `--threads 1`, the "
    f"median epoch. Compute per step is measured at 1 rank (no "
    f"communication, one core); the prediction adds the binomial model's allreduce time "
    f"for the buckets (what libnbc runs for an in-place `MPI_Iallreduce`), with no "
    f"overlap: an upper bound on the exposed time. 'compute at n' is the measured step "
    f"minus the measured allreduce, rank 0's own work; with {META['cores']} cores for n "
    f"ranks the ranks drift apart, and rank 0's wait for the slowest one is counted in "
    f"its allreduce time.\n")
scal = {}  # (mode, link) -> [(n, measured samples/s, predicted samples/s)]
arstep = {}  # link -> [(n, measured allreduce s/step, predicted)] of the weak runs
for mode in ("weak", "strong"):
    say(f"**{mode.capitalize()} scaling** ("
        + (f"batch {B} per rank" if mode == "weak" else f"global batch {G}, {G}/n per rank")
        + "):\n")
    say("| link | ranks | step | compute at n | compute at 1 rank | allreduce measured | "
        "allreduce predicted | samples/s | predicted | efficiency | predicted |")
    say("|---|---|---|---|---|---|---|---|---|---|---|")
    base = epoch(f"tr-1-b{B if mode == 'weak' else G}.json")
    if not base:
        continue
    s1 = base["samples_per_s"]
    for link in LINKS:
        if link not in params:
            continue
        a, b, _ = params[link]
        rows = [(1, s1, s1)]
        for n in RANKS:
            e = epoch(f"tr-{link}-{n}-{mode}.json")
            if not e:
                continue
            bsz = B if mode == "weak" else G // n
            step, ar = per_step(e)
            tc = compute.get(bsz, float("nan"))
            ar_pred = sum(binomial(n, s, a, b) for s in buckets(GRAD, BUCKET))
            pred = n * bsz / (tc + ar_pred)
            ideal = n * s1 if mode == "weak" else n * s1
            rows.append((n, e["samples_per_s"], pred))
            if mode == "weak":
                arstep.setdefault(link, []).append((n, ar * 1e3, ar_pred * 1e3))
            say(f"| {META['link_names'][link]} | {n} | {step * 1e3:.2f} ms | "
                f"{(step - ar) * 1e3:.2f} ms | {tc * 1e3:.2f} ms | {ar * 1e3:.2f} ms | "
                f"{ar_pred * 1e3:.2f} ms | {e['samples_per_s']:.0f} | {pred:.0f} | "
                f"{e['samples_per_s'] / ideal:.2f} | {pred / ideal:.2f} |")
        scal[(mode, link)] = rows
    say()

ringrun = {n: epoch(f"tr-ringlink-{n}-weak.json") for n in RANKS}
if any(ringrun.values()):
    link = META["ring_link"]
    say(f"**The same weak runs at {META['link_names'][link]} with libnbc's ring "
        f"(`--mca coll_libnbc_iallreduce_algorithm 1`)** instead of its in-place default:\n")
    say("| ranks | allreduce measured (default) | with ring | ring predicted | "
        "samples/s (default) | with ring |")
    say("|---|---|---|---|---|---|")
    a, b, _ = params.get(link, (0, 0, 0))
    for n in RANKS:
        d, r = epoch(f"tr-{link}-{n}-weak.json"), ringrun[n]
        if not (d and r):
            continue
        say(f"| {n} | {per_step(d)[1] * 1e3:.2f} ms | {per_step(r)[1] * 1e3:.2f} ms | "
            f"{sum(ring(n, s, a, b) for s in buckets(GRAD, BUCKET)) * 1e3:.2f} ms | "
            f"{d['samples_per_s']:.0f} | {r['samples_per_s']:.0f} |")
    say()

# ---- projection -----------------------------------------------------------
P = META["projection"]
a100, b100 = P["alpha"], 8 / P["gbit"] / 1e9
tc_mlp = compute.get(B, float("nan"))
models = {
    "MLP": (GRAD, tc_mlp),
    "100M": (4 * 100_000_000, 6 * 100_000_000 * P["big_tokens"] / P["big_flops"]),
}
BW_FRAC = 2 / 3  # backward's share of a step's compute, what overlap can hide


def step_time(model, n, algo, bucket, overlap):
    grad, tc = models[model]
    parts = buckets(grad, bucket) if bucket else [grad]
    comm = sum(algo(n, s, a100, b100) for s in parts)
    if not overlap:
        return tc + comm, comm
    # communication runs under backward; the last bucket cannot
    last = algo(n, parts[-1], a100, b100)
    return tc + max(last, comm - BW_FRAC * tc), comm


def crossover(model, algo, bucket):
    tc = models[model][1]
    for n in range(2, 1 << 16):
        if sum(algo(n, s, a100, b100) for s in
               (buckets(models[model][0], bucket) if bucket else [models[model][0]])) >= tc:
            return n
    return None


say(f"### Projection: {P['gbit']} Gbit/s links, alpha = {a100 * 1e6:.0f} us\n")
say(f"MLP: {GRAD / 1e6:.2f} MB of gradients, {tc_mlp * 1e3:.2f} ms of compute per step "
    f"(batch {B}, measured above at 1 rank). 100M: 400 MB of fp32 gradients, "
    f"{models['100M'][1] * 1e3:.0f} ms of compute per step (6 FLOPs per parameter and "
    f"token, {P['big_tokens']} tokens per rank and step, {P['big_flops'] / 1e12:.0f} "
    f"TFLOP/s sustained: a transformer on one accelerator). Weak scaling; efficiency = compute / "
    f"step. 'overlap' hides communication under backward ({BW_FRAC:.0%} of the compute) "
    f"except the last bucket's.\n")
say("| model | allreduce, buckets | ranks | comm per step | step, no overlap | "
    "efficiency | step, overlap | efficiency |")
say("|---|---|---|---|---|---|---|---|")
setups = [
    ("ring, 1 bucket", ring, 0),
    ("ring, 256 KiB", ring, 256 << 10),
    ("ring, 25 MiB", ring, 25 << 20),
    ("binomial (libnbc in place), 256 KiB", binomial, 256 << 10),
    ("Rabenseifner, 256 KiB", rabenseifner, 256 << 10),
    ("Rabenseifner, 25 MiB", rabenseifner, 25 << 20),
]
proj_plot = {}
for model in models:
    for label, algo, bucket in setups:
        if model == "MLP" and bucket == 25 << 20:
            continue
        for n in P["ranks"]:
            s0, comm = step_time(model, n, algo, bucket, False)
            s1, _ = step_time(model, n, algo, bucket, True)
            tc = models[model][1]
            say(f"| {model} | {label} | {n} | {comm * 1e3:.3g} ms | {s0 * 1e3:.3g} ms | "
                f"{tc / s0:.2f} | {s1 * 1e3:.3g} ms | {tc / s1:.2f} |")
        proj_plot[(model, label)] = [
            (n, models[model][1] / step_time(model, n, algo, bucket, True)[0])
            for n in [2 ** k for k in range(1, 11)]]
say()
say("Rank count where communication per step overtakes computation:\n")
say("| model | " + " | ".join(l for l, _, _ in setups) + " |")
say("|---|" + "---|" * len(setups))
for model in models:
    cells = []
    for label, algo, bucket in setups:
        if model == "MLP" and bucket == 25 << 20:
            cells.append("-")
            continue
        c = crossover(model, algo, bucket)
        cells.append(str(c) if c else "> 65535")
    say(f"| {model} | " + " | ".join(cells) + " |")
say()

text = "\n".join(out) + "\n"
open(os.path.join(W, "tables.md"), "w").write(text)
print(text)

# ---- plots ------------------------------------------------------------------
def dat(name, rows):
    path = os.path.join(W, name)
    with open(path, "w") as f:
        for r in rows:
            f.write(" ".join(str(x) for x in r) + "\n")
    return path


gp = ["set terminal pngcairo size 1500,450 font ',10'", "set logscale xy",
      f"set output '{OUT}/scaling-allreduce.png'", "set multiplot layout 1,%d" % len(params),
      "set xlabel 'message size (bytes)'", "set ylabel 'seconds per allreduce'",
      "set format x '%.0b%B'", "set format y '%g'",
      "set key top left", "set grid"]
colors = {2: "#1b9e77", 4: "#d95f02", 8: "#7570b3"}
for link, (a, b, _) in params.items():
    plots = []
    for n in RANKS:
        m = dat(f"ar-{link}-{n}.dat", [(r["bytes"], r["seconds"]) for r in
                                        jlines(f"ar-{link}-{n}-ring.json")])
        i = dat(f"ari-{link}-{n}.dat", [(r["bytes"], r["seconds"]) for r in
                                         jlines(f"ar-{link}-{n}-inplace.json")])
        p = dat(f"arp-{link}-{n}.dat", [(s, ring(n, s, a, b)) for s in
                                         [4096 * 2 ** k for k in range(15)]])
        c = colors.get(n, "black")
        plots += [f"'{m}' w p pt 7 lc rgb '{c}' t '{n} ranks, ring'",
                  f"'{i}' w p pt 4 lc rgb '{c}' t '{n}, in place (libnbc)'",
                  f"'{p}' w l lc rgb '{c}' t '{n}, ring model'"]
    gp.append(f"set title '{META['link_names'][link]}'")
    gp.append("plot " + ", ".join(plots))
gp.append("unset multiplot")

gp += ["set terminal pngcairo size 1500,450 font ',10'",
       f"set output '{OUT}/scaling-trainer.png'", "set multiplot layout 1,3",
       "unset logscale", "set logscale x 2", "set xlabel 'ranks'", "set ylabel 'samples/s'",
       "set key top left", "set format x '%g'", "set format y '%g'"]
lc = ["#1b9e77", "#d95f02", "#7570b3"]
for mode in ("weak", "strong"):
    plots = []
    for k, link in enumerate(LINKS):
        rows = scal.get((mode, link))
        if not rows:
            continue
        d = dat(f"sc-{mode}-{link}.dat", rows)
        plots += [f"'{d}' u 1:2 w lp pt 7 lc rgb '{lc[k % 3]}' t '{META['link_names'][link]} measured'",
                  f"'{d}' u 1:3 w l dt 2 lc rgb '{lc[k % 3]}' t 'predicted'"]
    gp.append(f"set title '{mode} scaling ({META['cores']} cores shared by all ranks)'")
    if plots:
        gp.append("plot " + ", ".join(plots))
plots = []
for k, link in enumerate(LINKS):
    if arstep.get(link):
        d = dat(f"arstep-{link}.dat", arstep[link])
        plots += [f"'{d}' u 1:2 w lp pt 7 lc rgb '{lc[k % 3]}' t '{META['link_names'][link]} measured'",
                  f"'{d}' u 1:3 w l dt 2 lc rgb '{lc[k % 3]}' t 'predicted (binomial, no overlap)'"]
gp += ["set title 'allreduce time per step (weak runs)'", "set ylabel 'ms per step'"]
if plots:
    gp.append("plot " + ", ".join(plots))
gp.append("unset multiplot")

gp += ["set terminal pngcairo size 1200,520 font ',10'",
       f"set output '{OUT}/scaling-projection.png'", "set multiplot layout 1,2",
       "set logscale x 2", "unset logscale y", "set yrange [0:1.05]", "set xlabel 'ranks'",
       "set ylabel 'efficiency (compute / step)'", "set key below"]
palette = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#a6761d"]
for model in models:
    plots = []
    for k, (label, _, _) in enumerate(setups):
        rows = proj_plot.get((model, label))
        if rows:
            d = dat(f"proj-{model}-{k}.dat", rows)
            plots.append(f"'{d}' w lp pt {k + 4} lc rgb '{palette[k]}' t '{label}'")
    gp.append(f"set title '{model}, {P['gbit']} Gbit/s, overlapped, projected'")
    gp.append("plot " + ", ".join(plots))
gp.append("unset multiplot")
open(os.path.join(W, "plots.gp"), "w").write("\n".join(gp) + "\n")
subprocess.run(["gnuplot", os.path.join(W, "plots.gp")], check=True)
