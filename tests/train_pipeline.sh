#!/bin/sh
# train_pipeline.sh — recordio-train's model parallelism, the layout and
# the pipeline (doc/parallelism.md): --layout prints where each rank is and
# what it holds, and trains nothing; bad layouts are one line and exit 2 on
# every rank; --tensor is its own option now, not --tensorboard's
# abbreviation; pipeline training is data-parallel training on the same
# global batch (P = 2 against 1 rank, D2 x P2 against 2 ranks, gpipe,
# sequential, 1f1b and eager-1f1b at P = 3, SGD, Adam and LARS: after two
# steps the L2 norm of the parameters' difference is at most 1e-5 of
# theirs), the same layout twice gives the same bits (1f1b and eager-1f1b
# too; their orders and held activations from RIO_PIPE_TRACE), a run stopped mid-epoch and resumed ends as an
# unbroken one, the test data goes through the pipeline, the metrics
# say the layout, the bubble and the bytes a step by kind; and the async
# schedule (PipeDream-2BW): refused at P = 1, its first step 1f1b's, its
# second's gradient on the stashed starting weights (against a reference
# computed on one rank; P = 2, P = 3, P2 x T2), the same bits twice and
# across a resume, it trains near 1f1b's accuracy, and a damaged record
# in a batch read ahead is one line; --straggler slows a stage's
# microbatches (any rank's: a later stage's too), changing no bit.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

MODEL="--synthetic --hidden 256,256,128 --batch 64 --quiet"

# -- --layout: the placement, and no training
expect_exit 0 mpi 4 $MODEL --pipeline 2 --layout --metrics none.json
expect_match '^layout D2xP2xT1: 4 ranks on 1 host; tensor groups innermost, pipeline stages next, data parallelism outermost$' \
	out "--layout's first line"
expect_match '^rank 1  host [^ ]+  data 0  stage 1  tensor 0  layers 1-3 \(1: 256x256, 2: 128x256, 3: 10x128\)$' \
	out "rank 1 holds the balanced split's second stage"
expect_match '^rank 2  host [^ ]+  data 1  stage 0  tensor 0  layer 0 \(0: 256x784\)$' out \
	"data parallelism outermost"
[ ! -e none.json ] && pass || fail "--layout trained"
# --stages overrides the balanced split
expect_exit 0 mpi 2 $MODEL --stages 0-1,2-3 --layout
expect_match '^rank 1  .*  layers 2-3 \(2: 128x256, 3: 10x128\)$' out "--stages 0-1,2-3"
# --tensor is the option (no longer short for --tensorboard): its slices
expect_exit 0 mpi 4 $MODEL --tensor 2 --pipeline 2 --layout
expect_match '^rank 1  .*  stage 0  tensor 1  layer 0 \(0: 256x784\)$' out \
	"a layer without a partner in its stage is whole"
expect_match '^rank 3  .*  stage 1  tensor 1  layers 1-3 \(1: outputs 128-255 of 256, 2: inputs 128-255 of 256, 3: 10x128\)$' \
	out "a Megatron-LM pair: columns, then rows"
[ ! -d 2 ] && pass || fail "--tensor 2 was taken for --tensorboard 2"

# -- bad layouts: one line from one rank, every rank exits 2
refused() { # RANKS MESSAGE ARGS...
	n=$1 msg=$2; shift 2
	expect_exit 2 mpi "$n" $MODEL "$@"
	expect_eq 1 "$(grep -c '^recordio-train: ' err)" "one line for: $*"
	expect_match "^recordio-train: $msg" err "$*"
}
refused 3 "--pipeline 2 x --tensor 1 = 2 ranks a model copy: does not divide the world of 3 ranks$" \
	--pipeline 2
refused 4 "--pipeline 4: the model has 3 layers \(--hidden and the output\); a stage needs one at least$" \
	--pipeline 4 --hidden 256,128
refused 2 "--microbatches: '0' is not 1 to 65536$" --pipeline 2 --microbatches 0
refused 2 "--tensor 4: hidden layer 2's width 130 is not divisible by 4$" --tensor 4 --hidden 256,130
refused 2 "--stages: the ranges end at layer 1, the model's last is 3 \(4 layers: --hidden and the output\)$" \
	--stages 0,1
