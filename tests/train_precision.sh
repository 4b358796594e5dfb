#!/bin/sh
# train_precision.sh — recordio-train --precision bf16. Refused in one line
# on a CPU without bf16 instructions (faked with RIO_TEST_NO_BF16=1, a
# variable for the tests only), on 2 ranks and on one. Then, where the CPU
# and the build have bf16 GEMMs (else skip, 77, after the refusal): a run
# stopped part way under bf16 and resumed under bf16 ends with exactly the
# uninterrupted run's checkpoint (the bf16 weights are made again from the
# fp32 masters, as the optimizer's pass makes them), and so does one that
# evaluates copies of the parameters on the way, and one whose update is
# replicated rather than sharded (the default under bf16 on one host: the
# bf16 weights the host's one copy too); a checkpoint written
# under bf16 resumes under fp32 and one written under fp32 resumes under
# bf16 (the master weights are fp32: the file is the same kind); a NaN in
# the inputs skips its step under bf16 as under fp32; one thread by
# default under bf16, --threads N when given; parameter servers' pulls in
# bf16 (half their bytes), learning as fp32's; bf16 learns (its
# test accuracy within 0.05 of fp32's after 3 epochs).
# oneDNN's dlerror buffer is suppressed by its function's name
# (tests/lsan.supp): the leak check symbolizes here (train_lib.sh's
# default is not to)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}symbolize=1"
export ASAN_OPTIONS
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)
COMMON="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --batch 16 --epochs 3 \
--seed 4 --quiet"

# the refusal: one line, every rank exits, on 2 ranks and on one
export RIO_TEST_NO_BF16=1
expect_exit 1 mpi 2 $COMMON --precision bf16
expect_match "^recordio-train: --precision bf16: this (CPU has no bf16 instructions|build has no oneDNN)" \
	err "the refusal (2 ranks)"
# one line of ours from one rank (mpirun adds its own about the exit)
expect_eq 1 "$(grep -c "^recordio-train: " err)" "the refusal is one line (2 ranks)"
expect_eq 0 "$(grep -c "MPI_ABORT" err)" "no MPI_ABORT banner"
expect_exit 1 timeout "$TRAIN_TIMEOUT" "$TRAIN" $COMMON --precision bf16
expect_match "^recordio-train: --precision bf16: this (CPU has no bf16 instructions|build has no oneDNN)" \
	err "the refusal (1 rank)"
expect_eq 1 "$(grep -c . err)" "the refusal is one line (1 rank)"
unset RIO_TEST_NO_BF16

if ! "$BIN/tests/test_train_bf16" >/dev/null 2>&1; then
	echo "$(basename "$0"): the refusal checked; SKIP the rest: no bf16 GEMMs here (tests/test_train_bf16)"
	[ "$FAILED" -eq 0 ] || finish
	rm -rf "$T"
	exit 77
fi

# stopped (mid-epoch, 50 steps an epoch) and resumed under bf16: the
# uninterrupted run's bytes
expect_exit 0 mpi 2 $COMMON --precision bf16 --checkpoint full
expect_exit 0 mpi 2 $COMMON --precision bf16 --checkpoint part --max-steps 63 \
	--checkpoint-every 20
expect_exit 0 mpi 2 $COMMON --precision bf16 --checkpoint part --resume
expect_exit 0 cmp full/checkpoint part/checkpoint
# evaluating copies of the parameters on the way (--eval-every) puts them
# in the model and the epoch's own back: the bf16 weights with them
expect_exit 0 mpi 2 $COMMON --precision bf16 --checkpoint evals --eval-every 7
expect_exit 0 cmp full/checkpoint evals/checkpoint
# on one host under bf16 the update is sharded by default (each rank its
# slices of the host's one copy of the parameters, their bf16 copy and the
# state), not with --eval-every (each rank evaluates its own copies) nor
# with --reduce alltoall: the same bytes each way (the runs above: sharded,
# resumed sharded, and replicated)
expect_exit 0 mpi 2 $COMMON --precision bf16 --checkpoint a2a --reduce alltoall
expect_exit 0 cmp full/checkpoint a2a/checkpoint
SHORT="--train $TRAIN_SET $MNIST_X --hidden 32 --batch 16 --max-steps 2 --precision bf16"
expect_exit 0 mpi 2 $SHORT
expect_match "gradients summed by shm, each rank updating its slices$" out \
	"bf16 on one host: the update sharded by default"
