#!/bin/sh
# train_synthetic.sh — recordio-train --synthetic: batches made in memory,
# no loader and no files: it learns on 1 and 2 ranks (the loss falls), the
# same seed gives bit-identical parameters, a run stopped and resumed ends
# as an uninterrupted one, the input width comes from --synthetic=N or from
# the data's --x, 60000 records make an epoch, and wrong combinations are
# one-line usage errors.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

# -- learns, without any data: 784 inputs by default, 60000 records an epoch
expect_exit 0 mpi 2 --synthetic --hidden 32 --batch 100 --epochs 2 --metrics syn.json
expect_match '^recordio-train: 2 ranks, [0-9]+ parameters \(784-32-10\), 100 records per rank and step, 300 steps per epoch of synthetic data' \
	out "784 inputs, 60000 records an epoch over 2 ranks"
first=$(python3 -c 'import json; print(json.loads(open("syn.json").readline())["train_loss"])')
last=$(json syn.json train_loss)
above "$first" "$last" && pass || fail "train loss did not fall: $first -> $last"
above 0.01 "$(json syn.json data_wait_fraction)" && pass || fail "waited for synthetic data"

# -- the width from --synthetic=N, and classes from --classes
expect_exit 0 "$TRAIN" --synthetic=20 --classes 3 --hidden 8 --global-batch 64 --epochs 1
expect_match '\(20-8-3\), 64 records per rank and step, 938 steps per epoch' out "--synthetic=20"

# -- the width from the data's --x (its first record), the test set evaluated
expect_exit 0 mpi 2 --synthetic --train "$(shard 0)" --test "$(shard 1)" $MNIST_X --hidden 16 \
	--batch 50 --epochs 1 --metrics data.json
expect_match '\(784-16-10\)' out "the width of image_floats"
expect_eq 100 "$(json data.json test_records)" "the test set is still evaluated"

# -- deterministic, and resumed to the same end
COMMON="--synthetic=50 --hidden 16 --batch 32 --epochs 2 --seed 7 --quiet"
expect_exit 0 mpi 2 $COMMON --checkpoint full
expect_exit 0 mpi 2 $COMMON --checkpoint again
expect_exit 0 cmp full/checkpoint again/checkpoint
expect_exit 0 mpi 2 $COMMON --checkpoint part --max-steps 1000 --checkpoint-every 400
expect_exit 0 mpi 2 $COMMON --checkpoint part --resume
expect_exit 0 cmp full/checkpoint part/checkpoint
# ... and another seed is other data
expect_exit 0 mpi 2 --synthetic=50 --hidden 16 --batch 32 --epochs 2 --seed 8 --quiet \
	--checkpoint seed8
expect_exit 1 cmp full/checkpoint seed8/checkpoint

# -- usage errors: one line each, exit 2
expect_exit 2 "$TRAIN" --synthetic=20 --train "$(shard 0)" $MNIST_X
expect_match "^recordio-train: --synthetic=20: the input width is that of --x in the data given; leave out =N or the data$" \
	err "=N with data"
expect_exit 2 "$TRAIN" --synthetic --x image_floats --y image_class
expect_match "^recordio-train: --synthetic with --x/--y needs --train or --test to read their widths from$" \
	err "--x without data"
expect_exit 2 "$TRAIN" --synthetic=0
expect_match "^recordio-train: --synthetic: '0' is not a number of inputs$" err "--synthetic=0"
expect_exit 2 "$TRAIN" --synthetic --train "$(shard 0)"
expect_match "^recordio-train: --x FEATURE\[,FEATURE...\] is required$" err "--train without --x"

finish
