#!/bin/sh
# consistency.sh — when does each way of training in parallel win? The
# same model (784-256-128-10), data (Fashion-MNIST, lz4 shards), global
# batch (4 x 32), seed and schedule, trained by 4 workers:
#   allreduce   4 ranks, gradients summed every step (--strategy allreduce)
#   K=0         1 parameter server + 4 workers, bulk-synchronous
#   K=0 B=1     ... with one backup worker (the first 3 gradients make a step)
#   K=1..8      ... stale-synchronous (--staleness K)
#   K=inf       ... asynchronous
# under four kinds of slowness: none, worker 0 at 2x and at 4x its compute
# time (--straggler), and every worker slow (4x) with probability 0.1 per
# step (--straggler-random). Every run copies its parameters every
# EVAL_EVERY steps' worth of gradients (--eval-every) and evaluates each
# copy on the test set after its epoch, off the clock: a learning curve
# against the updates applied and against training seconds.
# Prints, per slowness: each setting's time to reach 0.85 test accuracy
# (the first copy at or above it), its accuracy after a fixed wall-clock
# budget (the last copy within BUDGET seconds; default: the median of every
# run's whole training time, so that about half the runs are cut), its
# final accuracy, its
# samples/s (the median epoch) and its staleness; and the bytes a step
# moves per worker and through the server against a ring allreduce. Plots
# test loss against updates and against seconds (gnuplot PNGs in
# PLOT_DIR, default doc/: consistency-updates.png, consistency-seconds.png).
# Figures, never pass/fail; doc/consistency.md explains them.
#
# Usage: bench/consistency.sh [BUILD_DIR]   (default build-bench/)
# Env: EPOCHS (default 3), EVAL_EVERY (default 20), BUDGET (seconds),
#      BENCH_DIR (scratch, default /tmp/recordio-bench-consistency),
#      PLOT_DIR, SETTINGS (default all: a space-separated subset of
#      allreduce k0 k0b1 k1 k2 k4 k8 kinf), SLOWNESS (default all: none 2x
#      4x random).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
EPOCHS=${EPOCHS:-3}
EVAL_EVERY=${EVAL_EVERY:-20}
W=${BENCH_DIR:-/tmp/recordio-bench-consistency}
PLOT_DIR=${PLOT_DIR:-$RIO_TOP/doc}
SETTINGS=${SETTINGS:-allreduce k0 k0b1 k1 k2 k4 k8 kinf}
SLOWNESS=${SLOWNESS:-none 2x 4x random}
mkdir -p "$W" "$PLOT_DIR"
mpi_local_env
# the ranks outnumber the cores: each gives its core up while it waits
export OMPI_MCA_mpi_yield_when_idle=1
pack_fashion_mnist train "$W/train"
pack_fashion_mnist test "$W/test"

COMMON="--train $W/train --test $W/test --x image --y label --hidden 256,128 \
--global-batch 128 --epochs $EPOCHS --threads 1 --quiet --seed 1 --eval-every $EVAL_EVERY"

# slowness NAME RANK: the options that slow worker 0 (rank RANK)
slowness() {
	case $1 in
	none) ;;
	2x) echo "--straggler $2:2" ;;
	4x) echo "--straggler $2:4" ;;
	random) echo "--straggler-random 0.1:4:1" ;;
	esac
}

echo "== $(nproc) cores; $EPOCHS epochs of Fashion-MNIST per run, a copy evaluated every $EVAL_EVERY x 4 gradients"
for slow in $SLOWNESS; do
	for s in $SETTINGS; do
		case $s in
		allreduce) np=4 args="$(slowness "$slow" 0)" ;;
		k0) np=5 args="--strategy ps --staleness 0 $(slowness "$slow" 1)" ;;
		k0b1) np=5 args="--strategy ps --staleness 0 --backup-workers 1 $(slowness "$slow" 1)" ;;
		kinf) np=5 args="--strategy ps --staleness inf $(slowness "$slow" 1)" ;;
		k*) np=5 args="--strategy ps --staleness ${s#k} $(slowness "$slow" 1)" ;;
		esac
		out="$W/$slow-$s.json"
		echo "-- $slow $s: mpirun -np $np recordio-train ... $args"
		# shellcheck disable=SC2086
		mpirun -np $np "$B/recordio-train" $COMMON $args --metrics "$out" >"$W/$slow-$s.log" 2>&1 ||
			{ echo "   failed:"; tail -3 "$W/$slow-$s.log"; }
	done
done

python3 "$RIO_TOP/bench/consistency_report.py" --dir "$W" --slowness "$SLOWNESS" \
	--settings "$SETTINGS" ${BUDGET:+--budget "$BUDGET"} --plot-dir "$PLOT_DIR"
