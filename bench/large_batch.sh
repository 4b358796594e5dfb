#!/bin/sh
# large_batch.sh — accuracy at large global batches (figures, not
# pass/fail): Fashion-MNIST, 784-256-128-10, 2 ranks, global batch 4096 and
# 8192 (14 and 7 steps an epoch), EPOCHS epochs (default 20), each with
#   sgd-linear  SGD, the linear scaling rule (Goyal et al.): 0.05 per 128
#               records, so 1.6 at 4096 and 3.2 at 8192;
#   sgd-sqrt    SGD with the square-root rule (Krizhevsky 2014, Hoffer et
#               al. 2017): 0.05 x sqrt(G/128), 0.28 and 0.40;
#   lars        --optimizer lars at its default rate (10, trust 0.001);
# all with WARMUP epochs of warmup (default 2, from 0), cosine decay,
# momentum 0.9, weight decay 1e-4; and for reference the defaults (global
# batch 256). Prints the test accuracy after each epoch, one row a run.
#
# Usage: bench/large_batch.sh [BUILD_DIR]   (default build-bench/, built if
# missing). Env: EPOCHS, WARMUP, NP (2), BENCH_DIR (scratch, default
# /tmp/recordio-bench-train, shared with bench/train.sh's shards).
set -eu
. "$(dirname "$0")/bench_lib.sh"
bench_build recordio-train
EPOCHS=${EPOCHS:-20}
WARMUP=${WARMUP:-2}
NP=${NP:-2}
W=${BENCH_DIR:-/tmp/recordio-bench-train}
mkdir -p "$W"
mpi_local_env
pack_fashion_mnist train "$W/train"
pack_fashion_mnist test "$W/test"

run() { # NAME ARGS...: one run, its metrics in $W/lb-NAME.json
	name=$1; shift
	mpirun -np "$NP" --mca mpi_yield_when_idle 1 "$B/recordio-train" --train "$W/train" \
		--test "$W/test" --x image --y label --epochs "$EPOCHS" --metrics "$W/lb-$name.json" \
		--quiet "$@"
	python3 - "$name" "$W/lb-$name.json" "$*" <<'PY'
import json, sys
eps = [json.loads(line) for line in open(sys.argv[2])]
acc = " ".join("  -  " if e["test_accuracy"] is None else f"{e['test_accuracy']:.3f}"
               for e in eps)
print(f"{sys.argv[1]:<16} {acc}   best {max(e['test_accuracy'] or 0 for e in eps):.4f}"
      f"  ({eps[-1]['steps']} steps/epoch: {sys.argv[3]})", flush=True)
PY
}

echo "== test accuracy after each of $EPOCHS epochs, $NP ranks, warmup $WARMUP epochs, cosine"
run default-256
for G in 4096 8192; do
	lin=$(python3 -c "print(round(0.05 * $G / 128, 4))")
	sq=$(python3 -c "print(round(0.05 * ($G / 128) ** 0.5, 4))")
	COMMON="--global-batch $G --warmup-epochs $WARMUP --schedule cosine --weight-decay 0.0001"
	# shellcheck disable=SC2086
	run "sgd-linear-$G" $COMMON --optimizer sgd --lr "$lin"
	# shellcheck disable=SC2086
	run "sgd-sqrt-$G" $COMMON --optimizer sgd --lr "$sq"
	# shellcheck disable=SC2086
	run "lars-$G" $COMMON --optimizer lars
done
