#!/bin/sh
# demo.sh — the main job end to end on the built-in default data: installs
# what is missing, builds, packs Debian's Fashion-MNIST into lz4 shards with
# their .idx, verifies them, shows recordio-info, and reads them through the
# loader (two ranks' shares, shuffled and decoded) with recordio-bench.
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

echo "== first record"
"$B/recordio-cat" --head 1 "$OUT/test"

echo "== the loader: rank 0 and rank 1 of 2, buffer shuffle, decoded into columns"
for r in 0 1; do
	"$B/recordio-bench" --rank $r --world 2 --shuffle buffer --seed 1 --batch 128 \
		--decode image:f32:784:0.00392157,label:i64:1 --epochs 2 "$OUT/train"
done
