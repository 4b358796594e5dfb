#!/bin/sh
# train_pipeline_embed.sh — recordio-train --embed under model parallelism
# (doc/parallelism.md): the lookup belongs to the first stage, which holds
# the tables whole. On a small click-through set (bench/ctr_gen: 2
# categorical features of 2 Zipf ids over 50, 8 dense floats), after two
# steps P = 2, D2 x P2 and T = 2 hold the parameters and the tables of
# data-parallel training on the same global batch (L2 norm of the
# difference at most 1e-5 of theirs, the tables held to it on their own;
# one step's move of the tables is far above it); the same layout twice
# gives the same bits; a run stopped as P = 2 resumes as D = 2 with the
# tables and their Adam state as a data-parallel run resumed at the same
# step does, and one stopped on 1 rank resumes as P = 2; the first stage's
# memory plan holds the tables and the others' do not; under async the
# batch read ahead keeps a lookup of its own, and its gradient is taken on
# the version its forwards used.
. "$(dirname "$0")/train_lib.sh"
GEN="$BIN/bench/ctr_gen"
[ -x "$GEN" ] || { echo "SKIP: $GEN not built"; rm -rf "$T"; exit 77; }
cd "$T" || exit 1

expect_exit 0 "$GEN" -o ctr -n 1200 -s 2 -f 2 -V 50 -k 2 -d 8 --seed 3
CTR="--train ctr-00000-of-00002.tfrecord --test ctr-00001-of-00002.tfrecord --x dense --y label \
--classes 2 --threads 1 --quiet --sharding records"
M="$CTR --embed cat0:50:8,cat1:50:4 --hidden 32,32,16 --global-batch 64 --max-steps 2 --lr 0.5"

# -- the same update as data-parallel training on the same global batch
expect_exit 0 mpi 1 $M --checkpoint dp1
expect_exit 0 mpi 2 $M --checkpoint p2 --pipeline 2
same_params dp1 p2 "P2 with --embed against 1 rank"
expect_exit 0 mpi 2 $M --checkpoint dp2
expect_exit 0 mpi 4 $M --checkpoint d2p2 --pipeline 2 --microbatches 3
same_params dp2 d2p2 "D2 x P2 with --embed against 2 ranks"
# T = 2: the first layer split by its outputs, the tables' input gradient
# summed over the tensor group
expect_exit 0 mpi 2 $M --checkpoint t2 --tensor 2
same_params dp1 t2 "T2 with --embed against 1 rank"
# ... and a step's move of the tables is well above the tolerance: a
# pipeline that left them alone, or took another batch's rows, fails it
expect_exit 0 mpi 1 $M --checkpoint dp1-1 --max-steps 1
"$CKPT_DIFF" dp1-1 dp1 1e-5 l2 >moved.out
python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 1e-4)' \
	"$(grep 'table values' moved.out | tail -1 | sed 's/.*values. \([^ ]*\) .*/\1/')" && pass ||
	fail "one step's move of the tables: $(tail -1 moved.out)"
# the same layout twice: the same bits
expect_exit 0 mpi 4 $M --checkpoint d2p2-again --pipeline 2 --microbatches 3
expect_exit 0 cmp d2p2/checkpoint d2p2-again/checkpoint

# -- stopped as P = 2, resumed as D = 2 (the checkpoint holds the tables and
# their Adam state whole): as a 1-rank run stopped at the same step and
# resumed as D = 2 (one reader, then two: the rest of the epoch
# re-sharded)
R="$CTR --embed cat0:50:8,cat1:50:4 --hidden 16,16 --global-batch 40 --epochs 1 --optimizer adam \
--lr 0.01"
expect_exit 0 mpi 1 $R --checkpoint dp1-d2 --max-steps 7
cp -r dp1-d2 dp1-p2 && cp -r dp1-d2 dp1-dp1
expect_exit 0 mpi 2 $R --checkpoint dp1-d2 --resume
expect_exit 0 mpi 2 $R --checkpoint p2-d2 --pipeline 2 --max-steps 7
expect_exit 0 mpi 2 $R --checkpoint p2-d2 --resume
same_params dp1-d2 p2-d2 "P2 with --embed stopped, resumed as D2"
# ... and the reverse: 1 rank stopped, resumed as P2 (the first stage takes
# the tables and their state) as resumed on 1 rank
expect_exit 0 mpi 2 $R --checkpoint dp1-p2 --resume --pipeline 2
expect_exit 0 mpi 1 $R --checkpoint dp1-dp1 --resume
same_params dp1-dp1 dp1-p2 "1 rank with --embed stopped, resumed as P2"

# -- --layout says where the tables are
expect_exit 0 mpi 4 $M --pipeline 2 --layout
expect_match '^rank 2  .*  stage 0  tensor 0  layer 0 \(0: 32x20\), the --embed tables$' out \
	"the tables on the first stage"
expect_match '^rank 1  .*  stage 1  tensor 0  layers 1-3 \(1: 32x32, 2: 16x32, 3: 2x16\)$' out \
	"none on the second"

# -- the memory plan: the first stage holds the tables (200000 x 16 floats,
# with their gradient and momentum: 38.4 MB), the second does not
expect_exit 0 mpi 2 $CTR --embed cat0:200000:16,cat1:50:4 --hidden 16,16 --batch 32 \
	--max-steps 1 --pipeline 2 --metrics plan.json
python3 - plan.json <<'PY' && pass || fail "the planned bytes: $(cat plan.json)"
import json, sys
p = json.loads(open(sys.argv[1]).read().splitlines()[-1])["planned_bytes"]
tables = 200000 * 16 * 4 * 3
assert p[0] > tables > p[1], p
PY

# -- async (PipeDream-2BW): the batch read ahead keeps a lookup of its own,
# pooled when it is read (before the step's update, as its first forwards
# run on the newest weights): with plain SGD two async steps of 64 at rate
# r are one step of their 128 records at 2r on one rank, tables too
SGD0="--momentum 0 --weight-decay 0 --warmup-epochs 0 --schedule constant"
A="$CTR --embed cat0:50:8,cat1:50:4 --hidden 32,32,16 $SGD0"
expect_exit 0 mpi 1 $A --batch 128 --max-steps 1 --lr 0.5 --checkpoint stale-ref
expect_exit 0 mpi 2 $A --batch 64 --max-steps 2 --lr 0.25 --pipeline 2 --microbatches 3 \
	--pipeline-schedule async --checkpoint stale-p2
same_params stale-ref stale-p2 "async with --embed: the second step's on the stash and its own lookup"
finish