refused 2 "--stages: '0,2-3': want contiguous ranges of layer indices from 0, e.g. 0-1,2-3$" \
	--stages 0,2-3
refused 2 "--stages: 3 ranges for --pipeline 2$" --pipeline 2 --stages 0,1-2,3
refused 2 "--pipeline 2: not with --strategy ps$" --pipeline 2 --strategy ps
refused 2 "--microbatches 100: more than the 64 records of a rank's batch$" --pipeline 2 \
	--microbatches 100
refused 2 "--microbatches 2: not with --pipeline-schedule sequential \(the batch goes whole\)$" \
	--pipeline 2 --pipeline-schedule sequential --microbatches 2
refused 1 "--microbatches needs --pipeline 2 or more$" --microbatches 2

# -- the same update as data-parallel training on the same global batch
run() { # DIR RANKS ARGS...
	d=$1 n=$2; shift 2
	expect_exit 0 mpi "$n" $MODEL --max-steps 2 --checkpoint "$d" "$@"
}
for opt in sgd adam lars; do
	run dp1-$opt 1 --optimizer $opt
	run p2-$opt 2 --pipeline 2 --optimizer $opt
	same_params dp1-$opt p2-$opt "P2 against 1 rank, $opt"
done
run dp2 2
run d2p2 4 --pipeline 2
same_params dp2 d2p2 "D2 x P2 against 2 ranks"
run gpipe 2 --pipeline 2 --pipeline-schedule gpipe --microbatches 3
same_params dp1-sgd gpipe "gpipe of 3 uneven microbatches"
run seq3 3 --pipeline 3 --pipeline-schedule sequential
same_params dp1-sgd seq3 "sequential at P = 3"
# 1f1b and eager-1f1b at P = 3, their timelines and plans kept for below
export RIO_PIPE_TRACE="$T/f1b3-tl"
run f1b3 3 --pipeline 3 --microbatches 5 --metrics f1b3.json
export RIO_PIPE_TRACE="$T/e1f1b3-tl"
run e1f1b3 3 --pipeline 3 --microbatches 5 --pipeline-schedule eager-1f1b --metrics e1f1b3.json
unset RIO_PIPE_TRACE
same_params dp1-sgd f1b3 "1f1b at P = 3, 5 microbatches"
same_params dp1-sgd e1f1b3 "eager-1f1b at P = 3, 5 microbatches"
# ... the same bits: only the forwards' order differs, not the sums'
expect_exit 0 cmp f1b3/checkpoint e1f1b3/checkpoint
# ... which the comparison can tell from another global batch
if "$CKPT_DIFF" dp1-sgd dp2 1e-5 l2 >/dev/null; then fail "1 rank against 2 agree"; else pass; fi
# the same layout twice: the same bits
run d2p2-again 4 --pipeline 2
expect_exit 0 cmp d2p2/checkpoint d2p2-again/checkpoint

# --global-batch: split over the data-parallel groups
expect_exit 0 mpi 2 --synthetic --hidden 256,256,128 --quiet --max-steps 2 --global-batch 96 \
	--checkpoint dp2-g
expect_exit 0 mpi 4 --synthetic --hidden 256,256,128 --quiet --max-steps 2 --global-batch 96 \
	--pipeline 2 --checkpoint d2p2-g
same_params dp2-g d2p2-g "--global-batch 96 as D2 x P2"

# -- a NaN in the data (the first stage sees it): the step skipped on every
# rank, as data-parallel training skips it
nan_csv nan.csv
expect_exit 0 "$PACK" -q --from csv --label label --output nan nan.csv
NAN="--train nan-00000-of-00001.tfrecord --x a,b --y label --classes 2 --hidden 8 --batch 20 \
	--epochs 2 --optimizer adam --lr 0.02"
expect_exit 0 mpi 1 $NAN --metrics nan1.json --checkpoint nan1
expect_exit 0 mpi 2 $NAN --metrics nan2.json --checkpoint nan2 --pipeline 2
expect_eq "1 1" "$(json_all nan2.json skipped_steps)" "the NaN step skipped once per epoch"
expect_match 'skipped 1 steps' out "the skip is reported"
same_params nan1 nan2 "the NaN skipped as on one rank"

