#!/usr/bin/env python3
"""consistency_report.py — the tables and plots of bench/consistency.sh.

Reads DIR/SLOWNESS-SETTING.json (recordio-train --metrics with --eval-every:
one line per epoch, one {"snapshot": true, ...} line per copy evaluated),
prints per slowness a table (samples/s, time and updates to 0.85 test
accuracy, accuracy at the wall-clock budget, final accuracy, staleness,
dropped gradients) and the bytes a step moves, and draws test loss against
updates and against seconds with gnuplot (one panel per slowness).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

TARGET = 0.85
WORKERS = 4
NAMES = {"allreduce": "allreduce", "k0": "K=0", "k0b1": "K=0 B=1", "k1": "K=1",
         "k2": "K=2", "k4": "K=4", "k8": "K=8", "kinf": "K=inf"}


def load(path):
    epochs, snaps = [], []
    try:
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                (snaps if d.get("snapshot") else epochs).append(d)
    except OSError:
        return None
    return epochs, snaps


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--slowness", required=True)
    ap.add_argument("--settings", required=True)
    ap.add_argument("--budget", type=float)
    ap.add_argument("--plot-dir")
    a = ap.parse_args()
    slownesses, settings = a.slowness.split(), a.settings.split()
    runs = {}
    for slow in slownesses:
        for s in settings:
            r = load(os.path.join(a.dir, "%s-%s.json" % (slow, s)))
            if r and r[0]:
                runs[slow, s] = r
    budget = a.budget
    if budget is None and runs:
        budget = statistics.median(r[0][-1]["wall_seconds"] for r in runs.values())
    params = None
    for slow in slownesses:
        print("\n== %s: worker 0 %s" % (slow, {"none": "at full speed", "2x": "2x slower",
              "4x": "4x slower", "random": "and every worker 4x slower with p = 0.1 a step"}[slow]))
        print("%-10s %9s %9s %9s %9s %9s %9s %10s %8s" % (
            "setting", "samples/s", "to 0.85 s", "updates", "acc@%.0fs" % (budget or 0),
            "final acc", "stale max", "stale mean", "dropped"))
        for s in settings:
            if (slow, s) not in runs:
                print("%-10s (no run)" % NAMES[s])
                continue
            epochs, snaps = runs[slow, s]
            sps = statistics.median(e["samples_per_s"] for e in epochs)
            hit = next((p for p in snaps if p["test_accuracy"] >= TARGET), None)
            within = [p for p in snaps if budget is not None and p["wall_seconds"] <= budget]
            at_budget = within[-1]["test_accuracy"] if within else None
            smax = max(e.get("staleness_max", 0) for e in epochs)
            grads = sum(e.get("gradients", 0) for e in epochs)
            smean = (sum(e.get("staleness_mean", 0) * e.get("gradients", 0) for e in epochs) /
                     grads if grads else 0)
            dropped = sum(e.get("dropped_gradients", 0) for e in epochs)
            print("%-10s %9.0f %9s %9s %9s %9.4f %9d %10.2f %8d" % (
                NAMES[s], sps, fmt(hit and hit["wall_seconds"], ".2f"),
                fmt(hit and hit["gradients"] // WORKERS, "d"), fmt(at_budget, ".4f"),
                epochs[-1]["test_accuracy"], smax, smean, dropped))
    if budget is not None:
        print("\nacc@: the accuracy of the last copy within %.1f s of training" % budget)
    # bytes per step, from the model's size
    p = 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10
    mb = p * 4 / 1e6
    print("\n== bytes a step moves (%d parameters, %.2f MB of float32), %d workers" %
          (p, mb, WORKERS))
    print("ring allreduce: each rank sends and receives 2(W-1)/W x P = %.2f MB" %
          (2 * (WORKERS - 1) / WORKERS * mb))
    print("parameter server: each worker pushes P and pulls P = %.2f MB; the server's link "
          "carries 2 W P = %.2f MB (%.1fx a ring rank's)" %
          (2 * mb, 2 * WORKERS * mb, 2 * WORKERS / (2 * (WORKERS - 1) / WORKERS)))
    if a.plot_dir:
        plot(a, runs, slownesses, settings)


def plot(a, runs, slownesses, settings):
    data = os.path.join(a.dir, "plot")
    os.makedirs(data, exist_ok=True)
    for (slow, s), (epochs, snaps) in runs.items():
        with open(os.path.join(data, "%s-%s.dat" % (slow, s)), "w") as f:
            for p in snaps:
                f.write("%g %g %g\n" % (p["gradients"] / WORKERS, p["wall_seconds"],
                                        p["test_loss"] if p["test_loss"] is not None else 1e9))
    for axis, col, label, name in (("updates", 1, "updates (gradients applied / 4 workers)",
                                    "consistency-updates.png"),
                                   ("seconds", 2, "training seconds (evaluation off the clock)",
                                    "consistency-seconds.png")):
        g = ["set terminal pngcairo size 1400,1000 font ',10'",
             "set output '%s'" % os.path.join(a.plot_dir, name),
             "set multiplot layout 2,2 title 'Fashion-MNIST, 4 workers: test loss against %s'"
             % axis, "set yrange [0.3:1.0]", "set grid", "set key top right"]
        for slow in slownesses:
            g += ["set title 'straggler: %s'" % slow, "set xlabel '%s'" % label,
                  "set ylabel 'test loss'"]
            curves = []
            for s in settings:
                path = os.path.join(data, "%s-%s.dat" % (slow, s))
                if os.path.exists(path) and os.path.getsize(path):
                    curves.append("'%s' using %d:3 with lines lw 2 title '%s'" %
                                  (path, col, NAMES[s]))
            g.append("plot " + ", ".join(curves) if curves else "plot 0 notitle")
        g.append("unset multiplot")
        script = os.path.join(data, axis + ".gp")
        with open(script, "w") as f:
            f.write("\n".join(g) + "\n")
        try:
            subprocess.run(["gnuplot", script], check=True)
            print("plot: %s" % os.path.join(a.plot_dir, name))
        except (OSError, subprocess.CalledProcessError) as e:
            print("plot: gnuplot failed (%s); the data is in %s" % (e, data), file=sys.stderr)


if __name__ == "__main__":
    main()
