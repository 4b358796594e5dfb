#!/bin/sh
# cluster_kill.sh — a host lost mid-run: the recordio-train rank on one of
# 4 namespace hosts killed with SIGKILL, and then, in a second run, that
# host's Open MPI daemon (what a host going down takes with it). Each time
# mpirun exits non-zero soon after, no rank is left running on any host and
# nothing waits for the timeout guard; the seconds from the kill to the end
# are printed.
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
GUARD=60
LONG="--train $TRAIN_SET $MNIST_X --hidden 64 --batch 4 --epochs 100000 --threads 1 --quiet"

# running NAME HOST: the pid of the process NAME in host HOST (1..4), if any
running() {
	for p in $(sh "$CLUSTER_SH" pids "$C" "$2"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = "$1" ] && { echo "$p"; return 0; }
	done
	return 1
}

for victim in recordio-train orted; do
	# no -k: 124 is then only ever the guard (mpirun itself exits 137 for
	# a rank killed with SIGKILL)
	timeout $GUARD "$C/mpirun" -np 4 --hostfile "$C/hostfile" "$TRAIN" $LONG \
		>"run-$victim.out" 2>&1 &
	job=$!
	# every rank started, then 2 s of training
	i=0
	while [ $i -lt 300 ]; do
		up=0
		for h in 1 2 3 4; do running recordio-train $h >/dev/null && up=$((up + 1)); done
		[ $up -eq 4 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	expect_eq 4 "$up" "ranks running before the kill ($victim)"
	sleep 2
	pid=$(running "$victim" 3)
	expect_eq yes "$([ -n "$pid" ] && echo yes)" "$victim found on host 3"
	t0=$(date +%s.%N)
	[ -n "$pid" ] && kill -9 "$pid"
	wait $job
	rc=$?
	t1=$(date +%s.%N)
	secs=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")
	echo "$victim killed on host 3: mpirun exited $rc after $secs s"
	expect_eq yes "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo yes)" \
		"mpirun's exit after $victim's kill (not 0, not the guard's 124): $rc"
	left=""
	for h in 1 2 3 4; do running recordio-train $h >/dev/null && left="$left $h"; done
	expect_eq "" "$left" "hosts with a rank still running after $victim's kill"
done

finish
