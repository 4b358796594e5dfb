#!/bin/sh
# train_metrics.sh — what recordio-train's --metrics says is true, and a
# resume continues what it counts: a run stopped by --max-steps writes its
# partial epoch ("partial": true, the test set evaluated) and evaluates
# every --eval-every copy it took, under allreduce and under ps; after a
# --resume the copies' updates, gradients, samples and wall_seconds go on
# from where they were (2 -> 4 ranks too), the resumed epoch's counts are
# the whole epoch's (ps: updates, gradients, dropped) while its rate counts
# only the part after the resume; a checkpoint's clock that is lost is
# said. --sharding auto's choice is kept by the checkpoint: shards without
# .idx trained on 2 ranks resume on 4 at an epoch's end, an epoch in
# progress keeps its sharding (refused on 4 ranks, with the reason), and
# adding or removing the .idx files changes nothing; a resume is refused
# only for a real difference, named: a shard of other records, another
# number of shards, --embed on another feature, a ps model of another size.
# A run that fails after a --checkpoint-every checkpoint has written the
# copies taken before it: resumed, it loses none (allreduce, ps).
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)
# 800 records: 50 steps of 2 x 8 an epoch
COMMON="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 16 --batch 8 --seed 3 --quiet"

# py FILE CODE [ARG]: runs CODE with `lines` the metrics FILE's objects,
# `snaps` its --eval-every lines, `epochs` its epoch lines and ARG in
# sys.argv[2]; exits as CODE does
py() {
	python3 -c "import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
snaps = [e for e in lines if e.get('snapshot')]
epochs = [e for e in lines if not e.get('snapshot')]
$2" "$1" "${3:-}"
}

# -- a stop by --max-steps: the partial epoch and the copies, allreduce
expect_exit 0 mpi 2 $COMMON --epochs 2 --max-steps 70 --eval-every 10 --metrics ar.json
py ar.json '
assert [e["epoch"] for e in epochs] == [1, 2], epochs
assert "partial" not in epochs[0] and epochs[1]["partial"] is True, epochs
assert epochs[1]["steps"] == 20 and epochs[1]["samples"] == 320, epochs[1]
assert epochs[1]["test_records"] == 200 and epochs[1]["test_accuracy"] is not None, epochs[1]
assert [s["updates"] for s in snaps] == [10, 20, 30, 40, 50, 60, 70], snaps
assert [s["epoch"] for s in snaps] == [1] * 5 + [2] * 2, snaps
assert all(s["test_accuracy"] is not None for s in snaps), snaps
' && pass || fail "allreduce stopped at step 70: the partial epoch 2 and the copies at 60 and 70"

# ... and under ps (1 server, 2 workers, a copy every 20 x 2 gradients)
expect_exit 0 mpi 3 $COMMON --batch 2 --strategy ps --eval-every 20 --max-steps 100 --metrics ps.json
py ps.json '
assert len(epochs) == 1 and epochs[0]["partial"] is True, epochs
assert epochs[0]["worker_steps"] == [100, 100] and epochs[0]["test_records"] == 200, epochs
assert epochs[0]["updates"] == 100 and epochs[0]["gradients"] == 200, epochs
assert [s["gradients"] for s in snaps] == [40, 80, 120, 160, 200], snaps
assert [s["updates"] for s in snaps] == [20, 40, 60, 80, 100], snaps
' && pass || fail "ps stopped at step 100: its partial epoch and five copies"

# -- counters across a resume (allreduce): a run cut at step 70 and resumed
# says what the uninterrupted run says, copy for copy
expect_exit 0 mpi 2 $COMMON --epochs 2 --eval-every 10 --checkpoint full --metrics full.json
expect_exit 0 mpi 2 $COMMON --epochs 2 --eval-every 10 --checkpoint cut --max-steps 70 \
	--metrics cut.json
