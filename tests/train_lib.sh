# train_lib.sh — sourced by the tests/train_*.sh tests of recordio-train.
#
# Gives what cli_lib.sh gives, plus: $TRAIN (the program), `mpi N ARGS...`
# (recordio-train on N ranks under mpirun, as root if need be, with more
# ranks than cores allowed, killed after $TRAIN_TIMEOUT seconds), `json
# FILE KEY` (KEY of the last JSON line of a metrics file), and test data made
# from the TensorFlow-written tfx-mnist file (1000 Examples, 784 floats
# 'image_floats', label 'image_class'): $D/mnist-0000N-of-00010.tfrecord,
# 100 records each, with .idx sidecars; `damage FILE R` flips a bit inside
# record R's payload of such a shard (its data CRC then fails).
. "$(dirname "$0")/cli_lib.sh"

TRAIN="$BIN/recordio-train"
CKPT_DIFF="$BIN/tests/ckpt_diff"
TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-300}
for p in "$TRAIN" "$PACK" "$CKPT_DIFF"; do
	if [ ! -x "$p" ]; then
		echo "$(basename "$0"): SKIP: $p not built"
		rm -rf "$T"
		exit 77
	fi
done
if ! command -v mpirun >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "$(basename "$0"): SKIP: mpirun or python3 not found"
	rm -rf "$T"
	exit 77
fi

# Open MPI refuses root without these; tests may start more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# a rank waiting in MPI yields its core: make check runs two tests at once,
# and on a core each, two ranks' busy-polling took the CPU from the ranks
# (and the other test) with work to do. Open MPI yields by itself only with
# more ranks than cores
export OMPI_MCA_mpi_yield_when_idle=1
# no network probing on the test machine: shared memory and loopback only
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
# Under AddressSanitizer, LeakSanitizer checks every run of the trainer,
# on one rank and on many: Open MPI's plugins stay loaded (the
# tests/no_dlclose.so shim), so that what Open MPI, PMIx and hwloc leak
# after MPI_Init is suppressed by library name (tests/lsan.supp); once
# unloaded, their stacks end in "<unknown module>", which nothing can tell
# from ours. What MPI_Init itself allocates is not checked (trainer/world.c:
# some of it through glibc's asprintf, past which the frame-pointer
# unwinder cannot name the library). Stacks are unwound the fast way: the
# slow one (fast_unwind_on_malloc=0, once needed for MPI_Init's asprintf)
# parsed the unwind tables at every malloc, cuBLAS's constructors' too:
# about 2 of a 2-rank run's 3 CPU seconds. verify_asan_link_order=0: the
# shim comes before libasan, which is harmless (it defines dlclose alone,
# nothing ASan intercepts), and so mpirun, not built with ASan, never loads
# libasan. Without the shim, leak detection is off (Open MPI's leaks cannot
# be told apart).
# symbolize=0 unless ASAN_OPTIONS says otherwise: every run's exit matched
# each of Open MPI's leaks against the suppressions frame by frame, and a
# frame outside the libraries named there was symbolized first (the
# allocator's own, in libasan, reading its 3 MB of DWARF): 2 s of a 2-rank
# run that trains nothing. Leaks and errors are found and reported as
# before, their frames as module+offset (ASAN_OPTIONS=symbolize=1 names
# them); the suppressions of ld.so's TLS functions match by module too.
NO_DLCLOSE="$BIN/tests/no_dlclose.so"
if [ -f "$NO_DLCLOSE" ]; then
	export LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD }$NO_DLCLOSE"
	export ASAN_OPTIONS="symbolize=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}:verify_asan_link_order=0"
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0"
else
	echo "$(basename "$0"): $NO_DLCLOSE not built: no leak detection"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi

# OpenBLAS's kernels: where OpenBLAS takes the CPU for a generic one (this
# virtual machine's), every run of the trainer restarted itself once with
# OPENBLAS_CORETYPE set (trainer/cpus.h), each rank paying its start-up
# twice. One run restarts here (OPENBLAS_VERBOSE=2: OpenBLAS says its core
# at each start, the last is the one kept), and the tests' runs start with
# those kernels
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	core=$(OPENBLAS_VERBOSE=2 "$TRAIN" --help 2>&1 >/dev/null | sed -n 's/^Core: //p' | tail -1)
	[ -n "$core" ] && export OPENBLAS_CORETYPE="$core"
fi

# mpi N ARGS...: recordio-train on N ranks
mpi() {
	n=$1; shift
	timeout -k 10 "$TRAIN_TIMEOUT" mpirun -np "$n" "$TRAIN" "$@"
}

# json FILE KEY: KEY of the last line of a JSON-lines file
json() {
	python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])[sys.argv[2]])' "$1" "$2"
}

# json_all FILE KEY: KEY of every line, space-separated
json_all() {
	python3 -c 'import json,sys; print(" ".join(str(json.loads(l)[sys.argv[2]]) for l in open(sys.argv[1])))' "$1" "$2"
}

# above X Y: X > Y as numbers
above() {
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)' "$1" "$2"
}

D="$T/data"
mkdir -p "$D"
"$PACK" -q --from tfrecord --output "$D/mnist" --shards 10 "$TESTDATA/tfx-mnist.tfrecord" ||
	{ echo "cannot pack tfx-mnist"; exit 1; }
shard() { printf '%s/mnist-%05d-of-00010.tfrecord' "$D" "$1"; }
# shards A..B as a comma-separated list
shards() {
	list=""
	i=$1
	while [ "$i" -le "$2" ]; do
		list="$list${list:+,}$(shard "$i")"
		i=$((i + 1))
	done
	printf '%s' "$list"
}
MNIST_X="--x image_floats --y image_class"

# same_params DIR_A DIR_B WHAT: the parameters of two checkpoints agree as
# two layouts of one update do: the L2 norm of their difference at most
# 1e-5 of A's (model parallelism against data parallelism)
same_params() {
	if "$CKPT_DIFF" "$1" "$2" 1e-5 l2 >same_params.out; then pass; else
		fail "$3: $(tail -1 same_params.out)"; fi
}

# nan_csv FILE: 200 rows a,b,label (label = a > b) with a missing (a NaN)
# in row 57
nan_csv() {
	python3 - "$1" <<'PY'
import random, sys
random.seed(3)
with open(sys.argv[1], "w") as f:
    f.write("a,b,label\n")
    for i in range(200):
        a, b = random.random(), random.random()
        cell = "" if i == 57 else "%.5f" % a
        f.write("%s,%.5f,%d\n" % (cell, b, int(a > b)))
PY
}

# damage FILE R: a bit of record R's payload flipped (3203-byte records)
damage() {
	python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(3203 * int(sys.argv[2]) + 500)
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0x40]))
PY
}
