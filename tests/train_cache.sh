#!/bin/sh
# train_cache.sh — recordio-train --cache: compressed training shards
# decompressed into memory once (and uncompressed ones read), decoded once
# and served from there give the very run the files give: with --cache
# auto (the default), a size, off, or a size too small to hold them, the
# same seed ends with byte-identical checkpoints and the same losses and
# accuracies, in buffer and shard order, and a run stopped and resumed with
# the cache ends as an uncached uninterrupted one. A bad --cache is a
# one-line usage error.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

# the test data, LZ4-compressed: 4 training shards, 2 test shards
"$PACK" -q --from tfrecord --output "$D/lz" --shards 4 --compression lz4 \
	"$(shards 0 7)" || { echo "cannot pack lz4 shards"; exit 1; }
"$PACK" -q --from tfrecord --output "$D/lzt" --shards 2 --compression lz4 \
	"$(shards 8 9)" || { echo "cannot pack lz4 test shards"; exit 1; }
COMMON="--train $D/lz --test $D/lzt $MNIST_X --hidden 16 --batch 25 --epochs 2 --seed 3"

# metrics FILE: what must not change (every epoch's losses and accuracy)
metrics() {
	for k in train_loss test_loss test_accuracy test_records; do json_all "$1" "$k"; done
}

for order in buffer none; do
	expect_exit 0 mpi 2 $COMMON --shuffle $order --cache off --checkpoint off-$order \
		--metrics off-$order.json
	if grep -q 'held in memory' out; then
		fail "$order: --cache off cached"
	else
		pass
	fi
	for c in auto 64M 1K; do
		expect_exit 0 mpi 2 $COMMON --shuffle $order --cache $c --checkpoint c$c-$order \
			--metrics c$c-$order.json
		if [ "$c" = 1K ]; then # too small: nothing cached, the same run
			if grep -q 'held in memory' out; then
				fail "$order: --cache 1K cached"
			else
				pass
			fi
		else
			expect_match '^recordio-train: the training shards held in memory, decoded once \([0-9.]+ MiB on rank 0, --cache\)$' \
				out "$order: --cache $c is used"
		fi
		expect_exit 0 cmp off-$order/checkpoint c$c-$order/checkpoint
		expect_eq "$(metrics off-$order.json)" "$(metrics c$c-$order.json)" \
			"$order: --cache $c: the same losses and accuracy"
	done
done

# the default is auto
expect_exit 0 mpi 2 $COMMON --checkpoint default
expect_match 'held in memory, decoded once' out "--cache auto by default"
expect_exit 0 cmp off-buffer/checkpoint default/checkpoint

# uncompressed training shards (recordio-pack's default): read into memory
# and decoded once as well when shuffled, the same run as from the files
PLAIN="--train $(shards 0 7) --test $D/lzt $MNIST_X --hidden 16 --batch 25 --epochs 2 --seed 3"
expect_exit 0 mpi 2 $PLAIN --cache off --checkpoint plain-off
if grep -q 'held in memory' out; then
	fail "uncompressed shards: --cache off cached"
else
	pass
fi
expect_exit 0 mpi 2 $PLAIN --checkpoint plain-auto
expect_match 'held in memory, decoded once' out "uncompressed shards: --cache auto is used"
expect_exit 0 cmp plain-off/checkpoint plain-auto/checkpoint

# stopped mid-epoch and resumed with the cache: the uncached run's end
expect_exit 0 mpi 2 $COMMON --cache auto --checkpoint part --max-steps 23 --checkpoint-every 10
expect_exit 0 mpi 2 $COMMON --cache auto --checkpoint part --resume
expect_exit 0 cmp off-buffer/checkpoint part/checkpoint

# usage errors
expect_exit 2 "$TRAIN" $COMMON --cache lots
expect_match "^recordio-train: --cache: 'lots': want a size \(e.g. 512M, 2G\), auto or off$" \
	err "--cache lots"

finish