expect_exit 0 mpi 2 $SHORT --test $TEST_SET --eval-every 1
expect_match "gradients summed by shm$" out "bf16 with --eval-every: the update replicated"
expect_exit 0 mpi 2 --train $TRAIN_SET $MNIST_X --hidden 32 --batch 16 --max-steps 2
expect_match "gradients summed by shm$" out "fp32: the update replicated by default"

# the precisions cross (one rank, without mpirun): 2 epochs under one,
# the third under the other, resumed (its metrics: the third epoch alone)
one() { timeout "$TRAIN_TIMEOUT" "$TRAIN" "$@"; }
expect_exit 0 one $COMMON --metrics fp32.json
expect_exit 0 one $COMMON --precision bf16 --metrics bf16.json
for from in bf16 fp32; do
	to=$([ $from = bf16 ] && echo fp32 || echo bf16)
	expect_exit 0 one $COMMON --precision $from --epochs 2 --checkpoint "$from-$to"
	expect_exit 0 one $COMMON --precision $to --checkpoint "$from-$to" --resume \
		--metrics "$from-$to.json"
	expect_lines 1 "$from-$to.json" "a $from checkpoint resumed under $to: its third epoch"
	expect_eq 3 "$(json "$from-$to.json" epoch)" "the $from checkpoint's run ends under $to"
	above "$(json "$from-$to.json" test_accuracy)" 0.5 && pass ||
		fail "$from then $to: test accuracy $(json "$from-$to.json" test_accuracy)"
done
# a NaN in the inputs (an empty cell) is seen under bf16 too: that step
# is skipped on every rank, once per epoch, and the parameters stay finite
python3 - <<'PY'
import random
random.seed(3)
with open("nan.csv", "w") as f:
    f.write("a,b,label\n")
    for i in range(200):
        a, b = random.random(), random.random()
        cell = "" if i == 57 else "%.5f" % a
        f.write("%s,%.5f,%d\n" % (cell, b, int(a > b)))
PY
expect_exit 0 "$PACK" -q --from csv --label label --output nan nan.csv
expect_exit 0 mpi 2 --train nan-00000-of-00001.tfrecord --x a,b --y label --classes 2 \
	--hidden 8 --batch 20 --epochs 2 --precision bf16 --metrics nan.json --checkpoint nan-ckpt
expect_eq "1 1" "$(json_all nan.json skipped_steps)" "bf16: the NaN step skipped once per epoch"
expect_exit 0 "$CKPT_DIFF" nan-ckpt nan-ckpt 0

# one oneDNN thread by default (libgomp's idle threads spin), where fp32's
# default is the cores: the first line says the rank's threads
if [ "$(nproc)" -ge 2 ]; then
	expect_exit 0 one --train $TRAIN_SET $MNIST_X --hidden 32 --batch 16 --max-steps 2 \
		--precision bf16
	expect_match " 1 thread\), bf16 GEMMs" out "bf16: one thread by default"
	expect_exit 0 one --train $TRAIN_SET $MNIST_X --hidden 32 --batch 16 --max-steps 2 \
		--precision bf16 --threads 2
	expect_match " 2 threads\), bf16 GEMMs" out "bf16: --threads 2 taken"
fi

# parameter servers (1 server, 2 workers) under bf16: the pulls carry
# bf16, a worker's bytes from 4 + 4 to 2 + 4 bytes a parameter (2 + 2 with
# --grad-compression bf16), and the run learns as under fp32
PS="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --batch 16 --epochs 2 --seed 4 \
--quiet --strategy ps --servers 1"
expect_exit 0 mpi 3 $PS --metrics ps32.json
expect_exit 0 mpi 3 $PS --precision bf16 --metrics ps16.json
expect_exit 0 mpi 3 $PS --precision bf16 --grad-compression bf16 --metrics ps16c.json
for run in "ps16 0.74 0.77" "ps16c 0.49 0.52"; do
	set -- $run
	r=$(python3 -c "print($(json $1.json bytes_per_step) / $(json ps32.json bytes_per_step))")
	python3 -c "import sys; sys.exit(not $2 < $r < $3)" && pass ||
		fail "ps, $1: a worker's bytes_per_step $r of fp32's, want in ($2, $3)"
	a=$(json $1.json test_accuracy) a32=$(json ps32.json test_accuracy)
	above "$a" "$(python3 -c "print($a32 - 0.05)")" && pass ||
		fail "ps, $1: test accuracy $a against fp32's $a32"
done

# bf16 learns as fp32 does
a16=$(json bf16.json test_accuracy) a32=$(json fp32.json test_accuracy)
above "$a16" "$(python3 -c "print($a32 - 0.05)")" && pass ||
	fail "bf16's test accuracy $a16 against fp32's $a32"
finish
