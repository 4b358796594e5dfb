#!/bin/sh
# train_pipeline_eval.sh — --eval-every with model parallelism
# (doc/parallelism.md): each rank keeps a copy of its part (its stage's
# layers, its slices) every N steps, and at the epoch's end (or a stop by
# --max-steps) each copy goes through the pipeline as the epoch's test
# evaluation does. The copies' lines in --metrics say what data-parallel
# training's say at the same steps on the same global batch and seed:
# P = 2, T = 2 and P2 x T2 against 1 rank (the test loss within 1e-4, the
# accuracy within one test record: float order), their updates and
# samples the same; the model's own parameters come back after the
# copies (the second epoch trains on from them: the same checkpoint).
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

R="--train $(shards 0 3) --test $(shard 9) $MNIST_X --hidden 64,32 --batch 20 --epochs 2 \
	--seed 5 --eval-every 7 --quiet"
expect_exit 0 mpi 1 $R --metrics dp1.json --checkpoint dp1
# the copies' lines: each one's step, samples, test loss and accuracy
snaps() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
	e = json.loads(l)
	if e.get("snapshot"):
		print(e["epoch"], e["updates"], int(e["samples"]), e["test_loss"], e["test_accuracy"])' "$1"
}
snaps dp1.json >dp1.snaps
# 400 records a step of 20: 20 steps an epoch, a copy at 7, 14 (epoch 1),
# 21, 28, 35 (epoch 2); the copies differ (the comparison can fail)
expect_eq "1 7 140;1 14 280;2 21 420;2 28 560;2 35 700" \
	"$(cut -d' ' -f1-3 dp1.snaps | paste -sd';')" "1 rank's copies"
expect_eq 5 "$(cut -d' ' -f4 dp1.snaps | sort -u | wc -l)" "five different test losses"

# same_snaps A B WHAT [COUNT]: B's COUNT (5) copies as A's, up to the
# sums' order
same_snaps() {
	python3 -c 'import sys
a, b = ([l.split() for l in open(f)] for f in sys.argv[1:3])
assert len(a) == len(b) == int(sys.argv[3]), (a, b)
for x, y in zip(a, b):
	assert x[:3] == y[:3], (x, y)
	assert abs(float(x[3]) - float(y[3])) <= 1e-4, (x, y)
	assert abs(float(x[4]) - float(y[4])) <= 1.0 / 100 + 1e-9, (x, y)' "$1" "$2" "${4:-5}" && pass ||
		fail "$3: $(paste -sd';' "$2") against $(paste -sd';' "$1")"
}
for layout in "p2 2 --pipeline 2" "t2 2 --tensor 2" "p2t2 4 --pipeline 2 --tensor 2"; do
	set -- $layout
	name=$1 n=$2
	shift 2
	expect_exit 0 mpi "$n" $R "$@" --metrics "$name.json" --checkpoint "$name"
	snaps "$name.json" >"$name.snaps"
	same_snaps dp1.snaps "$name.snaps" "$name's --eval-every copies against 1 rank's"
	same_params dp1 "$name" "$name: the parameters back after the copies"
done

# under --precision bf16 (where the CPU has bf16 GEMMs): the copies are
# placed back into fp32 masters whose bf16 copy must be made again, for
# evaluation and for the steps after it. 21 steps: copies at 7 and 14
# evaluated at epoch 1's end, three steps of epoch 2 on the restored
# weights, the copy at 21 evaluated at the stop. Not longer: P = 2 and
# 1 rank differ by float order (1e-8 of the parameters after 20 steps),
# and once that moves a weight across a bf16 rounding boundary the two
# runs part by bf16's step (2^-8 of that weight): 2e-4 after 35 steps.
# (symbolized, as tests/train_precision.sh is: tests/lsan.supp names the
# dlerror buffer oneDNN leaves by its function's name)
if "$BIN/tests/test_train_bf16" >/dev/null 2>&1; then
	asan_was=$ASAN_OPTIONS
	export ASAN_OPTIONS="$ASAN_OPTIONS:symbolize=1"
	for layout in "b1 1" "bp2 2 --pipeline 2"; do
		set -- $layout
		name=$1 n=$2
		shift 2
		expect_exit 0 mpi "$n" $R --precision bf16 --max-steps 21 "$@" --metrics "$name.json" \
			--checkpoint "$name"
		snaps "$name.json" >"$name.snaps"
	done
	expect_eq "1 7 140;1 14 280;2 21 420" "$(cut -d' ' -f1-3 b1.snaps | paste -sd';')" \
		"bf16: 1 rank's copies"
	expect_eq 3 "$(cut -d' ' -f4 b1.snaps | sort -u | wc -l)" "bf16: three different test losses"
	same_snaps b1.snaps bp2.snaps "bf16: P2's --eval-every copies against 1 rank's" 3
	same_params b1 bp2 "bf16: P2's parameters after the copies against 1 rank's"
	export ASAN_OPTIONS="$asan_was"
else
	echo "bf16 with --eval-every not checked: no bf16 GEMMs here (tests/test_train_bf16)"
fi

# a stop by --max-steps: the copies taken in the partial epoch evaluated
expect_exit 0 mpi 2 $R --pipeline 2 --max-steps 30 --metrics cut.json
snaps cut.json >cut.snaps
expect_eq "$(head -n 4 p2.snaps)" "$(cat cut.snaps)" \
	"P2 stopped at 30: its copies at 7, 14, 21, 28 as unbroken"
finish