# -- stopped mid-epoch and resumed: as unbroken
COMMON="--synthetic=50 --hidden 32,32 --batch 32 --quiet --pipeline 2 --microbatches 4"
expect_exit 0 mpi 2 $COMMON --checkpoint whole --max-steps 300
expect_exit 0 mpi 2 $COMMON --checkpoint part --max-steps 200 --checkpoint-every 150
expect_exit 0 mpi 2 $COMMON --checkpoint part --max-steps 300 --resume
expect_exit 0 cmp whole/checkpoint part/checkpoint

# -- checkpoints hold the whole model, whatever the layout (which they name):
# stopped mid-epoch in one layout, resumed in another. With one reader in
# both (P2 and 1 rank) the data's order is the same: as unbroken, up to the
# sums' order. With another number of readers (P2 against D2, at the same
# global batch) the rest of the epoch is re-sharded over the new readers,
# as data-parallel training's elastic resume does it: the same parameters
# as that resume of a data-parallel run stopped at the same step.
R="--train $(shards 0 7) --test $(shard 9) $MNIST_X --hidden 64,32 --global-batch 20 --epochs 2"
expect_exit 0 mpi 1 $R --checkpoint unbroken --quiet
expect_exit 0 mpi 2 $R --checkpoint p2-dp1 --pipeline 2 --max-steps 10
expect_exit 0 mpi 1 $R --checkpoint p2-dp1 --resume
same_params unbroken p2-dp1 "P2 stopped, resumed on 1 rank"
expect_exit 0 mpi 1 $R --checkpoint dp1-p2 --max-steps 50
expect_exit 0 mpi 2 $R --checkpoint dp1-p2 --resume --pipeline 2
expect_match '^resumed from dp1-p2/checkpoint written by D1xP1xT1: epoch 2, step 10 of 40$' out \
	"the resume names the layout"
same_params unbroken dp1-p2 "1 rank stopped, resumed as P2"
# one reader to two, and back
expect_exit 0 mpi 1 $R --checkpoint dp1-d2 --max-steps 30
expect_exit 0 mpi 2 $R --checkpoint dp1-d2 --resume
expect_exit 0 mpi 2 $R --checkpoint p2-d2 --pipeline 2 --max-steps 30
expect_exit 0 mpi 2 $R --checkpoint p2-d2 --resume
same_params dp1-d2 p2-d2 "P2 stopped, resumed as D2"
expect_exit 0 mpi 2 $R --checkpoint d2-dp1 --max-steps 30
expect_exit 0 mpi 1 $R --checkpoint d2-dp1 --resume
expect_exit 0 mpi 2 $R --checkpoint d2-p2 --max-steps 30
expect_exit 0 mpi 2 $R --checkpoint d2-p2 --resume --pipeline 2
expect_match 'written by D2xP1xT1: epoch 1, step 30 of 40; the rest of the epoch re-sharded' out \
	"the rest re-sharded"
same_params d2-dp1 d2-p2 "D2 stopped, resumed as P2"
if "$CKPT_DIFF" unbroken d2-p2 1e-5 l2 >/dev/null; then fail "re-sharded, yet as unbroken"; else
	pass; fi

# -- --pipeline-schedule async (PipeDream-2BW): no flush between batches;
# the next batch's first forwards run on the newest weights while the
# step's last backwards run; every microbatch of a batch, forward and
# backward, on the version its first forward used (the stash); one version
# stale: W(t+1) = W(t) - lr grad(W(t-1)).
refused 1 "--pipeline-schedule async needs --pipeline 2 or more \(it overlaps one batch's backwards with the next's forwards\)$" \
	--pipeline-schedule async
refused 2 "--pipeline-schedule async needs --pipeline 2 or more" --tensor 2 \
	--pipeline-schedule async
ASYNC="--pipeline-schedule async"
# the first step: 1f1b's (the gradient at the starting weights)
expect_exit 0 mpi 2 $MODEL --max-steps 1 --pipeline 2 --checkpoint sync-1
expect_exit 0 mpi 2 $MODEL --max-steps 1 --pipeline 2 $ASYNC --checkpoint async-1
expect_exit 0 cmp sync-1/checkpoint async-1/checkpoint
# the second: its gradient at the starting weights too (the stash), not
# at the first step's: with plain SGD, two async steps of 64 at rate r are
# one step of their 128 records at 2r on one rank; 1f1b's are not
SGD0="--momentum 0 --weight-decay 0 --warmup-epochs 0 --schedule constant"
expect_exit 0 mpi 1 --synthetic --hidden 256,256,128 --quiet --batch 128 --max-steps 1 $SGD0 \
	--lr 0.1 --checkpoint stale-ref
