#!/bin/sh
# demo.sh — the main job end to end on the built-in default data: installs
# what is missing, builds, packs Debian's Fashion-MNIST into lz4 shards with
# their .idx, verifies them, shows recordio-info, and trains an MLP
# (784-256-128-10) on them with `mpirun -np 2 recordio-train` for 20 epochs:
# each rank reads its own shards, gradients are allreduced with MPI. Prints
# the test accuracy and the throughput.
set -eu
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
rio_install_deps
rio_build "$RIO_TOP/build"
B="$RIO_TOP/build"
DATA=/usr/share/datasets/fashion-mnist
OUT="$RIO_TOP/data/fashion-mnist"
mkdir -p "$OUT"
rm -f "$OUT"/train-* "$OUT"/test-*

echo "== pack Fashion-MNIST ($DATA) into $OUT"
"$B/recordio-pack" --from idx --images "$DATA/train-images-idx3-ubyte.gz" \
	--labels "$DATA/train-labels-idx1-ubyte.gz" --output "$OUT/train" --shards 4 --compression lz4
"$B/recordio-pack" --from idx --images "$DATA/t10k-images-idx3-ubyte.gz" \
	--labels "$DATA/t10k-labels-idx1-ubyte.gz" --output "$OUT/test" --shards 2 --compression lz4

echo "== verify"
"$B/recordio-verify" "$OUT"/train-*.tfrecord.lz4 "$OUT"/test-*.tfrecord.lz4

echo "== info"
"$B/recordio-info" "$OUT/train"

echo "== train: mpirun -np 2 recordio-train --train $OUT/train --test $OUT/test --x image --y label"
# Open MPI refuses root without these two; --oversubscribe lets 2 ranks run
# on a 1-core machine too
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# the defaults: 784-256-128-10, batch 128 per rank, 20 epochs, SGD 0.05 x 2
# ranks, 1 warmup epoch, cosine, weight decay 1e-4 (man recordio-train)
mpirun -np 2 --oversubscribe "$B/recordio-train" --train "$OUT/train" --test "$OUT/test" \
	--x image --y label --metrics "$OUT/metrics.json"
python3 - "$OUT/metrics.json" <<'PY'
import json, sys
eps = [json.loads(line) for line in open(sys.argv[1])]
last = eps[-1]
rate = sorted(e["samples_per_s"] for e in eps)[len(eps) // 2]
wait = sorted(e["data_wait_fraction"] for e in eps)[len(eps) // 2]
print(f"test accuracy {last['test_accuracy']:.4f} after {last['epoch']} epochs "
      f"({last['test_records']} test records); {rate:.0f} samples/s on {last['world']} ranks "
      f"(median epoch), data wait {100 * wait:.2f}% of the step")
PY
