#!/bin/sh
# train_layout_accuracy.sh — model parallelism trains as data parallelism
# does over whole runs, not only one step (issue 25, doc/parallelism.md):
# on Fashion-MNIST, after 3 epochs at the same global batch and seed, the
# test accuracy of P = 2, T = 2 and P2 x T2 is 1 rank's and that of D2 x P2
# is 2 ranks', within 0.01; a P = 2 run stopped in the middle of an epoch
# and resumed as D = 2 (the rest of the epoch re-sharded over two readers),
# and the reverse, end within 0.01 of the unbroken runs' accuracy.
#
# The data: Fashion-MNIST's test file (tests/data/README.md), 8,000 images
# to train on and 2,000 to test. That is about the least on which 0.01 says
# something: 0.01 is 20 test images, and the accuracy's spread over seeds
# (and over the data orders a re-sharded resume gives) is about 0.004;
# tfx-mnist's 1,000 images (200 to test) spread by 0.03 to 0.05 after 3
# epochs, so a resume that re-shards lands 0.03 away for no fault of its own.
. "$(dirname "$0")/train_lib.sh"
cd "$T" || exit 1

expect_exit 0 "$PACK" -q --from idx --images "$TESTDATA/fashion-mnist-t10k-images-idx3-ubyte.gz" \
	--labels "$TESTDATA/fashion-mnist-t10k-labels-idx1-ubyte.gz" --output fm --shards 10
TRAIN_SET=$(printf 'fm-%05d-of-00010.tfrecord,' 0 1 2 3 4 5 6 7)
FM="--train ${TRAIN_SET%,} --test fm-00008-of-00010.tfrecord,fm-00009-of-00010.tfrecord --x image --y label"
# SGD; 80 steps an epoch
RUN="$FM --hidden 256,256,128 --global-batch 100 --lr 0.1 --epochs 3 --seed 1 --quiet"
run() { # NAME RANKS ARGS...
	name=$1 n=$2; shift 2
	expect_exit 0 mpi "$n" $RUN --checkpoint "$name" --metrics "$name.json" "$@"
}
# close A.json B.json WHAT: the last epochs' test accuracies within 0.01
close() {
	a=$(json "$1" test_accuracy) b=$(json "$2" test_accuracy)
	python3 -c 'import sys; sys.exit(round(abs(float(sys.argv[1]) - float(sys.argv[2])), 6) > 0.01)' \
		"$a" "$b" && pass || fail "$3: test accuracy $b against $a"
}

# -- the layouts against data parallelism on the same global batch
run dp1 1
expect_eq 3 "$(json dp1.json epoch)" "three epochs"
expect_eq 2000 "$(json dp1.json test_records)" "the test set"
# trained (chance is 0.1): two untrained models would agree as well
above "$(json dp1.json test_accuracy)" 0.75 && pass ||
	fail "1 rank's test accuracy $(json dp1.json test_accuracy) after 3 epochs"
run p2 2 --pipeline 2
close dp1.json p2.json "P2 against 1 rank"
run t2 2 --tensor 2
close dp1.json t2.json "T2 against 1 rank"
run p2t2 4 --pipeline 2 --tensor 2
close dp1.json p2t2.json "P2 x T2 against 1 rank"
run dp2 2
run d2p2 4 --pipeline 2
close dp2.json d2p2.json "D2 x P2 against 2 ranks"

# -- stopped mid-epoch (step 40 of the second: its metrics line, then the
# resumed run's of epochs 2 and 3) and resumed in the other layout, whose
# number of readers differs: within 0.01 of the unbroken run
run p2-d2 2 --pipeline 2 --max-steps 120
run p2-d2 2 --resume
expect_eq "1 2 2 3" "$(json_all p2-d2.json epoch)" "P2 stopped in epoch 2, resumed as D2"
close p2.json p2-d2.json "P2 stopped, resumed as D2"
run d2-p2 2 --max-steps 120
run d2-p2 2 --resume --pipeline 2
expect_eq "1 2 2 3" "$(json_all d2-p2.json epoch)" "D2 stopped in epoch 2, resumed as P2"
expect_eq D1xP2xT1 "$(json d2-p2.json layout)" "the resumed layout"
close dp2.json d2-p2.json "D2 stopped, resumed as P2"
finish
