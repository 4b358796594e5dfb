#!/bin/sh
# cluster_identical.sh — recordio-train across 4 namespace hosts (a hostfile, TCP)
# ends with the same parameters, byte for byte, and the same metrics as 4
# ranks on one host with the same seed (--threads 1: the same BLAS work on
# every rank; 4 hosts sum the gradients in slices over MPI, one host in
# shared memory, both in rank order; --reduce shm across hosts is refused
# in one line); the ranks really are on 4 hosts; recordio-bench under the
# same mpirun shows each rank reading its own 2 of the 8 shards, every
# record on exactly one rank.
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
COMMON="$SMALL_RUN --seed 7"

# four hosts, four hostnames
expect_exit 0 timeout 60 "$C/mpirun" -np 4 --hostfile "$C/hostfile" hostname
expect_eq 4 "$(sort -u out | wc -l | tr -d ' ')" "distinct hostnames of the 4 ranks"

expect_exit 0 cmpi "$C/hostfile" 4 $COMMON --checkpoint hosts --metrics hosts.json
expect_exit 0 mpi 4 $COMMON --checkpoint one --metrics one.json
expect_exit 0 cmp hosts/checkpoint one/checkpoint
expect_lines 3 hosts.json "a metrics line per epoch"
same_metrics hosts.json one.json

# how the sums were made: across hosts the slices over MPI (alltoall), on
# one host shared memory (shm), the same order, hence the same bits above;
# shared memory cannot span hosts
LOUD="$(echo "$COMMON" | sed 's/ --quiet//') --max-steps 1"
expect_exit 0 cmpi "$C/hostfile" 4 $LOUD
expect_match 'gradients summed by alltoall$' out "auto across hosts"
expect_exit 0 mpi 4 $LOUD
expect_match 'gradients summed by shm$' out "auto on one host"
expect_exit 1 cmpi "$C/hostfile" 4 $COMMON --reduce shm
expect_match '^recordio-train: --reduce shm: the ranks are not all on one host' err \
	"--reduce shm across hosts"
expect_eq "4 4 4" "$(json_all hosts.json world)" "world of the 4-host run"

# what each rank reads: with --sharding files, 200 records (2 shards) on
# each of the 4 ranks, and every record of the 8 shards on exactly one rank
expect_exit 0 timeout 60 "$C/mpirun" -np 4 --hostfile "$C/hostfile" sh -c \
	'exec "$1" --sharding files -J --dump-order "order-$OMPI_COMM_WORLD_RANK" "$2"' \
	sh "$BENCH" "$TRAIN_SET"
expect_eq "0:200 1:200 2:200 3:200" \
	"$(python3 -c 'import json,sys
rows = sorted((json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")), key=lambda r: r["rank"])
print(" ".join("%d:%d" % (r["rank"], r["records_per_epoch"]) for r in rows))' out 2>&1)" \
	"rank:records of each rank"
expect_eq "800 800" "$(cat order-? | wc -l) $(sort -u order-? | wc -l)" \
	"records read over the ranks, distinct records"
expect_eq 2 "$(cut -d' ' -f1 order-1 | sort -u | wc -l)" "shards read by rank 1"

finish
