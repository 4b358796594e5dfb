#!/bin/sh
# train_mpi.sh — recordio-train under mpirun: two ranks learn (loss falls,
# accuracy far above chance) on tfx-mnist and on the penguin file (four
# float features); one rank with global batch G and two ranks with global
# batch G end with the same parameters; uneven shards (one rank 33% fewer
# records) finish with the agreed steps and no hang; evaluation counts
# every test record exactly once whatever the split; the same seed and
# world give bit-identical checkpoints, wherever the loaders run; a NaN in one rank's data makes
# every rank skip that step, counted, and training goes on; a diverging run
# writes null, never nan, in its metrics; by default a rank runs no more
# OpenBLAS threads than the CPUs it is bound to.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)

# -- two ranks learn
expect_exit 0 mpi 2 --train "$TRAIN_SET" --test "$TEST_SET" $MNIST_X --hidden 64 --batch 32 \
	--epochs 8 --lr 0.02 --metrics learn.json
expect_lines 8 learn.json "one metrics line per epoch"
first=$(python3 -c 'import json; print(json.loads(open("learn.json").readline())["train_loss"])')
last=$(json learn.json train_loss)
above "$first" "$last" && pass || fail "train loss did not fall: $first -> $last"
acc=$(json learn.json test_accuracy)
above "$acc" 0.7 && pass || fail "test accuracy $acc (chance is 0.1)"
expect_eq 200 "$(json learn.json test_records)" "every test record evaluated once"
expect_eq 12 "$(json learn.json steps)" "400 records per rank in batches of 32"
expect_match '^epoch +8 +train loss' out "a line per epoch on stdout"
for key in samples_per_s data_wait_fraction allreduce_seconds gemm_gflops; do
	above "$(json learn.json $key)" -1 && pass || fail "metrics lack $key"
done

# -- penguins: four float features concatenated, three classes
PENGUIN="$TESTDATA/tfx-penguin-train.tfrecord.gz"
expect_exit 0 mpi 2 --train "$PENGUIN" --test "$PENGUIN" \
	--x culmen_length_mm,culmen_depth_mm,flipper_length_mm,body_mass_g --y species \
	--classes 3 --hidden 16 --batch 16 --epochs 40 --optimizer adam --lr 0.01 --metrics peng.json
acc=$(json peng.json test_accuracy)
above "$acc" 0.8 && pass || fail "penguin accuracy $acc"
expect_eq 234 "$(json peng.json test_records)" "all 234 penguins evaluated once"

# -- the defaults (options.c): 20 epochs; 1 epoch of warmup to the scaled
# rate 2 x 0.05, then cosine decay towards 0; batch 128 per rank
expect_exit 0 mpi 2 --train "$PENGUIN" \
	--x culmen_length_mm,culmen_depth_mm,flipper_length_mm,body_mass_g --y species \
	--classes 3 --batch 16 --metrics defaults.json --quiet
expect_lines 20 defaults.json "20 epochs by default"
expect_eq "True 0.1 True" "$(python3 -c 'import json,sys; e=[json.loads(l) for l in open(sys.argv[1])]
print(0.05 < e[0]["lr"] < 0.1, round(e[1]["lr"], 2), e[-1]["lr"] < 0.001)' defaults.json)" \
	"warming up in epoch 1, 0.1 in epoch 2, cosine to under 1% of it"

# -- evaluation split four ways with batches that do not divide: each once
expect_exit 0 mpi 4 --train "$PENGUIN" --test "$PENGUIN" \
	--x culmen_length_mm,culmen_depth_mm,flipper_length_mm,body_mass_g --y species \
	--classes 3 --hidden 8 --batch 8 --epochs 1 --eval-batch 7 --metrics peng4.json
expect_eq 234 "$(json peng4.json test_records)" "234 penguins over 4 ranks, counted once"

# -- strong scaling: global batch G on 1 and on 2 ranks, same parameters.
# G is the whole training set, so every step sees the same records in both
# worlds however the loader splits them; 6 steps with momentum and decay.
for opt in sgd adam lars; do
	for np in 1 2; do
		expect_exit 0 mpi $np --train "$TRAIN_SET" $MNIST_X --hidden 32 --global-batch 800 \
			--epochs 6 --shuffle none --optimizer $opt --lr 0.01 --weight-decay 0.001 \
			--checkpoint "strong-$opt-$np" --quiet
	done
	expect_exit 0 "$CKPT_DIFF" "strong-$opt-1" "strong-$opt-2" 1e-4
