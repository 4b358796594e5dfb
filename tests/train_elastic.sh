#!/bin/sh
# train_elastic.sh — --resume at another world size (elastic): a run
# stopped mid-epoch on 2 ranks and resumed on 1 or on 4 keeps the global
# batch (2 x 16 = 1 x 32 = 4 x 8), trains every epoch on as many samples in
# as many steps as the uninterrupted run (each stop's partial epoch line
# aside, which says the epoch so far), and ends close to its accuracy
# (not bit-exact: the sums and the order of the rest of the epoch differ);
# a resumed epoch stopped again at 4 ranks and finished at 2 does too (and
# stopped and resumed at 4 it stays bit-exact); with
# records sharding, global shuffling and files sharding; and a world size
# that does not divide the global batch, or another --global-batch, is
# refused with one line.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)
# 800 records: 25 steps of 32 per epoch at every world size here; 6 epochs
# of Adam (two state vectors carried over) for an accuracy steady enough to
# compare
COMMON="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --batch 16 --epochs 6 \
--optimizer adam --lr 0.002 --seed 4 --quiet"
# how close the final test accuracy must be to the uninterrupted run's
CLOSE=0.08

# whole FILE: a copy of the metrics FILE without the lines of partial epochs
# (a run stopped by --max-steps reports the epoch so far; the run that
# resumes it reports the whole epoch), for comparing with an uninterrupted
# run's; prints the copy's name
whole() {
	grep -v '"partial": true' "$1" >"$1.whole"
	printf '%s' "$1.whole"
}

# within D of each other: close_to X Y D
close_to() {
	python3 -c 'import sys; a, b, d = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= d else 1)' \
		"$1" "$2" "$3"
}

for name in buffer global files; do
	case $name in
	buffer) order="--shuffle buffer --shuffle-buffer 200" ;;
	global) order="--shuffle global" ;;
	files) order="--shuffle buffer --sharding files" ;;
	esac
	expect_exit 0 mpi 2 $COMMON $order --checkpoint "full-$name" --metrics "full-$name.json"
	# 37 steps: stopped in the middle of the second epoch
	expect_exit 0 mpi 2 $COMMON $order --checkpoint "to1-$name" --max-steps 37 \
		--checkpoint-every 10 --metrics "to1-$name.json"
	expect_eq "25 12" "$(json_all "to1-$name.json" steps)" "$name: the epoch, and the partial one"
	cp -r "to1-$name" "to4-$name"
	cp "to1-$name.json" "to4-$name.json"
	for n in 1 4; do
		expect_exit 0 mpi $n $COMMON $order --checkpoint "to$n-$name" --resume \
			--metrics "to$n-$name.json"
		expect_eq "$(json_all "full-$name.json" samples)" \
			"$(json_all "$(whole "to$n-$name.json")" samples)" \
			"$name, 2 -> $n ranks: each epoch's samples"
		expect_eq "$(json_all "full-$name.json" steps)" \
			"$(json_all "$(whole "to$n-$name.json")" steps)" \
			"$name, 2 -> $n ranks: each epoch's steps"
		# the second epoch ended at the new world size, and the rest ran there
		expect_eq "2 $n $n $n $n $n" "$(json_all "$(whole "to$n-$name.json")" world)" \
			"$name: the world of each epoch"
		acc_full=$(json "full-$name.json" test_accuracy)
		acc_resumed=$(json "to$n-$name.json" test_accuracy)
		expect_exit 0 close_to "$acc_full" "$acc_resumed" "$CLOSE"
		echo "$name, 2 -> $n ranks: test accuracy $acc_resumed, uninterrupted $acc_full"
	done
done

# 2 ranks stop at step 37, 4 go on and stop at step 44 (still the second
# epoch), 4 again to step 47, 2 finish: the resumed epoch's state carries
# its history; and at the same world size it stays bit-exact: 4 ranks
# stopped at 44 and resumed to 47 end as 4 ranks that ran 37 to 47 at once
O="--shuffle buffer --shuffle-buffer 200"
expect_exit 0 mpi 2 $COMMON $O --checkpoint twice --max-steps 37 --metrics twice.json
cp -r twice once
expect_exit 0 mpi 4 $COMMON $O --checkpoint twice --max-steps 44 --resume --metrics twice.json
expect_exit 0 mpi 4 $COMMON $O --checkpoint twice --max-steps 47 --resume --metrics twice.json
expect_exit 0 mpi 4 $COMMON $O --checkpoint once --max-steps 47 --resume
expect_exit 0 cmp twice/checkpoint once/checkpoint
expect_exit 0 mpi 2 $COMMON $O --checkpoint twice --resume --metrics twice.json
expect_eq "$(json_all full-buffer.json samples)" "$(json_all "$(whole twice.json)" samples)" \
	"2 -> 4 -> 4 -> 2 ranks: each epoch's samples"
# each stop's partial line: the epoch so far (12, 19 and 22 of its steps)
expect_eq "12 19 22" "$(python3 -c 'import json,sys; print(" ".join(str(e["steps"]) for e in map(json.loads, open(sys.argv[1])) if e.get("partial")))' twice.json)" \
	"2 -> 4 -> 4 -> 2 ranks: the partial epochs"
expect_exit 0 close_to "$(json full-buffer.json test_accuracy)" \
	"$(json twice.json test_accuracy)" "$CLOSE"

# the global batch of 32 does not split over 3 ranks; --global-batch must be
# the checkpoint's
expect_exit 2 mpi 3 $COMMON $O --checkpoint twice --resume
expect_match 'global batch of 32 records .2 ranks x 16. does not split evenly over 3 ranks' err \
	"a world size that does not divide the global batch named"
expect_exit 2 mpi 4 $(echo "$COMMON" | sed 's/--batch 16 //') $O --global-batch 64 \
	--checkpoint twice --resume # (not with --batch, which --global-batch sets)
expect_match 'global-batch 64: .* was written with a global batch of 32' err \
	"another --global-batch named"

finish
