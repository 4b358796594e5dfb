#!/usr/bin/env python3
"""parallelism_report.py — bench/parallelism.sh's figures: tables (printed,
and in BENCH_DIR/tables.md) and gnuplot PNGs in OUT. Part c's table sets
each point's samples/s beside what bench/parallelism_model.py's step()
predicts for it with this machine's constants from the same run (the
one-rank reference runs ref-MODEL-i.json for F, the 2-rank allreduce
sweep ar-LINK.json for each link's alpha and beta; the constants printed
above the table, with where each came from).

Usage: parallelism_report.py BENCH_DIR OUT LOAD_BEFORE LOAD_AFTER "MS"
"""
import glob
import json
import os
import statistics
import subprocess
import sys

import parallelism_model


def last(path):
    with open(path) as f:
        return json.loads(f.read().splitlines()[-1])


def runs(w, name):
    """The last metrics line of each repeat of run NAME."""
    return [last(p) for p in sorted(glob.glob(os.path.join(w, name + "-*.json")))]


def median(rs, key):
    v = [r[key] for r in rs if r.get(key) is not None]
    return statistics.median(v) if v else float("nan")


def mib(b):
    return b / (1 << 20)


def bubble_table(w, ms, lines):
    """Part a: the measured bubble against (P - 1) / (M + P - 1) at P = 2."""
    P = 2
    dp = runs(w, "bubble-dp")
    lines.append("## a. The bubble at P = 2 (two 512x512 layers a stage)\n")
    lines.append("| M | theory | gpipe | 1f1b | gpipe samples/s | 1f1b samples/s | eager-1f1b | "
                 "eager-1f1b samples/s |")
    lines.append("|---|--------|-------|------|-----------------|----------------|------------|"
                 "----------------------|")
    data = []
    for m in ms:
        th = (P - 1) / (m + P - 1)
        g, o, e = (runs(w, "bubble-%s-%d" % (s, m)) for s in ("gpipe", "1f1b", "eager-1f1b"))
        row = (m, th, median(g, "bubble"), median(o, "bubble"), median(g, "samples_per_s"),
               median(o, "samples_per_s"))
        data.append(row)
        lines.append("| %d | %.3f | %.3f | %.3f | %.0f | %.0f | %.3f | %.0f |"
                     % (row + (median(e, "bubble"), median(e, "samples_per_s"))))
    if dp:
        lines.append("\nOne rank, the whole model (no pipeline): %.0f samples/s.\n"
                     % median(dp, "samples_per_s"))
    with open(os.path.join(w, "bubble.dat"), "w") as f:
        for row in data:
            f.write("%d %.6f %.6f %.6f\n" % row[:4])
    return [row for row in data if row[2] == row[2] or row[3] == row[3]]  # measured (not NaN)


def memory_table(w, lines):
    """Part b: planned and peak bytes a rank, by schedule."""
    lines.append("## b. Memory a rank: planned (what the schedule keeps) and peak (VmHWM)\n")
    lines.append("| run | planned MiB, rank by rank | peak MiB, rank by rank |")
    lines.append("|-----|---------------------------|------------------------|")
    names = ["mem-dp"] + ["mem-p%d-%s" % (p, s) for p in (2, 4)
                          for s in ("sequential", "gpipe", "1f1b", "eager-1f1b")]
    rows = []
    for n in names:
        rs = runs(w, n)
        if not rs:
            continue
        planned = rs[0]["planned_bytes"]
        peak = [statistics.median(r["peak_bytes"][i] for r in rs) for i in range(len(planned))]
        rows.append((n, planned, peak))
        lines.append("| %s | %s | %s |" % (n[4:], " ".join("%.1f" % mib(b) for b in planned),
                                           " ".join("%.1f" % mib(b) for b in peak)))
    with open(os.path.join(w, "memory.dat"), "w") as f:
        for i, (n, planned, peak) in enumerate(rows):
            f.write('%d "%s" %.3f %.3f\n' % (i, n[4:], mib(max(planned)), mib(max(peak))))
    return rows


