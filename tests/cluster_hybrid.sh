#!/bin/sh
# cluster_hybrid.sh — recordio-train --strategy hybrid across 4 namespace
# hosts (TCP): with the server on host 1 and a worker on each other host
# (3 workers), the run ends with the same checkpoint, byte for byte, and
# the same metrics as the same 4 ranks on one host. The workers sum their
# dense gradients with the reducer in rank order: across the hosts in
# slices over MPI (alltoall), on one host in shared memory (shm), as the
# banner says; the --embed tables (the Chicago taxi sample's int64
# columns, tests/data) are on the server.
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
TAXI="$TESTDATA/tfx-external-00001-of-00002.tfrecord.gz"
HYBRID="--train $TAXI --test $TAXI --x trip_miles,fare --y trip_start_day --classes 8 \
--embed trip_start_hour:24:4,pickup_community_area:78:4,trip_start_month:13:2 --hidden 16 \
--global-batch 48 --epochs 2 --threads 1 --seed 7 --strategy hybrid"

# shellcheck disable=SC2086
{
	expect_exit 0 cmpi "$C/hostfile" 4 $HYBRID --quiet --checkpoint hosts --metrics hosts.json
	expect_exit 0 mpi 4 $HYBRID --quiet --checkpoint one --metrics one.json
}
expect_exit 0 cmp hosts/checkpoint one/checkpoint
expect_lines 2 hosts.json "a metrics line per epoch"
same_metrics hosts.json one.json
expect_eq "[104, 104, 104]" "$(json hosts.json worker_steps)" "each worker's steps across hosts"

# how the workers' sums were made
# shellcheck disable=SC2086
{
	expect_exit 0 cmpi "$C/hostfile" 4 $HYBRID --max-steps 1
	expect_match "the workers' dense gradients summed by alltoall$" out "across hosts"
	expect_exit 0 mpi 4 $HYBRID --max-steps 1
	expect_match "the workers' dense gradients summed by shm$" out "on one host"
}

finish
