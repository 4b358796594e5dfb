#!/bin/sh
# cluster_kill.sh — a host lost mid-run: the recordio-train rank on one of
# 4 namespace hosts killed with SIGKILL, and then, in a second run, that
# host's Open MPI daemon (what a host going down takes with it). Each time
# mpirun exits non-zero soon after, no rank is left running on any host and
# nothing waits for the timeout guard; the seconds from the kill to the end
# are printed.
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
LONG="--train $TRAIN_SET $MNIST_X --hidden 64 --batch 4 --epochs 100000 --threads 1 --quiet"

for victim in recordio-train orted; do
	# shellcheck disable=SC2086
	kill_mid_run $victim 3 $LONG
done

finish
