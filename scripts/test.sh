#!/bin/sh
# test.sh — the whole test suite, as CI runs it: installs what is missing,
# builds with AddressSanitizer and UndefinedBehaviorSanitizer, runs
# `make check` (CUnit suites and shell tests, Automake's summary at the
# end), installs the Python package into a virtual environment and runs its
# pytest suite against that build's tools, runs the loader's suites again
# under ThreadSanitizer (its worker, batcher and consumer threads) on the
# pread backend, then `make distcheck`
# on a plain build (the release tarball builds, installs and passes its
# tests too), after a 10-second smoke of each fuzz target (scripts/fuzz.sh).
set -eu
RIO_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$RIO_TOP/scripts/deps.sh"
rio_install_deps $RIO_TEST_PACKAGES

echo "== make check under ASan + UBSan (build-asan/)"
rio_build "$RIO_TOP/build-asan" --enable-sanitizers CFLAGS="-O1 -g"
cd "$RIO_TOP/build-asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
make -j"$(nproc)" check || status=$?
if [ $status -ne 0 ]; then
	for f in $(grep -l '^:test-result: FAIL' tests/*.trs 2>/dev/null); do
		echo "---- ${f%.trs}.log"; tail -40 "${f%.trs}.log"
	done
	exit $status
fi

echo "== the Python package: pip install ./python into a virtual environment, pytest (build-python/)"
# Debian's python3 (what RIO_TEST_PACKAGES installs into), with its NumPy,
# pytest and, where installed, torch; the tests run the build's C tools
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
venv="$RIO_TOP/build-python/venv"
rm -rf "$venv"
"$PY" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-build-isolation --no-deps "$RIO_TOP/python" \
	>"$RIO_TOP/build-python/pip.out" 2>&1 || { tail -40 "$RIO_TOP/build-python/pip.out"; exit 1; }
(cd "$RIO_TOP/python/tests" && RIO_BUILDDIR="$RIO_TOP/build-asan" RIO_TESTDATA="$RIO_TOP/tests/data" \
	"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider .)

echo "== the loader's threads under ThreadSanitizer, on the pread backend (build-tsan/)"
unset ASAN_OPTIONS UBSAN_OPTIONS
rio_build "$RIO_TOP/build-tsan" --enable-sanitizers=thread CFLAGS="-O1 -g"
cd "$RIO_TOP/build-tsan"
# RIO_LOADER_IO=pread: the whole of the loader's suites on the fallback that
# machines without io_uring get (the ASan run above takes io_uring where the
# kernel allows it; test_loader_uring sets its backends itself)
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 RIO_LOADER_IO=pread
LOADER_TESTS="tests/test_loader tests/test_loader_uring tests/test_loader_compressed tests/test_loader_damage"
status=0
make -j"$(nproc)" check TESTS="$LOADER_TESTS" || status=$?
if [ $status -ne 0 ]; then
	for f in $(grep -l '^:test-result: FAIL' tests/*.trs 2>/dev/null); do
		echo "---- ${f%.trs}.log"; tail -60 "${f%.trs}.log"
	done
	exit $status
fi
unset TSAN_OPTIONS RIO_LOADER_IO

echo "== fuzzing smoke: each target of tests/fuzz for 10 s (build-fuzz/)"
status=0
sh "$RIO_TOP/scripts/fuzz.sh" 10 || status=$?
[ $status -eq 0 ] || [ $status -eq 77 ] || exit $status

echo "== make distcheck (build/)"
rio_build "$RIO_TOP/build"
cd "$RIO_TOP/build"
make -j"$(nproc)" distcheck >distcheck.out 2>&1 || { tail -60 distcheck.out; exit 1; }
echo "distcheck: the tarball configured, built, passed its tests, installed and uninstalled:"
grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' distcheck.out | tail -5
grep -A1 'archives ready for distribution' distcheck.out
