# cluster_lib.sh — sourced by the tests/cluster_*.sh tests: what
# tests/train_lib.sh gives, plus a cluster of $HOSTS namespace hosts made by
# cluster.sh (skip, 77, where namespaces cannot be made) and taken down on
# any exit, and `cmpi HOSTFILE N ARGS...`: recordio-train on N ranks across
# the hosts of HOSTFILE, killed after $TRAIN_TIMEOUT seconds. $C is the
# cluster's directory, $C/hostfile lists every host with one slot. The
# test runs in $T, with TRAIN_SET (shards 0-7 of the MNIST sample),
# TEST_SET (8-9) and SMALL_RUN, the recordio-train arguments of a short
# run on them (3 epochs, --threads 1: the same BLAS work on every rank).
. "$(dirname "$0")/train_lib.sh"

CLUSTER_SH="$(cd "$(dirname "$0")" && pwd)/cluster/cluster.sh"
C=$(mktemp -d "${TMPDIR:-/tmp}/rio-cluster-XXXXXX")
trap 'cd / && sh "$CLUSTER_SH" down "$C"' EXIT
trap 'exit 1' HUP INT TERM
sh "$CLUSTER_SH" up "$C" "$HOSTS"
rc=$?
if [ $rc -ne 0 ]; then
	[ $rc -eq 77 ] && echo "$(basename "$0"): SKIP: no network namespaces here"
	rm -rf "$T"
	exit $rc
fi
cd "$T" || exit 1
TRAIN_SET=$(shards 0 7)
TEST_SET=$(shards 8 9)
SMALL_RUN="--train $TRAIN_SET --test $TEST_SET $MNIST_X --hidden 32 --batch 16 --epochs 3 \
--threads 1 --quiet"

# cmpi HOSTFILE N ARGS...: recordio-train on N ranks across the hosts
cmpi() {
	hf=$1 n=$2
	shift 2
	timeout -k 10 "$TRAIN_TIMEOUT" "$C/mpirun" -np "$n" --hostfile "$hf" "$TRAIN" "$@"
}

# same_metrics A B: the learning figures of two metrics files are equal,
# epoch by epoch (times and speeds aside)
same_metrics() {
	for key in epoch steps train_loss train_accuracy test_loss test_accuracy test_records lr; do
		expect_eq "$(json_all "$1" $key)" "$(json_all "$2" $key)" "$key of $1 and $2"
	done
}
