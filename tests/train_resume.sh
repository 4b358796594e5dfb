#!/bin/sh
# train_resume.sh — checkpoints and --resume: a run stopped part way
# (--max-steps, mid-epoch) and resumed ends with exactly the state of an
# uninterrupted run, on 2 ranks with SGD, Adam and LARS; a run killed with
# SIGKILL after its first epoch (asserted: it died of the kill, mid-run,
# with a --checkpoint-every checkpoint written) resumes from within the run
# to the same end too; the metrics of the resumed epochs match; a
# checkpoint is refused by a world size that does not divide its global
# batch, or another seed; --resume with no checkpoint yet starts from
# scratch.
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
	expect_lines 2 "part-$opt.json" "one epoch finished before the stop, and the partial one"
	expect_exit 0 mpi 2 $COMMON --optimizer $opt --checkpoint "part-$opt" --resume \
		--metrics "part-$opt.json"
	expect_exit 0 cmp "full-$opt/checkpoint" "part-$opt/checkpoint"
	# the whole epochs' lines (the stop's partial one aside)
	grep -v '"partial": true' "part-$opt.json" >"whole-$opt.json"
	expect_eq "$(json_all "full-$opt.json" test_accuracy)" \
		"$(json_all "whole-$opt.json" test_accuracy)" "resumed epochs' test accuracy"
	expect_eq "$(json_all "full-$opt.json" train_loss)" \
		"$(json_all "whole-$opt.json" train_loss)" "resumed epochs' train loss"
done

# killed with SIGKILL mid-run, after its first epoch and so after
# --checkpoint-every writes: one rank, no mpirun, 4 epochs of 200 steps.
# The kill must land while it runs (it dies of SIGKILL, not at its end) and
# after a checkpoint, so that the resume continues from a step within the
# run, neither from scratch nor from a finished run
SLOW="--train $TRAIN_SET $MNIST_X --hidden 256 --batch 4 --epochs 4 --seed 5"
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" $SLOW --quiet --checkpoint kill-full
"$TRAIN" $SLOW --quiet --checkpoint kill-part --checkpoint-every 7 --metrics kill.json \
	>/dev/null 2>&1 &
pid=$!
i=0
while [ ! -s kill.json ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
[ -f kill-part/checkpoint ] && had_checkpoint=yes || had_checkpoint=no
kill -9 $pid 2>/dev/null
wait $pid
expect_eq 137 $? "killed mid-run by SIGKILL (the exit status of the killed run)"
expect_eq yes $had_checkpoint "a checkpoint written before the kill"
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" $SLOW --checkpoint kill-part --resume
at=$(sed -n 's/^resumed from .*kill-part\/checkpoint: epoch \([0-9]*\), step \([0-9]*\) of 200$/\1 \2/p' out)
# shellcheck disable=SC2086
set -- ${at:-0 0}
step=$((($1 - 1) * 200 + $2))
echo "killed at a checkpoint: resumed at step $step of 800"
[ "$step" -gt 0 ] && [ "$step" -lt 800 ] && pass ||
	fail "the resume continues the killed run within it: 'resumed from' at $step of 800 steps"
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
