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
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
B=${1:-$RIO_TOP/build-bench}
[ -x "$B/recordio-train" ] || rio_build "$B" --disable-shared CFLAGS="-O2 -g"
EPOCHS=${EPOCHS:-20}
WARMUP=${WARMUP:-2}
NP=${NP:-2}
W=${BENCH_DIR:-/tmp/recordio-bench-train}
FM=/usr/share/datasets/fashion-mnist
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader

if [ ! -f "$W/train-00003-of-00004.tfrecord.lz4" ]; then
	"$B/recordio-pack" -q -f --from idx --images "$FM/train-images-idx3-ubyte.gz" \
		--labels "$FM/train-labels-idx1-ubyte.gz" --output "$W/train" --shards 4 --compression lz4
	"$B/recordio-pack" -q -f --from idx --images "$FM/t10k-images-idx3-ubyte.gz" \
		--labels "$FM/t10k-labels-idx1-ubyte.gz" --output "$W/test" --shards 2 --compression lz4
fi

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
