#!/bin/sh
# train_watch.sh — watching a run: --tensorboard writes one event file that
# our Event decoder (recordio-cat) and, when installed, TensorBoard's own
# reader read back with each epoch's scalars equal to the --metrics file and
# the loss every --tensorboard-every steps; the file is readable while the
# run goes on and whole after a kill -9 (bad directories: train_errors.sh).
# The progress line shows under a terminal (script(1)), not in a file nor
# with --quiet; RIO_PROGRESS_INTERVAL=0 redraws it after every step, so
# that it shows however fast the epoch. An epoch's GEMM counters are its
# training steps' alone: the FLOPs they report are the model's for the
# epoch's steps, not the evaluation's that follows (which had made the
# step's split add up to more than the epoch).
. "$(dirname "$0")/train_lib.sh"
CHECK="python3 $(cd "$(dirname "$0")" && pwd)/tb_events.py"
cd "$T" || exit 1
RUN="--train $(shards 0 4) --test $(shards 8 9) $MNIST_X --hidden 16 --batch 16 --epochs 3"

# 500 records over 2 ranks, 16 each: 15 steps an epoch, the loss every 4th
expect_exit 0 mpi 2 $RUN --metrics m.json --tensorboard tb --tensorboard-every 4
expect_exit 0 $CHECK ours "$CAT" tb m.json 4
expect_match '3 epochs x 7 scalars and 11 step losses' out "our reader: all scalars"
$CHECK tensorboard tb m.json 4 >tb.out 2>&1
rc=$?
cat tb.out
if [ $rc -eq 77 ]; then
	echo "tensorboard not installed: checked with recordio-cat only"
else
	expect_eq 0 $rc "TensorBoard's EventAccumulator reads the same scalars"
fi

# a live run is visible: an epoch's events can be read while it goes on,
# and a kill -9 leaves every event written whole
mkdir live
timeout -k 5 "$TRAIN_TIMEOUT" "$TRAIN" --train "$(shards 0 7)" --test "$(shards 8 9)" $MNIST_X \
	--hidden 16 --batch 4 --epochs 1000 --tensorboard live --quiet &
pid=$!
i=0
while [ $i -lt 1200 ]; do
	f=$(ls live/events.out.tfevents.* 2>/dev/null)
	[ -n "$f" ] && "$CAT" -f json "$f" 2>/dev/null | grep -q '"test/accuracy"' && break
	sleep 0.1
	i=$((i + 1))
done
"$CAT" -f json "$f" >live.json 2>live.err
expect_eq 0 $? "the growing event file reads whole while the run goes on"
expect_match '"test/accuracy"' live.json "an epoch's scalars visible during the run"
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
expect_exit 0 "$CAT" -c "$f"

# the progress line: a terminal gets it, a file and --quiet do not
export RIO_PROGRESS_INTERVAL=0
if command -v script >/dev/null 2>&1; then
	script -qec "mpirun -np 2 $TRAIN $RUN" /dev/null >tty.out 2>&1
	expect_eq 0 $? "run under a terminal"
	expect_match 'epoch 3/3  step 15/15  100%  [0-9]+ samples/s  ETA 0:00' tty.out \
		"progress line on a terminal"
	expect_match "$(printf '\r')"'.\[Kepoch   3  train loss' tty.out "erased before the epoch line"
	script -qec "mpirun -np 2 $TRAIN $RUN --quiet" /dev/null >quiet.out 2>&1
	if grep -q ETA quiet.out; then fail "--quiet shows no progress"; else pass; fi
	# mpirun's output to a file: the ranks still get a pty from Open MPI
	script -qec "mpirun -np 2 $TRAIN $RUN >file.out" /dev/null >/dev/null 2>&1
	if grep -q "ETA\|$(printf '\r')" file.out; then fail "no progress into mpirun's file"; else pass; fi
else
	echo "script(1) not found: progress on a terminal not checked"
fi
expect_exit 0 mpi 2 $RUN
if grep -q "ETA\|$(printf '\r')" out; then fail "no progress line in a file"; else pass; fi

# the GEMM counters of an epoch: 100 training records in 2 steps of 50
# (784-256-10: forward, the weight gradients and layer 2's input gradient,
# 2 FLOPs a multiply-add), against 800 test records evaluated after it
expect_exit 0 "$TRAIN" --train "$(shard 0)" --test "$(shards 1 8)" $MNIST_X --hidden 256 \
	--batch 50 --epochs 1 --quiet --metrics flops.json
python3 - flops.json <<'PY'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
want = 2 * 100 * (2 * (784 * 256 + 256 * 10) + 256 * 10)
got = e["gemm_gflops"] * e["gemm_seconds"] * 1e9
print(f"GEMM FLOPs of the epoch: {got:.4g}, the model's for its steps: {want:.4g}")
sys.exit(0 if abs(got - want) <= 0.02 * want else 1)
PY
expect_eq 0 $? "an epoch's GEMM counters are its steps', not the evaluation's"

finish