done
# ... and the comparison can fail: another seed is another model
expect_exit 0 mpi 2 --train "$TRAIN_SET" $MNIST_X --hidden 32 --global-batch 800 \
	--epochs 6 --shuffle none --optimizer sgd --lr 0.01 --weight-decay 0.001 --seed 2 \
	--checkpoint strong-seed2 --quiet
expect_exit 1 "$CKPT_DIFF" strong-sgd-1 strong-seed2 1e-4

# -- uneven shards: files sharding of 5 shards, rank 0 300 records, rank 1 200
expect_exit 0 mpi 2 --train "$(shards 0 4)" --test "$TEST_SET" $MNIST_X --hidden 16 \
	--batch 32 --epochs 3 --sharding files --metrics uneven.json
expect_eq "6 6 6" "$(json_all uneven.json steps)" "steps agreed: rank 1's 6 full batches"

# -- determinism: same seed and world, bit-identical state
for run in a b; do
	expect_exit 0 mpi 2 --train "$TRAIN_SET" $MNIST_X --hidden 32 --batch 16 --epochs 2 \
		--shuffle buffer --shuffle-buffer 100 --seed 9 --checkpoint "det-$run" --quiet
done
expect_exit 0 cmp det-a/checkpoint det-b/checkpoint
# ... and wherever the loaders' threads run (--loader-cpus): one rank, which
# mpirun binds to a core, its loader on the others (spare) or on its own
for where in spare rank; do
	expect_exit 0 mpi 1 --train "$TRAIN_SET" $MNIST_X --hidden 32 --batch 16 --epochs 2 \
		--shuffle buffer --shuffle-buffer 100 --seed 9 --workers 2 --loader-cpus $where \
		--checkpoint "cpus-$where" --quiet
done
expect_exit 0 cmp cpus-spare/checkpoint cpus-rank/checkpoint

# -- a NaN in the data: the step is skipped on every rank, once per epoch
nan_csv nan.csv
expect_exit 0 "$PACK" -q --from csv --label label --output nan nan.csv
expect_exit 0 mpi 2 --train nan-00000-of-00001.tfrecord --x a,b --y label --classes 2 \
	--hidden 8 --batch 20 --epochs 3 --optimizer adam --lr 0.02 --metrics nan.json \
	--checkpoint nan-ckpt
expect_eq "1 1 1" "$(json_all nan.json skipped_steps)" "the NaN step skipped once per epoch"
expect_match 'skipped 1 steps' out "the skip is reported"
# the parameters stayed finite (ckpt_diff refuses non-finite ones)
expect_exit 0 "$CKPT_DIFF" nan-ckpt nan-ckpt 0
above "$(json nan.json train_accuracy)" 0.6 && pass || fail "no learning around the NaN"

# -- a diverging run (a huge rate): the metrics stay valid JSON, null where
# the loss is not finite, and the epoch line says nan
expect_exit 0 mpi 2 --train "$TRAIN_SET" --test "$TEST_SET" $MNIST_X --hidden 64,64 --batch 50 \
	--epochs 2 --lr 1e6 --metrics diverge.json
expect_match '^epoch +2  train loss nan  test loss nan ' out "the epoch line reads nan"
expect_exit 0 python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' diverge.json
expect_eq "None" "$(json diverge.json test_loss)" "a non-finite test loss is null"
expect_eq "None" "$(json diverge.json train_loss)" "no finite step: the train loss is null"
expect_eq 0 "$(grep -ciE '(nan|inf)[,}]' diverge.json)" "no nan or inf in the metrics"

# -- OpenBLAS threads by default: the node's cores shared among its ranks,
# but no more than the CPUs a rank is bound to (mpirun binds a rank to one
# core when there are two or fewer: two threads there only take turns)
own=$(timeout 60 mpirun -np 1 nproc)
online=$(getconf _NPROCESSORS_ONLN)
threads=$online
[ "$own" -ge "$online" ] || threads=$own
[ "$threads" -gt 1 ] && unit=threads || unit=thread
expect_exit 0 mpi 1 --train "$TRAIN_SET" $MNIST_X --hidden 16 --batch 50 --epochs 1
expect_match "OpenBLAS .* kernels, $threads $unit)" out \
	"one rank bound to $own of $online CPUs: $threads OpenBLAS $unit"

finish
