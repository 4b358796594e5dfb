#!/bin/sh
# train_loader_cpus.sh — where recordio-train's loader threads run
# (--loader-cpus), read from /proc/PID/task/*/status (Cpus_allowed_list)
# while the ranks train, under mpirun's own binding (--bind-to core):
#   one rank, spare: the loader's threads on the CPUs that no rank is
#     bound to, the rank's own threads left on its core;
#   one rank, rank: the loader's threads on the rank's core;
#   as many ranks as CPUs (at most 4), spare: no CPU is spare, so the
#     loader's threads stay on each rank's core.
# The loader's threads are told from the rank's others (its main thread,
# Open MPI's and OpenBLAS's, started before the first epoch ends) by being
# started after it: each epoch starts its own (--cache off, so that every
# epoch reads). Each rank's process is named recordio-train (ps, top), also
# after it restarts itself for other BLAS kernels (it was "exe", from
# /proc/self/exe). Skips only with a single CPU (nothing to place apart).
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
[ -r /proc/self/status ] || { echo "$(basename "$0"): SKIP: no /proc"; rm -rf "$T"; exit 77; }
NCPUS=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
if [ "$NCPUS" -lt 2 ]; then
	echo "$(basename "$0"): SKIP: one CPU allowed here: no CPU to place the loader apart"
	rm -rf "$T"
	exit 77
fi
# epochs long enough (800 records, more than the loader reads ahead, in
# steps of 784-256-10) that each epoch's threads live for several looks,
# in a build without sanitizers too
RUN="--train $(shards 0 7) $MNIST_X --hidden 256 --batch 4 --epochs 100000 --workers 2 \
--threads 1 --cache off --quiet"

# placed MODE NP: runs NP ranks with --loader-cpus MODE, and checks where
# their threads are allowed to run, sampled from the end of the first epoch
# for 2 s, or until the loader's threads have been seen
placed() {
	rm -f m.json
	timeout -k 10 "$TRAIN_TIMEOUT" mpirun -np "$2" --bind-to core "$TRAIN" $RUN \
		--loader-cpus "$1" --metrics m.json >run.out 2>&1 &
	mpirun_pid=$!
	i=0
	while [ ! -s m.json ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
	# the ranks: mpirun's children (timeout's grandchildren; the libtool
	# wrapper execs the program in place)
	ranks=""
	for p in $(ps -o pid= --ppid "$mpirun_pid"); do
		ranks="$ranks $(ps -o pid= --ppid "$p")"
	done
	# shellcheck disable=SC2086
	python3 - "$1" $ranks >cpus.out 2>&1 <<'EOF'
import os, sys, time

def cpus(text):
    """A kernel CPU list ("0-2,5") as a set."""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out

def threads(pid):
    """{tid: allowed CPUs} of a process's threads alive now."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        out[int(tid)] = cpus(line.split()[1])
        except OSError:  # a thread that ended meanwhile
            pass
    return out

mode, pids = sys.argv[1], [int(p) for p in sys.argv[2:]]
assert pids, "no rank found under mpirun"
for p in pids:  # named for what it is, also after a restart (OpenBLAS's kernels)
    with open(f"/proc/{p}/comm") as f:
        name = f.read().strip()
    assert name == "recordio-train", f"rank pid {p} is named {name!r} (ps, top)"
base = {p: threads(p) for p in pids}
own = {p: base[p][p] for p in pids}  # the main thread: where mpirun bound it
spare = set(os.sched_getaffinity(0)) - set().union(*own.values())
new = {p: {} for p in pids}  # the threads started since: the loader's
start = time.time()
# 2 s at least, and until every rank's loader threads have been seen (at
# most 20 s: an epoch of a sanitizer build on a loaded machine is slow)
while time.time() < start + 2 or (
        time.time() < start + 20 and
        any(sum(len(seen) >= 2 for seen in new[p].values()) < 2 for p in pids)):
    for p in pids:
        for tid, c in threads(p).items():
            if tid not in base[p]:
                new[p].setdefault(tid, []).append(c)
    time.sleep(0.005)
for p in pids:
    want = spare if mode == "spare" and spare else own[p]
    # where each thread ended up: pthread_create sets a new thread's CPUs
    # after it exists (with its creator's), so a thread counts when it was
    # seen twice or more, by its last look
    placed = [seen[-1] for seen in new[p].values() if len(seen) >= 2]
    print(f"rank pid {p}: bound to {sorted(own[p])}, spare {sorted(spare)}, "
          f"{len(placed)} loader threads seen, on {sorted(set(map(tuple, map(sorted, placed))))}")
    assert len(placed) >= 2, "too few loader threads seen"
    assert all(c == want for c in placed), f"want the loader on {sorted(want)}"
    # the rank's own threads stay where they were
    assert threads(p).get(p) == own[p], "the main thread moved"
print("spare" if mode == "spare" and spare else "own")
EOF
	rc=$?
	kill "$mpirun_pid" 2>/dev/null
	wait "$mpirun_pid" 2>/dev/null
	cat cpus.out
}

placed spare 1
expect_eq 0 $rc "one rank, spare: its loader's threads on the CPUs no rank is bound to"
expect_match '^spare$' cpus.out "one rank bound to a core leaves CPUs spare ($NCPUS here)"
placed rank 1
expect_eq 0 $rc "one rank, rank: its loader's threads on the rank's core"
expect_match '^own$' cpus.out "--loader-cpus rank: the rank's own CPUs"
if [ "$NCPUS" -le 4 ]; then
	placed spare "$NCPUS"
	expect_eq 0 $rc "$NCPUS ranks on $NCPUS CPUs, spare: none spare, each loader on its rank's core"
	expect_match '^own$' cpus.out "no CPU spare with a rank bound to each"
fi
finish
