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

LONG="--train $TRAIN_SET $MNIST_X --hidden 64 --batch 4 --epochs 100000 --threads 1 --quiet \
--strategy ps --staleness 2"
# host 1 runs rank 0, the server; host 3 a worker
for host in 1 3; do
	# shellcheck disable=SC2086
	kill_mid_run recordio-train $host $LONG
done

finish
