#!/bin/sh
# train_reduce.sh — how the gradients are summed (--reduce): the reducer
# alone (tests/test_reducer) gives the rank-order sums bit for bit under
# shm and alltoall on 2, 3 and 4 ranks; recordio-train on one host picks
# shm by itself (auto) and ends with the same parameters, byte for byte, as
# with alltoall (the cross-host way) on 3 and 4 ranks, with SGD, Adam and
# LARS, and so does --shard-optimizer with SGD and Adam (each rank updates
# its slices of one shared copy of the parameters and state); a run stopped
# and resumed under shm ends as an uninterrupted one, with SGD and Adam,
# sharded or not, and so does one resumed from a sharded checkpoint under
# alltoall; a rank killed while the others wait for it in shared memory
# ends the job, no rank left; --shard-optimizer where it cannot be is a
# one-line error;
# an elastic resume from 3 ranks (shm) onto 2 and back works; mpi still
# trains; shm on one rank trains as mpi does; a bad --reduce is a one-line
# usage error.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1
REDUCER="$BIN/tests/test_reducer"
[ -x "$REDUCER" ] || { echo "train_reduce.sh: SKIP: $REDUCER not built"; exit 77; }

for np in 2 3 4; do
	expect_exit 0 timeout -k 10 "$TRAIN_TIMEOUT" mpirun -np $np "$REDUCER"
	expect_match "^test_reducer: $np ranks, [0-9]+ checks, 0 failed" out "the reducer on $np ranks"
done

TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)
COMMON="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --batch 16 --epochs 2 \
--shuffle buffer --shuffle-buffer 200 --seed 5 --bucket-size 4K"

# -- auto is shm on one host; shm and alltoall give the same bits
expect_exit 0 mpi 3 $COMMON --checkpoint auto3 --metrics auto3.json
expect_match 'gradients summed by shm$' out "auto on one host"
# the bucket size groups the sums, never changes them: the same bits
expect_exit 0 mpi 3 $COMMON --quiet --bucket-size 1M --checkpoint auto3-1M
expect_exit 0 cmp auto3/checkpoint auto3-1M/checkpoint
for np in 3 4; do
	for opt in sgd adam lars; do
		expect_exit 0 mpi $np $COMMON --quiet --optimizer $opt --reduce shm \
			--checkpoint "shm-$np-$opt" --metrics "shm-$np-$opt.json"
		expect_exit 0 mpi $np $COMMON --quiet --optimizer $opt --reduce alltoall \
			--checkpoint "a2a-$np-$opt" --metrics "a2a-$np-$opt.json"
		expect_exit 0 cmp "shm-$np-$opt/checkpoint" "a2a-$np-$opt/checkpoint"
		expect_eq "$(json_all "shm-$np-$opt.json" train_loss)" \
			"$(json_all "a2a-$np-$opt.json" train_loss)" "train loss, $np ranks, $opt"
		[ $opt = lars ] && continue
		# the sharded update: each rank its slices of one shared copy
		expect_exit 0 mpi $np $COMMON --quiet --optimizer $opt --reduce shm --shard-optimizer \
			--checkpoint "shard-$np-$opt"
		expect_exit 0 cmp "shard-$np-$opt/checkpoint" "a2a-$np-$opt/checkpoint"
	done
done
expect_exit 0 cmp auto3/checkpoint shm-3-sgd/checkpoint

# -- resumed under shm, where the optimizer is sharded (each rank updates its
# slices of the host's one copy of the parameters and state): the
# checkpoint holds all of the state, and the run ends as without the stop
# (3 ranks: 16 steps an epoch; stop in the second)
for opt in sgd adam; do
	expect_exit 0 mpi 3 $COMMON --quiet --optimizer $opt --reduce shm --checkpoint "part-$opt" \
		--max-steps 21 --checkpoint-every 5
	expect_exit 0 mpi 3 $COMMON --quiet --optimizer $opt --reduce shm --checkpoint "part-$opt" \
		--resume
	expect_exit 0 cmp "shm-3-$opt/checkpoint" "part-$opt/checkpoint"
	expect_exit 0 mpi 3 $COMMON --quiet --optimizer $opt --shard-optimizer \
		--checkpoint "spart-$opt" --max-steps 21 --checkpoint-every 5
	expect_exit 0 mpi 3 $COMMON --quiet --optimizer $opt --shard-optimizer \
		--checkpoint "spart-$opt" --resume
	expect_exit 0 cmp "shm-3-$opt/checkpoint" "spart-$opt/checkpoint"
