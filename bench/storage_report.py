"""storage_report.py — the tables and bar charts of bench/storage.sh, from
its results file (one tab-separated line per measurement: workload, order,
storage, link, median, first run or epoch, a note (the trainer's data
wait, the loader's route), every run).

Prints Markdown: the loader's GB/s and the trainer's samples/s for every
storage kind and link, each against the local disk (warm), S3 against the
link's curl ceiling and against s3fs; what was not measured and why. Draws
OUT/storage-loader.png and OUT/storage-trainer.png with gnuplot: each
storage kind's throughput relative to the local disk (warm).

Usage: python3 storage_report.py RESULTS.tsv OUT_DIR
"""
import os
import subprocess
import sys

KINDS = ["local-warm", "local-cold", "sshfs", "s3", "s3-cache", "s3fs", "tfdata",
         "tfdata-par", "synthetic"]
LINKS = ["local", "none", "10gbit", "1gbit"]
LOADER = [("loader-4k", "none", "4 KiB, shard order"), ("loader-4k", "global", "4 KiB, global shuffle"),
          ("loader-fm", "buffer", "Fashion-MNIST decoded")]


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def load(path):
    rows, missing = {}, []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 8:
            continue
        wl, order, st, link, med, first, note, runs = f[:8]
        if runs.startswith("not measured"):
            missing.append((wl, st, link, runs))
            continue
        rows[wl, order, st, link] = dict(med=num(med), first=num(first), note=note, runs=runs)
    return rows, missing


def fmt(v, f="%.3f"):
    return "n/a" if v is None else f % v


def ratio(a, b):
    return None if a is None or not b else a / b


def order_keys(rows, wl_filter):
    keys = sorted({(k[2], k[3]) for k in rows if k[0] in wl_filter},
                  key=lambda sl: (LINKS.index(sl[1]) if sl[1] in LINKS else 9,
                                  KINDS.index(sl[0]) if sl[0] in KINDS else 99))
    return keys


def loader_table(rows, out):
    base = {(wl, o): rows.get((wl, o, "local-warm", "local"), {}).get("med") for wl, o, _ in LOADER}
    ceil = {link: rows.get(("ceiling", "none", "curl-16", link), {}).get("med") for link in LINKS}
    out.append("| storage | link | " + " | ".join(f"{t} GB/s (x local warm)" for _, _, t in LOADER)
               + " | shard order: of curl-16 | x s3fs (order, global) | route (each column) |")
    out.append("|---|---|" + "---|" * (len(LOADER) + 3))
    for st, link in order_keys(rows, {"loader-4k", "loader-fm"}):
        cells = []
        for wl, o, _ in LOADER:
            r = rows.get((wl, o, st, link))
            if r is None:
                cells.append("")
                continue
            if r["med"] is None:  # no run gave a figure: say what they gave
                cells.append(" ".join(sorted(set(r["runs"].split()))) + f" (x{len(r['runs'].split())})")
                continue
            c = f"{fmt(r['med'])} ({fmt(ratio(r['med'], base[wl, o]), '%.2f')})"
            if r["first"] is not None:
                c += f", first run {fmt(r['first'])}"
            cells.append(c)
        r = rows.get(("loader-4k", "none", st, link))
        of_ceil = fmt(ratio(r["med"], ceil.get(link)), "%.2f") if r and link != "local" and st in ("s3", "s3fs", "tfdata", "tfdata-par") else ""
        vs = ""
        if st == "s3":
            vs = ", ".join(fmt(ratio(rows.get(("loader-4k", o, st, link), {}).get("med"),
                                     rows.get(("loader-4k", o, "s3fs", link), {}).get("med")), "%.2f")
                           for o in ("none", "global"))
        route = " / ".join(rows.get((wl, o, st, link), {}).get("note", "") for wl, o, _ in LOADER)
        out.append(f"| {st} | {link} | " + " | ".join(cells) + f" | {of_ceil} | {vs} | {route} |")


def later_table(rows, out):
    """Epochs 2+ of one 3-epoch process: the shard cache against the local disk."""
    base = rows.get(("loader-4k-later", "none", "local-warm", "local"), {}).get("med")
    out.append("| storage | link | GB/s, epochs 2+ of one process | x local warm |")
    out.append("|---|---|---|---|")
    for st, link in order_keys(rows, {"loader-4k-later"}):
        r = rows[("loader-4k-later", "none", st, link)]
        out.append(f"| {st} | {link} | {fmt(r['med'])} | {fmt(ratio(r['med'], base), '%.2f')} |")


