#!/bin/sh
# train_compress.sh — --grad-compression: bf16 and fp16 train on 2 ranks
# under alltoall and mpi, with bytes_per_step half of the fp32 run's and
# no step skipped; an fp16 sum that still overflows (inputs of 1e8, whose
# gradients fp32 holds and fp16 cannot, even divided by the ranks) skips
# every step on every rank, counted as grad_overflows (a resumed epoch
# too: the checkpoint keeps its count), where bf16 and none apply them; the same for parameter servers' pushes (pulls stay
# fp32 under --precision fp32: bf16 ones are train_precision.sh's); with
# shm it is a usage error (and with hybrid: test_train_options).
# (The sums themselves against fp32's: tests/test_reducer, run by
# train_reduce.sh.)
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

TRAIN_SET=$(shards 0 3)
COMMON="--train $TRAIN_SET $MNIST_X --hidden 16 --batch 16 --epochs 1 --seed 3 --bucket-size 4K \
--quiet"
expect_exit 0 mpi 2 $COMMON --reduce alltoall --metrics fp32.json
full=$(json fp32.json bytes_per_step)
acc=$(json fp32.json train_accuracy)
for how in bf16 fp16; do
	for red in alltoall mpi; do
		expect_exit 0 mpi 2 $COMMON --reduce $red --grad-compression $how --metrics $how.json
		expect_eq "$full" "$(python3 -c "print(2 * $(json $how.json bytes_per_step))")" \
			"$how, $red: bytes_per_step half of fp32's"
		expect_eq "0 0" "$(json $how.json skipped_steps) $(json $how.json grad_overflows)" \
			"$how, $red: no step skipped"
		got=$(json $how.json train_accuracy)
		python3 -c "import sys; sys.exit(abs($got - $acc) > 0.05)" ||
			fail "$how, $red: train_accuracy $got, fp32's $acc"
	done
done

# gradients past fp16: skipped on every rank, counted; fp32 and bf16 apply
python3 -c '
import random
random.seed(1)
print("a,b,c,d,label")
for i in range(64):
    print(",".join("%g" % (random.uniform(-1, 1) * 1e8) for _ in range(4)) + ",%d" % (i % 3))
' >big.csv
expect_exit 0 "$PACK" -q --from csv --label label --output big --shards 1 big.csv
BIG="--train $T/big --x a,b,c,d --y label --hidden 8 --batch 8 --epochs 1 --seed 1 --quiet"
expect_exit 0 mpi 2 $BIG --grad-compression fp16 --reduce alltoall --metrics over.json
expect_eq "4 4 4" "$(json over.json steps) $(json over.json skipped_steps) \
$(json over.json grad_overflows)" "fp16 overflow: steps, skipped, grad_overflows"
# stopped after 2 of the 4 steps and resumed: the epoch's line counts the
# overflows of both parts, as it does the skipped steps (the checkpoint
# keeps the epoch's count)
expect_exit 0 mpi 2 $BIG --grad-compression fp16 --reduce alltoall --max-steps 2 \
	--checkpoint over-ck --metrics over-resumed.json
expect_exit 0 mpi 2 $BIG --grad-compression fp16 --reduce alltoall --checkpoint over-ck --resume \
	--metrics over-resumed.json
expect_eq "2 4 4 4" "$(json_all over-resumed.json grad_overflows | cut -d' ' -f1) \
$(json over-resumed.json steps) $(json over-resumed.json skipped_steps) \
$(json over-resumed.json grad_overflows)" "fp16 overflow resumed: the partial line's, then the epoch's"
for how in none bf16; do
	expect_exit 0 mpi 2 $BIG --grad-compression $how --reduce mpi --max-steps 1 --metrics $how.json
	expect_eq "0 0" "$(json $how.json skipped_steps) $(json $how.json grad_overflows)" \
		"--grad-compression $how: the big gradients' step applied"
done

# parameter servers (1 server, 2 workers): the pushes in 16 bits, the
# pulls fp32: a worker's bytes go from 2 x 4 to 4 + 2 bytes a parameter;
# an overflowed fp16 push is skipped as a NaN one is, and counted
PS="--strategy ps --servers 1"
expect_exit 0 mpi 3 $COMMON $PS --metrics ps32.json
for how in bf16 fp16; do
	expect_exit 0 mpi 3 $COMMON $PS --grad-compression $how --metrics ps-$how.json
	r=$(python3 -c "print($(json ps-$how.json bytes_per_step) / $(json ps32.json bytes_per_step))")
	python3 -c "import sys; sys.exit(not 0.74 < $r < 0.77)" ||
		fail "ps, $how: a worker's bytes_per_step $r of fp32's, want about 0.75"
	expect_eq 0 "$(json ps-$how.json grad_overflows)" "ps, $how: no overflow"
done
expect_exit 0 mpi 3 $BIG $PS --grad-compression fp16 --metrics ps-over.json
expect_eq "$(python3 -c "print(2 * $(json ps-over.json steps))")" \
	"$(json ps-over.json grad_overflows)" "ps, fp16 overflow: every push counted"
expect_exit 0 mpi 3 $BIG $PS --grad-compression fp16 --max-steps 2 --checkpoint ps-over-ck \
	--metrics ps-over-resumed.json
expect_exit 0 mpi 3 $BIG $PS --grad-compression fp16 --checkpoint ps-over-ck --resume \
	--metrics ps-over-resumed.json
expect_eq "$(json ps-over.json grad_overflows)" "$(json ps-over-resumed.json grad_overflows)" \
	"ps, fp16 overflow resumed: every push of the epoch counted"
expect_exit 0 mpi 3 $BIG $PS --grad-compression bf16 --max-steps 1 --metrics ps-big.json
expect_eq 0 "$(json ps-big.json skipped_steps)" "ps, bf16: the big gradients' step applied"

# refused, one line each
expect_exit 2 mpi 1 $COMMON --grad-compression bf16 --reduce shm
expect_match "^recordio-train: --grad-compression: not with --reduce shm" err "shm refused"
expect_exit 2 mpi 1 $COMMON --grad-compression fp8
expect_match "grad-compression" err "a bad value named"
finish