expect_exit 0 mpi 2 $COMMON --epochs 2 --eval-every 10 --checkpoint cut --resume --metrics cut.json
expect_exit 0 cmp full/checkpoint cut/checkpoint
for key in updates gradients samples test_accuracy; do
	expect_eq "$(py full.json 'print(*[s[sys.argv[2]] for s in snaps])' "$key" 2>&1)" \
		"$(py cut.json 'print(*[s[sys.argv[2]] for s in snaps])' "$key" 2>&1)" \
		"each copy's $key, cut at 70 and resumed"
done
py cut.json '
w = [s["wall_seconds"] for s in snaps]
assert all(a < b for a, b in zip(w, w[1:])), w
e = [x["wall_seconds"] for x in epochs]
assert e == sorted(e) and e[0] > 0, e
# the resumed epoch: its samples the whole epoch'"'"'s, its rate the samples
# after the resume over the seconds after it
part, whole = epochs[1], epochs[2]
assert part["partial"] and "partial" not in whole and whole["samples"] == 800, epochs
done = whole["samples"] - part["samples"]
assert abs(whole["samples_per_s"] * whole["seconds"] - done) <= 1e-3 * done, (whole, done)
first = epochs[0]
assert abs(first["samples_per_s"] * first["seconds"] - 800) <= 1e-3 * 800, first
' && pass || fail "wall_seconds go on across the resume; the resumed epoch's rate is its own part's"

# ... elastic, 2 -> 4 ranks at step 70: 70 steps of 2 gradients, then 4 each
expect_exit 0 mpi 2 $COMMON --epochs 2 --eval-every 10 --checkpoint el --max-steps 70 --metrics el.json
expect_exit 0 mpi 4 $COMMON --epochs 2 --eval-every 10 --checkpoint el --resume --metrics el.json
expect_eq "20 40 60 80 100 120 140 180 220 260" \
	"$(py el.json 'print(*[s["gradients"] for s in snaps])')" "each copy's gradients, 2 -> 4 ranks"
expect_eq "160 320 480 640 800 960 1120 1280 1440 1600" \
	"$(py el.json 'print(*[int(s["samples"]) for s in snaps])')" "each copy's samples, 2 -> 4 ranks"

# a lost clock: said, and the seconds count from the resume
expect_exit 0 mpi 2 $COMMON --epochs 2 --checkpoint noclock --max-steps 70
rm noclock/clock
expect_exit 0 mpi 2 $COMMON --epochs 2 --checkpoint noclock --resume
expect_match "^recordio-train: noclock/clock is missing or not its checkpoint's: the metrics' wall_seconds count from this resume$" \
	err "a lost clock said"

# -- ps: the resumed epoch's server counts are the whole epoch's
PS="$COMMON --batch 4 --strategy ps --epochs 1 --eval-every 25"
expect_exit 0 mpi 3 $PS --checkpoint psfull --metrics psfull.json
expect_exit 0 mpi 3 $PS --checkpoint pscut --max-steps 30 --metrics pscut.json
expect_exit 0 mpi 3 $PS --checkpoint pscut --resume --metrics pscut.json
expect_exit 0 cmp psfull/checkpoint pscut/checkpoint
for key in updates gradients dropped_gradients steps samples worker_steps test_accuracy; do
	expect_eq "$(py psfull.json 'print(epochs[-1][sys.argv[2]])' "$key" 2>&1)" \
		"$(py pscut.json 'print(epochs[-1][sys.argv[2]])' "$key" 2>&1)" "ps, cut at 30: the epoch's $key"
done
expect_eq "True 30 60" "$(py pscut.json 'print(epochs[0]["partial"], epochs[0]["updates"], epochs[0]["gradients"])')" \
	"ps, cut at 30: the partial epoch's counts"
for key in updates gradients samples; do
	expect_eq "$(py psfull.json 'print(*[s[sys.argv[2]] for s in snaps])' "$key" 2>&1)" \
		"$(py pscut.json 'print(*[s[sys.argv[2]] for s in snaps])' "$key" 2>&1)" \
		"ps, cut at 30: each copy's $key"
done

