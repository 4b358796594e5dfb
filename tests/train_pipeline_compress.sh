#!/bin/sh
# train_pipeline_compress.sh — --grad-compression bf16|fp16 with
# --pipeline (doc/parallelism.md): the activations and their gradients go
# between stages in 16 bits, and a D x P layout's data allreduce too.
# After one step P = 2 under 16 bits is P = 2 in fp32 within the error of
# the 16-bit casts (the tolerance derived below), the pipeline's bytes a
# step (and the data allreduce's, D2 x P2) are half fp32's but for the
# labels (int64, not compressed) and the scale (2 bytes a message),
# no step is skipped; activations past fp16's 65504 (about 1e5), which
# unscaled would arrive as infinities and skip every step, are scaled a
# message at a time and the step is fp32's within the same bound; T = 2's
# tensor sums in 16 bits the same way.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

MODEL="--synthetic --hidden 256,256,128 --batch 64 --quiet --max-steps 1"

# l2 A B: ||B - A|| / ||A|| over the parameters (ckpt_diff's L2 line)
l2() {
	"$CKPT_DIFF" "$1" "$2" 1 l2 | sed -n 's/^L2 norm of the difference over the [a-z]*.\{0,2\} \([^ ]*\) .*/\1/p'
}

# The tolerance, on the step's move (the difference of the updates over
# the update: the gradient's relative error). Each 16-bit cast rounds to
# nearest: relative error at most u = 2^-8 for bf16 (8 bits of
# significand), 2^-11 for fp16 (11 bits). Each cast on the way (P = 2:
# the stage's output activations once and their gradient once, 2 casts)
# is carried through at most 2 layers to a weight gradient (x 2), whose
# sum over the batch's 64 rows cancels to about 1/sqrt(64) of its terms'
# magnitudes while their rounding errors do not (x 8): 16u a cast, 32u
# at P = 2 (0.125 for bf16, 0.015625 for fp16; measured 10u and 23u;
# D2 x P2 7u and 11u). A tensor sum casts both partial sums and the sum,
# forward and backward: 6 casts, 96u (measured at T = 2: 10u and 38u).
# Without the casts the error is 0 (the test wants more); a message
# widened wrong, or in a wrong slot, is off by the gradient itself.
tol() { # HOW CASTS
	python3 -c "print($2 * 16 * 2 ** -$([ "$1" = bf16 ] && echo 8 || echo 11))"
}

# step_error RANKS NAME CASTS ARGS...: one SGD step in fp32 (NAME-32), at twice
# the rate (NAME-x2: SGD's first step is lr x the gradient, so the two
# differ by exactly one step's move), and under each compression
# (NAME-bf16, NAME-fp16), each against fp32 on the step's move, within
# CASTS x 16u
step_error() {
	n=$1 name=$2 casts=$3; shift 3
	expect_exit 0 mpi "$n" $MODEL "$@" --optimizer sgd --lr 0.05 --checkpoint $name-32 \
		--metrics $name-32.json
	expect_exit 0 mpi "$n" $MODEL "$@" --optimizer sgd --lr 0.1 --checkpoint $name-x2
	move=$(l2 $name-32 $name-x2)
	above "$move" 0 && pass || fail "$name: the step moved nothing ($move)"
	for how in bf16 fp16; do
		expect_exit 0 mpi "$n" $MODEL "$@" --optimizer sgd --lr 0.05 --grad-compression $how \
			--checkpoint $name-$how --metrics $name-$how.json
		r=$(python3 -c "print($(l2 $name-32 $name-$how) / $move)")
		python3 -c "import sys; sys.exit(not 0 < $r <= $(tol $how $casts))" && pass ||
			fail "$name, $how: the step's error $r of its move, want within (0, $(tol $how $casts)]"
		expect_eq "0 0" "$(json $name-$how.json skipped_steps) \
$(json $name-$how.json grad_overflows)" "$name, $how: no step skipped"
	done
}

# bytes a step, by kind: FILE KEY WANT
bytes() {
	expect_eq "$3" "$(python3 -c "print(int($(json $1 $2)))")" "$1: $2"
}

# P = 2: the last stage receives 64 x 256 activations and sends their
# gradients, 2 x 65536 bytes in fp32, 65536 in 16 bits; with the labels,
# 64 int64 (512 bytes), which stay as they are; in 16 bits each of the 8
# microbatches' 2 messages has its scale's 2 bytes too (32)
step_error 2 p2 2 --pipeline 2
bytes p2-32.json pipeline_bytes_per_step 131584
bytes p2-bf16.json pipeline_bytes_per_step 66080
bytes p2-fp16.json pipeline_bytes_per_step 66080

# D2 x P2: the data allreduce of stage 0's 784 x 256 + 256 floats as a
# ring over D = 2, each way: 1607680 bytes in fp32, half in 16 bits (fp16
# divided by D before the cast, multiplied back after)
step_error 4 d2p2 2 --pipeline 2
bytes d2p2-32.json data_bytes_per_step 1607680
bytes d2p2-bf16.json data_bytes_per_step 803840
bytes d2p2-fp16.json data_bytes_per_step 803840
bytes d2p2-fp16.json pipeline_bytes_per_step 66080

# activations past fp16's range: inputs of 1e6 (through a layer of
# weights about 0.05: outputs of about 1e5 and more), which fp16 holds
# only scaled: one step against fp32's, within the bound above, nothing
# skipped (unscaled: every step skipped as an overflow)
python3 -c '
import random
random.seed(1)
print("a,b,c,d,label")
for i in range(64):
    print(",".join("%g" % (random.uniform(0, 1) * 1e6) for _ in range(4)) + ",%d" % (i % 3))
' >big.csv
expect_exit 0 "$PACK" -q --from csv --label label --output big --shards 1 big.csv
MODEL="--train $T/big --x a,b,c,d --y label --hidden 64,8 --batch 16 --seed 1 --quiet --max-steps 1"
step_error 2 big 2 --pipeline 2
MODEL="--synthetic --hidden 256,256,128 --batch 64 --quiet --max-steps 1"

# T = 2: the tensor group's sums (the row-split layer's partial outputs
# forward, the column-split layer's input gradient backward) in 16 bits,
# as the data allreduce's (6 casts: the bound above); the bytes half
# fp32's
step_error 2 t2 6 --tensor 2
r=$(python3 -c "print($(json t2-bf16.json tensor_bytes_per_step) / $(json t2-32.json tensor_bytes_per_step))")
expect_eq 0.5 "$r" "T2, bf16: tensor bytes over fp32's"
r=$(python3 -c "print($(json t2-fp16.json tensor_bytes_per_step) / $(json t2-32.json tensor_bytes_per_step))")
expect_eq 0.5 "$r" "T2, fp16: tensor bytes over fp32's"
finish
