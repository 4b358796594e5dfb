#!/bin/sh
# train.sh — recordio-train on the hosts of ./hostfile over TCP (edit
# DATA, RUN and IFACE). Every host needs the shards under the same path
# (a shared file system, or the same full copy on each host's disk) and
# recordio-train, Open MPI and OpenBLAS installed at the same paths.
set -eu
cd "$(dirname "$0")"
DATA=${DATA:-/shared/datasets/fashion-mnist}
RUN=${RUN:-/shared/runs/fashion-mnist}
IFACE=${IFACE:-eth0}      # or a subnet, e.g. 10.0.0.0/24
NP=${NP:-4}
MCA="--mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include $IFACE \
--mca oob_tcp_if_include $IFACE"

# every rank's share of the data, read once: one JSON line per rank with
# its rank and records_per_epoch (a shard missing on a host fails here)
mpirun -np "$NP" --hostfile hostfile $MCA recordio-bench --sharding files -J "$DATA/train"

mpirun -np "$NP" --hostfile hostfile --map-by slot --bind-to none $MCA \
	recordio-train --train "$DATA/train" --test "$DATA/test" --x image --y label \
	--sharding files --checkpoint "$RUN" --resume --metrics "$RUN/metrics.json"