def trainer_table(rows, out):
    base = rows.get(("trainer", "buffer", "local-warm", "local"), {}).get("med")
    out.append("| storage | link | samples/s, epochs 2+ | x local warm | epoch 1 | data wait, epochs 2+ "
               "| every run's epochs |")
    out.append("|---|---|---|---|---|---|---|")
    for st, link in order_keys(rows, {"trainer"}):
        r = rows[("trainer", "buffer", st, link)]
        out.append(f"| {st} | {link} | {fmt(r['med'], '%.0f')} | {fmt(ratio(r['med'], base), '%.2f')} "
                   f"| {fmt(r['first'], '%.0f')} | {r['note']} | {r['runs']} |")


def ceiling_table(rows, out):
    out.append("| link | curl, 1 GET GB/s | curl, 16 ranged GETs GB/s | every run (1 GET; 16) |")
    out.append("|---|---|---|---|")
    for link in LINKS:
        a, b = rows.get(("ceiling", "none", "curl-1", link)), rows.get(("ceiling", "none", "curl-16", link))
        if a or b:
            out.append(f"| {link} | {fmt(a and a['med'])} | {fmt(b and b['med'])} "
                       f"| {a['runs'] if a else ''}; {b['runs'] if b else ''} |")


def plot(rows, outdir, name, series, title, ylabel, log=False):
    """series: [(workload, order, label)]; one cluster per storage kind and
    link, one bar per series, each relative to local-warm; log: a
    logarithmic axis (the loader's ratios span 0.01 to 1)"""
    keys = order_keys(rows, {s[0] for s in series})
    if not keys or not any(("local-warm", "local") == k for k in keys):
        print(f"{name}: no local-warm figures to relate to (KINDS without local): no plot")
        return None
    dat = os.path.join(outdir, f".{name}.dat")
    with open(dat, "w") as f:
        for st, link in keys:
            vals = []
            for wl, o, _ in series:
                base = rows.get((wl, o, "local-warm", "local"), {}).get("med")
                v = ratio(rows.get((wl, o, st, link), {}).get("med"), base)
                vals.append("?" if v is None else "%.4f" % v)
            f.write(f'"{st}\\n{link}" ' + " ".join(vals) + "\n")
    png = os.path.join(outdir, f"{name}.png")
    g = ["set terminal pngcairo size 1300,520 font ',10'", f"set output '{png}'",
         f"set title '{title}'", f"set ylabel '{ylabel}'", "set style data histograms",
         "set style histogram clustered gap 1", "set style fill solid 0.8 border -1",
         "set boxwidth 0.9",
         "set logscale y; set yrange [0.005:2]" if log else "set yrange [0:*]; set offsets 0, 0, graph 0.08, 0", "set grid ytics", "set key top right opaque",
         "set datafile missing '?'", "set xtics nomirror", "set bmargin 5",
         "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2",
         "plot " + ", ".join(f"'{dat}' using {i + 2}:xtic(1) title '{s[2]}'"
                             for i, s in enumerate(series))]
    gp = dat + ".gp"
    open(gp, "w").write("\n".join(g) + "\n")
    try:
        subprocess.run(["gnuplot", gp], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"plot {png}: gnuplot failed: {e}", file=sys.stderr)
        return None
    finally:
        os.remove(gp)
        os.remove(dat)
    return png


def main():
    rows, missing = load(sys.argv[1])
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    out = ["### The loader (recordio-bench), GB/s of shard bytes, median of the runs", ""]
    loader_table(rows, out)
    out += ["", "### The loader's epochs after the first (4 KiB, shard order, one process of 3 epochs)", ""]
    later_table(rows, out)
    out += ["", "### The trainer (recordio-train, 1 rank, --cache off), samples/s", ""]
    trainer_table(rows, out)
    out += ["", "### The link's ceiling (curl, SeaweedFS on the namespace host)", ""]
    ceiling_table(rows, out)
    if missing:
        out += ["", "### Not measured", ""]
        out += [f"- {wl} from {st} ({link}): {why[len('not measured: '):]}" for wl, st, link, why in missing]
    print("\n".join(out))
    for png in (plot(rows, outdir, "storage-loader", LOADER,
                     "recordio-bench: throughput relative to the local disk (warm)", "x local disk, warm (log scale)",
                     log=True),
                plot(rows, outdir, "storage-trainer", [("trainer", "buffer", "samples/s, epochs 2+")],
                     "recordio-train: samples/s relative to the local disk (warm)", "x local disk, warm")):
        if png:
            print(f"\nplot: {png}")


if __name__ == "__main__":
    main()
