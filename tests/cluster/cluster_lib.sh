# cluster_lib.sh — sourced by the tests/cluster_*.sh tests: what
# tests/train_lib.sh gives, plus a cluster of $HOSTS namespace hosts made by
# cluster.sh (skip, 77, where namespaces cannot be made) and taken down on
# any exit, and `cmpi HOSTFILE N ARGS...`: recordio-train on N ranks across
# the hosts of HOSTFILE, killed after $TRAIN_TIMEOUT seconds; and
# `kill_mid_run VICTIM HOST ARGS...` (below). $C is the
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

# running NAME HOST: the pid of the process NAME in host HOST (1..N), if any
running() {
	for p in $(sh "$CLUSTER_SH" pids "$C" "$2"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = "$1" ] && { echo "$p"; return 0; }
	done
	return 1
}

# kill_mid_run VICTIM HOST ARGS...: recordio-train ARGS on the 4 hosts;
# once every rank runs, 2 s of training, then the process VICTIM on HOST
# killed with SIGKILL. Checks that mpirun exits non-zero soon after (not by
# its 60 s guard, timeout's 124: mpirun itself exits 137 for a rank killed
# with SIGKILL) and that no rank is left on any host; prints the seconds
# from the kill to the end.
kill_mid_run() {
	victim=$1 host=$2
	shift 2
	timeout 60 "$C/mpirun" -np 4 --hostfile "$C/hostfile" "$TRAIN" "$@" \
		>"run-$victim-$host.out" 2>&1 &
	job=$!
	i=0
	while [ $i -lt 300 ]; do
		up=0
		for h in 1 2 3 4; do running recordio-train $h >/dev/null && up=$((up + 1)); done
		[ $up -eq 4 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	expect_eq 4 "$up" "ranks running before the kill ($victim on host $host)"
	sleep 2
	pid=$(running "$victim" "$host")
	expect_eq yes "$([ -n "$pid" ] && echo yes)" "$victim found on host $host"
	t0=$(date +%s.%N)
	[ -n "$pid" ] && kill -9 "$pid"
	wait $job
	rc=$?
	t1=$(date +%s.%N)
	secs=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")
	echo "$victim killed on host $host: mpirun exited $rc after $secs s"
	expect_eq yes "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo yes)" \
		"mpirun's exit after $victim's kill on host $host (not 0, not the guard's 124): $rc"
	left=""
	for h in 1 2 3 4; do running recordio-train $h >/dev/null && left="$left $h"; done
	expect_eq "" "$left" "hosts with a rank still running after $victim's kill on host $host"
}

# same_metrics A B: the learning figures of two metrics files are equal,
# epoch by epoch (times and speeds aside)
same_metrics() {
	for key in epoch steps train_loss train_accuracy test_loss test_accuracy test_records lr; do
		expect_eq "$(json_all "$1" $key)" "$(json_all "$2" $key)" "$key of $1 and $2"
	done
}
