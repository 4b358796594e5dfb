#!/bin/sh
# cluster_ps.sh — recordio-train --strategy ps across 4 namespace hosts
# (TCP): bulk-synchronous with the server on host 1 and a worker on each
# other host ends with the same parameters, byte for byte, as the same run
# on one host and as the allreduce strategy on 3 ranks; stale-synchronous
# and asynchronous runs across the hosts finish with every worker's steps;
# a server and then a worker killed with SIGKILL mid-run end the job
# non-zero soon after, with no rank left running on any host (the seconds
# from the kill to the end are printed).
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
PS="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --global-batch 48 --epochs 2 \
--threads 1 --quiet --seed 7"

expect_exit 0 cmpi "$C/hostfile" 4 $PS --strategy ps --checkpoint hosts --metrics hosts.json
expect_exit 0 mpi 4 $PS --strategy ps --checkpoint one
expect_exit 0 mpi 3 $PS --checkpoint allreduce
expect_exit 0 cmp hosts/checkpoint one/checkpoint
expect_exit 0 "$CKPT_DIFF" hosts allreduce 0
expect_eq "[16, 16, 16]" "$(json hosts.json worker_steps)" "each worker's steps across hosts"

for k in 2 inf; do
	expect_exit 0 cmpi "$C/hostfile" 4 $PS --strategy ps --staleness $k --straggler 2:3 \
		--metrics k$k.json
	expect_eq "[16, 16, 16]" "$(json k$k.json worker_steps)" "K = $k: each worker's steps"
done

# running NAME HOST: the pid of the process NAME in host HOST (1..4), if any
running() {
	for p in $(sh "$CLUSTER_SH" pids "$C" "$2"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = "$1" ] && { echo "$p"; return 0; }
	done
	return 1
}

GUARD=60
LONG="--train $TRAIN_SET $MNIST_X --hidden 64 --batch 4 --epochs 100000 --threads 1 --quiet \
--strategy ps --staleness 2"
# host 1 runs rank 0, the server; host 3 a worker
for host in 1 3; do
	timeout $GUARD "$C/mpirun" -np 4 --hostfile "$C/hostfile" "$TRAIN" $LONG \
		>"run-$host.out" 2>&1 &
	job=$!
	i=0
	while [ $i -lt 300 ]; do
		up=0
		for h in 1 2 3 4; do running recordio-train $h >/dev/null && up=$((up + 1)); done
		[ $up -eq 4 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	expect_eq 4 "$up" "ranks running before the kill on host $host"
	sleep 2
	pid=$(running recordio-train $host)
	t0=$(date +%s.%N)
	[ -n "$pid" ] && kill -9 "$pid"
	wait $job
	rc=$?
	t1=$(date +%s.%N)
	secs=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")
	echo "the rank on host $host killed: mpirun exited $rc after $secs s"
	expect_eq yes "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo yes)" \
		"mpirun's exit after the kill on host $host (not 0, not the guard's 124): $rc"
	left=""
	for h in 1 2 3 4; do running recordio-train $h >/dev/null && left="$left $h"; done
	expect_eq "" "$left" "hosts with a rank still running after the kill on host $host"
done

finish