def layout_table(w, lines):
    """Part c: the layouts on 4 namespace hosts, where measured, beside
    what parallelism_model.step() predicts with this run's constants"""
    files = glob.glob(os.path.join(w, "lay-*.json"))
    if not files:
        return None
    keys = sorted({os.path.basename(p).rsplit("-", 1)[0] for p in files})
    points = [k.split("-", 3)[1:] for k in keys]
    order = ["none", "10gbit", "1gbit"]
    links = sorted({p[0] for p in points}, key=lambda l: (l not in order, order.index(l) if l in order else 0, l))
    models = sorted({p[1] for p in points})
    cores = os.cpu_count()
    lines.append("\n## c. Layouts on 4 hosts (one slot each)\n")
    lines += parallelism_model.constants_lines(w, links, models, cores)
    lines.append("\n| link | model | layout | samples/s | predicted | measured/predicted | "
                 "pipeline B/step | tensor B/step | data B/step | planned MiB a rank (most) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    got_at = {}
    for k, (link, model, layout) in zip(keys, points):
        rs = [r for r in (parallelism_model.last_json(p) for p in
                          sorted(glob.glob(os.path.join(w, k + "-*.json")))) if r]
        if not rs:
            lines.append("| %s | %s | %s | refused or failed | | | | | | |" % (link, model, layout))
            continue
        got = median(rs, "samples_per_s")
        pred = parallelism_model.predict(w, link, model, layout, cores)
        got_at[link, model, layout] = (got, pred)
        lines.append("| %s | %s | %s | %.0f | %s | %s | %.0f | %.0f | %.0f | %.1f |" % (
            link, model, layout, got, "%.0f" % pred if pred else "-",
            "%.2f" % (got / pred) if pred else "-",
            median(rs, "pipeline_bytes_per_step") if "layout" in rs[0] else 0,
            median(rs, "tensor_bytes_per_step") if "layout" in rs[0] else 0,
            median(rs, "data_bytes_per_step") if "layout" in rs[0] else median(rs, "bytes_per_step"),
            mib(max(rs[0]["planned_bytes"]))))
    return layout_data(w, got_at, links, models, sorted({p[2] for p in points}))


def layout_data(w, got_at, links, models, layouts):
    """Part c's plot data: layouts-MODEL.dat (a layout a row, its samples/s
    on each link, ? where refused) and model-check.dat (predicted and
    measured samples/s, a point a row, and whether it is a pipeline);
    returns the models and links plotted."""
    for model in models:
        with open(os.path.join(w, "layouts-%s.dat" % model), "w") as f:
            f.write("layout %s\n" % " ".join(links))
            for layout in layouts:
                f.write("%s %s\n" % (layout, " ".join(
                    "%.1f" % got_at[l, model, layout][0] if (l, model, layout) in got_at else "?"
                    for l in links)))
    with open(os.path.join(w, "model-check.dat"), "w") as f:
        for (link, model, layout), (got, pred) in sorted(got_at.items()):
            if pred:
                f.write("%.1f %.1f %d # %s %s %s\n" % (pred, got, "P" in layout, link, model,
                                                       layout))
    return models, links


BUBBLE_PLOT = """set output '%(out)s/parallelism-bubble.png'
set title 'Pipeline bubble at P = 2: measured against (P - 1) / (M + P - 1)'
set xlabel 'microbatches M'
set ylabel 'idle share of the schedule'
set yrange [0:*]
set key top right
plot '%(w)s/bubble.dat' using 1:2 with lines lw 2 title 'GPipe formula', \\
     '' using 1:3 with linespoints title 'gpipe, measured', \\
     '' using 1:4 with linespoints title '1f1b, measured'
"""

MEMORY_PLOT = """set output '%(out)s/parallelism-memory.png'
set title 'Memory of the most loaded rank (--synthetic=1024, 7 x 1024 hidden, batch 512)'
set xlabel ''
set ylabel 'MiB'
set style data histograms
set style fill solid 0.6
set boxwidth 0.8
set xtics rotate by -30
plot '%(w)s/memory.dat' using 3:xtic(2) title 'planned', '' using 4 title 'peak (VmHWM)'
"""


def layout_plots(w, out, layouts):
    """Part c's two PNGs (gnuplot text): samples/s of each layout on each
    link, a panel a model; measured against predicted, every point"""
    if not layouts:
        return ""
    models, links = layouts
    text = ["set output '%s/parallelism-layouts.png'" % out,
            "set terminal pngcairo size 1200,420",
            "set multiplot layout 1,%d title 'Layouts on 4 namespace hosts of one slot "
            "(2 cores shared): samples/s, medians'" % len(models),
            "set style data histograms", "set style histogram clustered gap 1",
            "set style fill solid 0.7", "set datafile missing '?'",
            "set key top center horizontal", "set offsets 0, 0, graph 0.12, 0",
            "set xtics rotate by -30", "set yrange [0:*]", "unset xlabel"]
    for model in models:
        d = os.path.join(w, "layouts-%s.dat" % model)
        text.append("set title '%s'" % model)
        text.append("plot " + ", ".join(
            "'%s' using %d:xtic(1) title columnheader(%d)" % (d, i + 2, i + 2)
            for i in range(len(links))))
    text += ["unset multiplot", "set terminal pngcairo size 800,500 noenhanced",
             "set offsets 0, 0, 0, 0",
             "set output '%s/parallelism-model-check.png'" % out,
             "set style data points", "set logscale xy", "set xtics norotate",
             "set yrange [*:*]", "set title 'parallelism_model.py step(): measured "
             "against predicted, every point of part c'",
             "set xlabel 'predicted samples/s'", "set ylabel 'measured samples/s'",
             "set key top left",
             "plot '%s/model-check.dat' using 1:($3 > 0 ? $2 : 1/0) pt 7 title 'pipelines "
             "(P > 1)', '' using 1:($3 > 0 ? 1/0 : $2) pt 6 title 'D and T only', "
             "x lw 1 title 'measured = predicted', 0.85 * x dt 2 title '0.85 (the aim, "
             "pipelines)'" % w, "unset logscale"]
    return "\n".join(text) + "\n"


def plot(w, out, bubble_rows, memory_rows, layouts=None):
    """The PNGs of the parts that were run (gnuplot refuses an empty data
    file: "x range is invalid"); none when none was."""
    plots = [text for text, rows in ((BUBBLE_PLOT, bubble_rows), (MEMORY_PLOT, memory_rows))
             if rows]
    extra = layout_plots(w, out, layouts)
    if not plots and not extra:
        return
    gp = os.path.join(w, "plots.gp")
    with open(gp, "w") as f:
        f.write("set terminal pngcairo size 800,500\n")
        for text in plots:
            f.write(text % {"out": out, "w": w})
        f.write(extra)
    try:
        subprocess.run(["gnuplot", gp], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("plot: gnuplot failed: %s" % e, file=sys.stderr)


def main():
    w, out, before, after, ms = sys.argv[1:6]
    ms = [int(m) for m in ms.split()]
    lines = ["Load average before: %s, after: %s (%d cores)\n" % (before, after, os.cpu_count())]
    bubble_rows = bubble_table(w, ms, lines)
    memory_rows = memory_table(w, lines)
    layouts = layout_table(w, lines)
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(w, "tables.md"), "w") as f:
        f.write(text)
    plot(w, out, bubble_rows, memory_rows, layouts)


if __name__ == "__main__":
    main()