# -- a run that fails after a --checkpoint-every checkpoint: the copies
# taken before it were kept in memory until the epoch's end, and the run
# resumed from it took only the later ones (those before were lost, with
# exit 0 at the end). Record 608 (shard 6's 9th) damaged: the run fails at
# allreduce's step 39 (batch 16), ps's worker 1's step 27 (batch 8); with
# the shard restored the resumed run writes what the run never cut writes.
mkdir -p fail
for i in 0 1 2 3 4 5 6 7; do cp "$(shard $i)" "$(shard $i).idx" fail/; done
FAIL_SET=$(echo "$TRAIN_SET" | sed "s|$D/|fail/|g")
cp fail/mnist-00006-of-00010.tfrecord good6
damage fail/mnist-00006-of-00010.tfrecord 8
cp fail/mnist-00006-of-00010.tfrecord bad6
for how in "1 --batch 16" "3 --batch 8 --strategy ps"; do
	np=${how%% *}
	before="5 10 15 20 25 30 35" # checkpoints at 12, 24, 36; the failure at 39
	[ "$np" = 3 ] && before="5 10 15 20" # at 12 and 24; at 27
	CF="--train $FAIL_SET --test $TEST_SET $MNIST_X --hidden 16 --seed 3 --quiet --shuffle none \
--epochs 2 --eval-every 5 --checkpoint-every 12 ${how#* }"
	rm -rf cf-whole cf-cut cf-whole.json cf-cut.json
	cp good6 fail/mnist-00006-of-00010.tfrecord
	expect_exit 0 mpi "$np" $CF --checkpoint cf-whole --metrics cf-whole.json
	cp bad6 fail/mnist-00006-of-00010.tfrecord
	expect_exit 1 mpi "$np" $CF --checkpoint cf-cut --metrics cf-cut.json
	expect_eq "$before" "$(py cf-cut.json 'print(*[s["updates"] for s in snaps])')" \
		"$how: the copies before the last checkpoint written by the run that failed"
	cp good6 fail/mnist-00006-of-00010.tfrecord
	expect_exit 0 mpi "$np" $CF --checkpoint cf-cut --resume --metrics cf-cut.json
	expect_exit 0 cmp cf-whole/checkpoint cf-cut/checkpoint
	for key in epoch updates gradients samples test_accuracy; do
		expect_eq "$(py cf-whole.json 'print(*[s[sys.argv[2]] for s in snaps])' "$key" 2>&1)" \
			"$(py cf-cut.json 'print(*[s[sys.argv[2]] for s in snaps])' "$key" 2>&1)" \
			"$how, failed at a damaged record and resumed: each copy's $key"
	done
	expect_eq "$(py cf-whole.json 'print(*[(e["epoch"], e["samples"]) for e in epochs])')" \
		"$(py cf-cut.json 'print(*[(e["epoch"], e["samples"]) for e in epochs])')" \
		"$how, failed and resumed: the epochs"
done

# -- --sharding auto on 2 shards without .idx: files on 2 ranks, records on 4
"$PACK" -q --from tfrecord --output two --shards 2 "$TESTDATA/tfx-mnist.tfrecord" ||
	fail "pack two"
rm -f two-*.idx
TWO="--train two --x image_floats --y image_class --hidden 16 --batch 8 --seed 5 --quiet"
# at an epoch's end: on 4 ranks the next epochs run, sharded by records
expect_exit 0 mpi 2 $TWO --epochs 1 --checkpoint ends --metrics ends.json
expect_exit 0 mpi 4 $TWO --epochs 3 --checkpoint ends --resume --metrics ends.json
# (each epoch 62 steps of 16: 500 records a rank in batches of 8, then
# 250 in batches of 4)
expect_eq "992 992 992" "$(json_all ends.json samples)" "2 shards without .idx, 2 -> 4 ranks"
expect_eq "2 4 4" "$(json_all ends.json world)" "... each epoch's world"
# in an epoch: it is finished by files sharding, which 4 ranks cannot share
# 2 shards by; said, and on 2 ranks it goes on
expect_exit 0 mpi 2 $TWO --epochs 2 --checkpoint mid --max-steps 70 --metrics mid.json
cp -r mid mid-again
expect_exit 2 mpi 4 $TWO --epochs 2 --checkpoint mid --resume
expect_match "^recordio-train: mid/checkpoint: its epoch in progress is sharded by files, and 2 shards cannot serve 4 ranks by files: resume it on 2 or fewer" \
	err "why 4 ranks cannot take the epoch in progress"
