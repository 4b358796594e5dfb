#!/bin/sh
# train_resume.sh — checkpoints and --resume: a run stopped part way
# (--max-steps, mid-epoch) and resumed ends with exactly the state of an
# uninterrupted run, on 2 ranks with SGD, Adam and LARS; a run killed with
# SIGKILL at a random moment after a --checkpoint-every write resumes to the
# same end too; the metrics of the resumed epochs match; a checkpoint is
# refused by a world size that does not divide its global batch, or another
# seed; --resume with no checkpoint yet
# starts from scratch.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)
COMMON="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --batch 16 --epochs 3 \
--shuffle buffer --shuffle-buffer 200 --seed 4 --quiet"

for opt in sgd adam lars; do
	expect_exit 0 mpi 2 $COMMON --optimizer $opt --checkpoint "full-$opt" --metrics "full-$opt.json"
	# 25 steps per epoch: stop in the middle of the second epoch
	expect_exit 0 mpi 2 $COMMON --optimizer $opt --checkpoint "part-$opt" --max-steps 37 \
		--checkpoint-every 10 --metrics "part-$opt.json"
	expect_lines 1 "part-$opt.json" "one epoch finished before the stop"
	expect_exit 0 mpi 2 $COMMON --optimizer $opt --checkpoint "part-$opt" --resume \
		--metrics "part-$opt.json"
	expect_exit 0 cmp "full-$opt/checkpoint" "part-$opt/checkpoint"
	expect_eq "$(json_all "full-$opt.json" test_accuracy)" \
		"$(json_all "part-$opt.json" test_accuracy)" "resumed epochs' test accuracy"
	expect_eq "$(json_all "full-$opt.json" train_loss)" \
		"$(json_all "part-$opt.json" train_loss)" "resumed epochs' train loss"
done

# killed at any moment after its first checkpoint: one rank, no mpirun
SLOW="--train $TRAIN_SET $MNIST_X --hidden 256 --batch 4 --epochs 4 --seed 5 --quiet"
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" $SLOW --checkpoint kill-full
"$TRAIN" $SLOW --checkpoint kill-part --checkpoint-every 7 >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -f kill-part/checkpoint ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null && killed=yes || killed=no
wait $pid 2>/dev/null
echo "killed mid-run: $killed"
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" $SLOW --checkpoint kill-part --resume
expect_exit 0 cmp kill-full/checkpoint kill-part/checkpoint

# a checkpoint is refused by a world size its global batch (2 x 16) does
# not split over, or by another seed, and says why (tests/train_elastic.sh:
# the world sizes that divide it)
expect_exit 2 mpi 3 $COMMON --optimizer sgd --checkpoint full-sgd --resume
expect_match 'global batch of 32 records .2 ranks x 16. does not split evenly over 3 ranks' err \
	"a world size that does not divide the global batch named"
expect_exit 1 mpi 2 $COMMON --optimizer sgd --seed 99 --checkpoint full-sgd --resume
expect_match 'another --seed' err "another seed named"
expect_exit 1 mpi 2 $COMMON --optimizer adam --checkpoint full-sgd --resume
expect_match 'another --optimizer' err "another optimizer named"

# --resume before any checkpoint: a fresh start, the same as without it
expect_exit 0 mpi 2 $COMMON --optimizer sgd --checkpoint fresh --resume
expect_match 'starting from scratch' err "says it starts from scratch"
expect_exit 0 cmp full-sgd/checkpoint fresh/checkpoint

finish
