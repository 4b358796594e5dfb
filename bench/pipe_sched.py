#!/usr/bin/env python3
"""pipe_sched.py — what else ran on each pipeline rank's core while it
computed: reads a P = 2 pipeline's timelines (RIO_PIPE_TRACE=PREFIX,
trainer/pipe_trace.h) beside the kernel's context switches of the same run
(`perf record -k CLOCK_MONOTONIC -e sched:sched_switch -a`, then
`perf script -F cpu,time,trace`: the same clock as the timelines), and
says, for each rank:

  - its forwards' and backwards' medians (ms) as the timeline has them,
    and net of the time other tasks held its core inside them;
  - the share of its compute time that other tasks took, and those tasks
    (name and pid, the most first);
  - the bubble with the net compute times: the least any schedule has
    (bench/pipe_trace.py's least()) and the formula's;
  - with STAT (each CPU's /proc/stat line before the run, then after):
    the share of the run's time the hypervisor took from each CPU (steal:
    the virtual CPU runnable but not running).

Stages that cost the same and differ in their measured compute times
(bench/parallelism.sh part a, doc/parallelism.md) differ here in the share
taken by other tasks if those are the cause; where the net times differ
too, the cause is on the rank's core itself (its own threads are listed
among the others by their pid) or below the kernel (the hypervisor).

Usage: bench/pipe_sched.py PREFIX SCHED_TXT M [STAT]
"""
import bisect
import collections
import re
import statistics
import sys

from pipe_trace import least, load, pid_of

SWITCH = re.compile(r"\[(\d+)\]\s+([\d.]+):.*prev_comm=(.*?) prev_pid=(\d+) .*"
                    r"next_comm=(.*?) next_pid=(\d+) ")


def runs(path):
    """{cpu: [(start, end, task)]}: who held each CPU, from the switches;
    the task a CPU's first switch takes off it held it from the
    recording's start, the last one it puts on holds it to the end."""
    held = collections.defaultdict(list)
    last = {}
    first = end = None
    with open(path) as f:
        for line in f:
            m = SWITCH.search(line)
            if not m:
                continue
            cpu, t = int(m.group(1)), float(m.group(2))
            first = t if first is None else first
            end = t
            prev = f"{m.group(3)}:{m.group(4)}"
            if cpu not in last:
                last[cpu] = (first, prev)
            if last[cpu][1] == prev:
                held[cpu].append((last[cpu][0], t, prev))
            last[cpu] = (t, f"{m.group(5)}:{m.group(6)}")
    for cpu, (t, task) in last.items():
        held[cpu].append((t, end, task))
    return held


def inside(iv, starts, a, b):
    """{task: seconds} of intervals iv (sorted by start) inside [a, b]."""
    out = collections.Counter()
    i = max(0, bisect.bisect_right(starts, a) - 1)
    while i < len(iv) and iv[i][0] < b:
        s, e, task = iv[i]
        o = min(b, e) - max(a, s)
        if o > 0:
            out[task] += o
        i += 1
    return out


def main():
    if len(sys.argv) not in (4, 5):
        raise SystemExit("usage: pipe_sched.py PREFIX SCHED_TXT M [STAT]")
    prefix, sched, M = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ranks = [load(f"{prefix}.{r}.tsv") for r in (0, 1)]
    held = runs(sched)
    starts = {c: [s for s, e, t in iv] for c, iv in held.items()}
    steps = [s for s in sorted(ranks[0])[3:-1] if s in ranks[1]]
    net_dur = [collections.defaultdict(list) for _ in (0, 1)]
    lines, lowest, lowest_net = [], [], []
    for r in (0, 1):
        ops = [(k, m, a, b) for s in steps for k, m, a, b in ranks[r][s] if k in ("F", "B")]
        # the rank's core: where its process (its file's pid) ran at its
        # forwards' and backwards' ends (the rank itself, writing the time);
        # without the pid (an older file), the task most often running there
        pid = pid_of(f"{prefix}.{r}.tsv")
        by = collections.Counter()
        for k, m, a, b in ops[:200]:
            for c in held:
                for task in inside(held[c], starts[c], b - 1e-6, b):
                    if pid is None or task.endswith(f":{pid}"):
                        by[(c, task)] += 1
        if not by:  # no switch on its core while it ran: nothing else held it
            lines.append(f"rank {r} (pid {pid}): never switched out while recorded; "
                         "its times are its own")
            held[None], starts[None], cpu, me = [], [], None, f"pid {pid}"
        else:
            (cpu, me), _ = by.most_common(1)[0]
        raw, net, others, total = collections.defaultdict(list), collections.defaultdict(list), \
            collections.Counter(), 0.0
        for k, m, a, b in ops:
            got = inside(held[cpu], starts[cpu], a, b)
            away = sum(sec for task, sec in got.items() if task != me)
            others.update({t: s for t, s in got.items() if t != me})
            raw[k].append((b - a) * 1e3)
            net[k].append((b - a - away) * 1e3)
            total += b - a
        taken = sum(others.values())
        top = ", ".join(f"{t} {s * 1e3:.1f} ms" for t, s in others.most_common(4))
        lines.append(f"rank {r} (cpu {cpu}, {me}): F {statistics.median(raw['F']):.3f} ms, "
                     f"net {statistics.median(net['F']):.3f}; B {statistics.median(raw['B']):.3f}, "
                     f"net {statistics.median(net['B']):.3f}; other tasks took "
                     f"{taken / total:.3f} of its compute time: {top or 'none'}")
        for s in steps:
            for k, m, a, b in ranks[r][s]:
                if k in ("F", "B"):
                    got = inside(held[cpu], starts[cpu], a, b)
                    net_dur[r][s].append(((k, m), b - a - sum(v for t, v in got.items() if t != me),
                                          b - a))
    for s in steps:
        raw = [{km: d for km, n, d in net_dur[r][s]} for r in (0, 1)]
        net = [{km: n for km, n, d in net_dur[r][s]} for r in (0, 1)]
        for dur, out in ((raw, lowest), (net, lowest_net)):
            compute = sum(sum(d.values()) for d in dur)
            out.append(1 - compute / (2 * least(M, dur)))
    print(f"{prefix}: M = {M}, {len(steps)} steps")
    for line in lines:
        print("  " + line)
    print(f"  the least bubble: with the timeline's compute times {statistics.median(lowest):.3f}, "
          f"with the net ones {statistics.median(lowest_net):.3f}; formula {1 / (M + 1):.3f}")
    if len(sys.argv) == 5:
        print("  " + steal(sys.argv[4]))


def steal(path):
    """each CPU's steal over its whole time, between the two snapshots"""
    rows = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            rows[p[0]].append([int(v) for v in p[1:]])
    out = []
    for cpu, (a, b) in ((c, v) for c, v in sorted(rows.items()) if len(v) == 2):
        d = [y - x for x, y in zip(a, b)]
        out.append(f"{cpu} {d[7] / max(1, sum(d[:8])):.3f}")  # user .. steal
    return "steal, share of each CPU's time during the run: " + ", ".join(out)


if __name__ == "__main__":
    main()