expect_exit 2 mpi 2 $TWO --epochs 2 --checkpoint mid --resume --sharding records
expect_match "^recordio-train: --sharding records: mid/checkpoint's epoch in progress is sharded by files; resume with --sharding files" \
	err "another sharding for the epoch in progress"
expect_exit 0 mpi 2 $TWO --epochs 2 --checkpoint whole2 --metrics whole2.json
# .idx files made between the runs: auto would choose records; the
# checkpoint's files sharding is kept, to the same end as the run never cut
for f in two-*.tfrecord; do "$INDEX" "$f" >/dev/null || fail "index $f"; done
expect_exit 0 mpi 2 $TWO --epochs 2 --checkpoint mid --resume --metrics mid.json
expect_exit 0 cmp whole2/checkpoint mid/checkpoint
expect_eq "992 992" "$(json_all whole2.json samples)" "files sharding, 2 ranks"
# ... and the other way: trained with .idx (records), resumed without
expect_exit 0 mpi 2 $TWO --epochs 2 --checkpoint rec --metrics rec.json
expect_exit 0 mpi 2 $TWO --epochs 2 --checkpoint rec-cut --max-steps 70
rm -f two-*.idx
expect_exit 0 mpi 2 $TWO --epochs 2 --checkpoint rec-cut --resume
expect_exit 0 cmp rec/checkpoint rec-cut/checkpoint

# a real difference is named: a shard with other records, another count of
# shards
head -c $((3203 * 400)) two-00001-of-00002.tfrecord >cut.tmp && mv cut.tmp two-00001-of-00002.tfrecord
expect_exit 1 mpi 2 $TWO --epochs 2 --checkpoint mid-again --resume
expect_match "^recordio-train: --train: .*two-00001-of-00002.tfrecord \(shard 1\) has 400 records, mid-again/checkpoint was written when it had 500: resume on the same data$" \
	err "the shard and its two counts"
cp two-00000-of-00002.tfrecord one.tfrecord
expect_exit 1 mpi 2 --train one.tfrecord --x image_floats --y image_class --hidden 16 --batch 8 \
	--seed 5 --quiet --epochs 2 --checkpoint mid-again --resume
expect_match "^recordio-train: --train one.tfrecord: 1 shard, mid-again/checkpoint was written on 2: resume on the same data$" \
	err "another number of shards"

# -- --embed on another feature: the columns named, not hashed
GEN="$BIN/bench/ctr_gen"
if [ -x "$GEN" ]; then
	expect_exit 0 "$GEN" -o ctr -n 800 -s 2 -f 2 -V 100 -k 2 -d 4 --seed 3
	CTR="--train ctr --x dense --y label --classes 2 --hidden 8 --batch 8 --epochs 2 --quiet"
	expect_exit 0 mpi 2 $CTR --embed cat0:100:4 --checkpoint emb --max-steps 10
	expect_exit 1 mpi 2 $CTR --embed cat1:100:4 --checkpoint emb --resume
	expect_match "^recordio-train: emb/checkpoint was written with --embed cat0 \(2 values\), this run has --embed cat1 \(2 values\): resume with the same$" \
		err "the tables' features named"
else
	echo "SKIP: $GEN not built: the --embed case"
fi

# -- a ps checkpoint resumed with another model is refused, not copied
expect_exit 0 mpi 3 $COMMON --strategy ps --epochs 1 --checkpoint psmodel --max-steps 5
expect_exit 1 mpi 3 --train "$TRAIN_SET" --test "$TEST_SET" $MNIST_X --hidden 64 --batch 8 \
	--seed 3 --quiet --strategy ps --epochs 1 --checkpoint psmodel --resume
expect_match "^recordio-train: psmodel/checkpoint was written with another model" err \
	"ps: another --hidden"

finish
