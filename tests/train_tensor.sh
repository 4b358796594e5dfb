#!/bin/sh
# train_tensor.sh — recordio-train's tensor parallelism (--tensor T,
# Megatron-LM pairs; doc/parallelism.md): the same update as data-parallel
# training on the same global batch for T = 2, P2 x T2, D2 x T2 and T = 4
# (SGD, Adam, and LARS, whose norms must be the whole layer's: after two
# steps the L2 norm of the parameters' difference is at most 1e-5 of
# theirs), the same layout twice gives the same bits, a T = 2 run stopped
# mid-epoch resumes on one rank as unbroken, the test data is evaluated
# once a tensor group, and the metrics count the tensor allreduces' bytes;
# a model over --memory-limit as data parallelism trains split in two.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

MODEL="--synthetic --hidden 256,256,128 --batch 64 --quiet"
run() { # DIR RANKS ARGS...
	d=$1 n=$2; shift 2
	expect_exit 0 mpi "$n" $MODEL --max-steps 2 --checkpoint "$d" "$@"
}

# -- the same update as data-parallel training
for opt in sgd adam lars; do
	run dp1-$opt 1 --optimizer $opt
	run t2-$opt 2 --tensor 2 --optimizer $opt
	same_params dp1-$opt t2-$opt "T2 against 1 rank, $opt"
	run p2t2-$opt 4 --pipeline 2 --tensor 2 --optimizer $opt
	same_params dp1-$opt p2t2-$opt "P2 x T2 against 1 rank, $opt"
done
run t4 4 --tensor 4 --optimizer lars
same_params dp1-lars t4 "T4 against 1 rank, lars"
run dp2 2
run d2t2 4 --tensor 2
same_params dp2 d2t2 "D2 x T2 against 2 ranks"
# the same layout twice: the same bits
run p2t2-again 4 --pipeline 2 --tensor 2 --optimizer sgd
expect_exit 0 cmp p2t2-sgd/checkpoint p2t2-again/checkpoint

# -- real data, stopped and resumed on one rank; the test set once a group
R="--train $(shards 0 7) --test $(shard 9) $MNIST_X --hidden 64,32 --batch 20 --epochs 2 --quiet"
expect_exit 0 mpi 1 $R --checkpoint unbroken --metrics unbroken.json
expect_exit 0 mpi 2 $R --checkpoint t2-dp1 --tensor 2 --max-steps 50
expect_exit 0 mpi 1 $R --checkpoint t2-dp1 --resume
same_params unbroken t2-dp1 "T2 stopped, resumed on 1 rank"
expect_exit 0 mpi 4 $R --tensor 2 --pipeline 2 --metrics pt.json
expect_eq 100 "$(json pt.json test_records)" "the test set, once a tensor group"
python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-4)' \
	"$(json unbroken.json test_loss)" "$(json pt.json test_loss)" && pass ||
	fail "test loss $(json pt.json test_loss) against data-parallel $(json unbroken.json test_loss)"
expect_eq D1xP2xT2 "$(json pt.json layout)" "the layout"
# stages 0 (layer 0 whole: its partner is in the next stage) and 1 (layers
# 1-2: a pair, the 32 outputs of layer 1 sliced): a step's allreduces sum
# 20 x 10 logits forward and 20 x 64 input gradients backward, a ring of
# two moving each once each way: (200 + 1280) x 4 bytes x 2
expect_eq 11840 "$(json pt.json tensor_bytes_per_step)" "tensor allreduce bytes a step"

# -- memory planning: 784-1024-1024-1024-10 with Adam holds 2.9 M
# parameters, their gradients and two moments: 46.6 MB, over a limit of
# 42 MiB: refused as data parallelism, in one line naming the bytes and the
# splits that fit; P = 2 and T = 2 train within it, their plans reported
BIG="--synthetic --hidden 1024,1024,1024 --batch 64 --optimizer adam --max-steps 2 --quiet --memory-limit 42M"
expect_exit 1 mpi 2 $BIG
expect_eq 1 "$(grep -c '^recordio-train: ' err)" "one line"
expect_match '^recordio-train: --memory-limit 42.0 MiB: rank 0 would hold [0-9.]+ MiB \(the most: the model of 2913290 parameters \(its values, gradient and optimizer state\), 44.5 MiB\), more than the 42.0 MiB allowed; --pipeline 2 \([0-9.]+ MiB a rank\) or --tensor 2 \([0-9.]+ MiB\) would fit$' \
	err "the refusal names the bytes and what fits"
expect_exit 0 mpi 2 $BIG --pipeline 2 --metrics big-p2.json
expect_exit 0 mpi 2 $BIG --tensor 2 --metrics big-t2.json
python3 - big-p2.json big-t2.json <<'PY' && pass || fail "planned bytes within the limit, peaks reported"
import json, sys
for name in sys.argv[1:]:
    e = json.loads(open(name).read().splitlines()[-1])
    assert len(e["planned_bytes"]) == 2 and len(e["peak_bytes"]) == 2, e
    assert all(0 < b <= 42 << 20 for b in e["planned_bytes"]), e["planned_bytes"]
    assert all(b > 0 for b in e["peak_bytes"]), e["peak_bytes"]
PY
finish
