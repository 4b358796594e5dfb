#!/bin/sh
# train_options.sh — the options of the rate and of the experiments, each
# checked for its documented effect end to end (recordio-train --help):
#   --lr-scaling, --warmup-epochs, --schedule: the rate of each epoch's last
#     step in the --metrics `lr` is the documented one: the target LR x N
#     ranks with --batch and linear scaling (LR with none, or with
#     --global-batch), reached over the warmup's epochs from LR (from 0 when
#     nothing is scaled), then cosine decay to 0 over the rest, or constant;
#   --lars-trust: LARS's trust coefficient scales each layer's step: from
#     the same start, twice the coefficient moves the parameters twice as
#     far (the least, 1e-9, leaves them about where they started);
#   --straggler-random P:F:SEED: with P = 1 every step of the rank takes F
#     times its compute (the epoch's seconds are at least F x its GEMM
#     seconds), with P = 0.5 some do; it only sleeps: the parameters are
#     those of a run without it, bit for bit.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

# -- the rate's schedule: 400 records over 2 ranks in batches of 8, 25
# steps an epoch, 4 epochs
BASE="--train $(shards 0 3) $MNIST_X --hidden 16 --epochs 4 --lr 0.1 --quiet --threads 1"
RATE="$BASE --batch 8"
expect_exit 0 mpi 2 $RATE --warmup-epochs 2 --schedule constant --metrics warm-linear.json
expect_exit 0 mpi 2 $RATE --warmup-epochs 2 --lr-scaling none --metrics warm-none.json
expect_exit 0 mpi 2 $RATE --lr-scaling linear --metrics defaults.json
expect_exit 0 mpi 2 $RATE --warmup-epochs 0 --schedule cosine --metrics cosine.json
expect_exit 0 mpi 2 $BASE --global-batch 16 --warmup-epochs 1 --schedule constant --metrics global.json
# FILE SCALE WARMUP_EPOCHS COSINE: each epoch's lr against the documented
# schedule at its last step (the metrics keep 6 digits)
for run in "warm-linear.json 2 2 0" "warm-none.json 1 2 1" "defaults.json 2 1 1" \
	"cosine.json 2 0 1" "global.json 1 1 0"; do
	# shellcheck disable=SC2086
	set -- $run
	python3 - "$@" <<'EOF' && pass || fail "the rate of $run"
import json, math, sys
path, scale, warm_epochs, cosine = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
lr, per_epoch, epochs = 0.1, 25, 4
warm, total, target = warm_epochs * per_epoch, epochs * per_epoch, lr * scale

def rate(step):
    if step < warm:  # from LR to the scaled rate, or from 0 when not scaled
        start = lr if scale != 1 else 0
        frac = step / warm if scale != 1 else (step + 1) / (warm + 1)
        return start + (target - start) * frac
    if cosine:
        return target * 0.5 * (1 + math.cos(math.pi * (step - warm) / (total - warm)))
    return target

got = [json.loads(l)["lr"] for l in open(path)]
want = [rate(e * per_epoch - 1) for e in range(1, epochs + 1)]
print(path, "lr per epoch:", got, "documented:", [round(w, 6) for w in want])
assert len(got) == epochs and all(math.isclose(g, w, rel_tol=1e-5, abs_tol=1e-9)
                                  for g, w in zip(got, want)), (got, want)
EOF
done

# -- --lars-trust: one rank, one epoch of 25 steps from the same start
LARS="--train $(shards 0 3) $MNIST_X --hidden 16 --batch 16 --epochs 1 --optimizer lars --quiet"
for eta in 1e-9 1e-6 2e-6; do
	expect_exit 0 "$TRAIN" $LARS --lars-trust $eta --checkpoint lars$eta
done
"$CKPT_DIFF" lars1e-9 lars1e-6 0 >d1 2>&1
expect_eq 1 $? "--lars-trust 1e-6 moves the parameters"
"$CKPT_DIFF" lars1e-9 lars2e-6 0 >d2 2>&1
d1=$(sed -n 's/.*largest relative difference \([^ ]*\) .*/\1/p' d1)
d2=$(sed -n 's/.*largest relative difference \([^ ]*\) .*/\1/p' d2)
python3 -c 'import sys; r = float(sys.argv[2]) / float(sys.argv[1]); print("steps of --lars-trust 2e-6 / 1e-6:", r); sys.exit(0 if 1.8 < r < 2.2 else 1)' \
	"${d1:-0}" "${d2:-0}" && pass ||
	fail "twice the trust, twice the step: parameters moved $d1 and $d2 from the start"

# -- --straggler-random: one rank, 100 records, 10 steps of 784-256-10
SLOWRUN="--train $(shard 0) $MNIST_X --hidden 256 --batch 10 --epochs 1 --seed 3 --quiet"
expect_exit 0 "$TRAIN" $SLOWRUN --checkpoint plain
expect_exit 0 "$TRAIN" $SLOWRUN --checkpoint all --straggler-random 1:20:7 --metrics all.json
expect_exit 0 "$TRAIN" $SLOWRUN --checkpoint some --straggler-random 0.5:20:7 --metrics some.json
# every step slept 19 x its compute, which holds its GEMMs: the epoch took
# at least 20 x the GEMMs' seconds; half of them: well over 3 x
for run in all:19 some:3; do
	f=${run%:*}.json
	python3 - "$f" "${run#*:}" <<'EOF' && pass || fail "--straggler-random: ${run%:*} steps slowed"
import json, sys
e = json.loads(open(sys.argv[1]).readline())
print(sys.argv[1], "epoch seconds", e["seconds"], "GEMM seconds", e["gemm_seconds"])
assert e["gemm_seconds"] > 0 and e["seconds"] >= float(sys.argv[2]) * e["gemm_seconds"], e
EOF
done
expect_exit 0 cmp plain/checkpoint all/checkpoint
expect_exit 0 cmp plain/checkpoint some/checkpoint

finish