done
# ... and a checkpoint of a sharded run resumes under alltoall to the same end
expect_exit 0 mpi 3 $COMMON --quiet --optimizer adam --shard-optimizer --checkpoint cross \
	--max-steps 21
expect_exit 0 mpi 3 $COMMON --quiet --optimizer adam --reduce alltoall --checkpoint cross \
	--resume
expect_exit 0 cmp shm-3-adam/checkpoint cross/checkpoint

# -- elastic: 3 ranks (shm) stopped, resumed on 2 (the global batch of 48 kept
# would need 24 a rank: fine), then the end has every step done
EL=$(echo "$COMMON" | sed 's/--batch 16 //') # --global-batch sets it
expect_exit 0 mpi 3 $EL --quiet --global-batch 48 --checkpoint el --max-steps 7
expect_exit 0 mpi 2 $EL --quiet --global-batch 48 --checkpoint el --resume --metrics el.json
expect_lines 2 el.json "both epochs reported after the elastic resume"

# -- the old way still trains
expect_exit 0 mpi 2 $COMMON --reduce mpi --metrics mpi.json
expect_match 'gradients summed by mpi$' out "--reduce mpi"
expect_lines 2 mpi.json "two epochs under mpi"

# -- --reduce shm on one rank (nothing to sum, no shared memory made): it
# read the NaN check of a window that was never made (a NULL dereference)
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" $COMMON --quiet --epochs 1 --reduce shm \
	--checkpoint one-shm
expect_exit 0 timeout "$TRAIN_TIMEOUT" "$TRAIN" $COMMON --quiet --epochs 1 --reduce mpi \
	--checkpoint one-mpi
expect_exit 0 cmp one-shm/checkpoint one-mpi/checkpoint

# -- a rank killed (SIGKILL) while the others wait for it in shared memory:
# mpirun ends them all, non-zero, and none is left spinning (no -k: 124 is
# only ever the guard)
timeout 60 mpirun -np 3 "$TRAIN" --synthetic=64 --hidden 16 --batch 4 --epochs 100000 \
	--threads 1 --quiet >kill.out 2>&1 &
job=$!
# ranks: the recordio-train processes under this job's mpirun
ranks() {
	for m in $(pgrep -P $job); do
		for p in $(pgrep -P "$m"); do
			[ "$(cat /proc/$p/comm 2>/dev/null)" = recordio-train ] && echo "$p"
		done
	done
}
i=0
while [ $i -lt 300 ] && [ "$(ranks | wc -l)" -lt 3 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect_eq 3 "$(ranks | wc -l | tr -d ' ')" "ranks running before the kill"
sleep 2
all=$(ranks)
victim=$(echo "$all" | sed -n 2p)
[ -n "$victim" ] && kill -9 "$victim"
wait $job
rc=$?
expect_eq yes "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo yes)" \
	"mpirun's exit after a rank's kill (not 0, not the guard's 124): $rc"
# (mpirun may exit while the ranks it signalled are still exiting: a few
# seconds' grace, not the guard's minute)
i=0
while :; do
	left=""
	for p in $all; do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = recordio-train ] && left="$left $p"
	done
	[ -z "$left" ] || [ $i -ge 50 ] && break
	sleep 0.1
	i=$((i + 1))
done
expect_eq "" "$left" "ranks still running 5 s after the job ended"

# -- --shard-optimizer where it cannot be
expect_exit 1 mpi 2 $COMMON --quiet --optimizer lars --shard-optimizer
expect_match '^recordio-train: --shard-optimizer: needs the sums in shared memory' err \
	"--shard-optimizer with LARS"
expect_exit 1 mpi 2 $COMMON --quiet --reduce alltoall --shard-optimizer
expect_match '^recordio-train: --shard-optimizer: needs the sums in shared memory' err \
	"--shard-optimizer with alltoall"

# -- a bad --reduce
expect_exit 2 "$TRAIN" --synthetic --reduce nccl
expect_match "^recordio-train: --reduce: 'nccl': want auto, mpi, shm or alltoall$" err \
	"one-line usage error"
finish