for p in 2 3 2x2; do
	n=${p%x2} t=1
	[ "$p" = 2x2 ] && n=4 t=2
	expect_exit 0 mpi $n $MODEL --max-steps 2 $SGD0 --lr 0.05 --pipeline "${p%x2}" --tensor $t \
		--microbatches 5 $ASYNC --checkpoint stale-p$p
	same_params stale-ref stale-p$p "async at P = $p: the second step's gradient on the stash"
done
expect_exit 0 mpi 2 $MODEL --max-steps 2 $SGD0 --lr 0.05 --pipeline 2 --checkpoint stale-1f1b
if "$CKPT_DIFF" stale-ref stale-1f1b 1e-5 l2 >/dev/null; then fail "1f1b is one version stale"
else pass; fi
# the same run twice: the same bits; stopped at a checkpoint (where the
# pipeline drains) and resumed: as unbroken with the same checkpoints
C="--synthetic=50 --hidden 32,32 --batch 32 --quiet --pipeline 3 --microbatches 5 $ASYNC \
	--optimizer adam --checkpoint-every 50"
expect_exit 0 mpi 3 $C --checkpoint async-whole --max-steps 300
expect_exit 0 mpi 3 $C --checkpoint async-again --max-steps 300
expect_exit 0 cmp async-whole/checkpoint async-again/checkpoint
expect_exit 0 mpi 3 $C --checkpoint async-part --max-steps 200
expect_exit 0 mpi 3 $C --checkpoint async-part --max-steps 300 --resume
expect_exit 0 cmp async-whole/checkpoint async-part/checkpoint
# it trains on real data (the first stage reading the next batch ahead,
# from the cache too): test accuracy near 1f1b's after a short run (Adam;
# SGD's momentum 0.9 suffers more from the staleness: doc/parallelism.md)
A="--train $(shards 0 7) --test $(shard 9) $MNIST_X --hidden 64,32 --batch 20 --epochs 5 \
	--pipeline 2 --optimizer adam --lr 0.003 --cache 64M --quiet"
expect_exit 0 mpi 2 $A --metrics a-1f1b.json
expect_exit 0 mpi 2 $A --metrics a-async.json $ASYNC
python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (b > 0.6 and abs(a - b) <= 0.08))' \
	"$(json a-1f1b.json test_accuracy)" "$(json a-async.json test_accuracy)" && pass ||
	fail "async's accuracy $(json a-async.json test_accuracy) against 1f1b's $(json a-1f1b.json test_accuracy)"
above "$(json a-async.json bubble)" 0 && pass || fail "async's bubble $(json a-async.json bubble)"
# a damaged record in a batch read ahead (step 5's, read during step 4):
# one line naming it, every rank ends
cp "$(shard 3)" bad-00000-of-00001.tfrecord
damage bad-00000-of-00001.tfrecord 50
expect_exit 1 mpi 2 --train bad-00000-of-00001.tfrecord $MNIST_X --hidden 16 --batch 10 \
	--pipeline 2 $ASYNC --quiet
expect_eq 1 "$(grep -c '^recordio-train: ' err)" "one line for the damaged record"
expect_match '^recordio-train: --train bad-00000-of-00001.tfrecord: .*\(record 50\)' err \
	"the damaged record named"

# -- real data: the first stage reads it, the test set goes through the
# pipeline; the metrics
DATA="--train $(shards 0 7) --test $(shard 9) $MNIST_X --hidden 64,32 --batch 25 --epochs 1 --quiet"
expect_exit 0 mpi 2 $DATA --metrics dp.json
expect_exit 0 mpi 4 $DATA --pipeline 2 --microbatches 5 --cache 64M --metrics pp.json
expect_eq 100 "$(json pp.json test_records)" "the test set, once"
python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-4)' \
	"$(json dp.json test_loss)" "$(json pp.json test_loss)" && pass ||
	fail "test loss $(json pp.json test_loss) against data-parallel $(json dp.json test_loss)"
