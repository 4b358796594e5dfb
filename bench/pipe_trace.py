#!/usr/bin/env python3
"""pipe_trace.py — reads the timelines RIO_PIPE_TRACE=PREFIX made
(trainer/pipe_trace.h) of a P = 2 pipeline and says where its bubble goes:

  - each rank's waits a step, by kind (medians over the steps, the first
    3 and the last left out): the receives' (wA, wG, wL), the sends' (sA,
    sG) and the step's drain (D), all idle time to the bubble metric;
  - each hand-over's latency where the receiver was already waiting: the
    wait's end minus the send's post (10th, 50th, 90th percentiles);
  - the bubble measured from the timeline (1 - the ranks' forward and
    backward time / (2 x the longer schedule)), against a replay of the
    same compute times with messages that take no time, and against
    (P - 1) / (M + P - 1); for 1f1b and eager-1f1b also the replay of
    the other's order (1f1b: one forward ahead on the first stage, one
    slot on the last, so that the stages meet at every microbatch;
    eager-1f1b: two ahead, two slots); and the least bubble any
    schedule has with these compute times (least(): the formula where
    the stages cost the same, more where one is slower);
  - the bubble metric's own reading (--metrics' `bubble`), recomputed
    from every step of the timeline: 1 - the ranks' schedule seconds
    less their waits (w*, s*, D) / (2 x the sum over the steps of the
    longer schedule, S), to check the metric against.

Usage: bench/pipe_trace.py PREFIX SCHEDULE M   (SCHEDULE gpipe, 1f1b or eager-1f1b)
"""
import collections
import re
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


def pid_of(path):
    """the rank's process id from its file's first line ("# rank R, pid P";
    None in a file written before the line was added)"""
    with open(path) as f:
        m = re.match(r"# rank \d+, pid (\d+)", f.readline())
    return int(m.group(1)) if m else None


# 1f1b and eager-1f1b at P = 2 (pipe_stage.c): the first stage's forwards
# ahead, the last stage's slots
SLACK = {"1f1b": (1, 1), "eager-1f1b": (2, 2)}


def order(schedule, rank, M, ahead0):
    """The rank's forwards and backwards in its schedule's order (1f1b
    and eager-1f1b: ahead0 forwards ahead on the first stage, none on the
    last)."""
    if schedule == "gpipe":
        return [("F", m) for m in range(M)] + [("B", m) for m in range(M)]
    ahead = min(ahead0 if rank == 0 else 0, M)
    o = [("F", m) for m in range(ahead)]
    for i in range(M - ahead):
        o += [("F", i + ahead), ("B", i)]
    return o + [("B", i) for i in range(M - ahead, M)]


def replay(schedule, M, dur):
    """The schedule's span with these compute times and messages that take
    no time once the receiver reaches the forward or backward that needs
    them (a rendezvous: the receiver takes the message in its wait), a
    send's slot free again when its message is taken (1f1b, eager-1f1b:
    ahead0 + 1 slots on the first stage, `last` on the last; SLACK)."""
    ahead0, last = SLACK.get(schedule, (0, 0))
    slots = [M, M] if schedule == "gpipe" else [min(ahead0 + 1, M), min(last, M)]
    seq = [order(schedule, 0, M, ahead0), order(schedule, 1, M, ahead0)]
    end, taken, t, i = {}, {}, [0.0, 0.0], [0, 0]
    while i[0] < len(seq[0]) or i[1] < len(seq[1]):
        moved = False
        for r in (0, 1):
            if i[r] == len(seq[r]):
                continue
            k, m = seq[r][i[r]]
            got = (0, "F", m) if (r, k) == (1, "F") else (1, "B", m) if (r, k) == (0, "B") \
                else None  # the message the step waits for: activations, gradient
            need = [end.get(got)] if got else []
            if (r, k) == (0, "F") and m >= slots[0]:  # its slot's activations taken
                need.append(taken.get((0, m - slots[0])))
            if (r, k) == (1, "B") and m >= slots[1]:  # its slot's gradient taken
                need.append(taken.get((1, m - slots[1])))
            if all(n is not None for n in need):
                if got:
                    taken[(got[0], m)] = max(end[got], t[r])
                t[r] = end[(r, k, m)] = max([t[r]] + need) + dur[r][(k, m)]
                i[r] += 1
                moved = True
        if not moved:
            raise SystemExit("pipe_trace.py: the schedule does not replay: wrong SCHEDULE or M?")
    return max(t)


def least(M, dur):
    """The shortest span any schedule of these compute times has: the
    first stage's compute, and the last's between the first stage's first
    forward and last backward (the last stage starts with that forward's
    activations and ends with the gradient that backward waits for). With
    stages that cost the same it is (M + 1) (f + b): the formula's."""
    c0, c1 = (sum(d.values()) for d in dur)
    return max(c0, dur[0][("F", 0)] + c1 + dur[0][("B", M - 1)])


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("gpipe", "1f1b", "eager-1f1b"):
        raise SystemExit("usage: pipe_trace.py PREFIX gpipe|1f1b|eager-1f1b M")
    prefix, schedule, M = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ranks = [load(f"{prefix}.{r}.tsv") for r in (0, 1)]
    steps = [s for s in sorted(ranks[0])[3:-1] if s in ranks[1]]
    if not steps:
        raise SystemExit(f"pipe_trace.py: {prefix}: fewer than 5 steps traced")
    waits = collections.defaultdict(list)
    other = {"1f1b": "eager-1f1b", "eager-1f1b": "1f1b"}.get(schedule)
    measured, replayed, as_other, lowest = [], [], [], []
    lat = {"activations, stage 0 -> 1": [], "gradients, stage 1 -> 0": []}
    for s in steps:
        ev = [[e for e in ranks[r][s] if e[0] not in ("X", "O", "S")] for r in (0, 1)]
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
        if other:
            as_other.append(1 - compute / (2 * replay(other, M, dur)))
        lowest.append(1 - compute / (2 * least(M, dur)))
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
    was = f", in {other}'s order {statistics.median(as_other):.3f}" if other else ""
    print(f"bubble: formula {1 / (M + 1):.3f}, the least with these compute times "
          f"{statistics.median(lowest):.3f}, replay with instant messages "
          f"{statistics.median(replayed):.3f}{was}, measured {statistics.median(measured):.3f}")
    bubble = metric(ranks)
    print("the bubble metric from the timeline, every step: " +
          (f"{bubble:.6f}" if bubble is not None else "(no schedules, S, traced: an older build)"))


def metric(ranks):
    """The bubble as --metrics counts it, over every step both ranks traced:
    1 - the schedules' seconds less their waits / (2 x the sum of each
    step's longer schedule); None without the schedules (S) traced."""
    idle = ("wA", "wG", "wL", "sA", "sG", "sL", "D")
    work = longest = 0.0
    for s in sorted(set(ranks[0]) & set(ranks[1])):
        sched = [sum(b - a for k, m, a, b in ranks[r][s] if k == "S") for r in (0, 1)]
        if not all(sched):
            return None
        longest += max(sched)
        for r in (0, 1):
            work += sched[r] - sum(b - a for k, m, a, b in ranks[r][s] if k in idle)
    return 1 - work / (2 * longest)


if __name__ == "__main__":
    main()
