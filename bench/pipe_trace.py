#!/usr/bin/env python3
"""pipe_trace.py — reads the timelines RIO_PIPE_TRACE=PREFIX made
(trainer/pipe_trace.h) of a P = 2 pipeline and says where its bubble goes:

  - each rank's waits a step, by kind (medians over the steps, the first
    3 and the last left out): the receives' (wA, wG, wL: what the bubble
    metric counts as idle), the sends' (sA, sG) and the step's drain (D);
  - each hand-over's latency where the receiver was already waiting: the
    wait's end minus the send's post (10th, 50th, 90th percentiles);
  - the bubble measured from the timeline (1 - the ranks' forward and
    backward time / (2 x the longer schedule)), against a replay of the
    same compute times with messages that take no time, and against
    (P - 1) / (M + P - 1).

Usage: bench/pipe_trace.py PREFIX SCHEDULE M   (SCHEDULE gpipe or 1f1b)
"""
import collections
import statistics
import sys


def load(path):
    """{step: [(kind, m, start, end)]} of one rank's file."""
    steps = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "step" or len(p) != 5:
                continue
            steps[int(p[0])].append((p[1], int(p[2]), float(p[3]), float(p[4])))
    return steps


def order(schedule, rank, M):
    """The rank's forwards and backwards in its schedule's order."""
    if schedule == "gpipe":
        return [("F", m) for m in range(M)] + [("B", m) for m in range(M)]
    ahead = min(1 - rank, M)
    o = [("F", m) for m in range(ahead)]
    for i in range(M - ahead):
        o += [("F", i + ahead), ("B", i)]
    return o + [("B", i) for i in range(M - ahead, M)]


def replay(schedule, M, dur):
    """The schedule's span with these compute times and instant messages."""
    slots = [M, M] if schedule == "gpipe" else [min(2, M), 1]
    seq = [order(schedule, 0, M), order(schedule, 1, M)]
    end, t, i = {}, [0.0, 0.0], [0, 0]
    while i[0] < len(seq[0]) or i[1] < len(seq[1]):
        moved = False
        for r in (0, 1):
            if i[r] == len(seq[r]):
                continue
            k, m = seq[r][i[r]]
            need = []
            if r == 1 and k == "F":  # its activations; a free slot
                need.append((0, "F", m))
                if m >= slots[1]:
                    need.append((1, "B", m - slots[1]))
            if r == 0 and k == "B":  # its output's gradient
                need.append((1, "B", m))
            if r == 0 and k == "F" and m >= slots[0]:  # the slot's last sent
                need.append((1, "F", m - slots[0]))
            if all(n in end for n in need):
                t[r] = end[(r, k, m)] = max([t[r]] + [end[n] for n in need]) + dur[r][(k, m)]
                i[r] += 1
                moved = True
        if not moved:
            raise SystemExit("pipe_trace.py: the schedule does not replay: wrong SCHEDULE or M?")
    return max(t)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("gpipe", "1f1b"):
        raise SystemExit("usage: pipe_trace.py PREFIX gpipe|1f1b M")
    prefix, schedule, M = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ranks = [load(f"{prefix}.{r}.tsv") for r in (0, 1)]
    steps = [s for s in sorted(ranks[0])[3:-1] if s in ranks[1]]
    if not steps:
        raise SystemExit(f"pipe_trace.py: {prefix}: fewer than 5 steps traced")
    waits = collections.defaultdict(list)
    measured, replayed = [], []
    lat = {"activations, stage 0 -> 1": [], "gradients, stage 1 -> 0": []}
    for s in steps:
        ev = [[e for e in ranks[r][s] if e[0] not in ("X", "O")] for r in (0, 1)]
        dur = [{(k, m): b - a for k, m, a, b in ev[r] if k in ("F", "B")} for r in (0, 1)]
        if any(len(d) != 2 * M for d in dur):
            raise SystemExit(f"pipe_trace.py: step {s} has no {M} forwards and backwards")
        for r in (0, 1):
            for kind in ("wA", "wG", "wL", "sA", "sG", "D"):
                waits[f"rank {r} {kind}"].append(sum(b - a for k, m, a, b in ev[r] if k == kind))
        compute = sum(sum(d.values()) for d in dur)
        spans = [max(e[3] for e in ev[r]) - min(e[2] for e in ev[r]) for r in (0, 1)]
        measured.append(1 - compute / (2 * max(spans)))
        replayed.append(1 - compute / (2 * replay(schedule, M, dur)))
        for name, (snd, sk, rcv, rk) in zip(lat, ((0, "iA", 1, "wA"), (1, "iG", 0, "wG"))):
            posts = {m: a for k, m, a, b in ev[snd] if k == sk}
            for k, m, a, b in ev[rcv]:
                if k == rk and m in posts and a <= posts[m]:
                    lat[name].append(b - posts[m])
    print(f"{prefix}: {schedule}, M = {M}, {len(steps)} steps")
    print("waits a step, ms (medians): " + ", ".join(
        f"{k} {statistics.median(v) * 1e3:.2f}" for k, v in waits.items() if max(v) > 0))
    for name, v in lat.items():
        print(f"hand-overs, {name}, the receiver waiting: {len(v)}; send to received, ms: "
              f"p10 {pct(v, .1) * 1e3:.3f} p50 {pct(v, .5) * 1e3:.3f} p90 {pct(v, .9) * 1e3:.3f}")
    print(f"bubble: formula {1 / (M + 1):.3f}, replay with instant messages "
          f"{statistics.median(replayed):.3f}, measured {statistics.median(measured):.3f}")


if __name__ == "__main__":
    main()