expect_eq D2xP2xT1 "$(json pp.json layout)" "the layout"
above "$(json pp.json bubble)" 0 && above 1 "$(json pp.json bubble)" && pass ||
	fail "bubble $(json pp.json bubble)"
# the bubble as GPipe's (P - 1) / (M + P - 1) counts it: at M = 1 each of
# P = 2 stages idles half the step or more, whatever their costs; here
# the first stage holds nearly all the compute and its backward is twice
# its forward, so the last stage, done early, waits at the step's end
# (counted before without that wait: 0.2-0.4)
expect_exit 0 mpi 2 --synthetic=16 --hidden 512,512,16 --batch 64 --max-steps 20 --quiet \
	--pipeline 2 --pipeline-schedule sequential --metrics seq.json
above "$(json seq.json bubble)" 0.45 && above 1 "$(json seq.json bubble)" && pass ||
	fail "sequential P = 2's bubble $(json seq.json bubble), not 0.5 or more"
# the last stage receives a step's activations (25 x 64 floats, as 5
# microbatches), sends their gradients and receives the labels (25 int64)
expect_eq 13000 "$(json pp.json pipeline_bytes_per_step)" "pipeline bytes a step"
# stage 0's block (784 x 64 + 64 floats) in a ring over D = 2, each way
expect_eq 401920 "$(json pp.json data_bytes_per_step)" "data allreduce bytes a step"

# -- --straggler: a slow stage. Each of its microbatches' forwards and
# backwards takes F times its compute (which holds its GEMMs), so rank 0,
# the first stage, here holding nearly all the GEMMs (--stages 0-1,2),
# slowed 10x takes 10x its GEMMs' seconds at least (unslowed 2-4x on a
# loaded machine); a later stage's rank, which reads no data, may be
# named too; no bit changes
SLOW="--synthetic --hidden 1024,1024 --batch 128 --max-steps 3 --quiet --stages 0-1,2 \
	--microbatches 2"
expect_exit 0 mpi 2 $SLOW --checkpoint slow-plain
expect_exit 0 mpi 2 $SLOW --checkpoint slow-0 --straggler 0:10 --metrics slow-0.json
expect_exit 0 mpi 2 $SLOW --checkpoint slow-1 --straggler 1:2
python3 -c 'import json, sys
e = json.loads(open(sys.argv[1]).readline())
print("epoch seconds", e["seconds"], "GEMM seconds", e["gemm_seconds"])
sys.exit(not (e["gemm_seconds"] > 0 and e["seconds"] >= 10 * e["gemm_seconds"]))' slow-0.json &&
	pass || fail "--straggler 0:10: the first stage's steps slowed"
expect_exit 0 cmp slow-plain/checkpoint slow-0/checkpoint
expect_exit 0 cmp slow-plain/checkpoint slow-1/checkpoint
# ... and the last stage, next to no compute, idles half of every step or
# more: waiting for its activations, for its sends to be taken and in the
# drain, until the first stage's last backward (the drain counted as
# compute, before: 0.39)
above "$(json slow-0.json bubble)" 0.45 && above 1 "$(json slow-0.json bubble)" && pass ||
	fail "--straggler 0:10: the bubble $(json slow-0.json bubble), not 0.5 or near"

# -- RIO_PIPE_TRACE: each rank's timeline (pipe_trace.h), 2 steps of gpipe
# with 3 microbatches: the first stage forwards, sends and backwards each
# microbatch once a step, waiting for its gradient; the last waits for
# its activations; every event ends at or after its start
export RIO_PIPE_TRACE="$T/tl"
expect_exit 0 mpi 2 $SLOW --max-steps 2 --pipeline-schedule gpipe --microbatches 3
python3 -c 'import sys
from collections import Counter
def events(path):
    lines = open(path).read().splitlines()
    assert lines[0].startswith("# rank ") and ", pid " in lines[0], lines[0]
    assert lines[1] == "step\tkind\tm\tstart\tend", lines[1]
    rows = [l.split("\t") for l in lines[2:]]
    assert all(float(r[4]) >= float(r[3]) for r in rows), "an event ends before it starts"
    return Counter((r[0], r[1]) for r in rows)
