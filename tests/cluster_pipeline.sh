#!/bin/sh
# cluster_pipeline.sh — model parallelism across 4 namespace hosts of one
# slot each: --pipeline 4 and D2 x P2 (a 4-layer model) end with the same
# parameters, byte for byte, as the same layouts on one host (activations
# over TCP, not shared memory: the same sums); a tensor group on hosts of
# one slot spans hosts, allowed and said; and killing one stage's rank
# mid-run ends every rank within seconds.
HOSTS=4
. "$(dirname "$0")/cluster/cluster_lib.sh"
MODEL="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32,32,16 --batch 16 --epochs 2 \
--threads 1 --quiet --seed 5"

for layout in "--pipeline 4" "--pipeline 2"; do
	name=$(echo "$layout" | tr -d ' -')
	# shellcheck disable=SC2086
	expect_exit 0 cmpi "$C/hostfile" 4 $MODEL $layout --checkpoint "hosts-$name" \
		--metrics "hosts-$name.json"
	# shellcheck disable=SC2086
	expect_exit 0 mpi 4 $MODEL $layout --checkpoint "one-$name" --metrics "one-$name.json"
	expect_exit 0 cmp "hosts-$name/checkpoint" "one-$name/checkpoint"
	same_metrics "hosts-$name.json" "one-$name.json"
done

# hosts of one slot: the tensor groups cross them, and it is said
expect_exit 0 cmpi "$C/hostfile" 4 $MODEL --pipeline 2 --tensor 2 --layout
expect_match '^layout D1xP2xT2: 4 ranks on 4 hosts;' out "4 hosts"
expect_match '^layout: a tensor group spans 2 hosts \(fewer than 2 slots a host\): its allreduces cross the network$' \
	out "a tensor group across hosts, said"

# a stage's rank killed: every rank ends, soon
# shellcheck disable=SC2086
kill_mid_run recordio-train 3 --train $TRAIN_SET $MNIST_X --hidden 32,32,16 --batch 4 \
	--epochs 100000 --threads 1 --quiet --pipeline 4

finish
