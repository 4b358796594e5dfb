#!/bin/sh
# train_dir.sh — recordio-train reads a directory where shards are
# expected (--train DIR, --test DIR/): the shard files in it, sorted, its
# .idx files left out; a TFX-like split directory of the TensorFlow-written
# penguin file; an empty directory is one message naming it. One quick
# epoch each, on 2 ranks under mpirun.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_TIMEOUT=120

# $D holds mnist-0000N-of-00010.tfrecord and their .idx files
expect_exit 0 mpi 2 --train "$D" --test "$D/" $MNIST_X --hidden 16 --batch 50 --epochs 1 \
	--shuffle none --metrics dir.json --quiet
expect_eq 1000 "$(json dir.json test_records)" "every record of the directory evaluated once"
expect_eq 10 "$(json dir.json steps)" "500 records per rank in batches of 50"

# a TFX split: DIR/data_tfrecord-00000-of-00001.gz
mkdir -p tfx/train
cp "$TESTDATA/tfx-penguin-train.tfrecord.gz" tfx/train/data_tfrecord-00000-of-00001.gz
expect_exit 0 mpi 2 --train tfx/train --test tfx/train \
	--x culmen_length_mm,culmen_depth_mm,flipper_length_mm,body_mass_g --y species \
	--classes 3 --hidden 8 --batch 16 --epochs 1 --metrics tfx.json --quiet
expect_eq 234 "$(json tfx.json test_records)" "all 234 penguins of the split directory"

# an empty directory: one line naming it, non-zero from every rank
mkdir empty
expect_exit 1 mpi 2 --train empty $MNIST_X --epochs 1 --quiet
expect_match '^recordio-train: .*empty: no shards match: an empty directory' err \
	"an empty directory is named"
expect_eq 1 "$(grep -c '^recordio-train: ' err)" "one message from one rank"

finish