first, last = events("tl.0.tsv"), events("tl.1.tsv")
for step in "01":
    for kind in "F", "B", "iA", "wG":
        assert first[(step, kind)] == 3, (step, kind, first[(step, kind)])
    for kind in "F", "B", "wA", "iG":
        assert last[(step, kind)] == 3, (step, kind, last[(step, kind)])
    assert first[(step, "X")] == 1 and last[(step, "X")] == 1
' && pass || fail "RIO_PIPE_TRACE: the timelines"
# 1f1b: stage p runs P - 1 - p forwards ahead, P - p held at most;
# eager-1f1b: one more on every stage but the last (P - p ahead, P - p + 1
# held), the last none ahead but two planned (its slack both ways): at
# P = 3 with 5 microbatches, every step (the runs above); each stage's
# plan the larger for eager-1f1b's slots
python3 -c 'import json, sys
want = {"f1b3": ["F0 F1 F2 B0 F3 B1 F4 B2 B3 B4", "F0 F1 B0 F2 B1 F3 B2 F4 B3 B4",
                 "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4"],
        "e1f1b3": ["F0 F1 F2 F3 B0 F4 B1 B2 B3 B4", "F0 F1 F2 B0 F3 B1 F4 B2 B3 B4",
                   "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4"]}
held = {"f1b3": [3, 2, 1], "e1f1b3": [4, 3, 1]}
for run in want:
    for r in range(3):
        rows = [l.rstrip("\n").split("\t") for l in open(f"{run}-tl.{r}.tsv")][2:]
        for step in "01":
            order = [k + m for s, k, m, a, b in rows if s == step and k in ("F", "B")]
            got = " ".join(order)
            assert got == want[run][r], (run, r, step, got)
            most = max(sum(1 if e[0] == "F" else -1 for e in order[:i + 1])
                       for i in range(len(order)))
            assert most == held[run][r], (run, r, step, most)
plan = {run: json.loads(open(f"{run}.json").read().splitlines()[-1])["planned_bytes"]
        for run in want}
print("planned_bytes 1f1b", plan["f1b3"], "eager-1f1b", plan["e1f1b3"])
assert len(plan["f1b3"]) == 3 and all(e > f for f, e in zip(plan["f1b3"], plan["e1f1b3"]))
' && pass || fail "RIO_PIPE_TRACE: 1f1b's and eager-1f1b's orders and plans at P = 3"
# the bubble metric is the timeline's: each step as long as its longest
# rank's schedule (S), and a rank idle in every wait within it, for a
# receive, a send's slot or the drain (w*, s*, D); the first stage slowed,
# so that the last waits in its drain
expect_exit 0 mpi 2 $SLOW --max-steps 4 --microbatches 4 --straggler 0:4 --metrics tl.json
python3 -c 'import json, sys
idle = ("wA", "wG", "wL", "sA", "sG", "sL", "D")
ev = [[l.rstrip("\n").split("\t") for l in open(f"tl.{r}.tsv")][2:] for r in (0, 1)]
steps = sorted({e[0] for e in ev[0]})
work = longest = 0.0
for s in steps:
    sched = [sum(float(e[4]) - float(e[3]) for e in ev[r] if e[0] == s and e[1] == "S")
             for r in (0, 1)]
    longest += max(sched)
    for r in (0, 1):
        work += sched[r] - sum(float(e[4]) - float(e[3]) for e in ev[r]
                               if e[0] == s and e[1] in idle)
drain = sum(float(e[4]) - float(e[3]) for e in ev[1] if e[1] == "D")
want = 1 - work / (2 * longest)
got = json.loads(open("tl.json").readline())["bubble"]
print("bubble", got, "from the timeline", want, "the last stage drained", drain, "s")
sys.exit(not (len(steps) == 4 and abs(got - want) <= 0.005))' &&
	pass || fail "the bubble metric against the timeline"
export RIO_PIPE_TRACE="$T/no/such/dir/tl"
expect_exit 1 mpi 2 $SLOW --max-steps 1
unset RIO_PIPE_TRACE
expect_match '^recordio-train: RIO_PIPE_TRACE: cannot write .*/no/such/dir/tl\.[01]\.tsv: No such file or directory$' \
	err "an unwritable RIO_PIPE_TRACE"
finish
